"""Self-consistency (contract): does a model's own program agree with its other answers?

``agrees(program, input_grid, output_grid)`` runs the program on the input in the sandbox
and says whether it returns that output; ``agrees_batch`` does many pairs in one call and
``agrees_many`` many programs concurrently. Used to compare a model's Definition program
with its Classification, Generation and Inversion answers. Without an explicit
``sandbox`` a shared process sandbox is started on first use and closed at exit.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator, Sequence

from arcjudge.grids import Grid, canonicalize
from arcjudge.safetext import encode_utf8
from arcjudge.sandbox import Job, Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS

_shared: Sandbox | None = None
_lock = threading.Lock()


def _default_sandbox() -> Sandbox:
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
    source = encode_utf8(program) if isinstance(program, str) else program
    return Program(source, DEFINITION_ENTRY_POINTS)


def agrees_many(
    checks: Sequence[tuple[Program | str | bytes, Sequence[tuple[object, object]]]],
    *,
    sandbox: Sandbox | None = None,
    limits: Limits = DEFINITION_LIMITS,
) -> Iterator[tuple[int, list[bool]]]:
    """``agrees_batch`` for many programs at once, run concurrently over the pool.

    Args:
        checks: ``(program, pairs)`` per program (see :func:`agrees_batch`). Each distinct
            input of a program runs once.
        sandbox: Where to run (default: a shared process sandbox).
        limits: Limits for the calls.

    Yields:
        ``(index into checks, one bool per pair)`` as programs finish.
    """
    jobs, plans = [], []
    for index, (program, pairs) in enumerate(checks):
        prepared: list[tuple[int, Grid, Grid]] = []
        for position, (grid_in, grid_out) in enumerate(pairs):
            canon_in, _ = canonicalize(grid_in)
            canon_out, _ = canonicalize(grid_out)
            if canon_in is not None and canon_out is not None:
                prepared.append((position, canon_in, canon_out))
        if not prepared:
            yield index, [False] * len(pairs)
            continue
        inputs = list(dict.fromkeys(g for _, g, _ in prepared))
        jobs.append(Job(_as_program(program), inputs, limits, PolicyMode.OFF))
        plans.append((index, len(pairs), prepared, inputs))
    box = sandbox or _default_sandbox()
    for job_index, result in box.map(jobs):
        index, size, prepared, inputs = plans[job_index]
        answer = [False] * size
        if result.status is ProgramStatus.LOADED:
            produced = {
                g: r.grid
                for g, r in zip(inputs, result.results, strict=True)
                if r.status is Status.OK
            }
            for position, grid_in, expected in prepared:
                answer[position] = produced.get(grid_in) == expected
        yield index, answer


def agrees_batch(
    program: Program | str | bytes,
    pairs: Sequence[tuple[object, object]],
    *,
    sandbox: Sandbox | None = None,
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
    return next(agrees_many([(program, pairs)], sandbox=sandbox, limits=limits))[1]


def agrees(
    program: Program | str | bytes,
    input_grid: object,
    output_grid: object,
    *,
    sandbox: Sandbox | None = None,
    limits: Limits = DEFINITION_LIMITS,
) -> bool:
    """Whether the program maps ``input_grid`` to ``output_grid`` (run in the sandbox)."""
    return agrees_batch(program, [(input_grid, output_grid)], sandbox=sandbox, limits=limits)[0]
