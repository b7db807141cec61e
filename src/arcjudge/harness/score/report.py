"""The self-contained HTML report of ``arcjudge score`` (pieces: ``harness.core.html``)."""

from __future__ import annotations

from collections.abc import Sequence

from arcjudge.harness.core.html import PAGE_CSS, esc, failure_block
from arcjudge.harness.score.records import ScoreResult, ScoreSummary
from arcjudge.safetext import clean_json
from arcjudge.vocabulary import FAILURE_CLASSES, ScoreFailure

__all__ = ["SCORE_FAILURES_SHOWN", "render_score_report"]

SCORE_FAILURES_SHOWN = 300

_SHOWN_ORDER = (ScoreFailure.RULE, ScoreFailure.RUNTIME, ScoreFailure.STATIC, ScoreFailure.INFRA)
"""Failed programs are shown in this order of their failure."""


def render_score_report(summary: ScoreSummary, results: Sequence[ScoreResult]) -> str:
    """Render the HTML report of one ``arcjudge score`` run.

    Args:
        summary: The run's summary (``groups`` per model and ``(all)``).
        results: The run's results.

    Returns:
        A self-contained HTML document: a table per model and pictures of first failures
        (at most ``SCORE_FAILURES_SHOWN``, rule failures first).
    """
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>arcjudge score report</title>",
        f"<style>{PAGE_CSS}</style></head><body><h1>arcjudge score report</h1>",
        f'<section id="summary"><h2>Summary</h2><p class="meta">{esc(summary.programs)}'
        f" programs, seed {esc(summary.seed)}, samples {esc(summary.samples)}</p>",
        "<table><thead><tr><th>model</th><th>programs</th><th>passed</th><th>pass rate</th>"
        "<th>95% CI</th><th>static</th><th>runtime</th><th>rule</th><th>infra</th></tr></thead>"
        "<tbody>",
    ]
    for name, group in summary.groups.items():
        g = group.to_json()
        low, high = g["pass_rate_ci95"]
        fails = g["failures"]
        out.append(
            f"<tr><td>{esc(name)}</td><td>{esc(g['programs'])}</td>"
            f"<td>{esc(g['passed'])}</td><td>{g['pass_rate']:.3f}</td>"
            f"<td>[{low:.3f}, {high:.3f}]</td>"
            + "".join(f"<td>{esc(fails[c])}</td>" for c in FAILURE_CLASSES)
            + f"<td>{esc(fails[ScoreFailure.INFRA])}</td></tr>"
        )
    out.append("</tbody></table></section>")
    # Shown as written: each record's JSON object, lone surrogates escaped.
    failed = [(r.failure, clean_json(r.to_json())) for r in results if r.failure is not None]
    order = {f: i for i, f in enumerate(_SHOWN_ORDER)}
    failed.sort(key=lambda fr: (order[fr[0]], str(fr[1].get("model", ""))))
    out.append(f'<section id="failures"><h2>First failures ({len(failed)} failed programs')
    if len(failed) > SCORE_FAILURES_SHOWN:
        out.append(f", the first {SCORE_FAILURES_SHOWN} shown")
    out.append(")</h2>")
    for number, (failure, record) in enumerate(failed[:SCORE_FAILURES_SHOWN]):
        label = "/".join(str(record[k]) for k in ("model", "id") if k in record)
        shown = {**record, "source": f"{label} ({failure})"}
        out.append(failure_block(shown, f"f{number}"))
    out.append("</section></body></html>")
    return "".join(out)
