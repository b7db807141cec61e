"""Per-model statistics of scored dimension items (pooled over runs).

An *item* is one ``(model, run, task, dimension)`` with ``passed``: a
:class:`~arcjudge.harness.dimensions.records.DimensionItem`. Statistics per model:

* each dimension's accuracy with a Wilson 95% interval (``None`` when the model has no
  item of that dimension: it was not answered, or no Definition results were given);
* Classification per-judgment accuracy (5 judgments per item);
* full-task accuracy: the share of ``(run, task)`` with all five PotARCin dimensions
  passed, over the tasks the caller gives (:func:`full_task_tasks`: every built task by
  default, a dimension without an instance a failure; or only the tasks with all five);
* the output-grid accuracy (the standard ARC test, among the dimensions) and its drop to
  full-task accuracy (output grid minus full task, in accuracy points from 0 to 1);
* the independence baseline: the product of the five dimension accuracies, what full-task
  accuracy would be if passing one dimension said nothing about another;
* self-consistency: how often the model's own Definition program agrees with its
  Classification judgments, its generated pair and its inverted input, split by whether
  the answer was right, over all items and over items whose Definition program passes the
  task's train and test pairs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from arcjudge.harness.core.stats import wilson_interval
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.vocabulary import BUILT_DIMENSIONS, CONSISTENCY_DIMENSIONS, DIMENSIONS, Dimension

__all__ = [
    "COMPLETE_TASKS",
    "CONSISTENCY_DIMENSIONS",
    "DIMENSIONS",
    "EVERY_TASK",
    "FULL_TASK_OVER",
    "full_task_tasks",
    "missing_dimensions",
    "model_statistics",
    "proportion",
]

EVERY_TASK = "every-task"
"""Full task over every built task, a missing dimension a failure (the study's n; default)."""

COMPLETE_TASKS = "complete-tasks"
"""Full task over the tasks with all five instances only (arcjudge before issue 32)."""

FULL_TASK_OVER: tuple[str, ...] = (EVERY_TASK, COMPLETE_TASKS)
"""The choices of ``--full-task-over``, the default first."""


def missing_dimensions(
    tasks: Iterable[str], built: Collection[tuple[str, Dimension]]
) -> dict[str, list[str]]:
    """Task -> the PotARCin dimensions it has no instance of (tasks missing none left out).

    Args:
        tasks: The built tasks.
        built: The ``(task, dimension)`` pairs with an instance.
    """
    found = {t: [str(d) for d in DIMENSIONS if (t, d) not in built] for t in sorted(set(tasks))}
    return {t: dims for t, dims in found.items() if dims}


def full_task_tasks(
    tasks: Iterable[str], built: Collection[tuple[str, Dimension]], over: str = EVERY_TASK
) -> list[str]:
    """The tasks full task is over: every built task, or only the complete ones.

    Args:
        tasks: The built tasks.
        built: The ``(task, dimension)`` pairs with an instance.
        over: :data:`EVERY_TASK` or :data:`COMPLETE_TASKS`.

    Raises:
        ValueError: ``over`` is neither.
    """
    if over not in FULL_TASK_OVER:
        raise ValueError(f"full task over {over!r}: not one of {FULL_TASK_OVER}")
    every = sorted(set(tasks))
    if over == EVERY_TASK:
        return every
    return [t for t in every if all((t, d) in built for d in DIMENSIONS)]


def proportion(successes: int, total: int) -> dict[str, Any]:
    """``{"passed", "total", "accuracy", "ci95"}``, rounded to 6 decimals."""
    low, high = wilson_interval(successes, total)
    return {
        "passed": successes,
        "total": total,
        "accuracy": round(successes / total, 6) if total else None,
        "ci95": [round(low, 6), round(high, 6)] if total else None,
    }


def _agreement(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """``pairs`` of ``(agree, right)``: agreement overall and split by right/wrong."""
    counts = {"right": [0, 0], "wrong": [0, 0], "all": [0, 0]}
    for agree, right in pairs:
        for group in ("right" if right else "wrong", "all"):
            counts[group][0] += agree
            counts[group][1] += 1
    return {
        group: {
            "agree": a,
            "total": n,
            "rate": round(a / n, 6) if n else None,
        }
        for group, (a, n) in counts.items()
    }


def _consistency_pairs(item: DimensionItem) -> list[tuple[bool, bool]]:
    """``(agree, right)`` per judgment (classification) or per item."""
    info = item.consistency
    if info is None:
        return []
    if isinstance(info.agree, tuple):  # classification: per judgment
        return [(bool(a), bool(r)) for a, r in zip(info.agree, info.right or (), strict=True)]
    return [(info.agree, item.passed)]


def _self_consistency(items: Sequence[DimensionItem]) -> dict[str, Any] | None:
    with_info = [i for i in items if i.consistency is not None]
    if not with_info:
        return None
    result = {}
    for condition in ("all", "definition_passes_train_test"):
        chosen = [
            i
            for i in with_info
            if condition == "all"
            or (i.consistency is not None and i.consistency.definition_passes_train_test)
        ]
        result[condition] = {
            dim: _agreement(p for i in chosen if i.dimension == dim for p in _consistency_pairs(i))
            for dim in CONSISTENCY_DIMENSIONS
        }
    return result


def model_statistics(
    items: Iterable[DimensionItem], full_tasks: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Statistics per model.

    Args:
        items: The graded items.
        full_tasks: The tasks full-task accuracy is counted over (:func:`full_task_tasks`);
            a dimension without an item there is a failure.

    Returns:
        Model name -> ``{"runs", "dimensions", "classification_judgments", "full_task",
        "output_grid_drop", "independence_baseline", "self_consistency"}`` (models in sorted
        order; ``dimensions`` has every built dimension, the output grid included).
    """
    by_model: dict[str, list[DimensionItem]] = defaultdict(list)
    for item in items:
        by_model[item.model].append(item)
    complete = set(full_tasks)
    result: dict[str, dict[str, Any]] = {}
    for model in sorted(by_model):
        mine = by_model[model]
        dims: dict[str, dict[str, Any] | None] = {}
        for dim in BUILT_DIMENSIONS:
            these = [i for i in mine if i.dimension == dim]
            dims[dim] = proportion(sum(i.passed for i in these), len(these)) if these else None
        judged = [i for i in mine if i.dimension == Dimension.CLASSIFICATION]
        right = sum(int(i.detail.get("right", 0)) for i in judged)
        judgments = 5 * len(judged)
        full = None
        baseline = None
        if all(dims[d] is not None for d in DIMENSIONS):
            cells: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
            for i in mine:
                if i.task_id in complete:
                    cells[(i.run, i.task_id)][i.dimension] = i.passed
            passed = sum(all(c.get(d, False) for d in DIMENSIONS) for c in cells.values())
            full = proportion(passed, len(cells))
            rates = [e["passed"] / e["total"] for d, e in dims.items() if d in DIMENSIONS and e]
            baseline = round(math.prod(rates), 6)
        grid = dims[Dimension.OUTPUT_GRID]
        drop = None
        if grid is not None and full is not None and full["accuracy"] is not None:
            drop = round(grid["passed"] / grid["total"] - full["passed"] / full["total"], 6)
        result[model] = {
            "runs": sorted({i.run for i in mine}),
            "dimensions": dims,
            "classification_judgments": {
                "right": right,
                "total": judgments,
                "accuracy": round(right / judgments, 6) if judgments else None,
            },
            "full_task": full,
            "output_grid_drop": drop,
            "independence_baseline": baseline,
            "self_consistency": _self_consistency(mine),
        }
    return result
