"""A task's instances: demonstrations, ARC-GEN pairs and fresh generator samples.

Samples are drawn inside the sandbox: sample i of a task is the generator's return value
right after ``random.seed(seed + i)``, so samples are reproducible and independent of the
worker count and of which other tasks run. A generator that fails is reported per task.

``draw_samples`` draws every task's samples at once (one job per task); ``SampleDrawer``
draws one task's at a time, in jobs of ``chunk`` calls run in parallel, so a caller that
streams tasks (``score``) holds only the samples of the tasks in flight, however many
samples per task (10,000 for the increased-sampling study) it asks for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from arcjudge.harness.core.engine import TaskInput
from arcjudge.harness.core.store import ResultStore, StoredResult, module_fingerprint, program_key
from arcjudge.sandbox import Job, Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import GeneratorCall, Limits, ProgramStatus, Status
from arcjudge.tasks import Pair, Task, load_arcgen_pairs
from arcjudge.verifiers.sources import GeneratorSource

GENERATOR_LIMITS = Limits(wall_seconds=10.0, total_seconds=600.0)

DEFAULT_SEED = 77
"""The seed every command defaults to (the reference study's): sample i of a generator is
drawn after ``random.seed(DEFAULT_SEED + i)``, and every seeded choice starts from it."""

DEFAULT_SAMPLES = 50
"""Generator samples per task when a generator is given and no count is (the study's)."""


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
        TaskInput("arc-gen", i, p.input, p.output)
        for i, p in enumerate(arcgen_pairs(task, arcgen_dir))
        if p.output is not None
    ]
    return instances + list(samples)


def _last(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def _samples_of(
    calls: list[GeneratorCall], results: list[StoredResult]
) -> tuple[list[TaskInput], dict[str, Any]]:
    """The valid samples among a task's generator results, and its report."""
    good = []
    statuses: Counter[str] = Counter()
    first_error = None
    for i, r in enumerate(results):
        statuses[r.status.value] += 1
        if r.status is Status.OK and r.grid is not None and r.output is not None:
            good.append(TaskInput("generator", i, r.grid, r.output, calls[i].seed))
        elif first_error is None:
            first_error = f"seed {calls[i].seed}: {r.status.value}: {_last(r.error)}"
    return good, {
        "requested": len(calls),
        "ok": len(good),
        "statuses": dict(sorted(statuses.items())),
        "first_error": first_error,
    }


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
    """Draw ``samples`` generator samples per task (cached in the store).

    Returns:
        The valid samples per task (as ``generator`` instances) and a per-task report:
        how many were requested and drawn, counts by status, the first error, or why the
        generator is missing or failed to load.
    """
    fingerprint = module_fingerprint(generator.module_dirs)
    runtime = sandbox.runtime_fingerprint()
    calls = [GeneratorCall(seed + i, generator.kwargs) for i in range(samples)]
    drawn: dict[str, list[TaskInput]] = {}
    report: dict[str, dict[str, Any]] = {}

    def finish(task_id: str, results: list[StoredResult]) -> None:
        drawn[task_id], report[task_id] = _samples_of(calls, results)

    to_run = []
    for task_id in task_ids:
        tp = generator.program_for(task_id)
        if tp.program is None:
            report[task_id] = {"missing": True}
            continue
        key = program_key(
            tp.program, fingerprint, "generate", GENERATOR_LIMITS, runtime, policy=policy
        )
        failed = store.get_program(key)
        if failed is not None:
            report[task_id] = {"failed": failed[0].value, "error": _last(failed[1])}
            continue
        keys = [store.input_key(key, c) for c in calls]
        cached = store.get_many(keys)
        if len(cached) == len(keys):
            finish(task_id, [cached[k] for k in keys])
        else:
            to_run.append((task_id, tp.program, key, keys))
    jobs = [Job(program, calls, GENERATOR_LIMITS, policy) for _, program, _, _ in to_run]
    for index, result in sandbox.map(jobs, mode="generate") if jobs else ():
        task_id, _program, key, keys = to_run[index]
        if result.status is not ProgramStatus.LOADED:
            report[task_id] = {"failed": result.status.value, "error": _last(result.error)}
            if result.status is not ProgramStatus.INFRA:
                store.put_program(key, result.status, result.error, result.findings)
            continue
        stored = [
            StoredResult(r.status, error=r.error, wire=r.wire, output_wire=r.output_wire)
            for r in result.results
        ]
        store.put_many(
            (k, s) for k, s in zip(keys, stored, strict=True) if s.status is not Status.INFRA
        )
        finish(task_id, stored)
        if progress:
            progress(task_id)
    return drawn, report


class SampleDrawer:
    """Draws one task's generator samples at a time (cached in the store).

    A task's calls are cut into jobs of ``chunk`` calls, served from the store per job when
    all of its calls are there and run in parallel otherwise; the samples and the report
    are those ``draw_samples`` gives.

    Args:
        sandbox: Where the generator runs.
        store: The result cache.
        generator: The generator source.
        samples: Samples per task.
        seed: Sample i is drawn after ``random.seed(seed + i)``.
        policy: Policy mode for the generator.
        chunk: Calls per job.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        store: ResultStore,
        generator: GeneratorSource,
        samples: int,
        seed: int,
        policy: PolicyMode = PolicyMode.WARN,
        chunk: int = 512,
    ) -> None:
        self.sandbox = sandbox
        self.store = store
        self.generator = generator
        self.policy = policy
        self.chunk = max(1, chunk)
        self.calls = [GeneratorCall(seed + i, generator.kwargs) for i in range(samples)]
        self._fingerprint = module_fingerprint(generator.module_dirs)
        self._runtime = sandbox.runtime_fingerprint()

    def draw(self, task_id: str) -> tuple[list[TaskInput], dict[str, Any]]:
        """The task's valid samples (as ``generator`` instances) and its report."""
        tp = self.generator.program_for(task_id)
        if tp.program is None:
            return [], {"missing": True}
        key = program_key(
            tp.program, self._fingerprint, "generate", GENERATOR_LIMITS, self._runtime,
            policy=self.policy,
        )  # fmt: skip
        failed = self.store.get_program(key)
        if failed is not None:
            return [], {"failed": failed[0].value, "error": _last(failed[1])}
        calls, store = self.calls, self.store
        results: list[StoredResult | None] = [None] * len(calls)
        starts: list[int] = []
        for start in range(0, len(calls), self.chunk):
            part = [store.input_key(key, c) for c in calls[start : start + self.chunk]]
            cached = store.get_many(part)
            if len(cached) == len(part):
                results[start : start + len(part)] = [cached[k] for k in part]
            else:
                starts.append(start)
        jobs = (
            Job(tp.program, calls[start : start + self.chunk], GENERATOR_LIMITS, self.policy)
            for start in starts
        )
        for index, result in self.sandbox.map(jobs, mode="generate") if starts else ():
            if result.status is not ProgramStatus.LOADED:
                if result.status is not ProgramStatus.INFRA:
                    store.put_program(key, result.status, result.error, result.findings)
                return [], {"failed": result.status.value, "error": _last(result.error)}
            start = starts[index]
            stored = [
                StoredResult(r.status, error=r.error, wire=r.wire, output_wire=r.output_wire)
                for r in result.results
            ]
            done = calls[start : start + len(stored)]
            store.put_many(
                (store.input_key(key, c), s)
                for c, s in zip(done, stored, strict=True)
                if s.status is not Status.INFRA
            )
            results[start : start + len(stored)] = stored
        assert all(r is not None for r in results)  # every job answered or returned above
        return _samples_of(calls, [r for r in results if r is not None])
