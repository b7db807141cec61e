"""A corrupted pair: a killed mutant's wrong output on one input (a ``corruptions.jsonl`` line).

``arcjudge mutate`` writes these records and ``arcjudge dimensions build --corruptions``
reads them back, so the record lives in the core, which both workflows import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from arcjudge.grids import Grid
from arcjudge.harness.core.record import Record, spec
from arcjudge.vocabulary import CandidateKind, Split

__all__ = ["CorruptionRecord"]


@dataclass(frozen=True)
class CorruptionRecord(Record):
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
        kind: :attr:`KIND`, written, never given (checked when read).
    """

    KIND: ClassVar[CandidateKind] = CandidateKind.CORRUPTED_VERIFIER
    """The candidate kind of every such pair (the record's ``kind`` key)."""

    task_id: str
    kind: CandidateKind = field(
        init=False, default=CandidateKind.CORRUPTED_VERIFIER, metadata=spec(derived=True)
    )
    mutant_id: str
    split: Split
    index: int
    input: Grid
    output: Grid
    correct_output: Grid
    hamming: float
    same_shape: bool
