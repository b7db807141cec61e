"""Mutants in batches: many mutants of one verifier per sandboxed process (mutation schemata).

The default path of ``arcjudge mutate``. Per task and verifier source, the original runs
first as a job of its own (its outputs are the true outputs: no mutant may share its
process), which measures its slowest call; its mutants then run in batches through
``run_variants`` (one process loads the verifier's imports once, then each mutant
in a fresh namespace), each call with a deadline of ``call_deadline`` (the original's
slowest call times ``CALL_FACTOR``, at least ``CALL_FLOOR_SECONDS``, at most the limits'
``wall_seconds``). A mutant whose result came back ``infra`` (it changed state its batch
shares, or the sandbox failed) runs again alone with ``Sandbox.run``, as the
one-program-per-mutant path runs every mutant.

The batches run split-stream: ``run_variants`` gets the original's fresh results
(``same_as``), so a mutant found to compute from some statement on what the original
computes answers ``same`` on an input where the original answered a grid, and its result
there is the original's (see ``sandbox/runtime/splitstream.py``). A mutant that forged
``same`` would only look like the original there: no pair is ever made of the original's
answer (:func:`confirmed_indexes`).

Results go through the result store under the same keys as that path's (one entry per
mutant and input), so a rerun, of either path, serves them from the store.

With ``target_pairs`` a task stops once the mutants taken in a seeded order
(:func:`mutant_order`) have ``target_pairs`` confirmed corrupted pairs: the shortest
prefix of that order that reaches the target is what the task reports
(:func:`considered`), whatever ran beyond it meanwhile. Its batches then run one at a time
(tasks run side by side), the first ones smaller (a third of ``batch``, doubling).
"""

from __future__ import annotations

import queue
import random
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from arcjudge.harness.core.engine import Candidate, commit_result
from arcjudge.harness.core.keys import input_digest, result_keys
from arcjudge.harness.core.results import (
    CandidateOutcome,
    Expected,
    StoredResult,
    TaskInput,
    is_right,
)
from arcjudge.harness.core.store import ResultStore
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.interface import run_variants
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import Limits, ProgramResult, ProgramStatus, RunResult, Status

CALL_FACTOR = 10.0
"""A mutant's call deadline is this many times the original's slowest call ..."""
CALL_FLOOR_SECONDS = 0.25
"""... and at least this long (cosmic-ray's baseline times a multiplier, with a floor)."""
BATCH = 256
"""Mutants per batch (one sandboxed process runs them one after another, sharing the
original's statement-by-statement runs: ``runtime/splitstream.py``)."""


def call_deadline(original: ProgramResult | None, limits: Limits) -> float:
    """The per-call deadline of the mutants of a verifier whose run was ``original``.

    Args:
        original: The original's fresh result (``None`` or not loaded: no measure).
        limits: The limits; the deadline is at most ``wall_seconds``.

    Returns:
        ``max(CALL_FLOOR_SECONDS, CALL_FACTOR * slowest call)``, capped by the wall limit.
    """
    if original is None or original.status is not ProgramStatus.LOADED or not original.results:
        return limits.wall_seconds
    slowest = max(r.seconds for r in original.results)
    return min(limits.wall_seconds, max(CALL_FLOOR_SECONDS, CALL_FACTOR * slowest))


def mutant_order(seed: int, task_id: str, count: int) -> list[int]:
    """The seeded order in which a task's ``count`` mutants are taken (a shuffle)."""
    order = list(range(count))
    random.Random(f"{seed}:{task_id}:mutants").shuffle(order)
    return order


def confirmed_indexes(
    outcome: CandidateOutcome, original: CandidateOutcome | None, instances: list[TaskInput]
) -> list[int]:
    """The inputs where a mutant's outcome gives a corrupted pair the original confirms.

    A pair: an input where the mutant returned a valid grid other than the true output
    and the original returned the true output (as ``Mutator`` keeps them).
    """
    if outcome.failure is not None or original is None or original.failure is not None:
        return []
    found = []
    for index, (inst, res, check) in enumerate(
        zip(instances, outcome.results, original.results, strict=True)
    ):
        if res is None or res.status is not Status.OK or res.wire is None:
            continue
        if is_right(res, inst):
            continue
        if is_right(check, inst):
            found.append(index)
    return found


def confirmed_pairs(
    outcome: CandidateOutcome, original: CandidateOutcome | None, instances: list[TaskInput]
) -> int:
    """How many corrupted pairs a mutant's outcome gives (``confirmed_indexes``)."""
    return len(confirmed_indexes(outcome, original, instances))


def considered(
    order: Sequence[int],
    pairs: Callable[[int], int | None],
    target: int,
) -> list[int] | None:
    """The mutants a task reports under ``--target-pairs``: the shortest enough prefix.

    Args:
        order: Mutant positions in their seeded order.
        pairs: A mutant's confirmed pair count, ``None`` while its outcome is unknown.
        target: The pairs wanted.

    Returns:
        The prefix of ``order`` up to the mutant that brings the confirmed pairs to
        ``target`` (all of ``order`` when they never get there), or ``None`` while an
        outcome in that prefix is still unknown.
    """
    total = 0
    for position, mutant in enumerate(order):
        count = pairs(mutant)
        if count is None:
            return None
        total += count
        if total >= target:
            return list(order[: position + 1])
    return list(order)


def target_prefix(
    seed: int,
    task_id: str,
    instances: list[TaskInput],
    candidates: list[Candidate[Any]],
    outcomes: list[CandidateOutcome],
    target: int,
) -> tuple[list[Candidate[Any]], list[CandidateOutcome]]:
    """A fully run task cut to what ``--target-pairs`` reports (the same as a batched run).

    Candidates' meta must have ``source`` and ``mutant`` (``None``: the original).
    """
    originals = {c.meta.source: o for c, o in zip(candidates, outcomes, strict=True)
                 if c.meta.mutant is None}  # fmt: skip
    mutants = [k for k, c in enumerate(candidates) if c.meta.mutant is not None]

    def pairs(position: int) -> int:
        k = mutants[position]
        original = originals.get(candidates[k].meta.source)
        return confirmed_pairs(outcomes[k], original, instances)

    prefix = considered(mutant_order(seed, task_id, len(mutants)), pairs, target)
    assert prefix is not None  # every outcome is known
    keep = {mutants[p] for p in prefix}
    indexes = [k for k, c in enumerate(candidates) if c.meta.mutant is None or k in keep]
    return [candidates[k] for k in indexes], [outcomes[k] for k in indexes]


@dataclass
class _Task:
    task_id: str
    instances: list[TaskInput]
    candidates: list[Candidate[Any]]
    keys: list[list[bytes]]  # per candidate, its inputs' store keys
    outcomes: list[CandidateOutcome | None]
    originals: dict[int, int]  # source -> candidate index of its original
    mutants: list[int]  # candidate indexes of mutants, in enumeration order
    order: list[int]  # positions in ``mutants``, seeded order
    waiting: dict[int, list[int]] = field(default_factory=dict)  # source -> mutants to run
    batches: deque[tuple[int, list[int], float]] = field(default_factory=deque)
    running: int = 0
    reported: bool = False
    expected: list[Expected] = field(default_factory=list)  # per instance, for judging
    fresh: dict[int, tuple[RunResult, ...]] = field(default_factory=dict)  # originals' runs


Job = Callable[[], Any]
PREFETCH = 4
"""Tasks enumerated ahead of the loop, in a thread of their own (enumerating a task's
mutants, libcst, takes as long as running a few of them: the loop meanwhile keeps the
sandbox busy)."""
_DONE = object()


class _Prefetch(Iterator[Any]):
    """An iterator's items produced ahead by a thread, up to ``depth`` of them.

    The producer's exception, if any, is raised by ``__next__`` where it happened.
    """

    def __init__(self, items: Iterator[Any], depth: int) -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(depth)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._produce, args=(items,), daemon=True)
        self._thread.start()

    def _produce(self, items: Iterator[Any]) -> None:
        try:
            for item in items:
                while not self._stopped.is_set():
                    try:
                        self._queue.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self._stopped.is_set():
                    return
            self._queue.put(("done", _DONE))
        except BaseException as exc:  # handed to the consumer
            self._queue.put(("error", exc))

    def __next__(self) -> Any:
        kind, value = self._queue.get()
        if kind == "done":
            self._queue.put((kind, value))  # every later call ends too
            raise StopIteration
        if kind == "error":
            raise value
        return value

    def stop(self) -> None:
        """Let the producer end (after the item it is making)."""
        self._stopped.set()


class BatchRunner:
    """Runs each task's originals, then its mutants in batches; see the module docstring.

    Args:
        sandbox: The pool.
        store: The result store (used from the calling thread only).
        limits: Limits of every call.
        policy: Policy mode of every program.
        seed: Seeds the mutants' order.
        target_pairs: Stop a task at this many confirmed pairs (``None``: run all).
        batch: Mutants per batch.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        store: ResultStore,
        limits: Limits,
        policy: PolicyMode,
        seed: int,
        target_pairs: int | None = None,
        batch: int = BATCH,
    ) -> None:
        self.sandbox = sandbox
        self.store = store
        self.limits = limits
        self.policy = policy
        self.seed = seed
        self.target = target_pairs
        self.batch = max(1, batch)

    # ------------------------------------------------------------------ the store

    def _cached(self, task: _Task, index: int) -> CandidateOutcome | None:
        key = task.candidates[index].key
        n = len(task.instances)
        stored = self.store.program(key)
        findings = stored.findings if stored is not None else ()
        if stored is not None and stored.failure is not None:
            return CandidateOutcome(failure=stored.failure, results=[None] * n, findings=findings)
        found = self.store.get_many(task.keys[index])
        if len(found) < n:
            return None
        results: list[StoredResult | None] = []
        for k, expected in zip(task.keys[index], task.expected, strict=True):
            res = found[k].resolve(expected)
            if res is None:  # a right answer for another expected output: run again
                return None
            results.append(res)
        return CandidateOutcome(results=results, findings=findings)

    def _absorb(self, task: _Task, index: int, result: ProgramResult) -> None:
        """Store a fresh result as the engine does and record the candidate's outcome."""
        key = task.candidates[index].key
        stored = commit_result(self.store, key, task.keys[index], task.expected, result)
        if stored is None:
            task.outcomes[index] = CandidateOutcome(
                failure=(result.status, result.error), results=[None] * len(task.instances),
                findings=result.findings, seconds=result.seconds,
            )  # fmt: skip
            return
        task.outcomes[index] = CandidateOutcome(
            results=list(stored), findings=result.findings, seconds=result.seconds
        )

    # --------------------------------------------------------------- one task

    def _prepare(
        self, task_id: str, instances: list[TaskInput], candidates: list[Candidate[Any]]
    ) -> tuple[_Task, list[Job]]:
        digests = [input_digest(i.grid) for i in instances]
        keys = [result_keys(c.key, digests) for c in candidates]
        originals = {c.meta.source: k for k, c in enumerate(candidates) if c.meta.mutant is None}
        mutants = [k for k, c in enumerate(candidates) if c.meta.mutant is not None]
        task = _Task(task_id, instances, candidates, keys, [None] * len(candidates), originals,
                     mutants, mutant_order(self.seed, task_id, len(mutants)))  # fmt: skip
        task.expected = [Expected(i.expected) for i in instances]
        for k in range(len(candidates)):
            task.outcomes[k] = self._cached(task, k)
        jobs: list[Job] = []
        for position in task.order:  # seeded order: the batches are cut from it
            k = mutants[position]
            if task.outcomes[k] is None:
                task.waiting.setdefault(candidates[k].meta.source, []).append(k)
        for source, o in originals.items():
            if source in task.waiting or task.outcomes[o] is None:
                jobs.append(self._original_job(task, o))  # fresh: its timing is needed
        return task, jobs

    def _original_job(self, task: _Task, index: int) -> Job:
        program = task.candidates[index].program
        assert program is not None
        grids = [i.grid for i in task.instances]
        task.running += 1

        def run() -> Callable[[], None]:
            result = self.sandbox.run(program, grids, self.limits, policy=self.policy)

            def absorb() -> None:
                self._absorb(task, index, result)
                if result.status is ProgramStatus.LOADED:
                    task.fresh[index] = result.results
                source = task.candidates[index].meta.source
                deadline = call_deadline(result, self.limits)
                waiting = task.waiting.pop(source, [])
                for batch in self._cut(waiting):
                    task.batches.append((index, batch, deadline))

            return absorb

        return run

    def _cut(self, waiting: list[int]) -> list[list[int]]:
        """Cut mutants into batches of ``batch``.

        Under a pair target the first ones are smaller (a third, doubling up to ``batch``),
        so a task that reaches its target early wastes less.
        """
        size = self.batch if self.target is None else max(1, self.batch // 3)
        batches = []
        start = 0
        while start < len(waiting):
            batches.append(waiting[start : start + size])
            start += size
            size = min(self.batch, size * 2)
        return batches

    def _batch_job(self, task: _Task, original: int, batch: list[int], deadline: float) -> Job:
        base = task.candidates[original].program
        assert base is not None
        sources = []
        for k in batch:
            program = task.candidates[k].program
            assert program is not None
            sources.append(program.source)
        grids = [i.grid for i in task.instances]
        same_as = task.fresh.get(original)
        task.running += 1

        def run() -> Callable[[], None]:
            results = run_variants(
                self.sandbox, base, sources, grids, self.limits, call_seconds=deadline,
                policy=self.policy, same_as=same_as,
            )  # fmt: skip

            def absorb() -> None:
                for k, result in zip(batch, results, strict=True):
                    if result.status is ProgramStatus.INFRA:
                        task.batches.appendleft((-1, [k], 0.0))  # alone, as one program
                    else:
                        self._absorb(task, k, result)

            return absorb

        return run

    def _alone_job(self, task: _Task, index: int) -> Job:
        program = task.candidates[index].program
        assert program is not None
        grids = [i.grid for i in task.instances]
        task.running += 1

        def run() -> Callable[[], None]:
            result = self.sandbox.run(program, grids, self.limits, policy=self.policy)
            return lambda: self._absorb(task, index, result)

        return run

    def _next_jobs(self, task: _Task) -> list[Job]:
        """The task's runnable batches (one at a time under a pair target)."""
        jobs: list[Job] = []
        while task.batches and not (self.target is not None and task.running):
            original, batch, deadline = task.batches.popleft()
            if original < 0:
                jobs.append(self._alone_job(task, batch[0]))
            else:
                jobs.append(self._batch_job(task, original, batch, deadline))
        return jobs

    def _report(self, task: _Task) -> tuple[list[Candidate[Any]], list[CandidateOutcome]] | None:
        """The task's candidates and outcomes once it is complete (``None``: not yet)."""
        if task.reported:
            return None
        chosen: Sequence[int] = range(len(task.mutants))
        if self.target is not None:

            def pairs(position: int) -> int | None:
                outcome = task.outcomes[task.mutants[position]]
                if outcome is None:
                    return None
                source = task.candidates[task.mutants[position]].meta.source
                original = task.outcomes[task.originals[source]]
                return confirmed_pairs(outcome, original, task.instances)

            prefix = considered(task.order, pairs, self.target)
            if prefix is None:
                return None
            chosen = sorted(prefix)
        keep = set(task.originals.values()) | {task.mutants[p] for p in chosen}
        if any(task.outcomes[k] is None for k in keep):
            return None
        task.reported = True
        task.batches.clear()
        indexes = [k for k in range(len(task.candidates)) if k in keep]
        outcomes = [task.outcomes[k] for k in indexes]
        return [task.candidates[k] for k in indexes], [o for o in outcomes if o is not None]

    # ----------------------------------------------------------------- the loop

    def run(
        self,
        tasks: Iterator[tuple[str, list[TaskInput], list[Candidate[Any]]]],
        on_task_done: Callable[
            [str, list[TaskInput], list[Candidate[Any]], list[CandidateOutcome]], None
        ],
    ) -> None:
        """Run every task; call ``on_task_done`` with the candidates it reports.

        Args:
            tasks: ``(task_id, instances, candidates)``, pulled lazily; per source its
                original (meta ``mutant`` ``None``) and its mutants.
            on_task_done: Receives the task's inputs, the candidates it reports (the
                originals and the mutants :func:`considered` keeps, in the given order)
                and their outcomes.
        """
        pool = ThreadPoolExecutor(self.sandbox.size)
        ahead = _Prefetch(tasks, PREFETCH)
        try:
            self._loop(pool, ahead, on_task_done)
        except BaseException:
            ahead.stop()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def _loop(
        self,
        pool: ThreadPoolExecutor,
        source: Iterator[tuple[str, list[TaskInput], list[Candidate[Any]]]],
        on_task_done: Callable[
            [str, list[TaskInput], list[Candidate[Any]], list[CandidateOutcome]], None
        ],
    ) -> None:
        window = self.sandbox.size * (4 if self.target is not None else 2)
        ready: deque[tuple[_Task, Job]] = deque()
        running: dict[Future[Callable[[], None]], _Task] = {}
        exhausted = False

        def settle(task: _Task) -> None:
            for job in self._next_jobs(task):
                ready.append((task, job))
            report = self._report(task)
            if report is not None:
                on_task_done(task.task_id, task.instances, *report)

        while True:
            while len(ready) + len(running) < window and not exhausted:
                try:
                    task_id, instances, candidates = next(source)
                except StopIteration:
                    exhausted = True
                    break
                task, jobs = self._prepare(task_id, instances, candidates)
                ready.extend((task, job) for job in jobs)
                settle(task)
            while ready and len(running) < window:
                task, job = ready.popleft()
                if task.reported:  # enough pairs already: drop what it had queued
                    task.running -= 1
                    continue
                running[pool.submit(job)] = task
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task = running.pop(future)
                task.running -= 1
                future.result()()
                settle(task)
