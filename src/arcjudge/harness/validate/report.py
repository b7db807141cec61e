r"""Self-contained HTML reports for ``arcjudge validate`` (and later ``score``).

Everything here is standard library only and produces one HTML document with inline CSS,
inline SVG grids and no scripts or external resources, so a report can be opened from disk
or attached anywhere. All text that comes from the harness output (task ids, source names,
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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arcjudge.safetext import clean_text

__all__ = [
    "ARC_PALETTE",
    "SPLIT_ORDER",
    "VERDICTS",
    "grid_svg",
    "render_validate_report",
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

SPLIT_ORDER: tuple[str, ...] = ("train", "test", "arc-gen", "generator")
"""Order in which splits are listed and searched for a verifier's first failure."""

VERDICTS: tuple[str, ...] = ("valid", "invalid", "missing", "load_error", "policy_rejected")
"""Known verdicts, in display order."""

ERROR_LIMIT = 500
"""Maximum number of characters of an error text shown in a report."""

_MISSING = object()

_CSS = """
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


def _esc(value: object) -> str:
    """Escape any value for use in HTML text or a double-quoted attribute."""
    return html.escape(clean_text(str(value)), quote=True)


def _truncate(text: str, limit: int = ERROR_LIMIT) -> str:
    """Shorten ``text`` to ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [{len(text) - limit} more characters]"


def _verdict_class(verdict: object) -> str:
    """Return the CSS class of a verdict, never derived from unknown text."""
    return f"v-{verdict}" if verdict in VERDICTS else "v-other"


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


def _report_cell_size(*grids: Sequence[Sequence[int]] | None) -> int:
    """Choose a pixel size per cell so that the largest of ``grids`` stays readable."""
    side = max(
        (max(len(g), max((len(r) for r in g), default=0)) for g in grids if g),
        default=1,
    )
    return max(6, min(20, 300 // max(side, 1)))


def _shape(grid: Sequence[Sequence[int]]) -> str:
    """Describe a grid's shape as ``rowsxcols``."""
    return f"{len(grid)}x{max((len(r) for r in grid), default=0)}"


def _figure(caption: str, body: str) -> str:
    """Wrap one picture with a caption."""
    return f"<figure><figcaption>{_esc(caption)}</figcaption>{body}</figure>"


def _first_failure(record: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """Return the first split (in :data:`SPLIT_ORDER`, then others) with a recorded failure."""
    failures = record.get("first_failure") or {}
    if not isinstance(failures, Mapping):
        return None
    names = [s for s in SPLIT_ORDER if s in failures]
    names += sorted(str(s) for s in failures if s not in SPLIT_ORDER)
    for name in names:
        detail = failures.get(name)
        if isinstance(detail, Mapping):
            return name, detail
    return None


def _split_summary(record: Mapping[str, Any]) -> str:
    """Summarize ``correct/total`` and status counts per split, as escaped HTML."""
    splits = record.get("splits") or {}
    statuses = record.get("statuses") or {}
    names = [s for s in SPLIT_ORDER if s in splits or s in statuses]
    names += sorted(str(s) for s in {*splits, *statuses} if s not in SPLIT_ORDER)
    items = []
    for name in names:
        text = name
        counts = splits.get(name)
        if isinstance(counts, Sequence) and len(counts) == 2:
            text += f" {counts[0]}/{counts[1]}"
        by_status = statuses.get(name)
        if isinstance(by_status, Mapping) and by_status:
            text += " (" + ", ".join(f"{k} {v}" for k, v in by_status.items()) + ")"
        items.append(_esc(text))
    return " \u00b7 ".join(items)


def _failure_block(record: Mapping[str, Any], anchor: str) -> str:
    """Render the first failure of one invalid verifier."""
    task = str(record.get("task_id", ""))
    source = str(record.get("source", ""))
    out = [
        f'<div class="failure" id="{anchor}" data-task="{_esc(task)}" '
        f'data-source="{_esc(source)}">',
        f"<h3>{_esc(task)} / {_esc(source)}</h3>",
    ]
    summary = _split_summary(record)
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
        out.append(f'<p class="meta mono">{_esc(" · ".join(bits))}</p>')

    found = _first_failure(record)
    if found is None:
        out.append('<p class="meta">No failing pair was recorded.</p>')
        if record.get("error"):
            out.append(f"<pre>{_esc(_truncate(str(record['error'])))}</pre>")
        out.append("</div>")
        return "".join(out)

    split, detail = found
    status = str(detail.get("status", ""))
    out.append(
        f'<p class="meta">split <b>{_esc(split)}</b>, pair <b>{_esc(detail.get("index", "?"))}'
        f"</b>, status <b>{_esc(status)}</b></p>"
    )
    error = detail.get("error")
    if error:
        out.append(f'<pre class="error">{_esc(_truncate(str(error)))}</pre>')

    grid_in = detail.get("input") or []
    expected = detail.get("expected") or []
    produced = detail.get("produced")
    cell = _report_cell_size(grid_in, expected, produced)
    pics = [
        _figure(f"input {_shape(grid_in)}", grid_svg(grid_in, cell=cell)),
        _figure(f"expected {_shape(expected)}", grid_svg(expected, cell=cell)),
    ]
    if produced is None:
        pics.append(_figure("produced", f'<div class="noout">{_esc(status or "no output")}</div>'))
    else:
        pics.append(
            _figure(
                f"produced {_shape(produced)}",
                grid_svg(produced, diff=expected, cell=cell),
            )
        )
    out.append(f'<div class="pics">{"".join(pics)}</div></div>')
    return "".join(out)


def _ordered_sources(
    manifest: Mapping[str, Any], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Return the manifest's sources in order, then any others seen in the verdicts."""
    sources = [str(s) for s in manifest.get("sources") or []]
    for name in [*(manifest.get("per_source") or {}), *(r.get("source") for r in records)]:
        if name is not None and str(name) not in sources:
            sources.append(str(name))
    return sources


def render_validate_report(
    manifest: Mapping[str, Any],
    verdicts: Iterable[Mapping[str, Any]],
    suspects: Sequence[Mapping[str, Any]] = (),
) -> str:
    """Render the HTML report of one ``arcjudge validate`` run.

    Args:
        manifest: The run manifest: ``sources``, ``tasks`` (task id to ``chosen`` and
            ``valid``), ``coverage`` (``tasks``, ``covered``), ``per_source`` (verdict
            counts), ``seed`` and ``samples``.
        verdicts: Verdict records, one per (task, source): ``task_id``, ``source``,
            ``verdict``, ``splits``, ``statuses``, ``first_failure``, ``provenance`` and
            ``error``.
        suspects: ``suspects.jsonl`` records (suspect samples, disputed inputs, ambiguity
            flags); drawn in a ``differential`` section when there are any.

    Returns:
        A complete, self-contained HTML document. Its sections have the ids ``coverage``,
        ``sources``, ``tasks`` and ``failures`` (and ``differential``); every invalid
        verdict gets one ``class="failure"`` block with ``data-task`` and ``data-source``
        attributes, every suspect or disputed input one ``class="suspect"`` block.
    """
    records = [r for r in verdicts if isinstance(r, Mapping)]
    tasks_info: Mapping[str, Any] = manifest.get("tasks") or {}
    sources = _ordered_sources(manifest, records)
    task_ids = sorted({str(t) for t in tasks_info} | {str(r.get("task_id")) for r in records})

    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for record in records:
        by_key[(str(record.get("task_id")), str(record.get("source")))] = record

    coverage = manifest.get("coverage") or {}
    total = coverage.get("tasks", len(task_ids))
    covered = coverage.get(
        "covered", sum(1 for t in tasks_info.values() if isinstance(t, Mapping) and t.get("valid"))
    )
    try:
        percent = f" ({100.0 * float(covered) / float(total):.1f}%)" if total else ""
    except (TypeError, ValueError):
        percent = ""

    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        "<title>arcjudge validate report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>arcjudge validate report</h1>",
        '<section id="coverage"><h2>Coverage</h2>',
        f"<p><b>{_esc(covered)}</b> of <b>{_esc(total)}</b> tasks have at least one valid "
        f"verifier{_esc(percent)}.</p>",
        f'<p class="meta">seed {_esc(manifest.get("seed", "?"))}, '
        f"{_esc(manifest.get('samples', '?'))} generated samples per verifier, "
        f"sources: {_esc(', '.join(sources) or 'none')}.</p></section>",
    ]

    # Per-source counts: the manifest's, or counted from the verdicts when absent.
    per_source: Mapping[str, Any] = manifest.get("per_source") or {}
    counted: dict[str, Counter[str]] = {s: Counter() for s in sources}
    for record in records:
        counted.setdefault(str(record.get("source")), Counter())[str(record.get("verdict"))] += 1
    out.append('<section id="sources"><h2>Sources</h2><table><thead><tr><th>source</th>')
    out.extend(f"<th>{_esc(v)}</th>" for v in VERDICTS)
    out.append("</tr></thead><tbody>")
    for source in sources:
        counts = per_source.get(source)
        if not isinstance(counts, Mapping):
            counts = counted[source]
        out.append(f'<tr><td class="id">{_esc(source)}</td>')
        for verdict in VERDICTS:
            count = counts.get(verdict, 0)
            shade = _verdict_class(verdict) if count else ""
            out.append(f'<td class="n {shade}">{_esc(count)}</td>')
        out.append("</tr>")
    out.append("</tbody></table></section>")

    # Per-task table; invalid cells link to their failure block.
    invalid = [
        (str(r.get("task_id")), str(r.get("source")), r)
        for r in records
        if r.get("verdict") == "invalid"
    ]
    order = {s: i for i, s in enumerate(sources)}
    invalid.sort(key=lambda item: (item[0], order.get(item[1], len(order)), item[1]))
    anchors = {id(r): f"failure-{i}" for i, (_, _, r) in enumerate(invalid)}

    out.append('<section id="tasks"><h2>Tasks</h2><p class="legend">')
    out.extend(f'<span class="{_verdict_class(v)}">{_esc(v)}</span>' for v in VERDICTS)
    out.append("</p><table><thead><tr><th>task</th><th>chosen</th>")
    out.extend(f"<th>{_esc(s)}</th>" for s in sources)
    out.append("</tr></thead><tbody>")
    for task in task_ids:
        info = tasks_info.get(task)
        chosen = info.get("chosen") if isinstance(info, Mapping) else None
        chosen_text = _esc(chosen) if chosen is not None else "\u2014"
        out.append(f'<tr><td class="id">{_esc(task)}</td><td class="id">{chosen_text}</td>')
        for source in sources:
            record = by_key.get((task, source))
            if record is None:
                out.append('<td class="v v-missing">\u2014</td>')
                continue
            verdict = record.get("verdict")
            title = ""
            if record.get("error"):
                title = f' title="{_esc(_truncate(str(record["error"])))}"'
            text = _esc(verdict)
            anchor = anchors.get(id(record))
            if anchor is not None:
                text = f'<a href="#{anchor}">{text}</a>'
            out.append(f'<td class="v {_verdict_class(verdict)}"{title}>{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table></section>")

    out.append(
        f'<section id="failures"><h2>First failures of invalid verifiers ({len(invalid)})</h2>'
    )
    if not invalid:
        out.append('<p class="meta">No invalid verifiers.</p>')
    out.extend(_failure_block(record, anchors[id(record)]) for _, _, record in invalid)
    out.append("</section>")
    if suspects:
        out.append(_differential_section(suspects))
    out.append("</body></html>\n")
    return "".join(out)


def _differential_section(suspects: Sequence[Mapping[str, Any]]) -> str:
    """Suspect generator samples, disputed inputs and ambiguous tasks, as pictures."""
    out = [
        '<section id="differential"><h2>Suspect samples, disputes, ambiguity '
        f"({len(suspects)})</h2>"
    ]
    for item in suspects:
        kind = str(item.get("kind", ""))
        task = str(item.get("task_id", ""))
        grid_in = item.get("input") or []
        expected = item.get("expected")
        pics = [_figure(f"input {_shape(grid_in)}", grid_svg(grid_in))]
        if kind == "suspect":
            agreeing = item.get("agreeing_output") or []
            pics.append(_figure("generator's output", grid_svg(expected or [], diff=agreeing)))
            pics.append(_figure(
                "verifiers' output: " + ", ".join(map(str, item.get("sources") or [])),
                grid_svg(agreeing, diff=expected),
            ))  # fmt: skip
        else:
            if expected is not None:
                pics.append(_figure("expected", grid_svg(expected)))
            for option in item.get("outputs") or []:
                grid = option.get("output") or []
                label = ", ".join(map(str, option.get("sources") or []))
                pics.append(_figure(label, grid_svg(grid, diff=expected)))
        out.append(
            f'<div class="suspect" data-task="{_esc(task)}" data-kind="{_esc(kind)}">'
            f'<h3>{_esc(task)}: {_esc(kind)}</h3><p class="meta">split '
            f"{_esc(item.get('split'))}, index {_esc(item.get('index'))}, seed "
            f'{_esc(item.get("seed"))}</p><div class="pics">{"".join(pics)}</div></div>'
        )
    out.append("</section>")
    return "".join(out)


SCORE_FAILURES_SHOWN = 300


def render_score_report(summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    """Render the HTML report of one ``arcjudge score`` run.

    Args:
        summary: ``summary.json`` as a dict (``groups`` per model and ``(all)``).
        results: ``results.jsonl`` records.

    Returns:
        A self-contained HTML document: a table per model and pictures of first failures
        (at most ``SCORE_FAILURES_SHOWN``, rule failures first).
    """
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>arcjudge score report</title>",
        f"<style>{_CSS}</style></head><body><h1>arcjudge score report</h1>",
        f'<section id="summary"><h2>Summary</h2><p class="meta">{_esc(summary.get("programs"))}'
        f" programs, seed {_esc(summary.get('seed'))}, samples {_esc(summary.get('samples'))}</p>",
        "<table><thead><tr><th>model</th><th>programs</th><th>passed</th><th>pass rate</th>"
        "<th>95% CI</th><th>static</th><th>runtime</th><th>rule</th><th>infra</th></tr></thead>"
        "<tbody>",
    ]
    for name, group in (summary.get("groups") or {}).items():
        low, high = group.get("pass_rate_ci95", [0, 0])
        fails = group.get("failures", {})
        out.append(
            f"<tr><td>{_esc(name)}</td><td>{_esc(group.get('programs'))}</td>"
            f"<td>{_esc(group.get('passed'))}</td><td>{group.get('pass_rate', 0):.3f}</td>"
            f"<td>[{low:.3f}, {high:.3f}]</td>"
            + "".join(f"<td>{_esc(fails.get(c, 0))}</td>" for c in ("static", "runtime", "rule"))
            + f"<td>{_esc(fails.get('infra', 0))}</td></tr>"
        )
    out.append("</tbody></table></section>")
    failed = [r for r in results if r.get("verdict") != "pass"]
    order = {"rule": 0, "runtime": 1, "static": 2, "infra": 3}
    failed.sort(key=lambda r: (order.get(str(r.get("failure")), 4), str(r.get("model", ""))))
    out.append(f'<section id="failures"><h2>First failures ({len(failed)} failed programs')
    if len(failed) > SCORE_FAILURES_SHOWN:
        out.append(f", the first {SCORE_FAILURES_SHOWN} shown")
    out.append(")</h2>")
    for number, record in enumerate(failed[:SCORE_FAILURES_SHOWN]):
        label = "/".join(str(record[k]) for k in ("model", "id") if k in record)
        shown = {**record, "source": f"{label} ({record.get('failure')})"}
        out.append(_failure_block(shown, f"f{number}"))
    out.append("</section></body></html>")
    return "".join(out)
