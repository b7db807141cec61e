"""What a section of the analysis is, and the names every section shares.

:mod:`.study` lists the sections (``SECTIONS``); the sections in their own modules
(:mod:`.budget`, :mod:`.sampling`, :mod:`.classification`, :mod:`.agreement`) and the
report (:mod:`.report`) import these from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arcjudge.harness.analyze.inputs import COMPLETE_TASKS, AnalysisInputs
from arcjudge.harness.analyze.tables import Share, Table
from arcjudge.harness.dimensions.statistics import full_task_tasks
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension

__all__ = [
    "FULL_TASK",
    "LABELS",
    "MEASURES",
    "POOLED",
    "Section",
    "complete_tasks",
    "from_proportion",
    "full_tasks",
    "models_of",
    "share_json",
]

POOLED = "(all models)"
"""The row label of numbers pooled over every model."""

FULL_TASK = "full_task"
"""The name of the full-task measure beside the dimensions."""

LABELS: dict[str, str] = {
    Dimension.OUTPUT_GRID: "Output grid",
    Dimension.DEFINITION: "Definition",
    Dimension.CLASSIFICATION: "Classification",
    Dimension.GENERATION: "Generation",
    Dimension.EDITING: "Editing",
    Dimension.INVERSION: "Inversion",
    FULL_TASK: "Full task",
}
"""Display names of the measures."""

MEASURES: tuple[str, ...] = (*BUILT_DIMENSIONS, FULL_TASK)
"""Table 3's measures, in column order."""


@dataclass(frozen=True)
class Section:
    """One part of the analysis: its numbers and its tables.

    Attributes:
        key: Its key in ``analysis.json``.
        data: Every number it has (JSON).
        tables: The tables made of them.
    """

    key: str
    data: Mapping[str, Any]
    tables: tuple[Table, ...]


def share_json(share: Share | None) -> dict[str, Any] | None:
    """A share's JSON object (``None`` stays ``None``)."""
    return None if share is None else share.to_json()


def from_proportion(entry: Mapping[str, Any] | None) -> Share | None:
    """A :class:`Share` of a ``statistics.proportion`` object (``None`` stays ``None``)."""
    if entry is None:
        return None
    return Share(int(entry["passed"]), int(entry["total"]))


def complete_tasks(inputs: AnalysisInputs) -> list[str]:
    """Tasks with an instance of each of the five dimensions."""
    tasks = {task for task, _ in inputs.instances}
    return full_task_tasks(tasks, inputs.instances.keys(), COMPLETE_TASKS)


def full_tasks(inputs: AnalysisInputs) -> list[str]:
    """The tasks full task (Table 3), Table 7 and Section 3.1 are over.

    Every built task by default (the study's: a dimension without an instance is a
    failure), or only :func:`complete_tasks` with ``full_task_over`` ``complete-tasks``.
    """
    tasks = {task for task, _ in inputs.instances}
    return full_task_tasks(tasks, inputs.instances.keys(), inputs.full_task_over)


def models_of(inputs: AnalysisInputs) -> list[str]:
    """Every model with an item, sorted."""
    return sorted({i.model for i in inputs.items})
