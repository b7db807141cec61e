r"""Pieces of arcjudge's self-contained HTML reports: page style, escaping, grids as SVG.

Everything here is standard library only. A report is one HTML document with inline CSS,
inline SVG grids and no scripts or external resources, so it can be opened from disk or
attached anywhere. All text that comes from the harness output (task ids, source names,
error messages, file paths) may originate in untrusted programs and is escaped (and its lone
surrogates, which UTF-8 cannot hold, are written as visible ``\udXXX`` escapes).

Grids are drawn compactly: one background ``<rect>`` in the most frequent color, then one
``<path>`` per remaining color whose one-unit-wide stroke paints horizontal runs of cells
(``M{x} {y}.5h{length}``, later runs often as relative moves ``m{dx} {dy}h{length}``), two
dashed strokes for the grid lines, and, when a grid is compared with another, one
``class="diff"`` element per differing cell.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from arcjudge.safetext import clean_text
from arcjudge.vocabulary import REPORTED_SPLITS

__all__ = [
    "ARC_PALETTE",
    "ERROR_LIMIT",
    "PAGE_CSS",
    "cell_size_for",
    "esc",
    "failure_block",
    "figure",
    "first_failure",
    "grid_svg",
    "shape",
    "split_summary",
    "truncate",
]

ARC_PALETTE: tuple[str, ...] = (
    "#000000",  # 0 black
    "#0074D9",  # 1 blue
    "#FF4136",  # 2 red
    "#2ECC40",  # 3 green
    "#FFDC00",  # 4 yellow
    "#AAAAAA",  # 5 grey
    "#F012BE",  # 6 magenta
    "#FF851B",  # 7 orange
    "#7FDBFF",  # 8 light blue
    "#870C25",  # 9 maroon
)
"""The standard ARC colors, indexed by cell value."""

UNKNOWN_COLOR = "#FFFFFF"
"""Fill for a cell value outside 0..9 (should not happen with canonical grids)."""

ERROR_LIMIT = 500
"""Maximum number of characters of an error text shown in a report."""

_MISSING = object()

PAGE_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.5em;margin:0 0 .5em}h2{font-size:1.2em;margin:1.5em 0 .5em}
h3{font-size:1em;margin:0 0 .4em;font-family:ui-monospace,monospace}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.mono,td.id{font-family:ui-monospace,monospace}
.v-valid{background:#c8efd2}.v-invalid{background:#ffc9c4}.v-missing{background:#eee;color:#777}
.v-load_error{background:#ffdcaa}.v-policy_rejected{background:#e2d0ff}.v-other{background:#fff3b0}
td.v a{color:inherit}
.failure{border:1px solid #ddd;border-left:4px solid #FF4136;padding:.6em .8em;margin:.8em 0}
.meta{color:#555;margin:.2em 0}
pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:.4em;white-space:pre-wrap;
word-break:break-all;max-height:12em;overflow:auto;margin:.4em 0}
.pics{display:flex;flex-wrap:wrap;gap:1.2em;align-items:flex-start;margin-top:.4em}
figure{margin:0}figcaption{font-size:12px;color:#555;margin-bottom:3px}
svg.grid{display:block}
.noout{border:2px dashed #aaa;padding:1em;color:#777;font-family:ui-monospace,monospace}
.legend span{display:inline-block;padding:0 6px;margin-right:4px;border:1px solid #ccc}
"""


def esc(value: object) -> str:
    """Escape any value for use in HTML text or a double-quoted attribute."""
    return html.escape(clean_text(str(value)), quote=True)


def truncate(text: str, limit: int = ERROR_LIMIT) -> str:
    """Shorten ``text`` to ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [{len(text) - limit} more characters]"


def _color(value: object) -> str:
    """Return the fill color of one cell value."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 9:
        return ARC_PALETTE[value]
    return UNKNOWN_COLOR


def _cell(grid: Sequence[Sequence[object]], row: int, col: int) -> object:
    """Return ``grid[row][col]``, or a sentinel when it lies outside the grid."""
    if row < len(grid) and col < len(grid[row]):
        return grid[row][col]
    return _MISSING


def grid_svg(
    grid: Sequence[Sequence[int]],
    *,
    diff: Sequence[Sequence[int]] | None = None,
    cell: int = 12,
) -> str:
    """Draw a grid as a compact inline SVG with the standard ARC palette.

    The SVG uses one user unit per cell (``viewBox="0 0 cols rows"``) and is scaled to
    ``cell`` pixels per cell. It carries ``class="grid"``, ``role="img"``, an ``aria-label``
    such as ``"grid 3x4"`` (rows x columns) and ``data-rows``/``data-cols``.

    Args:
        grid: Rows of cell values 0..9. Ragged rows are drawn as given; values outside
            0..9 are drawn white.
        diff: Another grid to compare with (typically the expected output). Every cell of
            ``grid`` whose value differs from ``diff``, or that lies outside ``diff``'s
            shape, is marked with an outlined square, one ``class="diff"`` element each.
        cell: Size of one cell in pixels.

    Returns:
        The ``<svg>`` element as a string.
    """
    rows = len(grid)
    cols = max((len(row) for row in grid), default=0)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="grid" role="img" '
        f'aria-label="grid {rows}x{cols}" data-rows="{rows}" data-cols="{cols}"'
    )
    if rows == 0 or cols == 0:
        return head + ' width="0" height="0"></svg>'
    parts = [
        head,
        f' width="{cols * cell}" height="{rows * cell}" viewBox="0 0 {cols} {rows}"'
        ' shape-rendering="crispEdges">',
    ]

    rectangular = all(len(row) == cols for row in grid)
    background: str | None = None
    if rectangular:
        background = Counter(_color(v) for row in grid for v in row).most_common(1)[0][0]
        parts.append(f'<rect width="{cols}" height="{rows}" fill="{background}"/>')

    # One path per color; each run of cells is a one-unit-wide horizontal stroke. A run
    # starts with an absolute move or a move relative to the end of the color's previous
    # run, whichever is shorter.
    runs: dict[str, list[str]] = {}
    pens: dict[str, tuple[int, int]] = {}
    for y, row in enumerate(grid):
        x = 0
        while x < len(row):
            color = _color(row[x])
            end = x + 1
            while end < len(row) and _color(row[end]) == color:
                end += 1
            if color != background:
                move = f"M{x} {y}.5"
                pen = pens.get(color)
                if pen is not None and len(relative := f"m{x - pen[0]} {y - pen[1]}") < len(move):
                    move = relative
                runs.setdefault(color, []).append(f"{move}h{end - x}")
                pens[color] = (end, y)
            x = end
    for color in sorted(runs):
        parts.append(f'<path stroke="{color}" d="{"".join(runs[color])}"/>')

    # Grid lines, about one pixel wide: two dashed strokes as wide as the grid, whose
    # dashes (centred on every integer) are the horizontal and the vertical lines. They are
    # anti-aliased: with crispEdges, sub-pixel dashes on pixel boundaries can vanish.
    line = max(0.02, round(min(0.5, 1.0 / max(cell, 1)), 2))  # exact in two decimals
    parts.append(
        f'<g stroke="#555" shape-rendering="auto" stroke-dasharray="{line:g} {1 - line:.2f}" '
        f'stroke-dashoffset="{line / 2:g}"><path stroke-width="{cols}" d="M{cols / 2:g} 0V{rows}"/>'
        f'<path stroke-width="{rows}" d="M0 {rows / 2:g}H{cols}"/></g>'
        f'<rect width="{cols}" height="{rows}" fill="none" stroke="#777" '
        f'stroke-width="{2 * line:g}"/>'
    )

    if diff is not None:
        marked = [
            (x, y)
            for y, row in enumerate(grid)
            for x, value in enumerate(row)
            if _cell(diff, y, x) is _MISSING or _cell(diff, y, x) != value
        ]
        if marked:
            squares = [f"M{x}.2 {y}.2h.6v.6h-.6z" for x, y in marked]
            # A dark halo under a white ring keeps the mark visible on every palette color.
            parts.append(
                f'<path fill="none" stroke="#000" stroke-width=".3" d="{"".join(squares)}"/>'
            )
            parts.append('<g fill="none" stroke="#fff" stroke-width=".14">')
            parts.extend(f'<path class="diff" d="{square}"/>' for square in squares)
            parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def cell_size_for(*grids: Sequence[Sequence[int]] | None) -> int:
    """Choose a pixel size per cell so that the largest of ``grids`` stays readable."""
    side = max(
        (max(len(g), max((len(r) for r in g), default=0)) for g in grids if g),
        default=1,
    )
    return max(6, min(20, 300 // max(side, 1)))


def shape(grid: Sequence[Sequence[int]]) -> str:
    """Describe a grid's shape as ``rowsxcols``."""
    return f"{len(grid)}x{max((len(r) for r in grid), default=0)}"


def figure(caption: str, body: str) -> str:
    """Wrap one picture with a caption."""
    return f"<figure><figcaption>{esc(caption)}</figcaption>{body}</figure>"


def first_failure(record: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """Return the first split (in :data:`REPORTED_SPLITS`, then others) with a recorded failure."""
    failures = record.get("first_failure") or {}
    if not isinstance(failures, Mapping):
        return None
    names: list[str] = [s for s in REPORTED_SPLITS if s in failures]
    names += sorted(str(s) for s in failures if s not in REPORTED_SPLITS)
    for name in names:
        detail = failures.get(name)
        if isinstance(detail, Mapping):
            return name, detail
    return None


def split_summary(record: Mapping[str, Any]) -> str:
    """Summarize ``correct/total`` and status counts per split, as escaped HTML."""
    splits = record.get("splits") or {}
    statuses = record.get("statuses") or {}
    names: list[str] = [s for s in REPORTED_SPLITS if s in splits or s in statuses]
    names += sorted(str(s) for s in {*splits, *statuses} if s not in REPORTED_SPLITS)
    items = []
    for name in names:
        text = name
        counts = splits.get(name)
        if isinstance(counts, Sequence) and len(counts) == 2:
            text += f" {counts[0]}/{counts[1]}"
        by_status = statuses.get(name)
        if isinstance(by_status, Mapping) and by_status:
            text += " (" + ", ".join(f"{k} {v}" for k, v in by_status.items()) + ")"
        items.append(esc(text))
    return " \u00b7 ".join(items)


def failure_block(record: Mapping[str, Any], anchor: str) -> str:
    """Render the first failure of one invalid verifier."""
    task = str(record.get("task_id", ""))
    source = str(record.get("source", ""))
    out = [
        f'<div class="failure" id="{anchor}" data-task="{esc(task)}" data-source="{esc(source)}">',
        f"<h3>{esc(task)} / {esc(source)}</h3>",
    ]
    summary = split_summary(record)
    if summary:
        out.append(f'<p class="meta">{summary}</p>')
    provenance = record.get("provenance")
    if isinstance(provenance, Mapping) and provenance:
        bits = [
            f"{key} {provenance[key]}"
            for key in ("kind", "file", "entry_point")
            if provenance.get(key) is not None
        ]
        if provenance.get("sha256"):
            bits.append(f"sha256 {str(provenance['sha256'])[:12]}")
        out.append(f'<p class="meta mono">{esc(" · ".join(bits))}</p>')

    found = first_failure(record)
    if found is None:
        out.append('<p class="meta">No failing pair was recorded.</p>')
        if record.get("error"):
            out.append(f"<pre>{esc(truncate(str(record['error'])))}</pre>")
        out.append("</div>")
        return "".join(out)

    split, detail = found
    status = str(detail.get("status", ""))
    out.append(
        f'<p class="meta">split <b>{esc(split)}</b>, pair <b>{esc(detail.get("index", "?"))}'
        f"</b>, status <b>{esc(status)}</b></p>"
    )
    error = detail.get("error")
    if error:
        out.append(f'<pre class="error">{esc(truncate(str(error)))}</pre>')

    grid_in = detail.get("input") or []
    expected = detail.get("expected") or []
    produced = detail.get("produced")
    cell = cell_size_for(grid_in, expected, produced)
    pics = [
        figure(f"input {shape(grid_in)}", grid_svg(grid_in, cell=cell)),
        figure(f"expected {shape(expected)}", grid_svg(expected, cell=cell)),
    ]
    if produced is None:
        pics.append(figure("produced", f'<div class="noout">{esc(status or "no output")}</div>'))
    else:
        pics.append(
            figure(
                f"produced {shape(produced)}",
                grid_svg(produced, diff=expected, cell=cell),
            )
        )
    out.append(f'<div class="pics">{"".join(pics)}</div></div>')
    return "".join(out)
