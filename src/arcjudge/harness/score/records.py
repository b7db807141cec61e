"""The records ``arcjudge score`` writes: result lines, timing lines and the summary.

Each is a :class:`~arcjudge.harness.core.record.Record`: its fields declare its JSON
object (written with ``sort_keys``), and ``from_json`` reads it back (raising
:class:`~arcjudge.harness.core.record.RecordError` on a malformed object; readers of
files add the file and line).

A result carries the program record's own fields (``model``, ``run``, anything else but
``code`` and ``response``). The keys a result writes win over a field of the same name.
Reading back, a key a result writes only sometimes (``splits``, ``statuses``,
``first_failure``, ``status``, ``error``, ``findings``, ``extraction``, ``entry_points``)
is the result's when it holds what a result writes there, else a carried field: either
way the line is written again byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from arcjudge.harness.core.record import OMIT_DEFAULT, Codec, Record, RecordError, spec
from arcjudge.harness.core.stats import wilson_interval
from arcjudge.harness.core.tally import Tally
from arcjudge.sandbox.types import ProgramStatus
from arcjudge.vocabulary import (
    FAILURE_CLASSES,
    SCORE_FAILURES,
    FailureClass,
    ScoreFailure,
    ScoreVerdict,
)

__all__ = [
    "ExtractionRecord",
    "GroupSummary",
    "ScoreResult",
    "ScoreSummary",
    "TimingLine",
]


@dataclass(frozen=True)
class ExtractionRecord(Record):
    """Which fenced block of a ``response`` was taken as the program, and why.

    Attributes:
        block: The chosen block's index among the reply's code blocks (``None``: none).
        blocks: How many code blocks the reply has.
        reason: How the block was chosen.
        fence_unclosed: Whether the chosen block's fence was never closed.
    """

    block: int | None
    blocks: int
    reason: str
    fence_unclosed: bool


def _decode_load_failure(value: object) -> ProgramStatus:
    if isinstance(value, str) and value != ProgramStatus.LOADED and value in set(ProgramStatus):
        return ProgramStatus(value)
    raise RecordError(f"expected a load failure status, got {str(value)[:40]!r}")


_LOAD_FAILURE: Codec[ProgramStatus | None] = Codec(
    "load failure status", _decode_load_failure, lambda status: status, ProgramStatus
).optional()


def _decode_entry_points(value: object) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(e, str) and e.isidentifier() for e in value):
        return tuple(value)
    raise RecordError("expected a list of Python identifiers")


_ENTRY_POINTS: Codec[tuple[str, ...]] = Codec("entry points", _decode_entry_points, list, tuple)


def _verdict(result: ScoreResult) -> ScoreVerdict:
    return ScoreVerdict.PASS if result.failure is None else ScoreVerdict.FAIL


def _ran(result: ScoreResult) -> bool:
    return result.tally is not None


@dataclass(frozen=True)
class ScoreResult(Record):
    """One line of ``results.jsonl``: what happened to one program.

    Exactly one of three shapes: the program ran (``tally`` set), it did not load
    (``status`` and ``error`` set), or there was nothing to run (``error`` only: no code in
    the reply). The verdict is ``pass`` exactly when ``failure`` is ``None``.

    Attributes:
        id: The program record's id.
        task_id: The task it answers.
        code_sha256: SHA-256 of the program text run.
        failure: ``None`` for a pass, else why it failed.
        tally: Per split counts and first failures, when the program loaded (its keys
            are the line's).
        status: The load status, when it did not load.
        error: The end of the load error, or why nothing ran (written when there is no
            tally, even ``None``).
        findings: Policy findings on the program (written only when there are some).
        extraction: For a ``response`` record: which block was taken (else absent).
        fields: The program record's other fields (``model``, ``run``, ...).
        entry_points: The entry points the program was run with, tried in order (what
            ``--entrypoint`` gave; written when known), so that whoever runs the program
            again (``dimensions score``'s self-consistency) calls the same function.
        verdict: ``pass`` or ``fail``, from ``failure``.
    """

    id: str | int
    task_id: str | int
    code_sha256: str
    failure: ScoreFailure | None
    tally: Tally | None = field(default=None, metadata=spec(flatten=True))
    status: ProgramStatus | None = field(
        default=None, metadata=spec(omit=OMIT_DEFAULT, codec=_LOAD_FAILURE)
    )
    error: str | None = field(default=None, metadata=spec(omit=_ran))
    findings: tuple[str, ...] = field(default=(), metadata=spec(omit=OMIT_DEFAULT))
    extraction: ExtractionRecord | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    fields: Mapping[str, Any] = field(default_factory=dict, metadata=spec(extra=True))
    entry_points: tuple[str, ...] = field(
        default=(), metadata=spec(omit=OMIT_DEFAULT, codec=_ENTRY_POINTS)
    )
    verdict: ScoreVerdict = field(init=False, metadata=spec(derived=_verdict))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read a line :meth:`to_json` wrote (see :meth:`Record.from_json`).

        Raises:
            RecordError: As :meth:`Record.from_json`, or a pass without its tally.
        """
        result = super().from_json(data)
        if result.failure is None and result.tally is None:
            problem = "a passing program needs its splits, statuses and first failures"
            raise RecordError(problem, ("splits",))
        return result

    @property
    def passed(self) -> bool:
        """Whether the program passed (its verdict is ``pass``)."""
        return self.failure is None

    @property
    def model(self) -> str | None:
        """The summary group of the program: its ``model`` field as text, if it has one."""
        return str(self.fields["model"]) if "model" in self.fields else None


@dataclass(frozen=True)
class TimingLine(Record):
    """One line of ``timings.jsonl``: sandbox seconds spent on a program (0 when cached)."""

    id: str | int
    seconds: float


def _rate(count: int, n: int) -> float:
    return round(count / n, 6) if n else 0.0


def _ci95(group: GroupSummary) -> tuple[float, float]:
    low, high = wilson_interval(group.passed, group.programs)
    return round(low, 6), round(high, 6)


def _shares(group: GroupSummary) -> Mapping[FailureClass, float]:
    return {c: _rate(group.failures[ScoreFailure(c)], group.programs) for c in FAILURE_CLASSES}


@dataclass(frozen=True)
class GroupSummary(Record):
    """A group's counts (one model's programs, or all); rates are derived from them.

    Attributes:
        programs: How many programs.
        passed: How many passed.
        pass_rate: ``passed / programs`` (rounded to 6 places; 0 for no program).
        pass_rate_ci95: The Wilson 95% interval of the pass rate (rounded to 6 places).
        failures: Failed programs per failure, in :data:`SCORE_FAILURES` order (each
            failure counted, 0 when absent).
        failure_shares: Per failure class, its share of the programs.
        load_failure_share: The share of ``static`` failures.
    """

    programs: int
    passed: int
    pass_rate: float = field(
        init=False, metadata=spec(derived=lambda g: _rate(g.passed, g.programs))
    )
    pass_rate_ci95: tuple[float, float] = field(init=False, metadata=spec(derived=_ci95))
    failures: Mapping[ScoreFailure, int]
    failure_shares: Mapping[FailureClass, float] = field(init=False, metadata=spec(derived=_shares))
    load_failure_share: float = field(
        init=False,
        metadata=spec(derived=lambda g: _rate(g.failures[ScoreFailure.STATIC], g.programs)),
    )

    def __post_init__(self) -> None:
        counts = {f: self.failures.get(f, 0) for f in SCORE_FAILURES}
        object.__setattr__(self, "failures", counts)
        super().__post_init__()

    @classmethod
    def of(cls, results: Iterable[ScoreResult]) -> Self:
        """The counts of some results."""
        listed = list(results)
        counts = {f: sum(r.failure == f for r in listed) for f in SCORE_FAILURES}
        return cls(len(listed), sum(r.passed for r in listed), counts)


@dataclass(frozen=True)
class ScoreSummary(Record):
    """``summary.json``: the run's settings and per group statistics.

    Attributes:
        programs: Programs scored.
        programs_file: The programs file (resolved path).
        seed: The generator seed.
        samples: Generator samples per task.
        wall_seconds: Seconds allowed per call (``limits.wall_seconds``).
        groups: ``(all)`` first, then each model, sorted.
        generator: Per task, what drawing (and verifying) generator samples gave.
        task_set: What ``--tasks`` named, when it was a task set (written only then).
    """

    programs: int
    programs_file: str
    seed: int
    samples: int
    wall_seconds: float = field(metadata=spec(key=("limits", "wall_seconds")))
    groups: Mapping[str, GroupSummary]
    generator: Mapping[str, Mapping[str, Any]]
    task_set: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
