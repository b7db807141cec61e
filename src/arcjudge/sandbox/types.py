"""Values that cross the sandbox boundary: programs, limits, statuses and results."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from arcjudge.sandbox.runtime import canonical

Grid = tuple[tuple[int, ...], ...]
InputFormat = Literal["list", "tuple"]


class Status(StrEnum):
    """Outcome of one call of a program on one input (a contract: values are stable)."""

    OK = "ok"
    INVALID_OUTPUT = "invalid_output"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    CRASHED = "crashed"
    INFRA = "infra"


class ProgramStatus(StrEnum):
    """Outcome of loading a program, decided once before any input runs."""

    LOADED = "loaded"
    LOAD_ERROR = "load_error"
    POLICY_REJECTED = "policy_rejected"
    INFRA = "infra"


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


WireGrid = tuple[int, str]
"""A checked grid in its compact form ``(width, digits)``: the cells row by row as ASCII
digits (``canonical.check_wire``). Two grids are equal exactly when their forms are."""


_TO_DIGITS = bytes.maketrans(bytes(range(10)), b"0123456789")
_DIGIT_BYTES = bytes(range(10))


def compact(grid: Sequence[Sequence[int]]) -> WireGrid | None:
    """The compact form of one of the harness's own grids, ``None`` if not a grid of 0..9.

    For trusted grids only (task files, checked replies): cells are read as ``bytes``
    reads them, without the exact-type checks ``canonical`` makes on a program's values,
    so it costs a few C-level passes over the cells.
    """
    try:
        width = len(grid[0])
        flat = bytes(itertools.chain.from_iterable(grid))
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    rows = len(grid)
    if (
        not (0 < width <= canonical.MAX_SIDE and 0 < rows <= canonical.MAX_SIDE)
        or len(flat) != width * rows
        or flat.translate(None, _DIGIT_BYTES)  # a cell outside 0..9 is left over
        or len(set(map(len, grid))) != 1
    ):
        return None
    return width, flat.translate(_TO_DIGITS).decode("ascii")


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


def wire_of(grid: Grid) -> WireGrid:
    """The compact form of a canonical grid (see :data:`WireGrid`).

    Raises:
        ValueError: If ``grid`` is not a grid of 0..9.
    """
    wire = compact(grid)
    if wire is None:
        raise ValueError("not a grid of cells 0..9")
    return wire


def grid_of(wire: WireGrid) -> Grid:
    """The grid of a compact form (see :data:`WireGrid`)."""
    return canonical.decode_wire(*wire)


class RunResult:
    """The result of one call of a program on one input (immutable).

    A result decoded from a supervisor's reply keeps its grids in their checked compact
    form (``wire``, ``output_wire``) and builds ``grid`` and ``output`` only when they are
    read, so comparing answers costs no decoding.

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

    __slots__ = ("_grid", "_output", "_output_wire", "_wire", "error", "index", "seconds", "status")

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
        self.index = index
        self.status = status
        self.error = error
        self.seconds = seconds
        self._grid = grid
        self._wire = wire
        self._output = output
        self._output_wire = output_wire

    @property
    def grid(self) -> Grid | None:
        """The output grid (decoded from ``wire`` the first time it is read)."""
        if self._grid is None and self._wire is not None:
            self._grid = grid_of(self._wire)
        return self._grid

    @property
    def output(self) -> Grid | None:
        """A generator call's output grid (decoded the first time it is read)."""
        if self._output is None and self._output_wire is not None:
            self._output = grid_of(self._output_wire)
        return self._output

    @property
    def wire(self) -> WireGrid | None:
        """``grid`` in its compact form."""
        if self._wire is None and self._grid is not None:
            self._wire = wire_of(self._grid)
        return self._wire

    @property
    def output_wire(self) -> WireGrid | None:
        """``output`` in its compact form."""
        if self._output_wire is None and self._output is not None:
            self._output_wire = wire_of(self._output)
        return self._output_wire

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
