"""Self-consistency (contract): does a model's own program agree with its other answers?

``agrees(program, input_grid, output_grid, sandbox=...)`` runs the program on the input in
the given sandbox and says whether it returns that output; ``agrees_batch`` does many pairs
in one call. ``agrees_many`` does many programs through the engine (so its calls are cached
in the result store and resume after an interruption); ``dimensions score`` uses it to
compare a model's Definition program with its Classification, Generation and Inversion
answers. Nothing here starts a sandbox: the caller passes the one to run in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from arcjudge.grids import Grid, canonicalize
from arcjudge.harness.core.calls import Call, call_key, outputs_of, run_calls
from arcjudge.harness.core.engine import Engine
from arcjudge.harness.core.results import CandidateOutcome
from arcjudge.safetext import encode_utf8
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS

Checks = Sequence[tuple[Program | str | bytes, Sequence[tuple[object, object]]]]
"""``(program, pairs)`` per program; see :func:`agrees_batch`."""


def _as_program(program: Program | str | bytes) -> Program:
    if isinstance(program, Program):
        return program
    source = encode_utf8(program) if isinstance(program, str) else program
    return Program(source, DEFINITION_ENTRY_POINTS)


@dataclass(frozen=True)
class _Plan:
    """One program's pairs as grids: ``(position, input, output)``, and its distinct inputs."""

    size: int
    prepared: list[tuple[int, Grid, Grid]]
    inputs: list[Grid]


def _plan(pairs: Sequence[tuple[object, object]]) -> _Plan:
    prepared: list[tuple[int, Grid, Grid]] = []
    for position, (grid_in, grid_out) in enumerate(pairs):
        canon_in, _ = canonicalize(grid_in)
        canon_out, _ = canonicalize(grid_out)
        if canon_in is not None and canon_out is not None:
            prepared.append((position, canon_in, canon_out))
    return _Plan(len(pairs), prepared, list(dict.fromkeys(g for _, g, _ in prepared)))


def _agreement(plan: _Plan, produced: Mapping[Grid, Grid | None]) -> list[bool]:
    answer = [False] * plan.size
    for position, grid_in, expected in plan.prepared:
        answer[position] = produced.get(grid_in) == expected
    return answer


def agrees_many(
    checks: Checks,
    engine: Engine,
    on_done: Callable[[int], None] | None = None,
) -> list[list[bool]]:
    """``agrees_batch`` for many programs, run through the engine (cached, resumable).

    Args:
        checks: ``(program, pairs)`` per program (see :func:`agrees_batch`). Each distinct
            input of a program runs once.
        engine: Runs the calls (its limits and policy mode apply).
        on_done: Called with the index into ``checks`` as each program's calls complete
            (programs with nothing to run are not reported).

    Returns:
        One list per check: one bool per pair.
    """
    answers: list[list[bool]] = []
    plans: list[tuple[int, _Plan]] = []
    calls: list[Call] = []
    for index, (program, pairs) in enumerate(checks):
        plan = _plan(pairs)
        answers.append([False] * plan.size)
        if not plan.prepared:
            continue
        prog = _as_program(program)
        plans.append((index, plan))
        calls.append(Call(prog, call_key(engine, prog, ""), plan.inputs))

    def done(position: int, outcome: CandidateOutcome) -> None:
        index, plan = plans[position]
        outputs = outputs_of(calls[position], outcome)
        produced = {g: grid for g, (status, grid) in outputs.items() if status is Status.OK}
        answers[index] = _agreement(plan, produced)
        if on_done is not None:
            on_done(index)

    run_calls(engine, calls, done)
    return answers


def agrees_batch(
    program: Program | str | bytes,
    pairs: Sequence[tuple[object, object]],
    *,
    sandbox: Sandbox,
    limits: Limits = DEFINITION_LIMITS,
) -> list[bool]:
    """For each ``(input, output)`` pair, whether the program maps input to output.

    One call in ``sandbox``, not cached (``agrees_many`` goes through the result store).

    Args:
        program: A ``Program`` or its source (entry points tried: transform, solve, p, main).
        pairs: Grids in any form ``canonicalize`` accepts. A pair whose input is not a grid,
            or whose output is not a grid, never agrees.
        sandbox: Where to run.
        limits: Limits for the call.

    Returns:
        One bool per pair; all ``False`` when the program does not load.
    """
    plan = _plan(pairs)
    if not plan.prepared:
        return [False] * plan.size
    result = sandbox.run(_as_program(program), plan.inputs, limits, policy=PolicyMode.OFF)
    produced: dict[Grid, Grid | None] = {}
    if result.status is ProgramStatus.LOADED:
        produced = {
            g: r.grid
            for g, r in zip(plan.inputs, result.results, strict=True)
            if r.status is Status.OK
        }
    return _agreement(plan, produced)


def agrees(
    program: Program | str | bytes,
    input_grid: object,
    output_grid: object,
    *,
    sandbox: Sandbox,
    limits: Limits = DEFINITION_LIMITS,
) -> bool:
    """Whether the program maps ``input_grid`` to ``output_grid`` (run in ``sandbox``)."""
    return agrees_batch(program, [(input_grid, output_grid)], sandbox=sandbox, limits=limits)[0]
