"""Program calls whose answers are not known in advance, through the engine and its store.

Validate and score check programs against expected outputs; ``dimensions build`` and
``dimensions score`` run a program to *find out* what it returns (a task's verifier on
candidate inputs, a model's Definition program on its own answers). ``run_calls`` runs such
calls on the same :class:`~arcjudge.harness.core.engine.Engine` as the other commands: one
engine task per call, its inputs cut into chunks, chunks served from the result store when
they are there and committed to it as they finish, so an interrupted run redoes only what
is missing. Keys come from :func:`call_key`, which covers what ``program_key`` covers plus
the engine's policy mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from arcjudge.harness.core.engine import Candidate, Engine
from arcjudge.harness.core.keys import program_key
from arcjudge.harness.core.results import CandidateOutcome, TaskInput
from arcjudge.sandbox.types import Grid, Program, Status

_NOTHING: Grid = ()  # the expected output of a call's input: none (the engine never reads it)


@dataclass(frozen=True)
class Call:
    """One program on some inputs.

    Attributes:
        program: What to run.
        key: Its :func:`call_key`.
        inputs: The input grids, in the order the outcome's ``results`` follow.
    """

    program: Program
    key: str
    inputs: Sequence[Grid]


def call_key(engine: Engine, program: Program, fingerprint: str) -> str:
    """The store key of ``program`` run by ``engine`` (``transform`` mode).

    Args:
        engine: Gives the limits, the policy mode and the sandbox's runtime.
        program: The program.
        fingerprint: ``module_fingerprint`` of its module directories ("" for none).

    Returns:
        The hex key: ``program_key`` (source, entry points, modules, limits, policy mode,
        runtime, arcjudge's sandbox code).
    """
    runtime = engine.sandbox.runtime_fingerprint()
    return program_key(
        program, fingerprint, "transform", engine.limits, runtime, policy=engine.policy
    )


def outputs_of(call: Call, outcome: CandidateOutcome) -> dict[Grid, tuple[Status, Grid | None]]:
    """Each input's ``(status, output grid)``; empty when the program did not run.

    Inputs the run did not answer (a sandbox failure) are left out.
    """
    if outcome.failure is not None:
        return {}
    return {
        grid: (r.status, r.grid)
        for grid, r in zip(call.inputs, outcome.results, strict=True)
        if r is not None
    }


def run_calls(
    engine: Engine,
    calls: Sequence[Call],
    on_done: Callable[[int, CandidateOutcome], None] | None = None,
) -> list[CandidateOutcome]:
    """Run every call on the engine; return one outcome per call, in call order.

    Args:
        engine: An engine without ``stop_at_first_failure`` (there is nothing to compare).
        calls: The calls.
        on_done: Called with ``(call index, outcome)`` as each call completes.

    Returns:
        The outcomes: ``failure`` when the program did not load (or was rejected), else
        one ``results`` entry per input (``None`` only if the engine skipped it).

    Raises:
        ValueError: When the engine stops at first failures.
    """
    if engine.stop:
        raise ValueError("run_calls needs an engine that does not stop at first failures")
    outcomes: list[CandidateOutcome | None] = [None] * len(calls)

    def tasks() -> Iterator[tuple[str, list[TaskInput], list[Candidate[None]]]]:
        for index, call in enumerate(calls):
            inputs = [TaskInput("call", i, g, _NOTHING) for i, g in enumerate(call.inputs)]
            yield str(index), inputs, [Candidate(call.program, call.key, None)]

    def done(
        task_id: str,
        _inputs: list[TaskInput],
        _cands: list[Candidate[None]],
        got: list[CandidateOutcome],
    ) -> None:
        index = int(task_id)
        outcomes[index] = got[0]
        if on_done is not None:
            on_done(index, got[0])

    engine.run(tasks(), done)
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]
