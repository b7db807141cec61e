"""The self-contained HTML report of ``arcjudge score`` (pieces: ``harness.core.html``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arcjudge.harness.core.html import PAGE_CSS, esc, failure_block
from arcjudge.vocabulary import FAILURE_CLASSES

__all__ = ["SCORE_FAILURES_SHOWN", "render_score_report"]

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
        f"<style>{PAGE_CSS}</style></head><body><h1>arcjudge score report</h1>",
        f'<section id="summary"><h2>Summary</h2><p class="meta">{esc(summary.get("programs"))}'
        f" programs, seed {esc(summary.get('seed'))}, samples {esc(summary.get('samples'))}</p>",
        "<table><thead><tr><th>model</th><th>programs</th><th>passed</th><th>pass rate</th>"
        "<th>95% CI</th><th>static</th><th>runtime</th><th>rule</th><th>infra</th></tr></thead>"
        "<tbody>",
    ]
    for name, group in (summary.get("groups") or {}).items():
        low, high = group.get("pass_rate_ci95", [0, 0])
        fails = group.get("failures", {})
        out.append(
            f"<tr><td>{esc(name)}</td><td>{esc(group.get('programs'))}</td>"
            f"<td>{esc(group.get('passed'))}</td><td>{group.get('pass_rate', 0):.3f}</td>"
            f"<td>[{low:.3f}, {high:.3f}]</td>"
            + "".join(f"<td>{esc(fails.get(c, 0))}</td>" for c in FAILURE_CLASSES)
            + f"<td>{esc(fails.get('infra', 0))}</td></tr>"
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
        out.append(failure_block(shown, f"f{number}"))
    out.append("</section></body></html>")
    return "".join(out)
