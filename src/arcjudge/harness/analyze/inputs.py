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

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arcjudge.errors import InputError
from arcjudge.harness.dimensions.records import (
    DimensionInstance,
    DimensionItem,
    read_instances,
)
from arcjudge.harness.dimensions.records import read_items as read_item_records
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import Dimension

__all__ = [
    "AnalysisInputs",
    "Configuration",
    "read_definition_results",
    "read_inputs",
    "read_instance_records",
    "read_items",
]

T = TypeVar("T")


def _records(path: Path, what: str, read: Callable[[Mapping[str, Any]], T]) -> list[T]:
    """Every non-blank line of a JSONL file through ``read``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    found: list[T] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            found.append(read(data))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}:{number}: not {what} ({exc})") from None
    return found


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
    return tuple(_records(path, "a score result", ScoreResult.from_json))


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
        configurations: Configurations 2, 3, ... of the build (``build --configurations``),
            in order, each its items and instances; ``items`` and ``instances`` are
            configuration 1. Empty: one configuration (Section 3.2 is not computed).
    """

    items: tuple[DimensionItem, ...]
    instances: Mapping[tuple[str, Dimension], DimensionInstance]
    definitions: tuple[ScoreResult, ...] | None = None
    exclude_models: tuple[str, ...] = ()
    configurations: tuple[Configuration, ...] = ()

    def check(self) -> None:
        """Check that every item has its instance (the items are of this build).

        Raises:
            InputError: An item whose task and dimension have no instance (in its own
                configuration).
        """
        _check_items(self.items, self.instances)
        for number, (items, instances) in enumerate(self.configurations, 2):
            _check_items(items, instances, f"configuration {number}: ")


def read_inputs(
    items_file: Path,
    instances_file: Path,
    definitions: Path | None = None,
    exclude_models: tuple[str, ...] = (),
    configurations: Sequence[tuple[Path, Path]] = (),
) -> AnalysisInputs:
    """Read and check every input.

    Args:
        items_file: ``items.jsonl`` (configuration 1).
        instances_file: The instances it was graded on.
        definitions: Definition results, if any.
        exclude_models: Models left out of Table 9's second pooled row.
        configurations: ``(items.jsonl, instances.jsonl)`` of configurations 2, 3, ...

    Raises:
        InputError: A file cannot be read, or the items are not of these instances.
    """
    inputs = AnalysisInputs(
        read_items(items_file),
        read_instance_records(instances_file),
        None if definitions is None else read_definition_results(definitions),
        exclude_models,
        tuple((read_items(i), read_instance_records(n)) for i, n in configurations),
    )
    inputs.check()
    return inputs
