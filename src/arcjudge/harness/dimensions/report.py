"""The printed table and ``report.html`` of ``arcjudge dimensions score``.

The report is one self-contained HTML document (inline CSS and SVG, no scripts): a bar
chart per model of the output-grid test, the five dimensions and full-task accuracy with
Wilson 95% intervals as whiskers, the numbers as a table, self-consistency, and failure
reasons. Model names come from the answers file and are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arcjudge.harness.core.html import PAGE_CSS, esc
from arcjudge.harness.dimensions.statistics import COMPLETE_TASKS
from arcjudge.harness.dimensions.summary import DimensionScoreSummary
from arcjudge.safetext import terminal_safe
from arcjudge.vocabulary import BUILT_DIMENSIONS, CONSISTENCY_DIMENSIONS

__all__ = ["full_task_scope", "render_dimensions_report", "summary_table"]

_LABELS = {
    "output_grid": "Output grid",
    "definition": "Definition",
    "classification": "Classification",
    "generation": "Generation",
    "editing": "Editing",
    "inversion": "Inversion",
    "full_task": "Full task",
}
_BAR_COLORS = {
    "output_grid": "#7FDBFF",
    "definition": "#0074D9",
    "classification": "#2ECC40",
    "generation": "#FF851B",
    "editing": "#B10DC9",
    "inversion": "#FF4136",
    "full_task": "#111111",
}
_EXTRA_CSS = """
svg.bars text{font:11px system-ui,sans-serif;fill:#333}
svg.bars .axis{stroke:#999;stroke-width:1}
svg.bars .ci{stroke:#333;stroke-width:1.5}
svg.bars .base{stroke:#111;stroke-width:1.5;stroke-dasharray:4 3}
"""


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _bars(model: str, stats: Mapping[str, Any]) -> str:
    """One SVG bar chart: output grid, the five dimensions, full task; 0..1, CI whiskers."""
    entries: list[tuple[str, Any]] = [(d, stats["dimensions"].get(d)) for d in BUILT_DIMENSIONS]
    entries.append(("full_task", stats.get("full_task")))
    width, height, left, top, bottom = 460, 200, 34, 10, 40
    plot_h = height - top - bottom
    slot = (width - left - 10) / len(entries)
    parts = [
        f'<svg class="bars" width="{width}" height="{height}" role="img" '
        f'aria-label="accuracy per dimension for {esc(model)}">'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line class="axis" x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" '
                     f'stroke-opacity="{0.9 if tick == 0 else 0.25}"/>')  # fmt: skip
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for i, (name, entry) in enumerate(entries):
        x = left + i * slot + slot * 0.15
        bar_w = slot * 0.7
        label = _LABELS[name]
        parts.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{height - bottom + 14}" text-anchor="middle">'
            f"{label}</text>"
        )
        if entry is None or entry.get("accuracy") is None:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h - 4}" text-anchor="middle">'
                "n/a</text>"
            )
            continue
        acc = float(entry["accuracy"])
        bar_h = plot_h * acc
        parts.append(
            f'<rect x="{x:.1f}" y="{top + plot_h - bar_h:.1f}" width="{bar_w:.1f}" '
            f'height="{bar_h:.1f}" fill="{_BAR_COLORS[name]}"><title>{label}: '
            f"{entry['passed']}/{entry['total']} = {acc:.3f}</title></rect>"
        )
        low, high = entry["ci95"]
        cx = x + bar_w / 2
        y_low, y_high = top + plot_h * (1 - low), top + plot_h * (1 - high)
        for x1, y1, x2, y2 in ((cx, y_low, cx, y_high), (cx - 4, y_low, cx + 4, y_low),
                               (cx - 4, y_high, cx + 4, y_high)):  # fmt: skip
            parts.append(
                f'<line class="ci" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'
            )
        inside = bar_h > 24  # label inside a tall bar (in white), above a short one
        label_y = top + plot_h - bar_h + (14 if inside else -4)
        fill = ' fill="#fff"' if inside else ""
        parts.append(f'<text x="{cx + 6:.1f}" y="{label_y:.1f}"{fill}>{acc:.2f}</text>')
    baseline = stats.get("independence_baseline")
    if baseline is not None:
        i = len(entries) - 1
        x = left + i * slot + slot * 0.05
        y = top + plot_h * (1 - baseline)
        parts.append(
            f'<line class="base" x1="{x:.1f}" y1="{y:.1f}" x2="{x + slot * 0.9:.1f}" y2="{y:.1f}">'
            f"<title>independence baseline {baseline:.4f}</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(models: Mapping[str, Any]) -> str:
    head = "".join(f"<th>{_LABELS[d]}</th>" for d in (*BUILT_DIMENSIONS, "full_task"))
    rows = [
        f"<tr><th>model</th><th>runs</th>{head}<th>drop (output grid - full task)</th>"
        "<th>independence baseline</th></tr>"
    ]
    for model, stats in models.items():
        cells = []
        for name in (*BUILT_DIMENSIONS, "full_task"):
            entry = stats["full_task"] if name == "full_task" else stats["dimensions"].get(name)
            if entry is None:
                cells.append('<td class="n">n/a</td>')
            else:
                low, high = entry["ci95"] or (0.0, 0.0)
                cells.append(
                    f'<td class="n">{_fmt(entry["accuracy"])} ({entry["passed"]}/{entry["total"]})'
                    f"<br><small>[{low:.3f}, {high:.3f}]</small></td>"
                )
        rows.append(
            f'<tr><td class="id">{esc(model)}</td><td class="n">{len(stats["runs"])}</td>'
            f'{"".join(cells)}<td class="n">{_fmt(stats.get("output_grid_drop"))}</td>'
            f'<td class="n">{_fmt(stats["independence_baseline"])}</td></tr>'
        )
    return "<table>" + "".join(rows) + "</table>"


def _consistency(models: Mapping[str, Any]) -> str:
    blocks = []
    for model, stats in models.items():
        info = stats.get("self_consistency")
        if not info:
            continue
        rows = [
            "<tr><th>condition</th><th>dimension</th><th>answer right</th>"
            "<th>answer wrong</th><th>all</th></tr>"
        ]
        conditions = (
            ("all", "all items"),
            ("definition_passes_train_test", "Definition passes train+test"),
        )
        for condition, label in conditions:
            for dim in CONSISTENCY_DIMENSIONS:
                groups = info[condition][dim]
                cells = "".join(
                    f'<td class="n">{_fmt(groups[g]["rate"])} '
                    f"({groups[g]['agree']}/{groups[g]['total']})</td>"
                    for g in ("right", "wrong", "all")
                )
                rows.append(f"<tr><td>{label}</td><td>{_LABELS[dim]}</td>{cells}</tr>")
        blocks.append(f"<h3>{esc(model)}</h3><table>{''.join(rows)}</table>")
    if not blocks:
        return "<p>Not computed (needs --definitions and the programs file).</p>"
    return "".join(blocks)


def render_dimensions_report(summary: DimensionScoreSummary) -> str:
    """Return the HTML report of a ``dimensions score`` summary."""
    models = summary.models
    charts = "".join(
        f"<figure><figcaption>{esc(model)}</figcaption>{_bars(model, stats)}</figure>"
        for model, stats in models.items()
    )
    reasons = "".join(
        f'<tr><td>{esc(reason)}</td><td class="n">{count}</td></tr>'
        for reason, count in summary.failure_reasons.items()
    )
    problems = summary.answers_problems
    problem_list = "".join(f"<li>{esc(p)}</li>" for p in problems[:50])
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>arcjudge dimensions</title>"
        f"<style>{PAGE_CSS}{_EXTRA_CSS}</style></head><body>"
        "<h1>Dimension scores</h1>"
        f'<p class="meta">{summary.tasks} tasks ({summary.full_tasks} with '
        f"all five dimensions), {summary.items} items; generation threshold "
        f"{esc(summary.min_distance)}, editing limit "
        f"{esc(summary.edit_max_distance)}. Bars: accuracy pooled over runs with Wilson "
        "95% intervals; dashed line: independence baseline (product of the five PotARCin "
        "dimensions; full task is over those five, the output grid is the standard ARC test "
        f"beside them). {esc(_sentence(full_task_scope(summary)))}</p>"
        f'<div class="pics">{charts}</div>'
        f"<h2>Accuracy</h2>{_table(models)}"
        f'<h2>Self-consistency</h2><p class="meta">Share of answers the model\'s own '
        "Definition program agrees with (Classification: per judgment).</p>"
        f"{_consistency(models)}"
        f"<h2>Failure reasons</h2><table><tr><th>reason</th><th>items</th></tr>{reasons}</table>"
        + (
            f"<h2>Answer lines not used ({summary.answers_problem_count})</h2>"
            f"<ul>{problem_list}</ul>"
            if problems
            else ""
        )
        + "</body></html>\n"
    )


def full_task_scope(summary: DimensionScoreSummary) -> str:
    """Which tasks full task is over, and the tasks missing a dimension (one sentence)."""
    missing = sorted(summary.missing_dimensions)
    named = ", ".join(f"{t} ({', '.join(summary.missing_dimensions[t])})" for t in missing[:10])
    named += f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    if summary.full_task_over == COMPLETE_TASKS:
        text = (f"full task over the {summary.full_tasks} tasks with all five dimensions "
                "(--full-task-over complete-tasks)")  # fmt: skip
        return text + (f"; left out, missing a dimension: {named}" if missing else "")
    text = f"full task over every task ({summary.tasks}; n = tasks x runs)"
    return text + (f"; a missing dimension counts as a failure: {named}" if missing else "")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def summary_table(summary: DimensionScoreSummary) -> str:
    """The printed table: accuracy per dimension and full task, per model; full task's n."""
    head = ("model", "runs", "grid", "def", "cls", "gen", "edit", "inv", "full", "drop", "indep")
    rows: list[tuple[str, ...]] = [head]
    for model, stats in summary.models.items():
        values = [stats["dimensions"].get(d) for d in BUILT_DIMENSIONS]
        values.append(stats["full_task"])
        rows.append((
            terminal_safe(str(model)), str(len(stats["runs"])),
            *(_fmt(v["accuracy"]) if v else "n/a" for v in values),
            _fmt(stats.get("output_grid_drop")), _fmt(stats["independence_baseline"]),
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    table = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
    return table + "\n" + terminal_safe(full_task_scope(summary))
