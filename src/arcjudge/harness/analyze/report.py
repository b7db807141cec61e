"""``report.html`` of ``arcjudge dimensions analyze``: the figures and every table.

One self-contained HTML document (inline CSS and SVG, no scripts), in the style of
``dimensions score``'s report: Figure 3 (per measure of Table 3, one bar per model with
its Wilson 95% interval as whiskers and the independence baseline dashed across the
full-task bars), the Classification failure rate per candidate type as the same kind of
chart, Figure 4 (with several configurations: per model, the cumulative mean full-task
accuracy and the hard full-task accuracy against the budget, as lines), then every table.
Model names come from the inputs and are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arcjudge.harness.analyze.sections import FULL_TASK, LABELS, MEASURES
from arcjudge.harness.analyze.tables import Table
from arcjudge.harness.core.html import ARC_PALETTE, PAGE_CSS, esc

__all__ = ["budget_lines", "grouped_bars", "render_analysis_report"]

SERIES_COLORS: tuple[str, ...] = ARC_PALETTE[1:]
"""One color per model (cycled): the ARC colors but black."""

_EXTRA_CSS = """
svg.bars text{font:11px system-ui,sans-serif;fill:#333}
svg.bars .axis{stroke:#999;stroke-width:1}
svg.bars .ci{stroke:#333;stroke-width:1.5}
svg.bars .base{stroke:#111;stroke-width:1.5;stroke-dasharray:4 3}
svg.lines text{font:11px system-ui,sans-serif;fill:#333}
svg.lines .axis{stroke:#999;stroke-width:1}
svg.lines .whisker{stroke-width:1}
.legend span{display:inline-block;padding:0 6px;margin-right:6px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
"""

Bar = Mapping[str, Any] | None
"""A share's JSON (``count``, ``total``, ``rate``, ``ci95``), or ``None``: nothing to draw."""


def grouped_bars(
    title: str,
    groups: Sequence[tuple[str, Sequence[Bar]]],
    series: Sequence[str],
    marks: Mapping[tuple[int, int], float] | None = None,
) -> str:
    """An SVG bar chart: per group one bar per series, rates 0..1 with interval whiskers.

    Args:
        title: The chart's accessible label.
        groups: ``(label, one bar per series)`` in order.
        series: The series' names (the legend; colors by position).
        marks: ``(group, series) -> value``: a dashed line across that bar at ``value``.
    """
    slot = max(84.0, 16.0 * len(series) + 16)
    left, top, bottom = 34, 10, 44
    width = int(left + slot * len(groups) + 10)
    height = 220
    plot_h = height - top - bottom
    parts = [f'<svg class="bars" width="{width}" height="{height}" role="img" '
             f'aria-label="{esc(title)}">']  # fmt: skip
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line class="axis" x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" '
                     f'stroke-opacity="{0.9 if tick == 0 else 0.25}"/>')  # fmt: skip
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    bar_w = (slot - 12) / max(len(series), 1)
    for g, (label, bars) in enumerate(groups):
        x0 = left + g * slot + 6
        centre = x0 + (slot - 12) / 2
        lines = "".join(  # a label of several words: one word a line
            f'<tspan x="{centre:.1f}" dy="{0 if n == 0 else 12}">{esc(word)}</tspan>'
            for n, word in enumerate(label.split())
        )
        parts.append(f'<text x="{centre:.1f}" y="{height - bottom + 14}" '
                     f'text-anchor="middle">{lines}</text>')  # fmt: skip
        for s, bar in enumerate(bars):
            x = x0 + s * bar_w
            if bar is None or bar.get("rate") is None:
                parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h - 3}" '
                             'text-anchor="middle" font-size="8">n/a</text>')  # fmt: skip
                continue
            rate = float(bar["rate"])
            bar_h = plot_h * rate
            color = SERIES_COLORS[s % len(SERIES_COLORS)]
            parts.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - bar_h:.1f}" width="{bar_w * 0.9:.1f}" '
                f'height="{bar_h:.1f}" fill="{color}"><title>{esc(series[s])}, {esc(label)}: '
                f"{bar['count']}/{bar['total']} = {rate:.3f}</title></rect>"
            )
            low, high = bar["ci95"]
            cx = x + bar_w * 0.45
            y_low, y_high = top + plot_h * (1 - low), top + plot_h * (1 - high)
            for x1, y1, x2, y2 in ((cx, y_low, cx, y_high), (cx - 3, y_low, cx + 3, y_low),
                                   (cx - 3, y_high, cx + 3, y_high)):  # fmt: skip
                parts.append(
                    f'<line class="ci" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'
                )
        for s in range(len(bars)):
            value = (marks or {}).get((g, s))
            if value is None:
                continue
            x, y = x0 + s * bar_w, top + plot_h * (1 - value)
            parts.append(
                f'<line class="base" x1="{x - 1:.1f}" y1="{y:.1f}" x2="{x + bar_w:.1f}" '
                f'y2="{y:.1f}"><title>{esc(series[s])}: independence baseline {value:.4f}'
                "</title></line>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _legend(series: Sequence[str]) -> str:
    spans = "".join(
        f'<span><i style="background:{SERIES_COLORS[s % len(SERIES_COLORS)]}"></i>'
        f"{esc(name)}</span>"
        for s, name in enumerate(series)
    )
    return f'<p class="legend">{spans}</p>'


def _figure3(analysis: Mapping[str, Any]) -> str:
    models: Mapping[str, Any] = analysis["accuracy"]["models"]
    series = list(models)
    groups = [(LABELS[m], [models[name][m] for name in series]) for m in MEASURES]
    full = MEASURES.index(FULL_TASK)
    marks = {
        (full, s): float(models[name]["independence_baseline"])
        for s, name in enumerate(series)
        if models[name]["independence_baseline"] is not None
    }
    chart = grouped_bars("Figure 3: accuracy per model and measure", groups, series, marks)
    return (
        "<h2>Figure 3: accuracy per model and measure</h2>"
        '<p class="meta">Bars: accuracy pooled over runs; whiskers: Wilson 95% intervals; '
        "dashed: the independence baseline (product of the five dimensions).</p>"
        f"{_legend(series)}{chart}"
    )


def _types_figure(analysis: Mapping[str, Any]) -> str:
    models: Mapping[str, Any] = analysis["classification_types"]["models"]
    if not models:
        return ""
    series = list(models)
    kinds = list(analysis["classification_types"]["types"])
    groups = [(k.replace("_", " "), [models[m][k]["failures"] for m in series]) for k in kinds]
    chart = grouped_bars("Classification failure rate per candidate type", groups, series)
    return (
        "<h2>Classification failure rate per candidate type</h2>"
        '<p class="meta">valid: share judged invalid; every other type: share judged valid '
        "(Table 1).</p>"
        f"{_legend(series)}{chart}"
    )


Point = tuple[float, float, float] | None
"""A value and the ends of its whisker (all 0..1), or ``None``: no value at that budget."""


def budget_lines(
    title: str,
    budgets: int,
    lines: Sequence[tuple[int, bool, str, Sequence[Point]]],
) -> str:
    """An SVG line chart: values 0..1 against budgets ``1..budgets``, with whiskers.

    Args:
        title: The chart's accessible label.
        budgets: How many budgets (the x axis: 1, 2, ...).
        lines: ``(color index, dashed, label, one point per budget)``; a line is broken
            where a point is ``None``.
    """
    left, top, bottom, right = 34, 10, 34, 30
    step = 100.0
    width = int(left + 30 + step * max(budgets - 1, 1) + right)
    height = 220
    plot_h = height - top - bottom

    def x_of(k: int) -> float:
        return left + 30 + step * (k - 1)

    def y_of(value: float) -> float:
        return top + plot_h * (1 - value)

    parts = [f'<svg class="lines" width="{width}" height="{height}" role="img" '
             f'aria-label="{esc(title)}">']  # fmt: skip
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(tick)
        parts.append(f'<line class="axis" x1="{left}" y1="{y:.1f}" x2="{width - right}" '
                     f'y2="{y:.1f}" stroke-opacity="{0.9 if tick == 0 else 0.25}"/>')  # fmt: skip
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for k in range(1, budgets + 1):
        parts.append(f'<text x="{x_of(k):.1f}" y="{height - bottom + 14}" '
                     f'text-anchor="middle">{k}</text>')  # fmt: skip
    parts.append(f'<text x="{(left + width) / 2:.1f}" y="{height - 4}" '
                 'text-anchor="middle">budget (configurations)</text>')  # fmt: skip
    for color_index, dashed, label, points in lines:
        color = SERIES_COLORS[color_index % len(SERIES_COLORS)]
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        run: list[str] = []
        segments: list[list[str]] = [run]
        for k, point in enumerate(points, 1):
            if point is None:
                run = []
                segments.append(run)
                continue
            value, low, high = point
            run.append(f"{x_of(k):.1f},{y_of(value):.1f}")
            x = x_of(k) + (3 if dashed else -3)  # the two lines' whiskers side by side
            parts.append(
                f'<line class="whisker" x1="{x:.1f}" y1="{y_of(low):.1f}" x2="{x:.1f}" '
                f'y2="{y_of(high):.1f}" stroke="{color}"{dash}/>'
            )
            parts.append(
                f'<circle cx="{x_of(k):.1f}" cy="{y_of(value):.1f}" r="3" fill="{color}">'
                f"<title>{esc(label)}, budget {k}: {value:.3f} [{low:.3f}, {high:.3f}]</title>"
                "</circle>"
            )
        for segment in segments:
            if len(segment) > 1:
                parts.append(f'<polyline points="{" ".join(segment)}" fill="none" '
                             f'stroke="{color}" stroke-width="2"{dash}/>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def _figure4(analysis: Mapping[str, Any]) -> str:
    section: Mapping[str, Any] = analysis.get("increased_sampling") or {}
    if not section.get("computed"):
        return ""
    models: Mapping[str, Any] = section["models"]
    lines: list[tuple[int, bool, str, list[Point]]] = []
    for s, (name, entry) in enumerate(models.items()):
        mean: list[Point] = []
        hard: list[Point] = []
        for budget in entry["budgets"]:
            full = budget[FULL_TASK]
            if full["mean"] is None:
                mean.append(None)
            else:
                sd = full["sd"] or 0.0
                value = float(full["mean"])
                mean.append((value, max(0.0, value - sd), min(1.0, value + sd)))
            share = budget["hard_full_task"]
            if share is None or share["rate"] is None:
                hard.append(None)
            else:
                low, high = share["ci95"]
                hard.append((float(share["rate"]), float(low), float(high)))
        lines.append((s, False, f"{name}: mean full task", mean))
        lines.append((s, True, f"{name}: hard full task", hard))
    chart = budget_lines(
        "Figure 4: full-task accuracy against the budget", section["configurations"], lines
    )
    return (
        "<h2>Figure 4: full-task accuracy against the budget (Section 3.2)</h2>"
        '<p class="meta">Per model: solid, the mean full-task accuracy over configurations '
        "1..k (whiskers: one sample standard deviation); dashed, the hard full-task accuracy "
        "(passing all five dimensions in every configuration 1..k; whiskers: Wilson 95% "
        "interval). Table 6 has the numbers.</p>"
        f"{_legend(list(models))}{chart}"
    )


def _html_table(table: Table) -> str:
    head, *body = table.markdown_rows()
    numeric = [c.kind != "text" for c in table.columns]
    rows = ["<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
    for cells in body:
        rows.append("<tr>" + "".join(
            f'<td class="n">{esc(c)}</td>' if n else f"<td>{esc(c)}</td>"
            for c, n in zip(cells, numeric, strict=True)
        ) + "</tr>")  # fmt: skip
    if not body:
        rows.append(f'<tr><td colspan="{len(head)}">nothing to show</td></tr>')
    return (
        f'<h2 id="{esc(table.name)}">{esc(table.title)}</h2><p class="meta">{esc(table.note)}</p>'
        f"<table>{''.join(rows)}</table>"
    )


def render_analysis_report(analysis: Mapping[str, Any], tables: Sequence[Table]) -> str:
    """The HTML report of an analysis (``analysis.json``'s object and its tables)."""
    inputs = analysis["inputs"]
    described = ", ".join(
        f"{k} {esc(inputs[k])}" for k in ("items_file", "instances_file", "definitions_file")
        if inputs.get(k) is not None
    )  # fmt: skip
    contents = "".join(
        f'<li><a href="#{esc(t.name)}">{esc(t.title)}</a> (tables/{esc(t.name)}.csv, .md)</li>'
        for t in tables
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>arcjudge dimensions analyze</title>"
        f"<style>{PAGE_CSS}{_EXTRA_CSS}</style></head><body>"
        "<h1>The study's tables</h1>"
        f'<p class="meta">{inputs["items"]} items, {inputs["instances"]} instances, '
        f"{analysis['denominators']['complete_tasks']} tasks with all five dimensions, full "
        f"task over {analysis['denominators']['full_tasks']} "
        f"({esc(analysis['denominators']['full_task_over'])}); models: "
        f"{esc(', '.join(inputs['models']))}. {described}</p>"
        f"<ul>{contents}</ul>"
        f"{_figure3(analysis)}{_types_figure(analysis)}{_figure4(analysis)}"
        + "".join(_html_table(t) for t in tables)
        + "</body></html>\n"
    )
