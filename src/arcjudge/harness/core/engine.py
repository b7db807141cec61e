"""The work engine shared by validate and score: candidates x instances, chunked, cached.

For each task the caller supplies its *instances* (input grids with expected outputs,
labelled by split) and its *candidates* (programs to check: verifier sources, model
programs). The engine cuts each candidate's inputs into chunks, serves chunks from the
result store when it can, runs the rest over the sandbox pool (a slow candidate occupies
one worker, never the whole run), commits each finished chunk to the store, and hands each
task's outcomes back once all its chunks are in. Tasks are pulled one at a time, so only
the tasks with work in flight are held in memory.

A candidate's policy findings are stored with its results under its program key, so a
task served from the store reports the findings its first run did.

With ``stop_at_first_failure`` a candidate's chunks run one after another and the rest is
skipped as soon as a chunk holds a wrong answer.

Answers are judged lean: each task's expected outputs are put in compact form once
(``Expected``), a fresh answer is compared in the compact form the sandbox replied with,
and a right answer's grid is the expected output itself, so right answers are never
decoded; wrong ones are decoded only when their grid is read (a first failure, a report).
Each input's wire form (what the sandbox is sent) and digest (what its result keys are made
from) are computed once per task, for all its candidates.

A task whose inputs need sandbox work first (``validate``'s generator samples) comes as a
``Deferred``: its jobs run in the same pool and window as the chunks, and the task joins
once the last is in, so its candidates start while other tasks' jobs still run (no phase
barrier: the workers stay busy and nothing waits for the whole run's samples).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from arcjudge.grids import Grid
from arcjudge.harness.core.keys import input_digest, result_keys
from arcjudge.harness.core.results import Expected, StoredResult
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.core.tally import FirstFailure, Tally
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
    WireGrid,
    input_wire,
)
from arcjudge.vocabulary import REPORTED_SPLITS


@dataclass
class TaskInput:
    """One input with its expected output.

    ``wire`` and ``expected_wire``: the grids' compact forms (``grids.compact``) when the
    reader made them already (ARC-GEN's files, generator samples), so the engine does not
    make them again; ``None`` otherwise. Not part of equality.
    """

    split: str
    index: int
    grid: Grid
    expected: Grid
    seed: int | None = None
    wire: WireGrid | None = field(default=None, compare=False, repr=False)
    expected_wire: WireGrid | None = field(default=None, compare=False, repr=False)


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


@dataclass
class CandidateOutcome:
    """What happened to one candidate on one task."""

    failure: tuple[ProgramStatus, str | None] | None = None
    results: list[StoredResult | None] = field(default_factory=list)
    findings: tuple[str, ...] = ()
    skipped: bool = False  # later chunks not run (stop at first failure)
    seconds: float = 0.0  # sandbox time spent in this run (cached chunks cost nothing)

    def tally(self, instances: Sequence[TaskInput]) -> Tally:
        """Per split ``(correct, total)``, counts by status, and the first failure."""
        splits: dict[str, list[int]] = {}
        statuses: dict[str, dict[str, int]] = {}
        first: dict[str, FirstFailure] = {}
        split: str | None = None
        counts: list[int] = []
        by_status: dict[str, int] = {}
        for inst, res in zip(instances, self.results, strict=True):
            if inst.split != split:  # inputs come in runs of one split
                split = inst.split
                counts = splits.setdefault(split, [0, 0])
                by_status = statuses.setdefault(split, {})
            counts[1] += 1
            status = _STATUS_TEXT[res.status] if res is not None else "skipped"
            by_status[status] = by_status.get(status, 0) + 1
            right = is_right(res, inst)
            counts[0] += right
            if not right and res is not None and split not in first:
                first[split] = FirstFailure(
                    inst.index,
                    status,
                    inst.grid,
                    inst.expected,
                    res.grid,
                    _trim(res.error),
                    inst.seed,
                )
        return Tally(
            {k: (splits[k][0], splits[k][1]) for k in REPORTED_SPLITS if k in splits},
            {k: dict(sorted(statuses[k].items())) for k in REPORTED_SPLITS if k in statuses},
            {k: first[k] for k in REPORTED_SPLITS if k in first},
        )

    def all_correct(self, instances: Sequence[TaskInput]) -> bool:
        """Whether every instance got the expected output."""
        return self.failure is None and all(
            is_right(r, i) for i, r in zip(instances, self.results, strict=True)
        )

    def has_infra(self) -> bool:
        """Whether the sandbox (not the program) failed somewhere."""
        if self.failure is not None:
            return self.failure[0] is ProgramStatus.INFRA
        return any(r is not None and r.status is Status.INFRA for r in self.results)


_STATUS_TEXT = {status: status.value for status in Status}  # faster than ``.value``


def is_right(res: StoredResult | None, inst: TaskInput) -> bool:
    """Whether a result is the instance's expected output (judged once by the engine)."""
    if res is None:
        return False
    if res.right is not None:
        return res.right
    return res.status is Status.OK and res.grid == inst.expected


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
        (k, s) for k, s in zip(keys, stored, strict=True) if s.status is not Status.INFRA
    )
    return stored


def _trim(text: str | None, limit: int = 2000) -> str | None:
    return None if text is None else text[-limit:]


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
        task: Called once every result is absorbed: the task to run.
    """

    jobs: Sequence[Job]
    absorb: Callable[[int, ProgramResult], None]
    task: Callable[[], TaskSpec[MetaT]]


@dataclass
class _Waiting:
    deferred: Deferred[Any]
    left: int  # jobs not yet absorbed


@dataclass
class _Prereq:
    waiting: _Waiting
    index: int


TaskDone = Callable[[str, list[TaskInput], list[Candidate[MetaT]], list[CandidateOutcome]], None]
"""Receives a finished task's id, inputs, candidates and their outcomes (aligned)."""


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
        source = iter(tasks)
        pool = ThreadPoolExecutor(self.sandbox.size)
        try:
            self._loop(pool, source, on_task_done)
        except BaseException:
            # Ctrl-C: drop queued work now; the caller closes the sandbox, which ends the
            # calls still running (their results are not stored, so a rerun redoes them).
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _loop(
        self,
        pool: ThreadPoolExecutor,
        source: Iterator[TaskSpec[Any] | Deferred[Any]],
        on_task_done: TaskDone[Any],
    ) -> None:
        window = self.sandbox.size * 2
        ready: deque[_Chunk | _Prereq] = deque()
        exhausted = False
        running: dict[Future[ProgramResult], _Chunk | _Prereq] = {}
        while True:
            while len(ready) + len(running) < window and not exhausted:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                if isinstance(item, Deferred) and item.jobs:
                    waiting = _Waiting(item, len(item.jobs))
                    ready.extend(_Prereq(waiting, i) for i in range(len(item.jobs)))
                    continue
                self._admit(
                    item.task() if isinstance(item, Deferred) else item, ready, on_task_done
                )
            while ready and len(running) < window:
                work = ready.popleft()
                running[self._submit(pool, work)] = work
            if not running:
                return  # nothing ready, nothing running, no task left
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                work = running.pop(future)
                if isinstance(work, _Prereq):
                    waiting = work.waiting
                    waiting.deferred.absorb(work.index, future.result())
                    waiting.left -= 1
                    if not waiting.left:
                        self._admit(waiting.deferred.task(), ready, on_task_done)
                    continue
                task = work.task
                task.pending -= 1
                task.active.discard(work.candidate)
                self._absorb(work, future.result())
                self._release(task, ready)
                self._maybe_done(task, on_task_done)

    def _admit(
        self, spec: TaskSpec[Any], ready: deque[_Chunk | _Prereq], on_task_done: TaskDone[Any]
    ) -> None:
        """Take a task whose instances are known: serve it from the store, queue the rest."""
        task = self._prepare(*spec)
        self._release(task, ready)
        self._maybe_done(task, on_task_done)

    def _submit(self, pool: ThreadPoolExecutor, work: _Chunk | _Prereq) -> Future[ProgramResult]:
        if isinstance(work, _Prereq):
            job = work.waiting.deferred.jobs[work.index]
            calls = cast(Sequence[GeneratorCall], job.inputs)
            return pool.submit(
                self.sandbox.generate, job.program, calls, job.limits, policy=job.policy
            )
        program = work.task.candidates[work.candidate].program
        assert program is not None  # only candidates with a program get chunks
        task = work.task
        inputs = WiredGrids(
            [task.instances[p].grid for p in work.positions],
            [task.wires[p] for p in work.positions],
        )
        return pool.submit(self.sandbox.run, program, inputs, self.limits, policy=self.policy)

    def _release(self, task: _Task, ready: deque[_Chunk | _Prereq]) -> None:
        """Hand the task's runnable chunks to ``ready`` (one per candidate when stopping)."""
        for index, queue in enumerate(task.queues):
            while queue and not (self.stop and index in task.active):
                ready.append(queue.popleft())
                task.pending += 1
                task.active.add(index)

    @staticmethod
    def _maybe_done(task: _Task, on_task_done: TaskDone[Any]) -> None:
        if task.pending or any(task.queues):
            return
        task.pending = -1  # report once
        on_task_done(task.task_id, task.instances, task.candidates, task.outcomes)
