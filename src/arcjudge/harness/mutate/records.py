"""What ``arcjudge mutate`` writes: a ``mutants.jsonl`` line per mutant, and ``summary.json``.

The corrupted pairs (``corruptions.jsonl``) are
:class:`~arcjudge.harness.core.corruption.CorruptionRecord`, in the core, since
``dimensions build`` reads them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from arcjudge.harness.core.record import OMIT_DEFAULT, Record, spec
from arcjudge.vocabulary import MutantStatus

__all__ = ["MutantRecord", "MutateSummary", "MutationProblem", "OperatorYield"]


@dataclass(frozen=True)
class MutantRecord(Record):
    """One mutant of one verifier source, and how it fared on the task's inputs.

    Attributes:
        id: ``{task_id}:{source}:{operator}:{anchor}[:{variant}]``.
        task_id: The task.
        source: The verifier source's name.
        operator: The mutation operator's name.
        anchor: Content-based name of the changed place.
        variant: Which change at that place, if the operator has several, else ``None``.
        diff: Unified diff of the mutant against the original.
        status: Its class on the inputs.
        counts: Inputs per outcome: ``right``, ``wrong``, a call status or ``not_run``
            (in key order).
    """

    id: str
    task_id: str
    source: str
    operator: str
    anchor: str
    variant: str | None
    diff: str
    status: MutantStatus
    counts: Mapping[str, int]


@dataclass(frozen=True)
class OperatorYield(Record):
    """One operator's mutants: how many were tried, and how many ended in each status.

    Attributes:
        tried: Mutants tried.
        killed: Those wrong on some input (:attr:`MutantStatus.KILLED`).
        equivalent_on_evidence: Those right on every input tried.
        crashes: Those that did not load or failed on every input.
        invalid_output: Those with missing or non-grid answers, never wrong.

    The statuses are :data:`~arcjudge.vocabulary.MUTANT_STATUSES`, in their order.
    """

    tried: int
    killed: int
    equivalent_on_evidence: int
    crashes: int
    invalid_output: int

    @classmethod
    def of(cls, statuses: Iterable[MutantStatus]) -> Self:
        """The yield of some mutants, given their statuses."""
        listed = list(statuses)
        return cls(len(listed), **{s.value: listed.count(s) for s in MutantStatus})


@dataclass(frozen=True)
class MutationProblem(Record):
    """Why a verifier source of a task could not be mutated.

    Attributes:
        source: The source's name.
        error: What went wrong (its file refused, or the mutation engine's error).
    """

    source: str
    error: str


@dataclass(frozen=True, kw_only=True)
class MutateSummary(Record):
    """``summary.json``: the run's settings, the yield per operator and the coverage.

    Attributes:
        target_pairs: ``--target-pairs`` (written only when given).
        seed: The input seed.
        inputs: Inputs per task the mutants run on.
        demonstration_inputs: Whether the mutants also ran on the demonstrations.
        operator_set: ``all``, ``given`` (``--operators``) or ``paper``.
        max_per_task: Corrupted pairs kept per task (``None``: all).
        operators: Operator name -> its yield, sorted by name.
        tasks_with_valid_verifier: Tasks with a (valid) verifier program mutated.
        tasks_with_corrupted_pairs: Tasks with at least one corrupted pair.
        corrupted_pairs: Corrupted pairs kept.
        problems: Task id -> the sources that could not be mutated, sorted by task.
        task_set: What ``--tasks`` named, when it was a task set (written only then).
    """

    target_pairs: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    seed: int
    inputs: int
    demonstration_inputs: bool
    operator_set: str
    max_per_task: int | None
    operators: Mapping[str, OperatorYield]
    tasks_with_valid_verifier: int
    tasks_with_corrupted_pairs: int
    corrupted_pairs: int
    problems: Mapping[str, tuple[MutationProblem, ...]]
    task_set: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
