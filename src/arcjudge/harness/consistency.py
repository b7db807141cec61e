"""Self-consistency (contract): does a model's own program agree with its other answers?

``agrees(program, input_grid, output_grid)`` runs the program on the input in the sandbox
and says whether it returns that output; ``agrees_batch`` does many pairs in one call. Used
to compare a model's Definition program with its Classification, Generation and Inversion
answers. Without an explicit ``sandbox`` a shared process sandbox is started on first use
and closed at exit.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence

from arcjudge.grids import Grid, canonicalize
from arcjudge.harness.score import DEFAULT_ENTRY_POINTS
from arcjudge.sandbox.base import PooledSandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status

_shared: PooledSandbox | None = None
_lock = threading.Lock()


def _default_sandbox() -> PooledSandbox:
    global _shared
    with _lock:
        if _shared is None:
            from arcjudge.sandbox.process import ProcessSandbox

            _shared = ProcessSandbox()
            atexit.register(_shared.close)
        return _shared


def _as_program(program: Program | str | bytes) -> Program:
    if isinstance(program, Program):
        return program
    source = program.encode("utf-8") if isinstance(program, str) else program
    return Program(source, DEFAULT_ENTRY_POINTS)


def agrees_batch(
    program: Program | str | bytes,
    pairs: Sequence[tuple[object, object]],
    *,
    sandbox: PooledSandbox | None = None,
    limits: Limits = DEFINITION_LIMITS,
) -> list[bool]:
    """For each ``(input, output)`` pair, whether the program maps input to output.

    Args:
        program: A ``Program`` or its source (entry points tried: transform, solve, p, main).
        pairs: Grids in any form ``canonicalize`` accepts. A pair whose input is not a grid,
            or whose output is not a grid, never agrees.
        sandbox: Where to run (default: a shared process sandbox).
        limits: Limits for the calls.

    Returns:
        One bool per pair; all ``False`` when the program does not load.
    """
    prepared: list[tuple[int, Grid, Grid]] = []
    for index, (grid_in, grid_out) in enumerate(pairs):
        canon_in, _ = canonicalize(grid_in)
        canon_out, _ = canonicalize(grid_out)
        if canon_in is not None and canon_out is not None:
            prepared.append((index, canon_in, canon_out))
    answer = [False] * len(pairs)
    if not prepared:
        return answer
    box = sandbox or _default_sandbox()
    result = box.run(
        _as_program(program), [g for _, g, _ in prepared], limits, policy=PolicyMode.OFF
    )
    if result.status is not ProgramStatus.LOADED:
        return answer
    for (index, _, expected), r in zip(prepared, result.results, strict=True):
        answer[index] = r.status is Status.OK and r.grid == expected
    return answer


def agrees(
    program: Program | str | bytes,
    input_grid: object,
    output_grid: object,
    *,
    sandbox: PooledSandbox | None = None,
    limits: Limits = DEFINITION_LIMITS,
) -> bool:
    """Whether the program maps ``input_grid`` to ``output_grid`` (run in the sandbox)."""
    return agrees_batch(program, [(input_grid, output_grid)], sandbox=sandbox, limits=limits)[0]
