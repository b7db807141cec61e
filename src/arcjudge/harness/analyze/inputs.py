"""What ``arcjudge dimensions analyze`` reads: items, instances and Definition results.

* ``items.jsonl`` of ``dimensions score`` (:class:`DimensionItem` lines);
* ``instances.jsonl`` of ``dimensions build`` (:class:`DimensionInstance` lines), the build
  the items were graded against;
* optionally the Definition results: ``definitions.jsonl`` of ``dimensions score
  --replies``, or an ``arcjudge score`` output (its ``results.jsonl``, or the directory
  holding it); both are :class:`ScoreResult` lines.

Every reader raises :class:`~arcjudge.errors.InputError` naming the file and line of a
record it cannot read; nothing is run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.harness.analyze.selection import SAMPLED_TASKS, read_task_list
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.dimensions.records import (
    DimensionInstance,
    DimensionItem,
    read_build_info,
    read_build_repeats,
    read_instances,
)
from arcjudge.harness.dimensions.records import read_items as read_item_records
from arcjudge.harness.dimensions.statistics import COMPLETE_TASKS, EVERY_TASK, FULL_TASK_OVER
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import Dimension

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "COMPLETE_TASKS",
    "EVERY_TASK",
    "FULL_TASK_OVER",
    "AnalysisInputs",
    "Assignments",
    "BudgetTasks",
    "Configuration",
    "SamplingTasks",
    "read_build_skipped",
    "read_dataset",
    "read_definition_results",
    "read_inputs",
    "read_instance_records",
    "read_items",
]

BOOTSTRAP_RESAMPLES = 10_000
"""Bootstrap resamples (Section 3.1's interval of the mean difference) by default."""


class BudgetTasks(StrEnum):
    """Which tasks Section 3.1 compares, per model (``analyze --budget-tasks``)."""

    PASSED_ALL_FIVE = "passed-all-five"
    """The default, as the study: the tasks the model passed on all five dimensions in at
    least one of its runs (of those with all five instances)."""
    EVERY = "every"
    """arcjudge's rule before: every task with all five instances, whatever the model did."""


class Assignments(StrEnum):
    """How *five dimensions once* assigns the dimensions to a subset's five runs."""

    ALL = "all"
    """The default: all ``5! = 120`` one-to-one assignments, averaged (exact)."""
    ROTATIONS = "rotations"
    """The study's choice: the five cyclic rotations of the dimensions' order over the
    subset's runs in run order."""


class SamplingTasks(StrEnum):
    """Which tasks Section 3.2 (Table 6) is computed over, per model (``--sampling-tasks``)."""

    STUDY = "study"
    """The default, as the study: a seeded random draw of (50) tasks the model passed on
    all five dimensions in configuration 1, minus the exclusion list."""
    EVERY = "every"
    """arcjudge's rule before: every task, whatever the model did."""


def read_build_skipped(instances_file: Path) -> dict[str, str]:
    """The tasks the build left out, with why (``build.json``'s ``skipped`` beside it).

    Empty when there is no ``build.json``.

    Raises:
        InputError: The ``build.json`` is there but not a build record.
    """
    path = instances_file.parent / "build.json"
    if not path.is_file():
        return {}
    return {str(t): str(why) for t, why in sorted(read_build_info(path).skipped.items())}


def read_items(path: Path) -> tuple[DimensionItem, ...]:
    """Read ``items.jsonl``.

    Raises:
        InputError: A line is not an item record, or there is none.
    """
    return read_item_records(path)  # the one reader of items.jsonl (dimensions')


def read_instance_records(path: Path) -> dict[tuple[str, Dimension], DimensionInstance]:
    """Read ``instances.jsonl``: ``(task_id, dimension)`` -> instance.

    Raises:
        InputError: A line is not an instance record, an instance comes twice, or there is
            none.
    """
    return read_instances(path)  # the one reader of instances.jsonl (dimensions score's)


def read_definition_results(path: Path) -> tuple[ScoreResult, ...]:
    """Read Definition results: a ``results.jsonl``/``definitions.jsonl``, or a directory.

    A directory is an ``arcjudge score`` output: its ``results.jsonl`` is read.

    Raises:
        InputError: A line is not a score result.
    """
    if path.is_dir():
        path = path / "results.jsonl"
    return tuple(r for _, r in read_records(path, ScoreResult.from_json, "a score result"))


def read_dataset(instances_file: Path) -> str | None:
    """The build's dataset: the name of the task set it read, else of its task directory.

    From the ``build.json`` beside ``instances_file`` (``None``: there is none, or it
    records neither).

    Raises:
        InputError: The ``build.json`` is there but not a build record.
    """
    path = instances_file.parent / "build.json"
    if not path.is_file():
        return None
    info = read_build_info(path)
    if info.task_set and isinstance(info.task_set.get("path"), str):
        return Path(info.task_set["path"]).name or None
    return Path(info.inputs.tasks).name or None if info.inputs is not None else None


Configuration = tuple[tuple[DimensionItem, ...], Mapping[tuple[str, Dimension], DimensionInstance]]
"""One more configuration of the build (Section 3.2): its items and its instances."""


def _check_items(
    items: tuple[DimensionItem, ...],
    instances: Mapping[tuple[str, Dimension], DimensionInstance],
    where: str = "",
) -> None:
    for item in items:
        if (item.task_id, item.dimension) not in instances:
            raise InputError(
                f"{where}item {item.model} run {item.run} {item.task_id} {item.dimension}: no "
                "such instance (items graded against another build?)"
            )


@dataclass(frozen=True)
class AnalysisInputs:
    """Everything an analysis is computed from.

    Attributes:
        items: The graded items (``items.jsonl``).
        instances: The build's instances by ``(task_id, dimension)``.
        definitions: The Definition programs' results (``None``: not given).
        exclude_models: Models left out of Table 9's second pooled row.
        repeats: The repeats the build asked for (``build.json``'s ``repeats``; ``None``:
            not recorded).
        seed: The seed of the bootstrap resampling.
        bootstrap_resamples: How many bootstrap resamples.
        configurations: Configurations 2, 3, ... of the build (``build --configurations``),
            in order, each its items and instances; ``items`` and ``instances`` are
            configuration 1. Empty: one configuration (Section 3.2 is not computed).
        dataset: The build's dataset (:func:`read_dataset`; ``None``: not recorded).
        budget_tasks: Which tasks Section 3.1 compares per model.
        budget_assignments: Which dimension-to-run assignments Section 3.1 averages.
        sampling_tasks: Which tasks Section 3.2 is computed over per model.
        sampling_size: How many tasks Section 3.2 draws per model (``STUDY``).
        exclude_tasks: Task ids Section 3.2 removes after the draw (trivial Definition
            programs), and the file they were read from (``None``: no list).
        full_task_over: :data:`EVERY_TASK` (the study's: every built task counts, a missing
            dimension is a failure) or :data:`COMPLETE_TASKS` (only tasks with all five
            instances): the tasks of full task, Table 7 and Section 3.1.
        skipped: The tasks the build left out (``build.json``'s ``skipped``), with why.
    """

    items: tuple[DimensionItem, ...]
    instances: Mapping[tuple[str, Dimension], DimensionInstance]
    definitions: tuple[ScoreResult, ...] | None = None
    exclude_models: tuple[str, ...] = ()
    repeats: int | None = None
    seed: int = DEFAULT_SEED
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    configurations: tuple[Configuration, ...] = ()
    dataset: str | None = None
    budget_tasks: BudgetTasks = BudgetTasks.PASSED_ALL_FIVE
    budget_assignments: Assignments = Assignments.ALL
    sampling_tasks: SamplingTasks = SamplingTasks.STUDY
    sampling_size: int = SAMPLED_TASKS
    exclude_tasks: tuple[frozenset[str], Path | None] = (frozenset(), None)
    full_task_over: str = EVERY_TASK
    skipped: Mapping[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """Check that every item has its instance (the items are of this build).

        Raises:
            InputError: An item whose task and dimension have no instance (in its own
                configuration).
            ValueError: ``full_task_over`` is not one of :data:`FULL_TASK_OVER`.
        """
        if self.full_task_over not in FULL_TASK_OVER:
            raise ValueError(f"full_task_over: {self.full_task_over!r} not in {FULL_TASK_OVER}")
        _check_items(self.items, self.instances)
        for number, (items, instances) in enumerate(self.configurations, 2):
            _check_items(items, instances, f"configuration {number}: ")


def read_inputs(
    items_file: Path,
    instances_file: Path,
    definitions: Path | None = None,
    exclude_models: tuple[str, ...] = (),
    seed: int = DEFAULT_SEED,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    configurations: Sequence[tuple[Path, Path]] = (),
    budget_tasks: BudgetTasks = BudgetTasks.PASSED_ALL_FIVE,
    budget_assignments: Assignments = Assignments.ALL,
    sampling_tasks: SamplingTasks = SamplingTasks.STUDY,
    sampling_size: int = SAMPLED_TASKS,
    exclude_tasks: Path | None = None,
    full_task_over: str = EVERY_TASK,
) -> AnalysisInputs:
    """Read and check every input (and the build's ``repeats`` beside the instances).

    Args:
        items_file: ``items.jsonl`` (configuration 1).
        instances_file: The instances it was graded on.
        definitions: Definition results, if any.
        exclude_models: Models left out of Table 9's second pooled row.
        seed: The seed of Section 3.1's bootstrap.
        bootstrap_resamples: Its resamples.
        configurations: ``(items.jsonl, instances.jsonl)`` of configurations 2, 3, ...
        budget_tasks: Which tasks Section 3.1 compares per model.
        budget_assignments: Which assignments Section 3.1 averages.
        sampling_tasks: Which tasks Section 3.2 is computed over.
        sampling_size: How many tasks Section 3.2 draws per model.
        exclude_tasks: A file of task ids Section 3.2 leaves out (one a line).
        full_task_over: Which tasks full task is over (:data:`FULL_TASK_OVER`).

    Raises:
        InputError: A file cannot be read, or the items are not of these instances.
    """
    inputs = AnalysisInputs(
        read_items(items_file),
        read_instance_records(instances_file),
        None if definitions is None else read_definition_results(definitions),
        exclude_models,
        read_build_repeats(instances_file),
        seed,
        bootstrap_resamples,
        tuple((read_items(i), read_instance_records(n)) for i, n in configurations),
        read_dataset(instances_file),
        budget_tasks,
        budget_assignments,
        sampling_tasks,
        sampling_size,
        (frozenset() if exclude_tasks is None else read_task_list(exclude_tasks), exclude_tasks),
        full_task_over,
        read_build_skipped(instances_file),
    )
    inputs.check()
    return inputs
