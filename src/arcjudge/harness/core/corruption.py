"""A corrupted pair: a killed mutant's wrong output on one input (a ``corruptions.jsonl`` line).

``arcjudge mutate`` writes these records and ``arcjudge dimensions build --corruptions``
reads them back, so the record lives in the core, which both workflows import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from arcjudge.grids import Grid, to_grid, to_lists
from arcjudge.vocabulary import CandidateKind, Split

__all__ = ["CorruptionRecord"]


def _typed(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]``, checked to be a ``kind`` (a boolean passes only for ``bool``)."""
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TypeError(f"{key} is a {type(value).__name__}")
    return value


@dataclass(frozen=True)
class CorruptionRecord:
    """A mutant's wrong output on an input where the original verifier is right.

    Attributes:
        task_id: The task.
        mutant_id: The killed mutant (``{task_id}:{source}:{operator}:{anchor}[:{variant}]``).
        split: The split of the input.
        index: The input's index in its split.
        input: The input grid.
        output: The mutant's (wrong) output.
        correct_output: The true output, which the original verifier returns too.
        hamming: Padded, normalized Hamming distance of ``output`` to ``correct_output``,
            rounded to 6 places.
        same_shape: Whether ``output`` has the shape of ``correct_output``.
    """

    KIND: ClassVar[CandidateKind] = CandidateKind.CORRUPTED_VERIFIER
    """The candidate kind of every such pair (the record's ``kind`` key)."""

    task_id: str
    mutant_id: str
    split: Split
    index: int
    input: Grid
    output: Grid
    correct_output: Grid
    hamming: float
    same_shape: bool

    def to_json(self) -> dict[str, Any]:
        """The ``corruptions.jsonl`` object (grids as lists of lists)."""
        return {
            "task_id": self.task_id,
            "kind": self.KIND,
            "mutant_id": self.mutant_id,
            "split": self.split,
            "index": self.index,
            "input": to_lists(self.input),
            "output": to_lists(self.output),
            "correct_output": to_lists(self.correct_output),
            "hamming": self.hamming,
            "same_shape": self.same_shape,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorruptionRecord:
        """Read what :meth:`to_json` wrote (keys beyond those are ignored).

        ``task_id``, ``input`` and ``output`` are checked first, in that order.

        Raises:
            KeyError: A key is missing.
            TypeError: A value has the wrong type (or ``data`` is not a mapping).
            ValueError: A grid is not a grid (:class:`~arcjudge.grids.GridRejected`), the
                split or the kind is not one of the vocabulary's.
        """
        task_id = str(data["task_id"])
        grid_in, grid_out = to_grid(data["input"]), to_grid(data["output"])
        correct = to_grid(data["correct_output"])
        if data["kind"] != cls.KIND:
            raise ValueError(f"kind is {data['kind']!r}, not {cls.KIND.value!r}")
        return cls(
            task_id=task_id,
            mutant_id=_typed(data, "mutant_id", str),
            split=Split(data["split"]),
            index=_typed(data, "index", int),
            input=grid_in,
            output=grid_out,
            correct_output=correct,
            hamming=float(_typed(data, "hamming", (int, float))),
            same_shape=_typed(data, "same_shape", bool),
        )
