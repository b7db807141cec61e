"""Table 6's sd at budget 1: the spread of one configuration's accuracies over runs.

With one configuration there is no spread over configurations; the study reports the sd
at ``k = 1`` over the runs instead (each run's accuracy of a measure, computed as Table 3
does on that run's items alone). :func:`run_sd` gives it per measure.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from arcjudge.harness.analyze.sections import FULL_TASK
from arcjudge.harness.analyze.tables import rounded
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.harness.dimensions.statistics import model_statistics

__all__ = ["run_accuracies", "run_sd"]


def run_accuracies(
    items: Sequence[DimensionItem], full_tasks: Sequence[str], model: str, measures: Sequence[str]
) -> dict[str, list[float]]:
    """Per measure, ``model``'s accuracy in each of its runs (runs without the measure left out).

    Args:
        items: One configuration's items (every model's).
        full_tasks: The configuration's tasks with all five instances.
        model: The model.
        measures: ``full_task`` and dimension names.
    """
    runs = sorted({i.run for i in items if i.model == model})
    found: dict[str, list[float]] = {m: [] for m in measures}
    for run in runs:
        mine = [i for i in items if i.model == model and i.run == run]
        entry = model_statistics(mine, full_tasks)[model]
        for measure in measures:
            share: Mapping[str, int] | None = (
                entry["full_task"] if measure == FULL_TASK else entry["dimensions"][measure]
            )
            if share is not None and share["total"]:
                found[measure].append(share["passed"] / share["total"])
    return found


def run_sd(
    items: Sequence[DimensionItem], full_tasks: Sequence[str], model: str, measures: Sequence[str]
) -> dict[str, dict[str, float | int | None]]:
    """Per measure, ``{"runs", "sd"}``: the sample sd (n - 1) over runs (``None`` below two)."""
    return {
        measure: {
            "runs": len(values),
            "sd": rounded(statistics.stdev(values)) if len(values) > 1 else None,
        }
        for measure, values in run_accuracies(items, full_tasks, model, measures).items()
    }
