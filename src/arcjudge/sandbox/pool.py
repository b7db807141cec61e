"""The pool every built-in backend shares, over a pluggable transport.

The pool owns what does not depend on where programs run: the policy check, slots (one
per job that may run at once), sending each job to a free slot, trying it again on a
slot whose worker was lost, reporting a last failure as ``infra`` rather than as the
program's fault, decoding replies, and ``map`` over many jobs. A :class:`Transport` owns
where the workers run and how a job reaches one: :class:`LocalWorkers` runs trusted
supervisors (``runtime/runner.py``) as local processes or containers (the ``process`` and
``docker`` backends, via :class:`LocalPool`); ``ray_pool.RayNodes`` sends jobs to one
actor per Ray node, each with a local pool of its own. Transports are in ``transport.py``.
"""

from __future__ import annotations

import abc
import functools
import logging
import os
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

from arcjudge.sandbox.interface import Job, VariantSandbox
from arcjudge.sandbox.policy import Finding, PolicyMode, check, decide
from arcjudge.sandbox.transport import (
    Inputs,
    LocalWorkers,
    Reply,
    Transport,
    Worker,
    WorkerLost,
)
from arcjudge.sandbox.types import (
    VERIFIER_LIMITS,
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
)
from arcjudge.sandbox.wire import (
    decode_result,
    decode_variants,
)

STRONG_PROTECTIONS = (
    "network_namespace",
    "read_only_root",
    "pid_namespace",
    "privilege_drop",
    "memory_cgroup",
)
log = logging.getLogger("arcjudge.sandbox")


@functools.lru_cache(maxsize=1024)
def _checked(source: bytes) -> tuple[Finding, ...]:
    """Policy findings for a source, cached: one program is run on many input chunks."""
    return check(source)


def same_inputs(same_as: Sequence[RunResult | None] | None, n: int) -> tuple[int, ...]:
    """The inputs where a variant may answer ``same``: those the base answered with a grid."""
    if same_as is None or len(same_as) != n:
        return ()
    return tuple(i for i, r in enumerate(same_as) if r is not None and r.status is Status.OK)


class PooledSandbox(VariantSandbox):
    """A pool of slots behind the ``Sandbox`` interface; a transport provides the workers.

    Args:
        transport: Where the workers run.
        size: The number of slots when known before starting (``None``: read ``size``
            starts the sandbox to find out, e.g. a Ray cluster's).
    """

    name = "pooled"
    strong_protections: tuple[str, ...] = STRONG_PROTECTIONS

    def __init__(self, transport: Transport[Any, Any], size: int | None = None) -> None:
        self._transport = transport
        self._size = size
        self._idle: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._protections: dict[str, bool] = {}
        self._hints: dict[str, str] = {}
        self._runtime: dict[str, str] = {}

    @property
    def size(self) -> int:
        """Jobs that run at once (starts the sandbox when only that tells)."""
        if self._size is None:
            self.start()
        assert self._size is not None
        return self._size

    def start(self) -> None:
        """See :meth:`Sandbox.start` (the transport starts the workers)."""
        with self._lock:
            if self._started:
                return
            if self._closed:
                raise RuntimeError("sandbox is closed")
            opened = self._transport.open()
            for slot in opened.slots:
                self._idle.put(slot)
            self._size = len(opened.slots)
            self._protections = dict(opened.protections)
            self._hints = dict(opened.hints)
            self._runtime = {"backend": self.name, **opened.runtime}
            if opened.strong_protections is not None:
                self.strong_protections = opened.strong_protections
            self._started = True
        missing = self.missing_protections()
        if missing:
            why = "".join(f"; {k}: {v}" for k, v in self._hints.items())
            log.warning("%s sandbox is running without: %s%s", self.name, ", ".join(missing), why)

    def hints(self) -> dict[str, str]:
        """Why a protection could not be set up and how to enable it, by protection."""
        self.start()
        return dict(self._hints)

    def missing_protections(self) -> list[str]:
        """The important isolation measures (``strong_protections``) that are not active."""
        return [k for k in self.strong_protections if not self._protections.get(k, False)]

    def protections(self) -> dict[str, bool]:
        """See :meth:`Sandbox.protections`."""
        self.start()
        return dict(self._protections)

    def runtime(self) -> dict[str, str]:
        """See :meth:`Sandbox.runtime`."""
        self.start()
        return dict(self._runtime)

    def run(
        self,
        program: Program,
        inputs: Sequence[Grid],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """See :meth:`Sandbox.run`."""
        return self._execute(program, inputs, limits, policy, "transform")

    def generate(
        self,
        program: Program,
        calls: Sequence[GeneratorCall],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """See :meth:`Sandbox.generate`."""
        return self._execute(program, calls, limits, policy, "generate")

    def _execute(
        self, program: Program, inputs: Inputs, limits: Limits, policy: PolicyMode, mode: str
    ) -> ProgramResult:
        rejected = False
        findings: tuple[str, ...] = ()
        if PolicyMode(policy) is not PolicyMode.OFF:
            rejected, findings = decide(policy, _checked(program.source))
        if rejected:
            return ProgramResult(
                ProgramStatus.POLICY_REJECTED, error="; ".join(findings)[:4000], findings=findings
            )
        reply = self.exchange(program, inputs, limits, mode)
        if isinstance(reply, ProgramResult):
            return reply
        return decode_result(reply, len(inputs), findings, mode)

    def exchange(self, program: Program, inputs: Inputs, limits: Limits, mode: str) -> Reply:
        """Run one job without the policy check and return the raw reply, undecoded.

        For a Ray node's pool (plain data is cheaper to ship than decoded results; the
        driver checks the policy and decodes). A lost worker is recovered and the job sent
        again, up to the transport's ``attempts``.

        Returns:
            The supervisor's reply frame, or an ``infra`` result when none could answer.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: If the job cannot run here (see ``Transport.prepare``).
        """
        self.start()
        request = self._transport.prepare(program, inputs, limits, mode)
        timeout = limits.total_seconds + limits.wall_seconds + self._transport.response_slack
        return self._send(request, timeout)

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
        """See :meth:`VariantSandbox.run_variants`."""
        shareable = same_inputs(same_as, len(inputs))
        findings: list[tuple[str, ...]] = []
        sent: list[int] = []
        results: list[ProgramResult | None] = [None] * len(variants)
        for k, source in enumerate(variants):
            rejected = False
            found: tuple[str, ...] = ()
            if PolicyMode(policy) is not PolicyMode.OFF:
                rejected, found = decide(policy, _checked(source))
            if rejected:
                results[k] = ProgramResult(
                    ProgramStatus.POLICY_REJECTED, error="; ".join(found)[:4000], findings=found
                )
            else:
                sent.append(k)
                findings.append(tuple(found))
        if sent:
            reply = self.exchange_variants(
                program, [variants[k] for k in sent], inputs, limits, call_seconds, shareable
            )
            if isinstance(reply, ProgramResult):
                decoded = tuple(replace(reply, findings=f) for f in findings)
            else:
                same = same_as if shareable else None
                decoded = decode_variants(reply, len(inputs), findings, same)
            for k, result in zip(sent, decoded, strict=True):
                results[k] = result
        return tuple(r for r in results if r is not None)

    def exchange_variants(
        self,
        program: Program,
        variants: Sequence[bytes],
        inputs: Sequence[Grid],
        limits: Limits,
        call_seconds: float,
        shareable: Sequence[int] = (),
    ) -> Reply:
        """``exchange`` for a batch of variants (no policy check; the reply undecoded).

        ``shareable``: as for ``encode_variants``.

        Returns:
            The supervisor's reply frame, or an ``infra`` result when none could answer.

        Raises:
            RuntimeError: If the sandbox is closed before it ever started.
            ValueError: As ``exchange``.
            NotImplementedError: If the transport cannot carry variants.
        """
        self.start()
        transport = self._transport
        request = transport.prepare_variants(
            program, variants, inputs, limits, call_seconds, shareable
        )
        call = min(call_seconds, limits.wall_seconds)
        per_variant = min(limits.total_seconds, limits.wall_seconds + len(inputs) * call)
        timeout = len(variants) * (per_variant + 2 * limits.wall_seconds)
        return self._send(request, timeout + transport.response_slack)

    def _send(self, request: Any, timeout: float) -> Reply:
        """Send a prepared request to a free slot, recovering lost workers (``attempts``)."""
        transport = self._transport
        problem = "no worker answered"
        for attempt in range(transport.attempts):
            slot = self._take_slot()
            if slot is None:
                error = "sandbox closed" if self._closed else transport.exhausted_error
                if attempt:
                    error += f" ({problem})"
                return ProgramResult(ProgramStatus.INFRA, error=error)
            try:
                reply = transport.send(slot, request, timeout)
            except WorkerLost as exc:
                problem = str(exc)
                if self._closed:
                    return ProgramResult(ProgramStatus.INFRA, error="sandbox closed")
                try:
                    fresh = transport.recover(slot, exc)
                except WorkerLost as lost:
                    if exc.outcome is not None:
                        return exc.outcome
                    problem = f"{problem}; no replacement: {lost}"
                    continue
                if fresh is not None:
                    self._idle.put(fresh)
                if exc.outcome is not None:  # the program's own doing: not sent again
                    return exc.outcome
                continue
            self._idle.put(slot)
            return reply
        return ProgramResult(
            ProgramStatus.INFRA, error=f"sandbox failed {transport.attempts} times: {problem}"
        )

    def _take_slot(self) -> Any:
        """Wait for a usable idle slot; ``None`` once closed or when none is left."""
        while True:
            try:
                slot = self._idle.get(timeout=0.2)
            except queue.Empty:
                if self._closed or self._transport.exhausted():
                    return None
                continue
            if self._transport.usable(slot):
                return slot
            # an unusable slot (of a dead node) is dropped: that capacity is gone

    def map(
        self, jobs: Iterable[Job], *, mode: str = "transform"
    ) -> Iterator[tuple[int, ProgramResult]]:
        """See :meth:`Sandbox.map`."""
        self.start()
        window = self.size * 2
        with ThreadPoolExecutor(self.size) as pool:
            pending: dict[Future[ProgramResult], int] = {}
            for index, job in enumerate(jobs):
                future = pool.submit(
                    self._execute, job.program, job.inputs, job.limits, job.policy, mode
                )
                pending[future] = index
                if len(pending) >= window:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        yield pending.pop(fut), fut.result()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield pending.pop(fut), fut.result()

    def close(self) -> None:
        """Stop every worker; safe to call twice."""
        with self._lock:
            self._closed = True
        self._transport.close()


PIN_CPUS_ENV = "ARCJUDGE_PIN_CPUS"
"""Set to ``0`` to let the kernel place the supervisors (see :class:`LocalPool`)."""


def pin_cpus_default() -> bool:
    """Whether local pools pin their supervisors: yes, unless ``$ARCJUDGE_PIN_CPUS`` is 0."""
    return os.environ.get(PIN_CPUS_ENV, "1").strip() != "0"


class LocalPool(PooledSandbox, abc.ABC):
    """A pool of supervisors on this machine; subclasses say how to start one.

    Each supervisor is pinned to one CPU (its slot's, among the CPUs it may use) before it
    forks its zygote, so it and every program it runs share that CPU. A program and its
    supervisor answer each other once per input; on one CPU that exchange costs a few
    microseconds, across two (a wake-up of the other, often idle, CPU) it cost about 90 us
    of CPU per input here (``bench/README.md``). Workers get distinct slots while there are
    no more workers than CPUs.

    Args:
        workers: Number of supervisors (default: one per core).
        pin_cpus: Pin each supervisor to a CPU (default: yes, unless
            ``$ARCJUDGE_PIN_CPUS`` is ``0``): off, the kernel places them.
    """

    def __init__(self, workers: int | None = None, *, pin_cpus: bool | None = None) -> None:
        size = max(1, int(workers or os.cpu_count() or 1))
        self.pin_cpus = pin_cpus_default() if pin_cpus is None else pin_cpus
        self._local: LocalWorkers[Worker] = LocalWorkers(self._spawn_pinned, size, self._prepare)
        super().__init__(self._local, size)

    def _spawn_pinned(self, slot: int) -> Worker:
        return self._spawn_worker(slot if self.pin_cpus else None)

    @property
    def workers(self) -> list[Worker]:
        """The live workers (a copy)."""
        return list(self._local.workers)

    @abc.abstractmethod
    def _spawn_worker(self, cpu_slot: int | None) -> Worker:
        """Start one worker and wait until it has said hello (raises ``WorkerLost``).

        Args:
            cpu_slot: Pin the supervisor to this slot's CPU (``runner.py --cpu-slot``);
                ``None``: do not pin.
        """

    def _prepare(self, program: Program) -> Program:
        """Adapt a program to where the workers run (e.g. map module directories)."""
        return program
