"""What every table is counted over: its n (tasks x runs) and the tasks left out, with why.

Two kinds of task are not everywhere:

* tasks the build left out (``build.json``'s ``skipped``: no valid verifier, no task
  file...): in no table;
* built tasks without an instance of one of the five dimensions: in that dimension's
  count they are simply absent; in full task, Table 7 and Section 3.1 they count as a
  failure by default (the study's reading: every task counts, n = tasks x runs), or are
  left out with ``--full-task-over complete-tasks``.

:func:`denominators` is the ``denominators`` section (per model its n, and the tasks left
out); :func:`scope_note` is the sentence the full-task tables add to their notes.
"""

from __future__ import annotations

from typing import Any

from arcjudge.harness.analyze.inputs import COMPLETE_TASKS, AnalysisInputs
from arcjudge.harness.analyze.sections import Section, complete_tasks, full_tasks
from arcjudge.harness.analyze.tables import Cell, Column, Table
from arcjudge.harness.dimensions.statistics import missing_dimensions as missing_dimensions_of

__all__ = ["denominators", "missing_dimensions", "scope_note"]

NAMED = 10
"""Tasks named in a note before the rest are left to ``tables/tasks_left_out``."""


def missing_dimensions(inputs: AnalysisInputs) -> dict[str, list[str]]:
    """Built task -> the dimensions it has no instance of (tasks missing none left out)."""
    return missing_dimensions_of({task for task, _ in inputs.instances}, inputs.instances.keys())


def _named(tasks: list[str]) -> str:
    shown = ", ".join(tasks[:NAMED])
    return shown + (f" and {len(tasks) - NAMED} more" if len(tasks) > NAMED else "")


def scope_note(inputs: AnalysisInputs) -> str:
    """The sentence saying which tasks full task is over, and which are left out why."""
    missing = missing_dimensions(inputs)
    count = len(full_tasks(inputs))
    if inputs.full_task_over == COMPLETE_TASKS:
        text = (f"Full task over the {count} tasks with all five instances "
                "(--full-task-over complete-tasks)")  # fmt: skip
        if missing:
            text += f"; left out, missing a dimension: {_named(sorted(missing))}"
    else:
        text = f"Full task over every built task ({count}; n = tasks x runs)"
        if missing:
            text += (f"; a dimension without an instance counts as a failure: "
                     f"{_named(sorted(missing))}")  # fmt: skip
    if inputs.skipped:
        text += f"; not built (in no table): {_named(sorted(inputs.skipped))}"
    return text + ". Why: tables/tasks_left_out."


def denominators(inputs: AnalysisInputs) -> Section:
    """Per model the full task's n (tasks x runs); every task left out or incomplete, why."""
    full = full_tasks(inputs)
    missing = missing_dimensions(inputs)
    complete = len(complete_tasks(inputs))
    built = len({task for task, _ in inputs.instances})
    models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model in sorted({i.model for i in inputs.items}):
        runs = len({i.run for i in inputs.items if i.model == model})
        models[model] = {"runs": runs, "tasks": len(full), "n": runs * len(full)}
        rows.append((model, runs, len(full), runs * len(full)))
    counted = inputs.full_task_over != COMPLETE_TASKS
    effect = (
        "in full task, Table 7 and Section 3.1 as a failure"
        if counted
        else "left out of full task, Table 7 and Section 3.1"
    )
    left: list[tuple[Cell, ...]] = [
        (task, f"no instance of {', '.join(dims)}", effect)
        for task, dims in sorted(missing.items())
    ]
    left += [(task, why, "in no table (not built)") for task, why in sorted(inputs.skipped.items())]
    data = {
        "full_task_over": inputs.full_task_over,
        "tasks_built": built,
        "complete_tasks": complete,
        "full_tasks": len(full),
        "missing_dimensions": missing,
        "not_built": dict(sorted(inputs.skipped.items())),
        "models": models,
    }
    per_model = Table(
        "denominators",
        "Denominators: full task's n per model",
        f"{scope_note(inputs)} Tasks built: {built}; with all five instances: {complete}; "
        f"not built: {len(inputs.skipped)}. Per-dimension rates are over each dimension's "
        "own instances (Table 3's totals).",
        (
            Column("model"),
            Column("runs", "int", "Runs"),
            Column("tasks", "int", "Tasks (full task)"),
            Column("n", "int", "n = tasks x runs"),
        ),
        tuple(rows),
    )
    left_out = Table(
        "tasks_left_out",
        "Tasks left out or incomplete, and why",
        "Built tasks without an instance of some dimension (the build could not draw one: "
        "build.json's tasks.TASK.missing_dimensions), then the tasks the build skipped "
        "(build.json's skipped, with its reason: no valid verifier, no task file...).",
        (Column("task"), Column("why"), Column("effect", "text", "Where it counts")),
        tuple(left),
    )
    return Section("denominators", data, (per_model, left_out))
