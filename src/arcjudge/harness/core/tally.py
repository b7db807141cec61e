"""A candidate's counts on a task's inputs, per split, with its first failure per split.

Verdicts (``validate``) and score results (``score``) both carry one, under the keys
``splits``, ``statuses`` and ``first_failure``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from arcjudge.grids import Grid
from arcjudge.harness.core.record import CELLS, OMIT_DEFAULT, Record, spec

__all__ = ["FirstFailure", "Tally"]


@dataclass(frozen=True)
class FirstFailure(Record):
    """The first input of a split a candidate got wrong.

    Grids are written as lists of lists (read back as rows of ints, with no further
    rule); ``seed`` is written only for generator samples.

    Attributes:
        index: The input's index in its split.
        status: The call's status (``ok`` for a wrong grid).
        input: The input grid.
        expected: The expected output.
        produced: What the candidate returned (``None`` when it returned no grid).
        error: The end of the call's error text, if any.
        seed: The generator seed of a generator sample, else ``None``.
    """

    index: int
    status: str
    input: Grid = field(metadata=spec(codec=CELLS))
    expected: Grid = field(metadata=spec(codec=CELLS))
    produced: Grid | None = field(metadata=spec(codec=CELLS.optional()))
    error: str | None
    seed: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))


@dataclass(frozen=True)
class Tally(Record):
    """Per split: ``(correct, total)``, counts by call status, and the first failure.

    Mappings are in :data:`~arcjudge.vocabulary.REPORTED_SPLITS` order; written as
    ``{"splits": {split: [correct, total]}, "statuses": ..., "first_failure": ...}``.
    """

    splits: Mapping[str, tuple[int, int]]
    statuses: Mapping[str, Mapping[str, int]]
    first_failure: Mapping[str, FirstFailure]
