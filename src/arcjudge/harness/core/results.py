"""The engine's values: task inputs, per-input results, a candidate's outcome on a task.

A task's inputs come with their expected outputs (:class:`TaskInput`); the engine judges
each candidate's answers and the result store keeps them (:class:`StoredResult`).

A result is judged lean: an input's expected output is put in compact form once
(:class:`Expected`), a fresh answer is compared in the compact form the sandbox replied
with, and a right answer's grid is the expected output itself, so right answers are never
decoded; wrong ones are decoded only when their grid is read (``LazyGrids``).

A right answer is stored as its status and the digest of its grid (``keys.grid_digest``),
a wrong one with its grid and its error text. Whether an answer is right depends on the
expected output, which the key does not cover, so a stored result is resolved against the
expected output of the moment (:meth:`StoredResult.resolve`): a stored grid is compared
with it; a stored digest equal to the expected output's digest is a right answer (its grid
is the expected output); any other digest is a miss, and the input runs again.

A candidate's outcome on a task (:class:`CandidateOutcome`) holds one result per input and
counts itself per split (:meth:`CandidateOutcome.tally`) for the workflows' records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arcjudge.grids import Grid, LazyGrids, WireGrid, compact, wire_of
from arcjudge.harness.core.keys import grid_digest
from arcjudge.harness.core.tally import FirstFailure, Tally
from arcjudge.sandbox.types import RunResult
from arcjudge.vocabulary import REPORTED_SPLITS, ProgramStatus, Status

__all__ = [
    "CandidateOutcome",
    "Expected",
    "StoredProgram",
    "StoredResult",
    "TaskInput",
    "is_right",
]


@dataclass(frozen=True)
class StoredProgram:
    """What is stored for a program: how it loaded and its policy findings."""

    status: ProgramStatus
    error: str | None
    findings: tuple[str, ...] = ()

    @property
    def failure(self) -> tuple[ProgramStatus, str | None] | None:
        """``(status, error)`` when the program did not load, else ``None``."""
        return None if self.status is ProgramStatus.LOADED else (self.status, self.error)


class Expected:
    """An expected output as the engine compares answers with it (built once per input).

    Attributes:
        grid: The expected grid (what a right answer's ``grid`` is).
        wire: Its compact form, ``None`` when it is not a grid of 0..9 (nothing equals it).
    """

    __slots__ = ("_digest", "grid", "wire")

    def __init__(self, grid: Grid, wire: WireGrid | None = None) -> None:
        """Judge answers against ``grid``.

        Args:
            grid: The expected grid.
            wire: Its compact form when the caller made it already, else ``None``.
        """
        self.grid = grid
        self.wire: WireGrid | None = compact(grid) if wire is None else wire
        self._digest: bytes | None = None

    @property
    def digest(self) -> bytes | None:
        """``grid_digest`` of the grid (computed when first needed)."""
        if self._digest is None and self.wire is not None:
            self._digest = grid_digest(self.wire)
        return self._digest


class StoredResult(LazyGrids):
    """One per-input result: from a run, or from the store (see ``resolve``).

    ``grid`` is decoded from ``wire`` only when read; a right answer's ``grid`` is the
    expected output itself. ``right`` is ``True`` or ``False`` once the result was compared
    with an expected output (by the engine), ``None`` when it was not.
    """

    __slots__ = ("digest", "error", "right", "status")

    def __init__(
        self,
        status: Status,
        grid: Grid | None = None,
        output: Grid | None = None,
        error: str | None = None,
        *,
        wire: WireGrid | None = None,
        output_wire: WireGrid | None = None,
        digest: bytes | None = None,
        right: bool | None = None,
    ) -> None:
        # The slots set here, not through LazyGrids.__init__: one call less for each of the
        # half-million rows a warm run reads; the compact form is made now when a grid is
        # given, so ``_wire`` is always the answer's (``resolve`` reads it directly).
        self._grid = grid
        self._wire = wire if wire is not None or grid is None else wire_of(grid)
        self._output = output
        self._output_wire = output_wire
        self.status = status
        self.error = error
        self.digest = digest
        self.right = right

    @classmethod
    def judged(cls, result: RunResult, expected: Expected) -> StoredResult:
        """A fresh run's result, compared (in compact form) with the expected output."""
        wire = result.wire
        if result.status is Status.OK and wire is not None and wire == expected.wire:
            return cls(Status.OK, expected.grid, wire=wire, digest=expected.digest, right=True)
        return cls(result.status, None, None, result.error, wire=wire, right=False)

    def resolve(self, expected: Expected) -> StoredResult | None:
        """A stored result judged against the expected output; ``None`` for a miss.

        A stored grid is compared with ``expected``; a stored digest (a right answer when
        it was written) is a right answer if it is ``expected``'s digest, else a miss.
        """
        wire = self._wire
        if self.status is not Status.OK:
            self.right = False
        elif wire is not None:
            self.right = wire == expected.wire
            if self.right:
                self._grid = expected.grid
        elif self.digest is not None and self.digest == expected.digest:
            self.right = True
            self._wire = expected.wire
            self._grid = expected.grid
        else:
            return None
        return self


@dataclass
class TaskInput:
    """One input with its expected output.

    ``wire`` and ``expected_wire``: the grids' compact forms (``grids.compact``) when the
    reader made them already (ARC-GEN's files, generator samples), so the engine does not
    make them again; ``None`` otherwise. Not part of equality.
    """

    split: str
    index: int
    grid: Grid
    expected: Grid
    seed: int | None = None
    wire: WireGrid | None = field(default=None, compare=False, repr=False)
    expected_wire: WireGrid | None = field(default=None, compare=False, repr=False)


@dataclass
class CandidateOutcome:
    """What happened to one candidate on one task."""

    failure: tuple[ProgramStatus, str | None] | None = None
    results: list[StoredResult | None] = field(default_factory=list)
    findings: tuple[str, ...] = ()
    skipped: bool = False  # later chunks not run (stop at first failure)
    seconds: float = 0.0  # sandbox time spent in this run (cached chunks cost nothing)

    def tally(self, instances: Sequence[TaskInput]) -> Tally:
        """Per split ``(correct, total)``, counts by status, and the first failure."""
        splits: dict[str, list[int]] = {}
        statuses: dict[str, dict[str, int]] = {}
        first: dict[str, FirstFailure] = {}
        split: str | None = None
        counts: list[int] = []
        by_status: dict[str, int] = {}
        for inst, res in zip(instances, self.results, strict=True):
            if inst.split != split:  # inputs come in runs of one split
                split = inst.split
                counts = splits.setdefault(split, [0, 0])
                by_status = statuses.setdefault(split, {})
            counts[1] += 1
            status = _STATUS_TEXT[res.status] if res is not None else "skipped"
            by_status[status] = by_status.get(status, 0) + 1
            right = is_right(res, inst)
            counts[0] += right
            if not right and res is not None and split not in first:
                first[split] = FirstFailure(
                    inst.index,
                    status,
                    inst.grid,
                    inst.expected,
                    res.grid,
                    _trim(res.error),
                    inst.seed,
                )
        return Tally(
            {k: (splits[k][0], splits[k][1]) for k in REPORTED_SPLITS if k in splits},
            {k: dict(sorted(statuses[k].items())) for k in REPORTED_SPLITS if k in statuses},
            {k: first[k] for k in REPORTED_SPLITS if k in first},
        )

    def all_correct(self, instances: Sequence[TaskInput]) -> bool:
        """Whether every instance got the expected output."""
        return self.failure is None and all(
            is_right(r, i) for i, r in zip(instances, self.results, strict=True)
        )

    def has_infra(self) -> bool:
        """Whether the sandbox (not the program) failed somewhere."""
        if self.failure is not None:
            return self.failure[0] is ProgramStatus.INFRA
        return any(r is not None and r.status is Status.INFRA for r in self.results)


_STATUS_TEXT = {status: status.value for status in Status}  # faster than ``.value``


def is_right(res: StoredResult | None, inst: TaskInput) -> bool:
    """Whether a result is the instance's expected output (judged once by the engine)."""
    if res is None:
        return False
    if res.right is not None:
        return res.right
    return res.status is Status.OK and res.grid == inst.expected


def _trim(text: str | None, limit: int = 2000) -> str | None:
    return None if text is None else text[-limit:]
