"""The work engine shared by validate and score: candidates x instances, chunked, cached.

For each task the caller supplies its *instances* (input grids with expected outputs,
labelled by split) and its *candidates* (programs to check: verifier sources, model
programs). The engine cuts each candidate's inputs into chunks, serves chunks from the
result store when it can, runs the rest over the sandbox pool (a slow candidate occupies
one worker, never the whole run), commits each finished chunk to the store, and hands each
task's outcomes back once all its chunks are in. Tasks come one at a time, so only the
tasks with work in flight are held in memory: the caller feeds them (``Engine.feed``: each
``add`` returns the tasks finished meanwhile, so the caller's code never runs inside the
engine) or hands an iterator and a callback (``Engine.run``). The values it takes and gives
back (``TaskInput``, ``StoredResult``, ``CandidateOutcome``) are in ``results.py``; the
keys it looks results up by in ``keys.py``; the store in ``store.py``.

A candidate's policy findings are stored with its results under its program key, so a
task served from the store reports the findings its first run did.

With ``stop_at_first_failure`` a candidate's chunks run one after another and the rest is
skipped as soon as a chunk holds a wrong answer.

Answers are judged lean (``results.py``): each task's expected outputs are put in compact
form once, fresh answers are compared in the compact form the sandbox replied with. Each
input's wire form (what the sandbox is sent) and digest (what its result keys are made
from) are computed once per task, for all its candidates.

A task whose inputs need sandbox work first (``validate``'s generator samples) comes as a
``Deferred``: its jobs run in the same pool and window as the chunks, and the task joins
once the last is in (and the further jobs it then asks for, a redraw of samples that
failed), so its candidates start while other tasks' jobs still run (no phase barrier: the
workers stay busy and nothing waits for the whole run's samples).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from arcjudge.harness.core.keys import input_digest, result_keys
from arcjudge.harness.core.results import (
    CandidateOutcome,
    Expected,
    StoredResult,
    TaskInput,
    is_right,
)
from arcjudge.harness.core.store import ResultStore
from arcjudge.sandbox import Job, Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    GeneratorCall,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    Status,
    WiredGrids,
    input_wire,
)

MetaT = TypeVar("MetaT")


@dataclass
class Candidate(Generic[MetaT]):
    """A program to check on a task's inputs (``program`` ``None``: nothing to run).

    Attributes:
        program: The program, or ``None`` for a source with nothing for this task.
        key: Its result-store program key (``program_key``).
        meta: What the workflow needs back with the outcome (a source's provenance, the
            records a program answers for, a mutant); the engine never reads it.
    """

    program: Program | None
    key: str
    meta: MetaT


def commit_result(
    store: ResultStore,
    prog_key: str,
    keys: Sequence[bytes],
    expected: Sequence[Expected],
    result: ProgramResult,
) -> list[StoredResult] | None:
    """Store a fresh result of a program over some inputs; return them judged.

    A program that did not load is stored as such (unless the sandbox failed: ``infra``
    is never stored); a loaded one's findings are stored before its results, so a stored
    result implies stored findings, and each input's result is stored but ``infra`` ones.

    Args:
        store: The result store.
        prog_key: The program's key.
        keys: The result key of each input the result answers, in order.
        expected: Each input's expected output, in order.
        result: The fresh result.

    Returns:
        The judged per-input results, or ``None`` when the program did not load.
    """
    if result.status is not ProgramStatus.LOADED:
        if result.status is not ProgramStatus.INFRA:
            store.put_program(prog_key, result.status, result.error, result.findings)
        return None
    if result.findings:
        store.put_program(prog_key, result.status, None, result.findings)
    stored = [StoredResult.judged(r, e) for r, e in zip(result.results, expected, strict=True)]
    store.put_many(
        [(k, s) for k, s in zip(keys, stored, strict=True) if s.status is not Status.INFRA]
    )
    return stored


@dataclass
class _Chunk:
    task: _Task
    candidate: int
    positions: list[int]
    keys: list[bytes]


@dataclass
class _Task:
    task_id: str
    instances: list[TaskInput]
    candidates: list[Candidate[Any]]
    outcomes: list[CandidateOutcome]
    queues: list[deque[_Chunk]]
    expected: list[Expected] = field(default_factory=list)  # per instance, for judging
    wires: list[list[Any]] = field(default_factory=list)  # per instance, sent as they are
    pending: int = 0  # chunks handed to the scheduler and not yet absorbed
    active: set[int] = field(default_factory=set)  # candidates with a chunk pending


TaskSpec = tuple[str, list[TaskInput], list[Candidate[MetaT]]]
"""``(task_id, instances, candidates)``: a task ready to run."""


@dataclass
class Deferred(Generic[MetaT]):
    """A task that needs sandbox jobs done before its instances are known.

    Attributes:
        jobs: Generate jobs (inputs: ``GeneratorCall``s; run with ``Sandbox.generate``) in
            the engine's pool and window, next to other tasks' chunks.
        absorb: Receives ``(job index, result)`` for each, in completion order, in the
            engine's thread (so it may write the store).
        task: Called once every result is absorbed (and ``more`` has none left): the
            task to run.
        more: Called once every job so far is absorbed (``None``: never): further jobs,
            numbered on from the last (a redraw of generator samples that failed), or
            none; they run and are absorbed like the first.
    """

    jobs: Sequence[Job]
    absorb: Callable[[int, ProgramResult], None]
    task: Callable[[], TaskSpec[MetaT]]
    more: Callable[[], Sequence[Job]] | None = None


@dataclass
class _Waiting:
    deferred: Deferred[Any]
    left: int = 0  # jobs not yet absorbed
    given: int = 0  # jobs handed out so far (the next one's index)


@dataclass
class _Prereq:
    waiting: _Waiting
    index: int
    job: Job


TaskDone = Callable[[str, list[TaskInput], list[Candidate[MetaT]], list[CandidateOutcome]], None]
"""Receives a finished task's id, inputs, candidates and their outcomes (aligned)."""


@dataclass(frozen=True)
class FinishedTask(Generic[MetaT]):
    """A task whose candidates all have their outcomes (``outcomes`` aligned with them)."""

    task_id: str
    instances: list[TaskInput]
    candidates: list[Candidate[MetaT]]
    outcomes: list[CandidateOutcome]


class Engine:
    """Runs candidates over instances; see the module docstring.

    Args:
        sandbox: The pool to run on.
        store: The result cache.
        limits: Limits for every call.
        policy: Policy mode for every candidate.
        chunk: Inputs per work item.
        stop_at_first_failure: Skip a candidate's remaining chunks after a wrong answer.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        store: ResultStore,
        limits: Limits,
        policy: PolicyMode = PolicyMode.WARN,
        chunk: int = 128,
        stop_at_first_failure: bool = False,
    ) -> None:
        self.sandbox = sandbox
        self.store = store
        self.limits = limits
        self.policy = policy
        self.chunk = chunk
        self.stop = stop_at_first_failure

    def _prepare(
        self, task_id: str, instances: list[TaskInput], candidates: list[Candidate[Any]]
    ) -> _Task:
        task = _Task(task_id, instances, candidates, [], [])
        digests: list[bytes] | None = None  # each input's digest, shared by candidates
        for index, cand in enumerate(candidates):
            outcome = CandidateOutcome(results=[None] * len(instances))
            queue: deque[_Chunk] = deque()
            task.outcomes.append(outcome)
            task.queues.append(queue)
            if cand.program is None:
                continue
            stored = self.store.program(cand.key)
            if stored is not None:
                outcome.findings = stored.findings
                if stored.failure is not None:
                    outcome.failure = stored.failure
                    continue
            if digests is None:
                task.wires = [
                    input_wire(inst.grid) if inst.wire is None else [inst.wire[0], inst.wire[1]]
                    for inst in instances
                ]
                pairs = zip(instances, task.wires, strict=True)
                digests = [input_digest(inst.grid, wire) for inst, wire in pairs]
                task.expected = [Expected(inst.expected, inst.expected_wire) for inst in instances]
            keys = result_keys(cand.key, digests)
            for start in range(0, len(instances), self.chunk):
                positions = range(start, min(start + self.chunk, len(instances)))
                cached = self.store.get_many(keys[start : positions.stop])
                missing: list[int] = []
                for p in positions:
                    hit = cached.get(keys[p])
                    res = None if hit is None else hit.resolve(task.expected[p])
                    outcome.results[p] = res
                    if res is None:
                        missing.append(p)
                if missing:
                    queue.append(_Chunk(task, index, missing, [keys[p] for p in missing]))
            if self.stop and self._wrong_so_far(task, index):
                queue.clear()
                outcome.skipped = True
        return task

    def _wrong_so_far(self, task: _Task, index: int) -> bool:
        outcome = task.outcomes[index]
        return any(
            r is not None and not is_right(r, inst)
            for inst, r in zip(task.instances, outcome.results, strict=True)
        )

    def _absorb(self, chunk: _Chunk, result: ProgramResult) -> None:
        task = chunk.task
        outcome = task.outcomes[chunk.candidate]
        cand = task.candidates[chunk.candidate]
        if result.findings:
            outcome.findings = result.findings
        outcome.seconds += result.seconds
        expected = [task.expected[p] for p in chunk.positions]
        stored = commit_result(self.store, cand.key, chunk.keys, expected, result)
        if stored is None:
            outcome.failure = (result.status, result.error)
            task.queues[chunk.candidate].clear()
            return
        for p, s in zip(chunk.positions, stored, strict=True):
            outcome.results[p] = s
        if self.stop and self._wrong_so_far(task, chunk.candidate):
            if task.queues[chunk.candidate]:
                outcome.skipped = True
            task.queues[chunk.candidate].clear()

    def run(
        self,
        tasks: Iterator[TaskSpec[MetaT] | Deferred[MetaT]],
        on_task_done: TaskDone[MetaT],
    ) -> None:
        """Run every task's candidates; call ``on_task_done`` as each task completes.

        Args:
            tasks: ``(task_id, instances, candidates)`` triples, or ``Deferred`` tasks
                (their jobs first), pulled lazily.
            on_task_done: Receives the task's instances, candidates and outcomes.
        """
        with self.feed() as feed:
            for item in tasks:
                for done in feed.add(item):
                    on_task_done(done.task_id, done.instances, done.candidates, done.outcomes)
            for done in feed.finish():
                on_task_done(done.task_id, done.instances, done.candidates, done.outcomes)

    @contextmanager
    def feed(self) -> Iterator[TaskFeed]:
        """A run fed one task at a time by its caller (``run`` feeds it from an iterator).

        The caller adds each task (:meth:`TaskFeed.add`), then takes the rest
        (:meth:`TaskFeed.finish`); finished tasks come back as the calls' values, so the
        caller never runs inside the engine.
        """
        pool = ThreadPoolExecutor(self.sandbox.size)
        try:
            yield TaskFeed(self, pool)
        except BaseException:
            # Ctrl-C: drop queued work now; the caller closes the sandbox, which ends the
            # calls still running (their results are not stored, so a rerun redoes them).
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)


class TaskFeed:
    """An engine's run as its caller feeds it (see :meth:`Engine.feed`).

    At most twice the pool's size of work items (chunks, generate jobs) are queued or
    running at once: :meth:`add` takes a task and runs work until there is room for the
    next one, so only the tasks with work in flight are held in memory.
    """

    def __init__(self, engine: Engine, pool: ThreadPoolExecutor) -> None:
        self._engine = engine
        self._pool = pool
        self._window = engine.sandbox.size * 2
        self._ready: deque[_Chunk | _Prereq] = deque()
        self._running: dict[Future[ProgramResult], _Chunk | _Prereq] = {}
        self._finished: list[FinishedTask[Any]] = []

    def add(self, item: TaskSpec[MetaT] | Deferred[MetaT]) -> list[FinishedTask[Any]]:
        """Take a task, then run work until there is room for another.

        The task is served from the store where it can be, its other chunks queued.

        Returns:
            The tasks that finished meanwhile, in finishing order.
        """
        if isinstance(item, Deferred):
            self._defer(_Waiting(item), item.jobs)
        else:
            self._admit(item)
        while len(self._ready) + len(self._running) >= self._window:
            self._step()
        return self._take()

    def finish(self) -> Iterator[FinishedTask[Any]]:
        """Run all that is left; yield each task as it finishes."""
        yield from self._take()
        while self._step():
            yield from self._take()

    def _take(self) -> list[FinishedTask[Any]]:
        finished, self._finished = self._finished, []
        return finished

    def _step(self) -> bool:
        """Submit ready work, wait for some to complete and absorb it (``False``: none left)."""
        while self._ready and len(self._running) < self._window:
            work = self._ready.popleft()
            self._running[self._submit(work)] = work
        if not self._running:
            return False
        done, _ = wait(self._running, return_when=FIRST_COMPLETED)
        for future in done:
            work = self._running.pop(future)
            if isinstance(work, _Prereq):
                waiting = work.waiting
                waiting.deferred.absorb(work.index, future.result())
                waiting.left -= 1
                if not waiting.left:
                    self._defer(waiting, ())
                continue
            task = work.task
            task.pending -= 1
            task.active.discard(work.candidate)
            self._engine._absorb(work, future.result())
            self._release(task)
            self._maybe_done(task)
        return True

    def _defer(self, waiting: _Waiting, jobs: Sequence[Job]) -> None:
        """Queue a deferred task's jobs (``more``'s when none are given), else admit it."""
        deferred = waiting.deferred
        if not jobs and deferred.more is not None:
            jobs = deferred.more()
        if not jobs:
            self._admit(deferred.task())
            return
        first, waiting.left = waiting.given, len(jobs)
        waiting.given += len(jobs)
        self._ready.extend(_Prereq(waiting, first + i, job) for i, job in enumerate(jobs))

    def _admit(self, spec: TaskSpec[Any]) -> None:
        """Take a task whose instances are known: serve it from the store, queue the rest."""
        task = self._engine._prepare(*spec)
        self._release(task)
        self._maybe_done(task)

    def _submit(self, work: _Chunk | _Prereq) -> Future[ProgramResult]:
        engine = self._engine
        if isinstance(work, _Prereq):
            job = work.job
            calls = cast(Sequence[GeneratorCall], job.inputs)
            return self._pool.submit(
                engine.sandbox.generate, job.program, calls, job.limits, policy=job.policy
            )
        program = work.task.candidates[work.candidate].program
        assert program is not None  # only candidates with a program get chunks
        task = work.task
        inputs = WiredGrids(
            [task.instances[p].grid for p in work.positions],
            [task.wires[p] for p in work.positions],
        )
        return self._pool.submit(
            engine.sandbox.run, program, inputs, engine.limits, policy=engine.policy
        )

    def _release(self, task: _Task) -> None:
        """Hand the task's runnable chunks to ``ready`` (one per candidate when stopping)."""
        for index, queue in enumerate(task.queues):
            while queue and not (self._engine.stop and index in task.active):
                self._ready.append(queue.popleft())
                task.pending += 1
                task.active.add(index)

    def _maybe_done(self, task: _Task) -> None:
        if task.pending or any(task.queues):
            return
        task.pending = -1  # report once
        self._finished.append(
            FinishedTask(task.task_id, task.instances, task.candidates, task.outcomes)
        )
