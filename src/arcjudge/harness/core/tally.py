"""A candidate's counts on a task's inputs, per split, with its first failure per split.

Verdicts (``validate``) and score results (``score``) both carry one, under the keys
``splits``, ``statuses`` and ``first_failure``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arcjudge.grids import Grid

__all__ = ["FirstFailure", "Tally"]


def _lists(grid: Grid | None) -> list[list[int]] | None:
    return None if grid is None else [list(r) for r in grid]


def _grid(value: Any) -> Grid | None:
    return None if value is None else tuple(tuple(row) for row in value)


@dataclass(frozen=True)
class FirstFailure:
    """The first input of a split a candidate got wrong.

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
    input: Grid
    expected: Grid
    produced: Grid | None
    error: str | None
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object (grids as lists; ``seed`` only for generator samples)."""
        record: dict[str, Any] = {
            "index": self.index,
            "status": self.status,
            "input": _lists(self.input),
            "expected": _lists(self.expected),
            "produced": _lists(self.produced),
            "error": self.error,
        }
        if self.seed is not None:
            record["seed"] = self.seed
        return record

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FirstFailure:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A field is missing.
            TypeError: A grid is not a list of lists.
        """
        expected = _grid(data["expected"])
        grid_in = _grid(data["input"])
        if grid_in is None or expected is None:
            raise TypeError("a first failure needs its input and expected grids")
        return cls(
            data["index"],
            data["status"],
            grid_in,
            expected,
            _grid(data["produced"]),
            data["error"],
            data.get("seed"),
        )


@dataclass(frozen=True)
class Tally:
    """Per split: ``(correct, total)``, counts by call status, and the first failure.

    Mappings are in :data:`~arcjudge.vocabulary.REPORTED_SPLITS` order.
    """

    splits: Mapping[str, tuple[int, int]]
    statuses: Mapping[str, Mapping[str, int]]
    first_failure: Mapping[str, FirstFailure]

    def to_json(self) -> dict[str, Any]:
        """``{"splits": {split: [correct, total]}, "statuses": ..., "first_failure": ...}``."""
        return {
            "splits": {k: list(v) for k, v in self.splits.items()},
            "statuses": {k: dict(v) for k, v in self.statuses.items()},
            "first_failure": {k: v.to_json() for k, v in self.first_failure.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        """Read the three keys :meth:`to_json` wrote (from a verdict or a result record).

        Raises:
            KeyError: A key is missing.
            TypeError, ValueError: A value has the wrong shape.
        """
        splits = {k: (int(v[0]), int(v[1])) for k, v in data["splits"].items()}
        statuses = {k: {s: int(n) for s, n in v.items()} for k, v in data["statuses"].items()}
        first = {k: FirstFailure.from_json(v) for k, v in data["first_failure"].items()}
        return cls(splits, statuses, first)
