"""A task's instances: demonstrations, ARC-GEN pairs and fresh generator samples.

Samples are drawn inside the sandbox: sample i of a task is the generator's return value
right after ``random.seed(seed + i)``, so samples are reproducible and independent of the
worker count and of which other tasks run. A generator that fails is reported per task;
``validate`` redraws a sample whose call fails with the next seeds, up to
``DRAW_LIMIT`` times the samples asked (``SamplePlan``'s ``draw_limit``), and reports
every failed and redrawn seed.

A task's samples are drawn in jobs of ``SAMPLE_CHUNK`` calls (``SamplePlan``,
``TaskSamples``), which ``validate`` runs in its engine's pool next to the verifiers and
``draw_samples`` runs all at once for the commands that need every sample first.
``SamplePlan.draw`` draws one task's at a time, its jobs run in parallel, so a caller that
streams tasks (``score``) holds only the samples of the tasks in flight, however many
samples per task (10,000 for the increased-sampling study) it asks for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.harness.core.keys import input_digest, module_fingerprint, program_key, result_key
from arcjudge.harness.core.results import StoredResult, TaskInput
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
)
from arcjudge.tasks import Pair, Task, load_arcgen_pairs
from arcjudge.verifiers.sources import GeneratorSource

GENERATOR_LIMITS = Limits(wall_seconds=10.0, total_seconds=600.0)

DEFAULT_SEED = 77
"""The seed every command defaults to (the reference study's): sample i of a generator is
drawn after ``random.seed(DEFAULT_SEED + i)``, and every seeded choice starts from it."""

DEFAULT_SAMPLES = 50
"""Generator samples per task when a generator is given and no count is (the study's)."""

DRAW_LIMIT = 2
"""``validate``'s limit on a task's generator calls, as a multiple of the samples asked: a
sample whose call fails (raises, times out, returns no pair of grids) is redrawn with the
next seeds until the asked number are in or this many times as many calls are spent."""

SAMPLE_CHUNK = 25
"""Generator samples per sandbox job: a task's samples are cut into jobs of this many, so
a slow generator spreads over the workers and its task's verifiers start as soon as the
last of its jobs is in (the samples are the same for any cut). Each job costs a fork and a
load of the generator (~10-20 ms of sandbox CPU on the development machine), so a cut much
finer than the 50 default samples in two costs more than it spreads."""


def arcgen_pairs(task: Task, arcgen_dir: Path | None) -> tuple[Pair, ...]:
    """The task's ARC-GEN stable pairs: from ``arcgen_dir/<id>.json``, else its own key."""
    if arcgen_dir is not None:
        path = arcgen_dir / f"{task.task_id}.json"
        if path.is_file():
            return load_arcgen_pairs(path)
    return task.arc_gen


def task_inputs(
    task: Task, arcgen_dir: Path | None, samples: Iterable[TaskInput] = ()
) -> list[TaskInput]:
    """All instances of a task with a known output, in split order."""
    instances = [
        TaskInput(split, i, p.input, p.output)
        for split, pairs in (("train", task.train), ("test", task.test))
        for i, p in enumerate(pairs)
        if p.output is not None
    ]
    instances += [
        TaskInput("arc-gen", i, p.input, p.output, None, *(p.wires or (None, None)))
        for i, p in enumerate(arcgen_pairs(task, arcgen_dir))
        if p.output is not None
    ]
    return instances + list(samples)


def _last(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


@dataclass(frozen=True)
class _Drawing:
    """What drawing one task's samples needs: where they go, the program, its key."""

    store: ResultStore
    program: Program
    key: str  # the generator's program key
    policy: PolicyMode
    chunk: int
    max_calls: int  # calls allowed in all (more than asked: failed samples are redrawn)


def _good(result: StoredResult) -> bool:
    """Whether a generator call gave a sample (an input and an output grid)."""
    return result.status is Status.OK and result.grid is not None and result.output is not None


class TaskSamples:
    """One task's generator samples: the chunks the store lacks, then the per-task report.

    Made by ``SamplePlan.task``. ``jobs`` are the generate jobs still to run (one per
    chunk of ``SAMPLE_CHUNK`` calls the store does not hold in full); each result goes to
    ``absorb`` (which stores it), in any order; once all are in, ``more`` gives the jobs
    of a redraw round, if the plan redraws and samples failed (absorbed the same way, until
    it gives none); ``finish`` then gives the samples and the report. Chunks only cut the
    work: sample i is drawn after ``random.seed(seed + i)`` whichever chunk it is in, so the
    samples are those of one job of every call.

    A redraw round draws, with the seeds after the last one drawn, as many samples as are
    still short of those asked (a call the sandbox failed, ``infra``, is not redrawn: a
    rerun draws it again), never more calls in all than the plan's limit: the calls are
    always the first seeds in order, up to the first where the asked number are in, so the
    samples do not depend on how the rounds went.
    """

    def __init__(
        self,
        task_id: str,
        calls: list[GeneratorCall],
        report: dict[str, Any] | None = None,
        drawing: _Drawing | None = None,
    ) -> None:
        self.task_id = task_id
        self.calls = list(calls)
        self.asked = len(calls)
        self.jobs: list[Job] = []  # every job handed out, ``absorb``'s index into it
        self._report = report  # known up front: the generator is missing or failed before
        self._drawing = drawing
        self._keys: list[bytes] = []  # each call's result key
        self._spans: list[tuple[int, int]] = []  # each job's calls
        self._results: list[StoredResult | None] = [None] * len(calls)
        self._failure: tuple[int, ProgramStatus, str | None] | None = None  # lowest job's
        if drawing is not None:
            self._plan(0)

    def _plan(self, start: int) -> list[Job]:
        """Jobs for the calls from ``start`` on that the store lacks (the rest filled in)."""
        drawing = self._drawing
        assert drawing is not None
        keys = [result_key(drawing.key, input_digest(c)) for c in self.calls[start:]]
        self._keys += keys
        cached = drawing.store.get_many(keys)
        jobs = []
        for first in range(start, len(self.calls), drawing.chunk):
            span = range(first, min(first + drawing.chunk, len(self.calls)))
            if all(self._keys[i] in cached for i in span):
                for i in span:
                    self._results[i] = cached[self._keys[i]]
                continue
            self._spans.append((span.start, span.stop))
            jobs.append(
                Job(
                    drawing.program,
                    self.calls[span.start : span.stop],
                    GENERATOR_LIMITS,
                    drawing.policy,
                )
            )
        self.jobs += jobs
        return jobs

    def absorb(self, index: int, result: ProgramResult) -> None:
        """Take job ``index``'s result: store its samples, or note the generator's failure."""
        drawing = self._drawing
        assert drawing is not None  # only a task with a generator has jobs
        if result.status is not ProgramStatus.LOADED:
            if self._failure is None or index < self._failure[0]:
                self._failure = (index, result.status, result.error)
            if result.status is not ProgramStatus.INFRA:
                drawing.store.put_program(drawing.key, result.status, result.error, result.findings)
            return
        start, end = self._spans[index]
        stored = [
            StoredResult(r.status, error=r.error, wire=r.wire, output_wire=r.output_wire)
            for r in result.results
        ]
        self._results[start:end] = stored
        drawing.store.put_many(
            (k, s)
            for k, s in zip(self._keys[start:end], stored, strict=True)
            if s.status is not Status.INFRA
        )

    def more(self) -> list[Job]:
        """The jobs of a redraw round (none: every asked sample is in, or the limit is hit).

        Call it once every job so far is absorbed; the store's chunks are filled in at
        once, so a round it holds in full is followed by the next.
        """
        drawing = self._drawing
        while drawing is not None and self._failure is None:
            results = [r for r in self._results if r is not None]
            assert len(results) == len(self.calls), "more() before every job was absorbed"
            infra = sum(r.status is Status.INFRA for r in results)
            short = self.asked - sum(map(_good, results)) - infra
            count = min(short, drawing.max_calls - len(self.calls))
            if count <= 0:
                break
            start = len(self.calls)
            seed, kwargs = self.calls[0].seed, self.calls[0].kwargs
            self.calls += [GeneratorCall(seed + i, kwargs) for i in range(start, start + count)]
            self._results += [None] * count
            jobs = self._plan(start)
            if jobs:
                return jobs
        return []

    def finish(self) -> tuple[list[TaskInput] | None, dict[str, Any]]:
        """The valid samples (``None``: no generator, or it failed) and the task's report.

        Call it once every job's result is absorbed and ``more`` gave none. The report:
        ``requested`` (the samples asked), ``ok`` (those drawn), ``statuses`` (counts of
        every call's status, redraws included) and ``first_error``; when the plan redraws
        and some call failed, ``failed_seeds`` (every seed whose call gave no sample) and
        ``redrawn`` (the seeds drawn after the asked ones, in their place).
        """
        if self._report is not None:
            return None, self._report
        if self._failure is not None:
            _, status, error = self._failure
            return None, {"failed": status.value, "error": _last(error)}
        good = []
        statuses: Counter[str] = Counter()
        first_error = None
        failed_seeds = []
        for i, r in enumerate(self._results):
            assert r is not None, "finish() before every job was absorbed"
            statuses[r.status.value] += 1
            seed = self.calls[i].seed
            grid, output = r.grid, r.output
            if r.status is Status.OK and grid is not None and output is not None:  # _good
                good.append(TaskInput("generator", i, grid, output, seed, r.wire, r.output_wire))
                continue
            failed_seeds.append(seed)
            if first_error is None:
                first_error = f"seed {seed}: {r.status.value}: {_last(r.error)}"
        report: dict[str, Any] = {
            "requested": self.asked,
            "ok": len(good),
            "statuses": dict(sorted(statuses.items())),
            "first_error": first_error,
        }
        drawing = self._drawing
        if failed_seeds and drawing is not None and drawing.max_calls > self.asked:
            report["failed_seeds"] = failed_seeds
            report["redrawn"] = [c.seed for c in self.calls[self.asked :]]
        return good, report


class SamplePlan:
    """How a run draws generator samples: ``task`` gives one task's ``TaskSamples``.

    A caller that runs the jobs itself (``validate``, in its engine's pool) takes
    ``task``; one that streams tasks (``score``) takes ``draw``, one task at a time.

    Args:
        sandbox: The sandbox (its runtime fingerprint is part of every key; ``draw`` runs
            the jobs in it).
        store: The result store the samples are cached in.
        generator: The generator source.
        samples: Samples per task.
        seed: Sample i is drawn after ``random.seed(seed + i)``.
        policy: Policy mode of the generator jobs.
        chunk: Samples per job (``SAMPLE_CHUNK``).
        draw_limit: Calls allowed per task, as a multiple of ``samples``: above 1, a
            sample whose call fails is redrawn with the next seeds (``TaskSamples.more``)
            until ``samples`` are in or that many calls are spent; 1 drops it.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        store: ResultStore,
        generator: GeneratorSource,
        samples: int,
        seed: int,
        policy: PolicyMode = PolicyMode.WARN,
        chunk: int = 0,
        draw_limit: int = 1,
    ) -> None:
        self.sandbox = sandbox
        self.store = store
        self.generator = generator
        self.policy = policy
        self.chunk = max(1, chunk or SAMPLE_CHUNK)
        self.max_calls = samples * max(1, draw_limit)
        self.fingerprint = module_fingerprint(generator.module_dirs)
        self.runtime = sandbox.runtime_fingerprint()
        self.calls = [GeneratorCall(seed + i, generator.kwargs) for i in range(samples)]

    def task(self, task_id: str) -> TaskSamples:
        """The task's samples: what the store holds, the jobs for the rest."""
        tp = self.generator.program_for(task_id)
        if tp.refused is not None:  # its file was refused by the rule for untrusted paths
            return TaskSamples(task_id, self.calls, {"missing": True, "refused": tp.refused})
        if tp.program is None:
            return TaskSamples(task_id, self.calls, {"missing": True})
        key = program_key(
            tp.program, self.fingerprint, "generate", GENERATOR_LIMITS, self.runtime,
            policy=self.policy,
        )  # fmt: skip
        failed = self.store.get_program(key)
        if failed is not None:
            return TaskSamples(
                task_id, self.calls, {"failed": failed[0].value, "error": _last(failed[1])}
            )
        drawing = _Drawing(self.store, tp.program, key, self.policy, self.chunk, self.max_calls)
        return TaskSamples(task_id, self.calls, drawing=drawing)

    def draw(self, task_id: str) -> tuple[list[TaskInput], dict[str, Any]]:
        """One task's valid samples (as ``generator`` instances) and its report, drawn now.

        Its jobs are served from the store when all of their calls are there and run in
        parallel otherwise; the samples and the report are those ``draw_samples`` gives.
        """
        draw = self.task(task_id)
        if draw.jobs:
            for index, result in self.sandbox.map(iter(draw.jobs), mode="generate"):
                draw.absorb(index, result)
        good, report = draw.finish()
        return good or [], report


def draw_samples(
    sandbox: Sandbox,
    store: ResultStore,
    generator: GeneratorSource,
    task_ids: list[str],
    samples: int,
    seed: int,
    policy: PolicyMode = PolicyMode.WARN,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[TaskInput]], dict[str, dict[str, Any]]]:
    """Draw ``samples`` generator samples per task (cached in the store), all at once.

    For commands that need every task's samples before their other work (``score``,
    ``dimensions build``); ``validate`` draws them task by task in its engine's pool
    (``SamplePlan``, ``Engine``'s ``Deferred`` tasks). ``progress`` gets each task id whose
    samples had to be drawn, as they are in.

    Returns:
        The valid samples per task (as ``generator`` instances) and a per-task report:
        how many were requested and drawn, counts by status, the first error, or why the
        generator is missing or failed to load.
    """
    plan = SamplePlan(sandbox, store, generator, samples, seed, policy)
    draws = [plan.task(task_id) for task_id in task_ids]
    owners = [(d, j) for d in draws for j in range(len(d.jobs))]
    left = Counter(d.task_id for d in draws for _ in d.jobs)
    jobs = (d.jobs[j] for d, j in owners)
    for index, result in sandbox.map(jobs, mode="generate") if owners else ():
        draw, j = owners[index]
        draw.absorb(j, result)
        left[draw.task_id] -= 1
        if progress and not left[draw.task_id]:
            progress(draw.task_id)
    drawn: dict[str, list[TaskInput]] = {}
    report: dict[str, dict[str, Any]] = {}
    for draw in draws:
        good, report[draw.task_id] = draw.finish()
        if good is not None:
            drawn[draw.task_id] = good
    return drawn, report
