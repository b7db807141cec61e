"""Values that cross the sandbox boundary: programs, limits, statuses and results.

The value layer defines the grids (``Grid``, ``WireGrid`` and their compact forms, in
:mod:`arcjudge.grids`) and the statuses (``Status``, ``ProgramStatus``, in
:mod:`arcjudge.vocabulary`); they are exported here too, as the sandbox's contract.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from arcjudge.grids import Grid, LazyGrids, WireGrid, compact, grid_of, wire_of
from arcjudge.vocabulary import ProgramStatus, Status

__all__ = [
    "DEFINITION_LIMITS",
    "SHARED_STATE_ERROR",
    "VERIFIER_LIMITS",
    "GeneratorCall",
    "Grid",
    "InputFormat",
    "Limits",
    "Program",
    "ProgramResult",
    "ProgramStatus",
    "RunResult",
    "Status",
    "WireGrid",
    "WiredGrids",
    "changed_shared_state",
    "compact",
    "grid_of",
    "input_wire",
    "to_plain",
    "wire_of",
]

InputFormat = Literal["list", "tuple"]


@dataclass(frozen=True)
class Program:
    """An untrusted program: source bytes and the entry point(s) to call.

    Attributes:
        source: The program text as bytes; compiled as bytes so ``#coding`` lines work.
        entry_points: Function names tried in order; the first one defined is called.
        module_dirs: Directories the program may import from (mounted read-only).
        input_format: ``"list"`` passes each input as a list of lists (golf style),
            ``"tuple"`` as a tuple of tuples (RE-ARC DSL style).
        name: A label for messages and reports; not used for execution.
    """

    source: bytes
    entry_points: tuple[str, ...] = ("transform",)
    module_dirs: tuple[str, ...] = ()
    input_format: InputFormat = "list"
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.source, bytes):
            raise TypeError("Program.source must be bytes")
        if isinstance(self.entry_points, str):
            object.__setattr__(self, "entry_points", (self.entry_points,))
        if not self.entry_points or not all(
            isinstance(e, str) and e.isidentifier() for e in self.entry_points
        ):
            raise ValueError(f"entry points must be identifiers, got {self.entry_points!r}")
        if self.input_format not in ("list", "tuple"):
            raise ValueError(f"input_format must be 'list' or 'tuple', not {self.input_format!r}")
        object.__setattr__(self, "module_dirs", tuple(str(d) for d in self.module_dirs))

    @property
    def sha256(self) -> str:
        """Hex digest identifying everything that decides this program's behaviour."""
        h = hashlib.sha256(self.source)
        for part in (*self.entry_points, "|", *self.module_dirs, "|", self.input_format):
            h.update(b"\0" + part.encode())
        return h.hexdigest()


@dataclass(frozen=True)
class Limits:
    """Resource limits for running one program over a batch of inputs.

    Attributes:
        wall_seconds: Wall-clock limit for each call (and for loading the program).
        memory_bytes: Memory the program may allocate on top of the sandbox's baseline.
        processes: Maximum number of processes the program may have at once.
        output_bytes: Cap on the program's printed output and on each result message.
        total_seconds: Budget for the whole batch; inputs left when it runs out are
            reported as ``timeout``.
        disk_bytes: Size of the program's private writable scratch space.
    """

    wall_seconds: float = 10.0
    memory_bytes: int = 1 << 30
    processes: int = 64
    output_bytes: int = 1 << 20
    total_seconds: float = 300.0
    disk_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        for name in ("wall_seconds", "total_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Limits.{name} must be positive")
        for name in ("memory_bytes", "processes", "output_bytes", "disk_bytes"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"Limits.{name} must be at least 1")

    def key(self) -> str:
        """Return a stable text form, used in cache keys."""
        return (
            f"w{self.wall_seconds}:m{self.memory_bytes}:p{self.processes}:"
            f"o{self.output_bytes}:t{self.total_seconds}:d{self.disk_bytes}"
        )


@dataclass(frozen=True)
class GeneratorCall:
    """One generator sample: ``random.seed(seed)`` then ``entry(**kwargs)``."""

    seed: int
    kwargs: tuple[tuple[str, object], ...] = ()


SHARED_STATE_ERROR = "changed state the variants of its batch share"
"""How an ``infra`` result of ``run_variants`` starts when the variant changed a
module the batch shares (see :func:`changed_shared_state`)."""

VERIFIER_LIMITS = Limits(wall_seconds=10.0)
DEFINITION_LIMITS = Limits(wall_seconds=5.0)


def input_wire(grid: Sequence[Sequence[int]]) -> list[Any]:
    """An input grid's wire form: ``[width, digits]`` for a grid of 0..9, else plain lists."""
    wire = compact(grid)  # the harness's own grid: no exact-type checks needed
    return [wire[0], wire[1]] if wire is not None else to_plain(grid)


class WiredGrids(list[Grid]):
    """Input grids with the wire forms the harness already made of them (``input_wire``).

    It is a list of the grids, so every backend can read it as such; the built-in ones
    send ``wires`` as they are instead of encoding each grid again (a task's inputs are
    encoded once for all its candidates).
    """

    def __init__(self, grids: Iterable[Grid], wires: Iterable[list[Any]]) -> None:
        super().__init__(grids)
        self.wires = list(wires)
        if len(self.wires) != len(self):
            raise ValueError("one wire form per grid")


class RunResult(LazyGrids):
    """The result of one call of a program on one input (immutable).

    A result decoded from a supervisor's reply keeps its grids in their checked compact
    form (``wire``, ``output_wire``) and builds ``grid`` and ``output`` only when they are
    read, so comparing answers costs no decoding (:class:`~arcjudge.grids.LazyGrids`).

    Attributes:
        index: Position of the input in the batch.
        status: What happened (see ``Status``).
        grid: The canonical output grid when ``status`` is ``ok``, else ``None``.
        error: A short (truncated) description when ``status`` is not ``ok``.
        seconds: Wall time of the call as measured outside the program.
        output: For generator calls, the generated pair's output (``grid`` is its input).
        wire: ``grid`` as a :data:`WireGrid` (``None`` with no grid).
        output_wire: ``output`` as a :data:`WireGrid`.
    """

    __slots__ = ("error", "index", "seconds", "status")

    def __init__(
        self,
        index: int,
        status: Status,
        grid: Grid | None = None,
        error: str | None = None,
        seconds: float = 0.0,
        output: Grid | None = None,
        *,
        wire: WireGrid | None = None,
        output_wire: WireGrid | None = None,
    ) -> None:
        super().__init__(grid, wire, output, output_wire)
        self.index = index
        self.status = status
        self.error = error
        self.seconds = seconds

    def _fields(self) -> tuple[object, ...]:
        return (self.index, self.status, self.wire, self.error, self.seconds, self.output_wire)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"RunResult(index={self.index!r}, status={self.status!r}, grid={self.grid!r}, "
            f"error={self.error!r}, seconds={self.seconds!r}, output={self.output!r})"
        )


@dataclass(frozen=True)
class ProgramResult:
    """The result of running one program over a batch of inputs.

    Attributes:
        status: ``loaded`` when the program loaded and its inputs ran; otherwise why not.
        results: One ``RunResult`` per input when loaded, else empty.
        error: Why the program did not load (``load_error``, ``policy_rejected``, ``infra``).
        entry_point: The entry point that was called.
        output: The first bytes of what the program printed (decoded leniently).
        seconds: Wall time for the whole batch.
        findings: Policy findings recorded for the program (see ``policy``).
    """

    status: ProgramStatus
    results: tuple[RunResult, ...] = ()
    error: str | None = None
    entry_point: str | None = None
    output: str = ""
    seconds: float = 0.0
    findings: tuple[str, ...] = field(default_factory=tuple)

    def statuses(self) -> list[Status]:
        """Return the per-input statuses in input order."""
        return [r.status for r in self.results]


def changed_shared_state(result: ProgramResult) -> bool:
    """Whether a variant's result was discarded because it changed the batch's shared state.

    Such a variant (e.g. one that rebinds a global of an imported module, or a builtin)
    must be run again on its own (``Sandbox.run``) for a result that is its own.
    """
    return result.status is ProgramStatus.INFRA and (result.error or "").startswith(
        SHARED_STATE_ERROR
    )


def to_plain(grid: Sequence[Sequence[int]]) -> list[list[int]]:
    """Return a fresh list-of-lists copy of a grid (for JSON and for program inputs)."""
    return [list(row) for row in grid]
