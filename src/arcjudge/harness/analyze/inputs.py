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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.dimensions.records import (
    DimensionInstance,
    DimensionItem,
    read_build_repeats,
    read_instances,
)
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import Dimension

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "AnalysisInputs",
    "read_definition_results",
    "read_inputs",
    "read_instance_records",
    "read_items",
]

BOOTSTRAP_RESAMPLES = 10_000
"""Bootstrap resamples (Section 3.1's interval of the mean difference) by default."""


def read_items(path: Path) -> tuple[DimensionItem, ...]:
    """Read ``items.jsonl``.

    Raises:
        InputError: A line is not an item record, or there is none.
    """
    items = tuple(r for _, r in read_records(path, DimensionItem.from_json, "an item record"))
    if not items:
        raise InputError(f"{path}: no items")
    return items


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
    """

    items: tuple[DimensionItem, ...]
    instances: Mapping[tuple[str, Dimension], DimensionInstance]
    definitions: tuple[ScoreResult, ...] | None = None
    exclude_models: tuple[str, ...] = ()
    repeats: int | None = None
    seed: int = DEFAULT_SEED
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES

    def check(self) -> None:
        """Check that every item has its instance (the items are of this build).

        Raises:
            InputError: An item whose task and dimension have no instance.
        """
        for item in self.items:
            if (item.task_id, item.dimension) not in self.instances:
                raise InputError(
                    f"item {item.model} run {item.run} {item.task_id} {item.dimension}: no "
                    "such instance (items graded against another build?)"
                )


def read_inputs(
    items_file: Path,
    instances_file: Path,
    definitions: Path | None = None,
    exclude_models: tuple[str, ...] = (),
    seed: int = DEFAULT_SEED,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> AnalysisInputs:
    """Read and check every input (and the build's ``repeats`` beside the instances).

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
    )
    inputs.check()
    return inputs
