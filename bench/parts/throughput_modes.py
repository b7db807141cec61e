"""The in-process and pooled-sandbox modes of ``throughput.py``, and what they share."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arcjudge.sandbox import (
    VERIFIER_LIMITS,
    Job,
    PolicyMode,
    Program,
    ProgramStatus,
    Sandbox,
    Status,
)
from arcjudge.sandbox.runtime.canonical import canonicalize
from common.measure import cpu_seconds as _cpu_seconds
from common.measure import now as _now
from common.workload import Grid, Workload

FRESH_TIMEOUT = 120.0

SandboxFactory = Callable[[int], Sandbox]


class VerificationError(RuntimeError):
    """A mode produced a result that is not ``ok`` or differs from the raw output."""


# --------------------------------------------------------------------------------------
# Shared state and results
# --------------------------------------------------------------------------------------


@dataclass
class Context:
    """What every mode gets: the workload, options and the raw reference."""

    workload: Workload
    args: argparse.Namespace
    reference: dict[tuple[int, int], Grid] = field(default_factory=dict)
    raw_call_seconds: dict[tuple[int, int], float] = field(default_factory=dict)
    raw_rate: float | None = None

    def program(self, index: int) -> Program:
        prog = self.workload.programs[index]
        return Program(
            prog.source.encode(), entry_points=("p",), input_format="list", name=prog.name
        )

    def sandbox_jobs(self) -> list[Job]:
        policy = PolicyMode(self.args.policy)
        programs = [self.program(i) for i in range(len(self.workload.programs))]
        return [
            Job(programs[j.program], j.inputs, VERIFIER_LIMITS, policy) for j in self.workload.jobs
        ]


@dataclass
class Measurement:
    """One mode's timing: ``executions`` (program, input) calls in ``seconds``."""

    mode: str
    executions: int
    seconds: float
    total_executions: int
    extrapolated: bool = False
    cold_start: float | None = None
    notes: list[str] = field(default_factory=list)
    estimated_seconds: float | None = None  # a model's estimate for the whole workload
    per_job_overhead: float | None = None  # docker-run-per-program: container cost per job

    @property
    def rate(self) -> float:
        if self.estimated_seconds is not None:
            return self.total_executions / self.estimated_seconds
        return self.executions / self.seconds if self.seconds > 0 else float("inf")

    @property
    def full_seconds(self) -> float:
        """Seconds for the whole workload (extrapolated when sampled)."""
        if self.estimated_seconds is not None:
            return self.estimated_seconds
        return self.total_executions / self.rate

    @property
    def cold_rate(self) -> float | None:
        if self.cold_start is None:
            return None
        return self.total_executions / (self.full_seconds + self.cold_start)


def run_raw(ctx: Context) -> Measurement:
    """Exec each program once in this process and call it on fresh copies of its inputs."""
    wl = ctx.workload
    outputs: dict[tuple[int, int], object] = {}
    per_call: dict[tuple[int, int], float] = {}
    start = _now()
    fns: dict[int, Callable] = {}
    for job in wl.jobs:
        fn = fns.get(job.program)
        if fn is None:
            namespace: dict[str, object] = {"__name__": "program"}
            exec(compile(wl.programs[job.program].source, "program.py", "exec"), namespace)
            fn = fns[job.program] = namespace["p"]  # type: ignore[assignment]
        for k, grid in enumerate(job.inputs):
            t0 = _now()
            out = fn([list(row) for row in grid])
            t1 = _now()
            outputs[(job.program, job.start + k)] = out
            per_call[(job.program, job.start + k)] = t1 - t0
    seconds = _now() - start
    for key, out in outputs.items():
        grid, reason = canonicalize(out)
        if grid is None:
            name = wl.programs[key[0]].name
            raise VerificationError(f"raw: {name} input {key[1]} gave no valid grid: {reason}")
        ctx.reference[key] = grid
    ctx.raw_call_seconds = per_call
    n = len(outputs)
    m = Measurement("raw", n, seconds, n)
    ctx.raw_rate = m.rate
    m.notes.append(f"{_now() - start - seconds:.1f} s more to canonicalize (not timed)")
    return m


def fresh_script(source: str, grid: Grid) -> str:
    """A complete ``python -c`` script: the program, one input, its output as JSON."""
    literal = json.dumps([list(row) for row in grid])
    return (
        f"{source}\n"
        "import json as _bench_json\n"
        f"print(_bench_json.dumps(p(_bench_json.loads({literal!r}))))\n"
    )


def run_fresh_subprocess(ctx: Context) -> Measurement:
    """A fresh ``python -c`` per input, on an evenly spaced sample of the inputs."""
    pairs = ctx.workload.pairs()
    total = len(pairs)
    want = ctx.args.fresh_sample
    k = total if want <= 0 or want >= total else want
    sample = [pairs[i * total // k] for i in range(k)]
    failures = []
    start = _now()
    for prog, index in sample:
        script = fresh_script(ctx.workload.programs[prog].source, ctx.workload.inputs[prog][index])
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            timeout=FRESH_TIMEOUT,
            check=False,
        )
        grid = None
        if proc.returncode == 0 and proc.stdout.strip():
            grid, _ = canonicalize(json.loads(proc.stdout.strip().splitlines()[-1]))
        if grid is None or grid != ctx.reference[(prog, index)]:
            failures.append(
                f"{ctx.workload.programs[prog].name}[{index}]: rc={proc.returncode} "
                f"{proc.stderr.decode(errors='replace')[-300:]!r}"
            )
    seconds = _now() - start
    if failures:
        raise VerificationError(
            f"fresh-subprocess: {len(failures)} wrong results, e.g.: " + "; ".join(failures[:3])
        )
    m = Measurement("fresh-subprocess", k, seconds, total, extrapolated=k < total)
    if k < total:
        raw_sample = sum(ctx.raw_call_seconds[key] for key in sample)
        m.notes.append(
            f"sampled {k} of {total} inputs (every {total / k:g}th), extrapolated; "
            f"raw on the same sample: {raw_sample:.2f} s ({k / raw_sample:.0f} exec/s)"
        )
    m.notes.append(f"interpreter: {sys.executable} -c")
    return m


def check_results(ctx: Context, mode: str, results: dict[int, object], jobs: Sequence[Job]) -> None:
    """Raise ``VerificationError`` unless every input of every job is ``ok`` and equal."""
    problems: list[str] = []
    if len(results) != len(jobs):
        problems.append(f"{len(results)} results for {len(jobs)} jobs")
    for job_index, bench_job in enumerate(ctx.workload.jobs):
        res = results.get(job_index)
        name = ctx.workload.programs[bench_job.program].name
        if res is None:
            problems.append(f"job {job_index} ({name}): no result")
            continue
        if res.status is not ProgramStatus.LOADED or len(res.results) != len(bench_job.inputs):
            problems.append(f"job {job_index} ({name}): {res.status.value} {res.error!r}")
            continue
        for k, run in enumerate(res.results):
            index = bench_job.start + k
            if run.status is not Status.OK:
                problems.append(f"{name}[{index}]: {run.status.value} {run.error!r}")
            elif run.grid != ctx.reference[(bench_job.program, index)]:
                problems.append(f"{name}[{index}]: output differs from raw")
    if problems:
        raise VerificationError(
            f"{mode}: {len(problems)} problems, e.g.:\n  " + "\n  ".join(problems[:5])
        )


def run_sandbox_mode(ctx: Context, mode: str, factory: SandboxFactory, workers: int) -> Measurement:
    """All jobs through ``factory(workers).map``; pool start timed separately."""
    jobs = ctx.sandbox_jobs()
    n = ctx.workload.n_inputs
    best: Measurement | None = None
    runs = []
    for _ in range(max(1, ctx.args.repeat)):
        cpu0 = _cpu_seconds()
        t0 = _now()
        sb = factory(workers)
        with sb:
            t_made = _now()
            start = getattr(sb, "start", None)
            if callable(start):
                start()
            t1 = _now()
            cpu_started = _cpu_seconds()
            results: dict[int, object] = {}
            for job_index, res in sb.map(jobs):
                results[job_index] = res
            t2 = _now()
            cpu_mapped = _cpu_seconds()
        t3 = _now()
        check_results(ctx, mode, results, jobs)
        in_child = sum(r.seconds for res in results.values() for r in res.results)
        m = Measurement(mode, n, t2 - t1, n, cold_start=t1 - t_made)
        runtime = getattr(sb, "runtime", None)
        oci = runtime().get("oci_runtime") if callable(runtime) else None
        if oci:
            m.notes.append(f"OCI runtime read back from the containers: {oci}")
        m.notes.append(
            f"{workers} worker(s), {len(jobs)} jobs; harness CPU during map "
            f"{cpu_mapped - cpu_started:.1f} s; sum of per-input wall times reported by the "
            f"sandbox {in_child:.1f} s"
        )
        m.notes.append(
            f"cold start = start() of {workers} worker(s): {t1 - t_made:.3f} s; building the "
            f"sandbox object before it {t_made - t0:.3f} s; close {t3 - t2:.3f} s; "
            f"harness CPU in start() {cpu_started - cpu0:.2f} s"
        )
        runs.append(m.seconds)
        if best is None or m.seconds < best.seconds:
            best = m
    assert best is not None
    if len(runs) > 1:
        best.notes.append("best of " + ", ".join(f"{s:.1f}" for s in runs) + " s")
    return best
