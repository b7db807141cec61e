"""The self-contained HTML report of ``arcjudge validate`` (pieces: ``harness.core.html``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arcjudge.harness.core.html import (
    PAGE_CSS,
    esc,
    failure_block,
    figure,
    grid_svg,
    shape,
    truncate,
)
from arcjudge.harness.core.manifest import Manifest
from arcjudge.vocabulary import VERDICTS, Verdict

__all__ = ["render_validate_report"]

_VERDICT_CSS = """
.v-valid_quarantined{background:#e3f5c4}.v-infra{background:#d6e4f0}
.v-valid_unsampled{background:#fbeec1}
"""
"""Colours of the verdicts the shared page style does not know."""


def _verdict_class(verdict: object) -> str:
    """Return the CSS class of a verdict, never derived from unknown text."""
    return f"v-{verdict}" if verdict in VERDICTS else "v-other"


def _ordered_sources(manifest: Manifest, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the manifest's sources in order, then any others seen in the verdicts."""
    sources = [s.name for s in manifest.sources]
    for name in [*manifest.per_source, *(r.get("source") for r in records)]:
        if name is not None and str(name) not in sources:
            sources.append(str(name))
    return sources


def render_validate_report(
    manifest: Manifest,
    verdicts: Iterable[Mapping[str, Any]],
    suspects: Sequence[Mapping[str, Any]] = (),
) -> str:
    """Render the HTML report of one ``arcjudge validate`` run.

    Args:
        manifest: The run's manifest (its sources, tasks' chosen sources, coverage,
            verdict counts per source, seed and samples).
        verdicts: Verdict records' JSON objects, one per (task, source): ``task_id``,
            ``source``, ``verdict``, ``splits``, ``statuses``, ``first_failure``,
            ``provenance`` and ``error``.
        suspects: ``suspects.jsonl`` records (suspect samples, disputed inputs, ambiguity
            flags); drawn in a ``differential`` section when there are any.

    Returns:
        A complete, self-contained HTML document. Its sections have the ids ``coverage``,
        ``sources``, ``tasks`` and ``failures`` (and ``differential``); every invalid
        verdict gets one ``class="failure"`` block with ``data-task`` and ``data-source``
        attributes, every suspect or disputed input one ``class="suspect"`` block.
    """
    records = [r for r in verdicts if isinstance(r, Mapping)]
    tasks_info = manifest.tasks
    sources = _ordered_sources(manifest, records)
    task_ids = sorted({str(t) for t in tasks_info} | {str(r.get("task_id")) for r in records})

    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for record in records:
        by_key[(str(record.get("task_id")), str(record.get("source")))] = record

    total, covered = manifest.coverage.tasks, manifest.coverage.covered
    percent = f" ({100.0 * covered / total:.1f}%)" if total else ""

    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        "<title>arcjudge validate report</title>",
        f"<style>{PAGE_CSS}{_VERDICT_CSS}</style></head><body>",
        "<h1>arcjudge validate report</h1>",
        '<section id="coverage"><h2>Coverage</h2>',
        f"<p><b>{esc(covered)}</b> of <b>{esc(total)}</b> tasks have at least one valid "
        f"verifier{esc(percent)}.</p>",
        _unsampled_note(manifest),
        f'<p class="meta">seed {esc(manifest.seed)}, '
        f"{esc(manifest.samples)} generated samples per verifier, "
        f"sources: {esc(', '.join(sources) or 'none')}.</p></section>",
    ]

    # Per-source counts: the manifest's, or counted from the verdicts when absent.
    per_source = manifest.per_source
    counted: dict[str, Counter[str]] = {s: Counter() for s in sources}
    for record in records:
        counted.setdefault(str(record.get("source")), Counter())[str(record.get("verdict"))] += 1
    out.append('<section id="sources"><h2>Sources</h2><table><thead><tr><th>source</th>')
    out.extend(f"<th>{esc(v)}</th>" for v in VERDICTS)
    out.append("</tr></thead><tbody>")
    for source in sources:
        counts: Mapping[Verdict, int] | Mapping[str, int] | None = per_source.get(source)
        if counts is None:  # a source only the verdicts name
            counts = counted[source]
        out.append(f'<tr><td class="id">{esc(source)}</td>')
        for verdict in VERDICTS:
            count = counts.get(verdict, 0)
            shade = _verdict_class(verdict) if count else ""
            out.append(f'<td class="n {shade}">{esc(count)}</td>')
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
    out.extend(f'<span class="{_verdict_class(v)}">{esc(v)}</span>' for v in VERDICTS)
    out.append("</p><table><thead><tr><th>task</th><th>chosen</th>")
    out.extend(f"<th>{esc(s)}</th>" for s in sources)
    out.append("</tr></thead><tbody>")
    for task in task_ids:
        info = tasks_info.get(task)
        chosen = info.chosen if info is not None else None
        chosen_text = esc(chosen) if chosen is not None else "\u2014"
        out.append(f'<tr><td class="id">{esc(task)}</td><td class="id">{chosen_text}</td>')
        for source in sources:
            cell = by_key.get((task, source))
            if cell is None:
                out.append('<td class="v v-missing">\u2014</td>')
                continue
            shown = cell.get("verdict")
            title = ""
            if cell.get("error"):
                title = f' title="{esc(truncate(str(cell["error"])))}"'
            text = esc(shown)
            anchor = anchors.get(id(cell))
            if anchor is not None:
                text = f'<a href="#{anchor}">{text}</a>'
            out.append(f'<td class="v {_verdict_class(shown)}"{title}>{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table></section>")

    out.append(
        f'<section id="failures"><h2>First failures of invalid verifiers ({len(invalid)})</h2>'
    )
    if not invalid:
        out.append('<p class="meta">No invalid verifiers.</p>')
    out.extend(failure_block(record, anchors[id(record)]) for _, _, record in invalid)
    out.append("</section>")
    if suspects:
        out.append(_differential_section(suspects))
    out.append("</body></html>\n")
    return "".join(out)


def _unsampled_note(manifest: Manifest) -> str:
    """The tasks short of generator samples, counted apart (nothing when there are none)."""
    unsampled = manifest.coverage.unsampled
    if not unsampled:
        return ""
    counted = (
        "valid and counted as covered (--allow-missing-samples)"
        if manifest.allow_missing_samples
        else "<i>valid_unsampled</i>, not counted as covered"
    )
    return (
        f'<p class="unsampled"><b>{esc(unsampled)}</b> tasks had fewer than '
        f"{esc(manifest.samples)} generator samples; "
        f"<b>{esc(manifest.coverage.covered_unsampled or 0)}</b> of them have a verifier right "
        f"on every input they had: {counted}.</p>"
    )


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
        pics = [figure(f"input {shape(grid_in)}", grid_svg(grid_in))]
        if kind == "suspect":
            agreeing = item.get("agreeing_output") or []
            pics.append(figure("generator's output", grid_svg(expected or [], diff=agreeing)))
            pics.append(figure(
                "verifiers' output: " + ", ".join(map(str, item.get("sources") or [])),
                grid_svg(agreeing, diff=expected),
            ))  # fmt: skip
        else:
            if expected is not None:
                pics.append(figure("expected", grid_svg(expected)))
            for option in item.get("outputs") or []:
                grid = option.get("output") or []
                label = ", ".join(map(str, option.get("sources") or []))
                pics.append(figure(label, grid_svg(grid, diff=expected)))
        out.append(
            f'<div class="suspect" data-task="{esc(task)}" data-kind="{esc(kind)}">'
            f'<h3>{esc(task)}: {esc(kind)}</h3><p class="meta">split '
            f"{esc(item.get('split'))}, index {esc(item.get('index'))}, seed "
            f'{esc(item.get("seed"))}</p><div class="pics">{"".join(pics)}</div></div>'
        )
    out.append("</section>")
    return "".join(out)
