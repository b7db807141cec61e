"""Where a pool's workers run and how a job reaches one: the :class:`Transport` interface.

:class:`LocalWorkers` runs trusted supervisors (``runtime/runner.py``) as local processes
or containers (the ``process`` and ``docker`` backends); ``ray_pool.RayNodes`` sends jobs
to one actor per Ray node. The pool (``pool.py``) owns everything that does not depend on
where programs run, and talks to its workers only through this interface.
"""

from __future__ import annotations

import abc
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from arcjudge.sandbox.registry import BackendUnavailable
from arcjudge.sandbox.types import (
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
)
from arcjudge.sandbox.wire import (
    Frame,
    encode_job,
    encode_variants,
)

RESPONSE_SLACK_SECONDS = 30.0

Inputs = Sequence[Grid] | Sequence[GeneratorCall]
Reply = Frame | ProgramResult
"""A supervisor's raw reply frame (decoded by the pool), or a result made without one."""
SlotT = TypeVar("SlotT")
RequestT = TypeVar("RequestT")
log = logging.getLogger("arcjudge.sandbox")


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
