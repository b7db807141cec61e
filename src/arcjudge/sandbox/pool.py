"""The pool every built-in backend shares, over a pluggable transport.

The pool owns what does not depend on where programs run: the policy check, slots (one
per job that may run at once), sending each job to a free slot, trying it again on a
slot whose worker was lost, reporting a last failure as ``infra`` rather than as the
program's fault, decoding replies, and ``map`` over many jobs. A :class:`Transport` owns
where the workers run and how a job reaches one: :class:`LocalWorkers` runs trusted
supervisors (``runtime/runner.py``) as local processes or containers (the ``process`` and
``docker`` backends, via :class:`LocalPool`); ``ray_pool.RayNodes`` sends jobs to one
actor per Ray node, each with a local pool of its own.
"""

from __future__ import annotations

import abc
import functools
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

from arcjudge.sandbox.interface import Job, VariantSandbox
from arcjudge.sandbox.policy import Finding, PolicyMode, check, decide
from arcjudge.sandbox.registry import BackendUnavailable
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
    Frame,
    decode_result,
    decode_variants,
    encode_job,
    encode_variants,
)

RESPONSE_SLACK_SECONDS = 30.0
STRONG_PROTECTIONS = (
    "network_namespace",
    "read_only_root",
    "pid_namespace",
    "privilege_drop",
    "memory_cgroup",
)
log = logging.getLogger("arcjudge.sandbox")

Inputs = Sequence[Grid] | Sequence[GeneratorCall]
Reply = Frame | ProgramResult
"""A supervisor's raw reply frame (decoded by the pool), or a result made without one."""
SlotT = TypeVar("SlotT")
RequestT = TypeVar("RequestT")


@functools.lru_cache(maxsize=1024)
def _checked(source: bytes) -> tuple[Finding, ...]:
    """Policy findings for a source, cached: one program is run on many input chunks."""
    return check(source)


def same_inputs(same_as: Sequence[RunResult | None] | None, n: int) -> tuple[int, ...]:
    """The inputs where a variant may answer ``same``: those the base answered with a grid."""
    if same_as is None or len(same_as) != n:
        return ()
    return tuple(i for i, r in enumerate(same_as) if r is not None and r.status is Status.OK)


class WorkerLost(Exception):
    """A worker stopped answering or answered nonsense; it must be replaced.

    Args:
        message: What happened.
        outcome: The job's reply when its loss was the program's own doing (a container
            whose memory its program filled): the pool replaces the worker and returns
            this instead of sending the job again.
    """

    def __init__(self, message: str = "", outcome: Frame | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass(frozen=True)
class Opened(Generic[SlotT]):
    """What a transport reports once its workers are up.

    Attributes:
        slots: One per job that may run at once (the pool's ``size``); a slot may appear
            several times (e.g. a Ray node's id, once per job it takes at once).
        protections: Which isolation measures are active (on every worker).
        runtime: What programs run on (the pool adds ``backend``).
        hints: Why a protection is missing and how to enable it, by protection.
        strong_protections: The measures whose absence is warned about (``None``: the
            sandbox's own ``strong_protections``).
    """

    slots: list[SlotT]
    protections: dict[str, bool]
    runtime: dict[str, str]
    hints: dict[str, str]
    strong_protections: tuple[str, ...] | None = None


class Transport(abc.ABC, Generic[SlotT, RequestT]):
    """Where a pool's workers run and how one job reaches one of them.

    The pool calls ``open`` once (under its lock), then ``prepare`` once per job and
    ``send`` per attempt, from many threads at once; ``close`` may come at any time.
    """

    attempts: int = 2
    """Sends of one job before it is given up as ``infra`` (each after a lost worker)."""
    response_slack: float = RESPONSE_SLACK_SECONDS
    """Seconds a worker may take beyond the job's own limits before it counts as lost."""
    exhausted_error: str = "no worker left"
    """The ``infra`` error of a job that found no slot left."""

    @abc.abstractmethod
    def open(self) -> Opened[SlotT]:
        """Start the workers.

        Returns:
            The slots and what the workers report.

        Raises:
            BackendUnavailable: If the workers cannot be started; none is left running.
        """

    @abc.abstractmethod
    def prepare(self, program: Program, inputs: Inputs, limits: Limits, mode: str) -> RequestT:
        """Turn one job into what ``send`` ships (done once, before any attempt).

        Raises:
            ValueError: If the job cannot run here (e.g. an unmounted module directory).
        """

    def prepare_variants(
        self,
        program: Program,
        variants: Sequence[bytes],
        inputs: Sequence[Grid],
        limits: Limits,
        call_seconds: float,
        shareable: Sequence[int] = (),
    ) -> RequestT:
        """Turn a batch of variants into what ``send`` ships (``VariantSandbox.run_variants``).

        ``shareable``: the inputs where a variant may answer ``same`` (``encode_variants``).

        Raises:
            ValueError: As ``prepare``.
            NotImplementedError: If this transport cannot carry variants.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot run variants")

    @abc.abstractmethod
    def send(self, slot: SlotT, request: RequestT, timeout: float) -> Reply:
        """Run a prepared job on a slot's worker and return its raw reply.

        Raises:
            WorkerLost: If the worker died, timed out or answered nonsense; the pool then
                calls ``recover`` and tries again (up to ``attempts`` sends).
        """

    @abc.abstractmethod
    def recover(self, slot: SlotT, error: WorkerLost) -> SlotT | None:
        """Deal with a lost worker; return the slot to use in its place.

        Returns:
            A slot for the pool's idle queue (a fresh worker, or the same node's slot),
            or ``None`` when that capacity is gone.

        Raises:
            WorkerLost: If no replacement could be started (the capacity is gone).
        """

    def usable(self, slot: SlotT) -> bool:
        """Whether an idle slot may still take a job (a dead Ray node's may not)."""
        return True

    def exhausted(self) -> bool:
        """Whether no slot will ever free up again (jobs then fail as ``infra``)."""
        return False

    @abc.abstractmethod
    def close(self) -> None:
        """Stop every worker; safe to call twice and before ``open``; never raises."""


class Worker(Protocol):
    """One trusted supervisor that serves requests one at a time."""

    protections: dict[str, bool]
    runtime: dict[str, str]
    hints: dict[str, str]

    def request(self, message: Frame, timeout: float) -> Frame:
        """Send a request frame and return the reply frame.

        Raises:
            WorkerLost: If the supervisor died, timed out or sent a bad frame.
        """
        ...

    def close(self) -> None:
        """Stop the supervisor and release everything it holds."""
        ...


WorkerT = TypeVar("WorkerT", bound=Worker)


class LocalWorkers(Transport[WorkerT, Frame]):
    """Supervisors started on this machine (local processes or containers), one per slot.

    Args:
        spawn: Starts one worker and waits for its hello (raises ``WorkerLost``). Its
            argument is the worker's CPU slot in ``0..size-1``: no two live workers share
            one while there are fewer workers than slots (a lost worker's replacement
            takes the slot it leaves).
        size: Number of workers.
        prepare: Adapts a program to where the workers run (e.g. maps module directories
            to container paths); raises ``ValueError`` for one that cannot run there.
    """

    def __init__(
        self,
        spawn: Callable[[int], WorkerT],
        size: int,
        prepare: Callable[[Program], Program] = lambda program: program,
    ) -> None:
        self._spawn = spawn
        self._prepare = prepare
        self.size = size
        self.workers: list[WorkerT] = []
        """The live workers (tests and the docker backend's checks look into them)."""
        self._slots: dict[int, int] = {}  # id(worker), or of a placeholder -> its CPU slot
        self._capacity = size
        self._lock = threading.Lock()
        self._closed = False

    def open(self) -> Opened[WorkerT]:
        """Start ``size`` workers at once; on any failure stop those that started."""
        with ThreadPoolExecutor(self.size) as pool:
            futures = [pool.submit(self._spawn, slot) for slot in range(self.size)]
        started: list[WorkerT] = []
        failure: BaseException | None = None
        for slot, future in enumerate(futures):
            try:
                started.append(future.result())
                self._slots[id(started[-1])] = slot
            except Exception as exc:  # WorkerLost, or a bug: either way stop the others
                failure = failure or exc
        if failure is not None:
            for worker in started:
                worker.close()
            if isinstance(failure, WorkerLost):
                raise BackendUnavailable(f"could not start a worker: {failure}") from None
            raise failure
        with self._lock:
            self.workers.extend(started)
        first = started[0]
        return Opened(
            list(started), dict(first.protections), dict(first.runtime), dict(first.hints)
        )

    def prepare(self, program: Program, inputs: Inputs, limits: Limits, mode: str) -> Frame:
        """The request frame for the job (module directories as the workers see them)."""
        return encode_job(self._prepare(program), inputs, limits, mode)

    def prepare_variants(
        self,
        program: Program,
        variants: Sequence[bytes],
        inputs: Sequence[Grid],
        limits: Limits,
        call_seconds: float,
        shareable: Sequence[int] = (),
    ) -> Frame:
        """The request frame for a batch of variants (module directories as for ``prepare``)."""
        return encode_variants(
            self._prepare(program), variants, inputs, limits, call_seconds, shareable
        )

    def send(self, slot: WorkerT, request: Frame, timeout: float) -> Frame:
        """Send the frame to the worker and wait for its reply (raises ``WorkerLost``)."""
        return slot.request(request, timeout)

    def recover(self, slot: WorkerT, error: WorkerLost) -> WorkerT | None:
        """Stop the lost worker and start a fresh one in its place (unless closed)."""
        slot.close()
        with self._lock:
            if slot in self.workers:
                self.workers.remove(slot)
            self._slots.pop(id(slot), None)
            if self._closed:
                return None
            cpu = self._free_slot()
            starting = object()  # holds the slot while the replacement starts
            self._slots[id(starting)] = cpu
        try:
            fresh = self._spawn(cpu)
        except WorkerLost:
            with self._lock:
                self._capacity -= 1
                self._slots.pop(id(starting), None)
            raise
        with self._lock:
            self._slots.pop(id(starting), None)
            if self._closed:
                closing = True
            else:
                closing = False
                self.workers.append(fresh)
                self._slots[id(fresh)] = cpu
        if closing:
            fresh.close()
            return None
        return fresh

    def _free_slot(self) -> int:
        """The CPU slot held by the fewest workers (the lowest of those); under the lock."""
        held = list(self._slots.values())
        return min(range(self.size), key=lambda cpu: (held.count(cpu), cpu))

    def exhausted(self) -> bool:
        """True once every worker was lost and none could be started again."""
        return self._capacity <= 0

    def close(self) -> None:
        """Stop every worker."""
        with self._lock:
            self._closed = True
            workers, self.workers = self.workers, []
            self._slots.clear()
        for worker in workers:
            worker.close()


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
