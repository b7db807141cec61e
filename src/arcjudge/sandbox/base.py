"""The ``Sandbox`` interface and the worker pool shared by every backend.

A backend provides workers: long-lived trusted supervisors (``runtime/runner.py``) that it
starts somewhere isolated (a local process, a container). The pool sends each request to
an idle worker, replaces a worker that dies, retries the program once, and reports a second
failure as ``infra`` rather than as the program's fault.
"""

from __future__ import annotations

import abc
import base64
import functools
import json
import logging
import os
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from arcjudge.safetext import clean_text
from arcjudge.sandbox.policy import PolicyMode, check, decide
from arcjudge.sandbox.runtime import canonical
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
    to_plain,
)

RESPONSE_SLACK_SECONDS = 30.0
STRONG_PROTECTIONS = ("network_namespace", "read_only_root", "pid_namespace", "privilege_drop")
log = logging.getLogger("arcjudge.sandbox")


@functools.lru_cache(maxsize=1024)
def _checked(source: bytes) -> tuple:
    """Policy findings for a source, cached: one program is run on many input chunks."""
    return check(source)


class WorkerLost(Exception):
    """A worker stopped answering or answered nonsense; it must be replaced."""


class Worker(Protocol):
    """One trusted supervisor that serves requests one at a time."""

    protections: dict[str, bool]
    runtime: dict[str, str]
    hints: dict[str, str]

    def request(self, message: dict, timeout: float) -> dict:
        """Send a request frame and return the reply frame (raises ``WorkerLost``)."""
        ...

    def close(self) -> None:
        """Stop the supervisor and release everything it holds."""
        ...


@dataclass(frozen=True)
class Job:
    """One program over one batch of inputs, for ``Sandbox.map``."""

    program: Program
    inputs: Sequence[Grid]
    limits: Limits = VERIFIER_LIMITS
    policy: PolicyMode = PolicyMode.WARN


@runtime_checkable
class Sandbox(Protocol):
    """Runs untrusted programs over batches of input grids, with limits.

    Implementations must never let a program see expected outputs, must report every
    failure as a status (``Status`` per input, ``ProgramStatus`` per program), and must be
    usable as a context manager that leaves no process or container behind.
    """

    name: str

    def run(
        self,
        program: Program,
        inputs: Sequence[Grid],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Run ``program`` on every input and return one result per input."""
        ...

    def generate(
        self,
        program: Program,
        calls: Sequence[GeneratorCall],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Draw generator samples (seeded calls); outputs in ``RunResult.output``."""
        ...

    def map(
        self, jobs: Iterable[Job], *, mode: str = "transform"
    ) -> Iterator[tuple[int, ProgramResult]]:
        """Run many jobs concurrently; yield ``(job index, result)`` as they finish."""
        ...

    def protections(self) -> dict[str, bool]:
        """Return which isolation measures are active."""
        ...

    def close(self) -> None:
        """Stop all workers."""
        ...


def _input_wire(grid: Sequence[Sequence[int]]) -> list:
    """An input grid's wire form: ``[width, digits]`` for a grid of 0..9, else plain lists."""
    exact = canonical.exact_grid(grid)
    return canonical.to_wire(exact) if exact is not None else to_plain(grid)


def encode_job(
    program: Program,
    inputs: Sequence[Grid] | Sequence[GeneratorCall],
    limits: Limits,
    mode: str = "transform",
) -> dict:
    """Build the request frame for a supervisor (no expected outputs in it, ever).

    Args:
        program: The program to run.
        inputs: Input grids only.
        limits: Limits to enforce.
        mode: ``transform`` (call the entry point on each grid) or ``generate`` (inputs are
            ``GeneratorCall`` seeds and keyword arguments).

    Returns:
        A JSON-ready request.
    """
    return {
        "op": "run",
        "source": base64.b64encode(program.source).decode("ascii"),
        "entry_points": list(program.entry_points),
        "module_dirs": [os.path.abspath(d) for d in program.module_dirs],
        "input_format": program.input_format,
        "mode": mode,
        "inputs": [
            {"seed": c.seed, "kwargs": dict(c.kwargs)}
            if isinstance(c, GeneratorCall)
            else _input_wire(c)
            for c in inputs
        ],
        "limits": {
            "wall_seconds": limits.wall_seconds,
            "memory_bytes": limits.memory_bytes,
            "processes": limits.processes,
            "output_bytes": limits.output_bytes,
            "total_seconds": limits.total_seconds,
            "disk_bytes": limits.disk_bytes,
        },
    }


def _text(value: object, limit: int = 4000) -> str | None:
    """A program-controlled text, cut and made valid UTF-8 (lone surrogates escaped)."""
    return clean_text(value[:limit]) if isinstance(value, str) else None


def decode_result(
    reply: dict, n_inputs: int, findings: tuple[str, ...], mode: str = "transform"
) -> ProgramResult:
    """Turn a supervisor's reply into a ``ProgramResult``, validating everything.

    Args:
        reply: The parsed reply frame.
        n_inputs: How many inputs were sent.
        findings: Policy findings to attach.
        mode: The job's mode: only ``generate`` results carry a generator's output grid.

    Returns:
        The result; an ``infra`` result when the reply is malformed.
    """
    try:
        status = ProgramStatus(reply.get("status"))
        seconds = float(reply.get("seconds") or 0.0)
        output = _text(reply.get("output")) or ""
        if status is not ProgramStatus.LOADED:
            return ProgramResult(
                status, error=_text(reply.get("error")), output=output, seconds=seconds,
                findings=findings,
            )  # fmt: skip
        raw = reply.get("results")
        if not isinstance(raw, list) or len(raw) != n_inputs:
            raise ValueError("wrong number of results")
        results = []
        for index, item in enumerate(raw):
            item_status = Status(item["s"])
            grid = gen_output = None
            if item_status is Status.OK:
                grid, reason = canonical.from_wire(item.get("g"))
                if grid is None:
                    raise ValueError(f"malformed grid: {reason}")
                if ("o" in item) != (mode == "generate"):
                    raise ValueError("generator output where none belongs, or missing")
                if "o" in item:
                    gen_output, reason = canonical.from_wire(item.get("o"))
                    if gen_output is None:
                        raise ValueError(f"malformed grid: {reason}")
            seconds = float(item.get("t", 0.0))
            results.append(
                RunResult(index, item_status, grid, _text(item.get("e")), seconds, gen_output)
            )
        return ProgramResult(
            status, tuple(results), entry_point=_text(reply.get("entry"), 100), output=output,
            seconds=seconds, findings=findings,
        )  # fmt: skip
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return ProgramResult(
            ProgramStatus.INFRA, error=f"malformed reply: {exc}", findings=findings
        )


class PooledSandbox(abc.ABC):
    """A pool of warm workers behind the ``Sandbox`` interface."""

    name = "pooled"
    strong_protections: tuple[str, ...] = STRONG_PROTECTIONS

    def __init__(self, workers: int | None = None) -> None:
        self.size = max(1, int(workers or os.cpu_count() or 1))
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._protections: dict[str, bool] = {}
        self._hints: dict[str, str] = {}
        self._runtime: dict[str, str] = {}

    @abc.abstractmethod
    def _spawn_worker(self) -> Worker:
        """Start one worker and wait until it has said hello."""

    def _prepare(self, program: Program) -> Program:
        """Adapt a program to where the workers run (e.g. map module directories)."""
        return program

    def start(self) -> None:
        """Start all workers (called automatically on first use)."""
        with self._lock:
            if self._started:
                return
            if self._closed:
                raise RuntimeError("sandbox is closed")
            with ThreadPoolExecutor(self.size) as pool:
                workers = list(pool.map(lambda _: self._spawn_worker(), range(self.size)))
            for worker in workers:
                self._all.append(worker)
                self._idle.put(worker)
            self._protections = dict(workers[0].protections)
            self._hints = dict(workers[0].hints)
            self._runtime = {"backend": self.name, **workers[0].runtime}
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
        """Return which isolation measures the workers report as active."""
        self.start()
        return dict(self._protections)

    def runtime(self) -> dict[str, str]:
        """Return what the programs run on: backend, Python and numpy versions, image id.

        Results from one runtime must never answer for another, so this goes into every
        result-store key (see ``runtime_fingerprint``) and every manifest.
        """
        self.start()
        return dict(self._runtime)

    def runtime_fingerprint(self) -> str:
        """Return a stable text naming the runtime (``runtime()`` as sorted JSON)."""
        return json.dumps(self.runtime(), sort_keys=True, separators=(",", ":"))

    def _replace(self, worker: Worker) -> None:
        worker.close()
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
            if self._closed:
                return
        fresh = self._spawn_worker()
        with self._lock:
            self._all.append(fresh)
        self._idle.put(fresh)

    def run(
        self,
        program: Program,
        inputs: Sequence[Grid],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Run ``program`` on every input (see ``Sandbox.run``)."""
        return self._execute(program, inputs, limits, policy, "transform")

    def generate(
        self,
        program: Program,
        calls: Sequence[GeneratorCall],
        limits: Limits = VERIFIER_LIMITS,
        *,
        policy: PolicyMode = PolicyMode.WARN,
    ) -> ProgramResult:
        """Draw generator samples: per call, seed ``random`` and call the entry point.

        Each ``RunResult`` holds the sample's input in ``grid`` and its output in
        ``output``; a generator that returns anything but two grids is ``invalid_output``.
        """
        return self._execute(program, calls, limits, policy, "generate")

    def _execute(
        self,
        program: Program,
        inputs: Sequence[Grid] | Sequence[GeneratorCall],
        limits: Limits,
        policy: PolicyMode,
        mode: str,
    ) -> ProgramResult:
        rejected, findings = False, ()
        if PolicyMode(policy) is not PolicyMode.OFF:
            rejected, findings = decide(policy, _checked(program.source))
        if rejected:
            return ProgramResult(
                ProgramStatus.POLICY_REJECTED, error="; ".join(findings)[:4000], findings=findings
            )
        reply = self._exchange(program, inputs, limits, mode)
        if isinstance(reply, ProgramResult):
            return reply
        return decode_result(reply, len(inputs), findings, mode)

    def _exchange(
        self,
        program: Program,
        inputs: Sequence[Grid] | Sequence[GeneratorCall],
        limits: Limits,
        mode: str,
    ) -> dict | ProgramResult:
        """Send one job to a worker (a lost worker is replaced and the job sent once more).

        Returns:
            The supervisor's raw reply (plain JSON data, decoded by ``decode_result``), or
            an ``infra`` result when no worker could answer.
        """
        self.start()
        message = encode_job(self._prepare(program), inputs, limits, mode)
        timeout = limits.total_seconds + limits.wall_seconds + RESPONSE_SLACK_SECONDS
        problem = "no worker answered"
        for _attempt in range(2):
            worker = self._take_worker()
            if worker is None:
                return ProgramResult(ProgramStatus.INFRA, error="sandbox closed")
            try:
                reply = worker.request(message, timeout)
            except WorkerLost as exc:
                problem = str(exc)
                self._replace(worker)
                continue
            self._idle.put(worker)
            return reply
        return ProgramResult(ProgramStatus.INFRA, error=f"sandbox failed twice: {problem}")

    def _take_worker(self) -> Worker | None:
        """Wait for an idle worker; ``None`` once the sandbox is closed."""
        while True:
            try:
                return self._idle.get(timeout=0.2)
            except queue.Empty:
                if self._closed:
                    return None

    def map(
        self, jobs: Iterable[Job], *, mode: str = "transform"
    ) -> Iterator[tuple[int, ProgramResult]]:
        """Run jobs over the pool; yield ``(job index, result)`` in completion order.

        Jobs are pulled from ``jobs`` only as workers free up, so a lazy iterable keeps
        memory bounded. With ``mode="generate"`` each job's inputs are ``GeneratorCall``s.
        """
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
            workers, self._all = self._all, []
        for worker in workers:
            worker.close()

    def __enter__(self) -> PooledSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
