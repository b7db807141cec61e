"""P-ARC's tabular export: one row per task, as CSV (UTF-8) or Parquet.

The columns (:data:`PARC_COLUMNS`, all text): ``task_id``; ``train_demonstrations_json``
(a JSON list of ``{input, output}``); ``test_input_json`` and ``test_output_json`` (the
grids of ``test[0]``; an empty output cell means no output); ``stable_instances_50_json``
(the task's stable bundle: a JSON list of ``{input, output}``, or an object holding such
lists under ``train`` and/or ``test``, concatenated in that order; empty: none);
``generator_py`` and ``verifier_py`` (each task's whole module; empty: none). Other columns
are ignored. A missing column is an error for the whole file; a row that is wrong in any
other way is left out with the reason (:class:`~arcjudge.tasksets.model.LeftOut`), and the
other rows are read.

Parquet needs pyarrow (``pip install 'arcjudge[parquet]'``); it is imported only to read a
Parquet file. The export is read by the rule for untrusted paths (a regular file, symlinks
followed, at most :data:`EXPORT_BYTES`), and a Parquet file whose row groups declare more
than that uncompressed is refused before any is read. Cells that are already decoded (a
list column instead of JSON text) are taken as they are.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.tasks import read_task_bytes
from arcjudge.tasksets.model import (
    LeftOut,
    RowError,
    TaskEntry,
    TaskSet,
    decode_json,
    make_entry,
)
from arcjudge.vocabulary import TaskSetFormat

__all__ = ["PARC_COLUMNS", "PARQUET_SUFFIXES", "read_parc"]

PARC_COLUMNS = (
    "task_id",
    "train_demonstrations_json",
    "test_input_json",
    "test_output_json",
    "stable_instances_50_json",
    "generator_py",
    "verifier_py",
)
"""The export's columns, as published (the reader needs every one)."""

PARQUET_SUFFIXES = (".parquet", ".pq")
"""File suffixes read as Parquet (every other file is read as CSV)."""

EXPORT_BYTES = 1 << 30
"""The largest export read, and the most a Parquet file may declare it inflates to (1 GiB)."""

_CSV_FIELD_LIMIT = 1 << 28
"""Largest CSV cell read (a stable bundle of 50 large pairs is far above csv's 128 KiB)."""


def _read_bytes(path: Path) -> bytes:
    """The export's bytes: a regular file (symlinks followed) of at most ``EXPORT_BYTES``."""
    return read_task_bytes(path, EXPORT_BYTES)


def _missing(path: Path, header: list[str]) -> None:
    missing = [c for c in PARC_COLUMNS if c not in header]
    if missing:
        raise InputError(
            f"{path}: not a P-ARC export: no column {', '.join(missing)} "
            f"(needs {', '.join(PARC_COLUMNS)})"
        )


@contextlib.contextmanager
def _csv_field_limit(limit: int) -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, limit))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _csv_rows(path: Path, data: bytes) -> list[tuple[int, dict[str, Any] | str]]:
    """``(row number, cells by column or the reason the row cannot be read)``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc})") from None
    rows: list[tuple[int, dict[str, Any] | str]] = []
    with _csv_field_limit(_CSV_FIELD_LIMIT):
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: empty (no header row)")
            _missing(path, header)
            for number, cells in enumerate(reader, 1):
                if not cells:
                    continue  # a blank line
                if len(cells) != len(header):
                    rows.append((number, f"{len(cells)} cells, the header has {len(header)}"))
                else:
                    rows.append((number, dict(zip(header, cells, strict=True))))
        except csv.Error as exc:
            raise InputError(f"{path}: not a readable CSV after row {len(rows)} ({exc})") from None
    return rows


def _parquet_rows(path: Path, data: bytes) -> list[tuple[int, dict[str, Any] | str]]:
    try:
        pa: Any = importlib.import_module("pyarrow")
        pq: Any = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow: pip install 'arcjudge[parquet]' "
            "(or pip install pyarrow), or give the CSV export"
        ) from None
    try:
        metadata = pq.ParquetFile(pa.BufferReader(data)).metadata
        inflated = sum(
            metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups)
        )
        if inflated > EXPORT_BYTES:  # checked before anything is decompressed
            raise InputError(
                f"{path}: refused: its columns inflate to {inflated:,} bytes "
                f"(at most {EXPORT_BYTES:,})"
            )
        table = pq.read_table(pa.BufferReader(data))
    except InputError:
        raise
    except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError, ...)
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    _missing(path, list(table.column_names))
    columns = {name: table.column(name).to_pylist() for name in PARC_COLUMNS}
    return [
        (number, {name: columns[name][number - 1] for name in PARC_COLUMNS})
        for number in range(1, table.num_rows + 1)
    ]


def _text(value: object) -> str | None:
    """A cell as text: ``None`` for a null or empty cell."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


def _json_cell(cells: dict[str, Any], column: str, required: bool) -> object:
    value = cells[column]
    if value is not None and not isinstance(value, str | bytes):
        return value  # a decoded (nested) Parquet column
    text = _text(value)
    if text is None:
        if required:
            raise RowError(f"{column}: empty")
        return None
    return decode_json(text, column)


def _source_cell(cells: dict[str, Any], column: str) -> bytes | None:
    value = cells[column]
    if isinstance(value, bytes):
        return value if value.strip() else None
    text = _text(value)
    return None if text is None else text.encode("utf-8", "surrogateescape")


def _entry(cells: dict[str, Any]) -> TaskEntry:
    task_id = _text(cells["task_id"])
    if task_id is None:
        raise RowError("task_id: empty")
    task_id = task_id.strip()
    test: dict[str, object] = {"input": _json_cell(cells, "test_input_json", True)}
    output = _json_cell(cells, "test_output_json", False)
    if output is not None:
        test["output"] = output
    return make_entry(
        task_id,
        train=_json_cell(cells, "train_demonstrations_json", True),
        test=[test],
        stable=_json_cell(cells, "stable_instances_50_json", False),
        verifier=_source_cell(cells, "verifier_py"),
        generator=_source_cell(cells, "generator_py"),
    )


def read_parc(path: str | Path) -> TaskSet:
    """Read a P-ARC export (``.parquet``/``.pq``: Parquet; any other file: CSV).

    Args:
        path: The file.

    Returns:
        The set: one entry per usable row (in task-id order), and each row left out with
        its row number (1 = the first row after the header), task id and reason. A task id
        seen before leaves the later row out.

    Raises:
        InputError: The file is missing, unreadable, not a regular file or over
            :data:`EXPORT_BYTES` (on disk, or declared uncompressed for Parquet), not UTF-8
            CSV or Parquet, lacks a column (naming it), or Parquet is asked for without
            pyarrow.
    """
    path = Path(path)
    data = _read_bytes(path)
    parquet = path.suffix.lower() in PARQUET_SUFFIXES
    rows = _parquet_rows(path, data) if parquet else _csv_rows(path, data)
    entries: dict[str, TaskEntry] = {}
    left_out: list[LeftOut] = []
    for number, cells in rows:
        where = f"row {number}"
        if isinstance(cells, str):
            left_out.append(LeftOut(where, None, cells))
            continue
        task_id = (_text(cells.get("task_id")) or "").strip() or None
        try:
            entry = _entry(cells)
        except RowError as exc:
            left_out.append(LeftOut(where, task_id, str(exc)))
            continue
        if entry.task_id in entries:
            left_out.append(LeftOut(where, task_id, "task id repeats an earlier row's"))
            continue
        entries[entry.task_id] = entry
    return TaskSet(
        path=path,
        format=TaskSetFormat.P_ARC_PARQUET if parquet else TaskSetFormat.P_ARC_CSV,
        sha256=hashlib.sha256(data).hexdigest(),
        entries=tuple(entries[t] for t in sorted(entries)),
        left_out=tuple(left_out),
    )
