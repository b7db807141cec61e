"""The tables of ``arcjudge dimensions analyze``: one CSV and one Markdown text per table.

A :class:`Table` is columns and rows of plain values. A column of kind ``share`` holds a
:class:`Share` (a count out of a total, with its Wilson 95% interval): in CSV it becomes
five columns (``NAME_count``, ``NAME_total``, ``NAME_rate``, ``NAME_ci_low``,
``NAME_ci_high``), in Markdown one cell ``0.800 [0.490, 0.943] (8/10)``. Rates are written
with 6 decimals in CSV and 3 in Markdown; a missing value is empty in CSV and ``n/a`` in
Markdown. A plain number in a ``share`` column (a summary row's count, such as Table 1's
median number of candidates) fills only ``NAME_count`` in CSV and is written as the number
in Markdown. Same table, same bytes.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Literal

from arcjudge.harness.core.record import Record, spec
from arcjudge.harness.core.stats import wilson_interval

__all__ = ["Cell", "Column", "Share", "Table", "rounded", "share_or_none"]

ColumnKind = Literal["text", "int", "number", "share"]


def rounded(value: float | None) -> float | None:
    """``value`` rounded to 6 decimals (``None`` stays ``None``)."""
    return None if value is None else round(value, 6)


def _rate(share: Share) -> float | None:
    return round(share.count / share.total, 6) if share.total else None


def _ci95(share: Share) -> tuple[float, float] | None:
    if not share.total:
        return None
    low, high = wilson_interval(share.count, share.total)
    return round(low, 6), round(high, 6)


@dataclass(frozen=True)
class Share(Record):
    """``count`` out of ``total``, with its Wilson 95% interval.

    A record: written (in ``analysis.json``) as ``{"count", "total", "rate", "ci95"}``,
    the last two derived from the first two.

    Attributes:
        count: How many (passed, failed, agreed...: the table says which).
        total: Out of how many.
        rate: ``count / total`` rounded to 6 decimals, ``None`` when ``total`` is 0.
        ci95: The Wilson 95% interval rounded to 6 decimals, ``None`` when ``total`` is 0.
    """

    count: int
    total: int
    rate: float | None = field(init=False, metadata=spec(derived=_rate))
    ci95: tuple[float, float] | None = field(init=False, metadata=spec(derived=_ci95))


Cell = str | int | float | Share | None
"""One value of a row: text, a count, a number, a share, or missing."""


@dataclass(frozen=True)
class Column:
    """A column: its CSV name, its kind and its Markdown heading.

    Attributes:
        name: The CSV name (a ``share`` column's five CSV columns start with it).
        kind: ``text``, ``int``, ``number`` (a rate or a difference) or ``share``.
        title: The Markdown heading (the name when empty).
    """

    name: str
    kind: ColumnKind = "text"
    title: str = ""


_SHARE_PARTS = ("count", "total", "rate", "ci_low", "ci_high")


def _number(value: float | None, places: int) -> str:
    return "" if value is None else f"{value:.{places}f}"


def _count_text(value: float) -> str:
    """A count as text: ``12`` for a whole number, ``12.5`` otherwise."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _csv_cells(column: Column, value: Cell) -> list[str]:
    if column.kind == "share":
        if value is None:
            return [""] * len(_SHARE_PARTS)
        if isinstance(value, int | float):
            return [_count_text(value)] + [""] * (len(_SHARE_PARTS) - 1)
        if not isinstance(value, Share):
            raise TypeError(f"column {column.name!r} holds shares, not {value!r}")
        ci = value.ci95 or (None, None)
        return [str(value.count), str(value.total), _number(value.rate, 6),
                _number(ci[0], 6), _number(ci[1], 6)]  # fmt: skip
    if value is None:
        return [""]
    if column.kind == "number":
        if isinstance(value, Share | str):
            raise TypeError(f"column {column.name!r} holds numbers, not {value!r}")
        return [_number(float(value), 6)]
    return [str(value)]


def _markdown_text(text: str) -> str:
    """Text safe inside a Markdown table cell: no line breaks, ``|`` escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def _markdown_cell(column: Column, value: Cell) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, Share):
        if value.rate is None or value.ci95 is None:
            return f"n/a (0/{value.total})"
        low, high = value.ci95
        return f"{value.rate:.3f} [{low:.3f}, {high:.3f}] ({value.count}/{value.total})"
    if column.kind == "number" and not isinstance(value, str):
        return f"{float(value):.3f}"
    if column.kind == "share" and isinstance(value, int | float):
        return _count_text(value)
    return _markdown_text(str(value))


@dataclass(frozen=True)
class Table:
    """One table of the analysis.

    Attributes:
        name: The file stem (``table3`` -> ``tables/table3.csv`` and ``table3.md``).
        title: A one-line title (which table of the study it is).
        note: What the numbers are: the denominators, the conditions.
        columns: The columns.
        rows: One tuple of cells per row, a cell per column.
    """

    name: str
    title: str
    note: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"{self.name}: a row of {len(row)} cells for "
                                 f"{len(self.columns)} columns")  # fmt: skip

    def csv_header(self) -> list[str]:
        """The CSV header: a ``share`` column as its five parts."""
        names: list[str] = []
        for column in self.columns:
            if column.kind == "share":
                names.extend(f"{column.name}_{part}" for part in _SHARE_PARTS)
            else:
                names.append(column.name)
        return names

    def csv(self) -> str:
        """The table as CSV (newline line ends, minimal quoting)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.csv_header())
        for row in self.rows:
            writer.writerow([c for col, v in zip(self.columns, row, strict=True)
                             for c in _csv_cells(col, v)])  # fmt: skip
        return buffer.getvalue()

    def markdown_rows(self) -> list[list[str]]:
        """The heading row, then each row, as the Markdown cells' text."""
        head = [_markdown_text(c.title or c.name) for c in self.columns]
        body = [
            [_markdown_cell(col, v) for col, v in zip(self.columns, row, strict=True)]
            for row in self.rows
        ]
        return [head, *body]

    def markdown(self) -> str:
        """The table as Markdown: title, note, then a pipe table (numbers right-aligned)."""
        head, *body = self.markdown_rows()
        align = ["---" if c.kind == "text" else "---:" for c in self.columns]
        lines = [f"## {self.title}", "", self.note, ""]
        for cells in (head, align, *body):
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"


def share_or_none(count: int, total: int) -> Share | None:
    """A :class:`Share`, or ``None`` when there is nothing to count (``total`` 0)."""
    return Share(count, total) if total else None
