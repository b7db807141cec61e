"""Independent configurations of a build, and the pairs a model had accepted in earlier ones.

The study's increased sampling (Section 3.2) draws K independent *configurations* of every
task and dimension: new candidates, corruptions and targets, and Definition scored on new
generator samples. A configuration is an ordinary build: ``dimensions build
--configurations K --out OUT`` writes ``OUT/configuration-1`` ... ``OUT/configuration-K``,
each what a plain build writes, and ``OUT/configurations.json`` (:func:`configurations_record`).
Configuration ``k`` is built with the seed :func:`configuration_seed` gives, ``seed + (k - 1) *
SEED_STRIDE``: configuration 1 is the plain build with the build's seed, and since generator
sample ``i`` of a build (and of the Definition scoring of its instances) is drawn after
``random.seed(seed + i)``, no two configurations share a generator sample as long as fewer
than :data:`SEED_STRIDE` samples are drawn per task.

Constrained Generation across configurations: a model must not hand in a pair it already
had accepted. :func:`read_earlier_pairs` reads earlier configurations' ``items.jsonl``
(each Generation item records the pair it graded, ``detail.pair``) and gives, per model,
run and task, the pairs of its passed Generation items; :func:`with_earlier_pairs` adds them
to a Generation instance's ``avoid`` list (what ``dimensions prompts`` shows: as further
demonstrations, the study's protocol, or as pairs not to copy), and
``dimensions score`` grades with the same list, so a copy of an earlier accepted pair fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.grids import Grid, GridRejected, to_grid, to_lists
from arcjudge.harness.dimensions.records import DimensionInstance, DimensionItem, read_items
from arcjudge.harness.dimensions.strategies.generation import (
    EARLIER_SHOWN_AS_AVOID,
    EARLIER_SHOWN_FIELD,
)
from arcjudge.vocabulary import Dimension

__all__ = [
    "CONFIGURATIONS_FILE",
    "SEED_STRIDE",
    "EarlierPairs",
    "configuration_name",
    "configuration_seed",
    "configurations_record",
    "generated_pair",
    "read_earlier_pairs",
    "with_earlier_pairs",
]

SEED_STRIDE = 1_000_000
"""Seeds of consecutive configurations are this far apart (more than any sample count)."""

CONFIGURATIONS_FILE = "configurations.json"
"""The list of a multi-configuration build's configurations, in its output directory."""

GridPair = tuple[Grid, Grid]
Cell = tuple[str, str]
"""``(model, run)``."""


def configuration_seed(seed: int, configuration: int) -> int:
    """The seed configuration ``configuration`` (1, 2, ...) of a build with ``seed`` uses.

    Raises:
        ValueError: For a configuration number below 1.
    """
    if configuration < 1:
        raise ValueError(f"configuration numbers start at 1, not {configuration}")
    return seed + (configuration - 1) * SEED_STRIDE


def configuration_name(configuration: int) -> str:
    """The directory of a configuration inside the build's output: ``configuration-K``."""
    return f"configuration-{configuration}"


def configurations_record(seed: int, count: int) -> dict[str, Any]:
    """``configurations.json``: the build's seed, the stride, and each configuration.

    Each configuration is ``{"configuration", "seed", "directory"}``, the directory
    relative to the file's own.
    """
    return {
        "seed": seed,
        "seed_stride": SEED_STRIDE,
        "configurations": [
            {
                "configuration": k,
                "seed": configuration_seed(seed, k),
                "directory": configuration_name(k),
            }
            for k in range(1, count + 1)
        ],
    }


def generated_pair(item: DimensionItem) -> GridPair | None:
    """The pair a Generation item graded (its ``detail.pair``), ``None`` when it has none.

    Raises:
        ValueError: The recorded pair is not a pair of grids.
    """
    recorded = item.detail.get("pair")
    if item.dimension is not Dimension.GENERATION or recorded is None:
        return None
    try:
        return to_grid(recorded["input"]), to_grid(recorded["output"])
    except (KeyError, TypeError, GridRejected) as exc:
        raise ValueError(f"detail.pair is not a pair of grids ({exc})") from None


@dataclass(frozen=True)
class EarlierPairs:
    """The pairs each model and run had accepted in earlier configurations.

    Attributes:
        files: The ``items.jsonl`` files read, in order.
        cells: Every ``(model, run)`` with an item in them.
        pairs: ``(model, run)`` -> task -> the pairs of its passed Generation items, in
            file order, each pair once.
    """

    files: tuple[Path, ...]
    cells: frozenset[Cell]
    pairs: Mapping[Cell, Mapping[str, tuple[GridPair, ...]]]

    def of(self, model: str, run: str, task_id: str) -> tuple[GridPair, ...]:
        """The pairs ``model`` had accepted in ``run`` for ``task_id`` (maybe none)."""
        return tuple(self.pairs.get((model, run), {}).get(task_id, ()))

    def for_cell(self, model: str, run: str) -> dict[str, tuple[GridPair, ...]]:
        """Task -> the pairs ``model`` had accepted in ``run``."""
        return dict(self.pairs.get((model, run), {}))

    def counts(self) -> dict[str, dict[str, int]]:
        """Model -> run -> how many accepted pairs (for summaries), every cell listed."""
        found: dict[str, dict[str, int]] = {}
        for model, run in sorted(self.cells):
            tasks = self.pairs.get((model, run), {})
            found.setdefault(model, {})[run] = sum(len(p) for p in tasks.values())
        return found


def read_earlier_pairs(paths: Sequence[Path]) -> EarlierPairs:
    """Read earlier configurations' ``items.jsonl``: the pairs each model and run had accepted.

    An accepted pair is the pair of a passed Generation item (``detail.pair``).

    Raises:
        InputError: A file cannot be read or holds a line that is no item, or a passed
            Generation item records no pair (items scored before items recorded it).
    """
    cells: set[Cell] = set()
    pairs: dict[Cell, dict[str, list[GridPair]]] = {}
    for path in paths:
        for item in read_items(path):
            cells.add((item.model, item.run))
            if item.dimension is not Dimension.GENERATION or not item.passed:
                continue
            where = f"{path}: the Generation item of {item.model} run {item.run} {item.task_id}"
            try:
                pair = generated_pair(item)
            except ValueError as exc:
                raise InputError(f"{where}: {exc}") from None
            if pair is None:
                raise InputError(
                    f"{where} passed but records no generated pair (detail.pair; scored "
                    "before items recorded it: score it again)"
                )
            found = pairs.setdefault((item.model, item.run), {}).setdefault(item.task_id, [])
            if pair not in found:
                found.append(pair)
    frozen = {cell: {t: tuple(ps) for t, ps in tasks.items()} for cell, tasks in pairs.items()}
    return EarlierPairs(tuple(paths), frozenset(cells), frozen)


def with_earlier_pairs(
    instances: Iterable[DimensionInstance],
    pairs: Mapping[str, Sequence[GridPair]],
    listed_as_avoid: bool = False,
) -> list[DimensionInstance]:
    """The instances, each Generation instance's ``avoid`` extended by its task's pairs.

    The pairs come after the demonstrations, in order; a pair already in the list is not
    added again. The prompt shows them as further demonstrations (the study's protocol);
    with ``listed_as_avoid`` the instance's prompt says ``"earlier_shown": "avoid"`` and
    they are listed as pairs not to copy. Other instances, and Generation instances of
    tasks without pairs, are returned as they are.
    """
    result = []
    for instance in instances:
        extra = pairs.get(instance.task_id, ())
        if instance.dimension is Dimension.GENERATION and extra:
            avoid = list(instance.avoid())
            added = [p for p in dict.fromkeys(extra) if p not in avoid]
            listed = [*instance.prompt["avoid"]]
            listed += [{"input": to_lists(i), "output": to_lists(o)} for i, o in added]
            prompt = {**instance.prompt, "avoid": listed}
            if listed_as_avoid:
                prompt[EARLIER_SHOWN_FIELD] = EARLIER_SHOWN_AS_AVOID
            instance = replace(instance, prompt=prompt)
        result.append(instance)
    return result
