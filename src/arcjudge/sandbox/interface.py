"""The ``Sandbox`` interface every backend implements and every caller types against.

A sandbox runs untrusted programs over batches of input grids, with limits, somewhere the
harness is out of their reach. Its lifecycle: build it (``make_sandbox`` or a backend's
class; nothing starts yet), ``start()`` it (also done by the first ``run``/``generate``/
``map``), use it, ``close()`` it; as a context manager it is closed on exit, also after an
exception or Ctrl-C. Built-in backends: ``process``, ``docker``, and ``ray`` as an executor
over either (see ``registry.py`` for how a third party adds one). A backend that also
runs batches of variants of one program as one job is a ``VariantSandbox`` (the built-ins
are); ``run_variants`` runs a batch on any sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    VERIFIER_LIMITS,
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
    RunResult,
)


@dataclass(frozen=True)
class Job:
    """One program over one batch of inputs, for ``Sandbox.map``."""

    program: Program
    inputs: Sequence[Grid] | Sequence[GeneratorCall]
    limits: Limits = VERIFIER_LIMITS
    policy: PolicyMode = PolicyMode.WARN


@runtime_checkable
class Sandbox(Protocol):
    """Runs untrusted programs over batches of input grids, with limits.

    Contract for every implementation:

    * a program never sees expected outputs (only input grids or generator seeds reach it);
    * every failure of a program, or of the sandbox while running it, is a value: a
      ``Status`` per input and a ``ProgramStatus`` per program (``infra`` when the sandbox,
      not the program, failed), never an exception;
    * a closed sandbox leaves no process or container behind.

    A backend that subclasses ``Sandbox`` explicitly inherits ``runtime_fingerprint`` and
    the context manager, which are written here in terms of ``runtime`` and ``close``.
    """

    @property
    def name(self) -> str:
        """The backend's name (``process``, ``docker``, ``ray``, a third party's)."""
        ...

    @property
    def size(self) -> int:
        """How many jobs run at once (``map`` keeps about twice that many in flight).

        Raises:
            BackendUnavailable: If finding out needs starting the sandbox (e.g. a Ray
                cluster's size) and that fails.
            RuntimeError: Likewise, if the sandbox is closed before it ever started.
        """
        ...

    def start(self) -> None:
        """Start the sandbox's workers; a no-op when started (``run`` etc. call it).

        Raises:
            RuntimeError: If the sandbox is closed.
            BackendUnavailable: If the workers cannot be started (the message says why).
        """
        ...

    def run(
        self,
        program: Program,
        inputs: Sequence[Grid],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Run ``program``'s entry point on every input grid.

        Args:
            program: The untrusted program.
            inputs: Input grids (never expected outputs).
            limits: Limits on each input and on the whole batch.
            policy: What the static policy check does with findings (``reject`` turns
                them into ``policy_rejected``).

        Returns:
            One ``RunResult`` per input, in order, when the program loaded; otherwise the
            program's status (``load_error``, ``timeout``, ``infra``, ...) and no results.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: If the program asks for a module directory this sandbox cannot
                give it (bad input, e.g. one not mounted into the containers).
        """
        ...

    def generate(
        self,
        program: Program,
        calls: Sequence[GeneratorCall],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Draw generator samples: per call, seed ``random`` and call the entry point.

        Args:
            program: The untrusted generator.
            calls: Seeds and keyword arguments, one sample each.
            limits: As for ``run``.
            policy: As for ``run``.

        Returns:
            As ``run``; each ``RunResult`` holds the sample's input in ``grid`` and its
            output in ``output``. A generator that returns anything but two grids gives
            ``invalid_output``.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: As for ``run``.
        """
        ...

    def map(
        self, jobs: Iterable[Job], *, mode: str = "transform"
    ) -> Iterator[tuple[int, ProgramResult]]:
        """Run many jobs concurrently; yield ``(job index, result)`` as they finish.

        Jobs are pulled from ``jobs`` only as capacity frees up, so a lazy iterable keeps
        memory bounded.

        Args:
            jobs: The jobs (with ``mode="generate"`` their inputs are ``GeneratorCall``s).
            mode: ``transform`` (as ``run``) or ``generate`` (as ``generate``).

        Yields:
            ``(index of the job in jobs, its result)``, in completion order.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: As for ``run``.
        """
        ...

    def protections(self) -> dict[str, bool]:
        """Which isolation measures are active, by name (starts the sandbox).

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            BackendUnavailable: If starting it fails.
        """
        ...

    def runtime(self) -> dict[str, str]:
        """What the programs run on: backend, Python and numpy versions, image id.

        Results from one runtime must never answer for another, so this goes into every
        result-store key (see ``runtime_fingerprint``) and every manifest.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            BackendUnavailable: If starting it fails.
        """
        ...

    def runtime_fingerprint(self) -> str:
        """A stable text naming the runtime (``runtime()`` as sorted, compact JSON).

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            BackendUnavailable: If starting it fails.
        """
        return json.dumps(self.runtime(), sort_keys=True, separators=(",", ":"))

    def close(self) -> None:
        """Stop everything the sandbox started; safe to call twice, never raises."""
        ...

    def __enter__(self) -> Self:
        """Return the sandbox itself (not started yet: first use starts it)."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the sandbox."""
        self.close()


@runtime_checkable
class VariantSandbox(Sandbox, Protocol):
    """A ``Sandbox`` that also runs batches of variants of one program as one job.

    Optional for a backend (the built-ins have it); :func:`run_variants` runs a batch on
    any ``Sandbox``, each variant alone where the backend has no batches.
    """

    def run_variants(
        self,
        program: Program,
        variants: Sequence[bytes],
        inputs: Sequence[Grid],
        limits: Limits = VERIFIER_LIMITS,
        *,
        call_seconds: float,
        policy: PolicyMode = PolicyMode.WARN,
        same_as: Sequence[RunResult | None] | None = None,
    ) -> tuple[ProgramResult, ...]:
        """Run many variants of one program (e.g. its mutants) over the same inputs.

        The built-in backends run a batch in one sandboxed process that loads
        ``program``'s top level once (its imports; it is never called) and then each
        variant in a fresh module namespace, one call at a time, each call with a fresh
        copy of its input and a deadline of ``call_seconds``. A variant stops at its first
        timeout (its remaining inputs are ``timeout``). After a variant that timed out,
        crashed, exited or corrupted the channel, the next one runs in a fresh process.
        Variants of one batch share a process: the batch is one job, for variants of one
        program whose source is trusted not to be adversarial; none of them ever sees
        expected outputs. A variant that changed a module the batch shares (the module
        directories' modules, builtins) gets an ``infra`` result starting with
        ``SHARED_STATE_ERROR`` (``changed_shared_state``): run it alone with ``run``.

        With ``same_as`` (the base program's own results on these inputs, from a run of
        its own), a variant of a straight-line entry point may start, per input, from the
        base's run of the statements it shares with it (``runtime/splitstream.py``); one
        found to compute from there on exactly what the base computes answers ``same``
        on an input where the base answered a grid, and its result there is the base's
        (with its own time). The base's answers never reach the sandbox; a program that
        forges ``same`` only makes itself look like the base on that input.

        Args:
            program: The base program: its entry points, module directories and input
                format are every variant's; its source is loaded, never called.
            variants: The variants' sources (the base program is not among them).
            inputs: Input grids (never expected outputs).
            limits: Limits; ``total_seconds`` applies to each variant.
            call_seconds: Deadline of each call (at most ``limits.wall_seconds``).
            policy: As for ``run``, applied to each variant.
            same_as: The base's results, one per input (``None``: no ``same`` answers).

        Returns:
            One result per variant, in order, as ``run`` returns.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: As for ``run``.
        """
        ...


def run_variants(
    sandbox: Sandbox,
    program: Program,
    variants: Sequence[bytes],
    inputs: Sequence[Grid],
    limits: Limits = VERIFIER_LIMITS,
    *,
    call_seconds: float,
    policy: PolicyMode = PolicyMode.WARN,
    same_as: Sequence[RunResult | None] | None = None,
) -> tuple[ProgramResult, ...]:
    """``sandbox.run_variants`` (see :class:`VariantSandbox`) where the backend has it.

    A backend without batches runs each variant alone with ``run`` (the wall limit per
    call, not ``call_seconds``), which is also what a variant's own run gives.

    Raises:
        RuntimeError: If the sandbox is closed before it ever started.
        ValueError: As for ``Sandbox.run``.
    """
    if isinstance(sandbox, VariantSandbox):
        return sandbox.run_variants(
            program, variants, inputs, limits, call_seconds=call_seconds, policy=policy,
            same_as=same_as,
        )  # fmt: skip
    return tuple(
        sandbox.run(replace(program, source=source), inputs, limits, policy=policy)
        for source in variants
    )
