"""Sandbox throughput benchmark (run by hand, not in CI).

Usage::

    python bench/throughput.py [--inputs 10000] [--workers N]
                               [--modes raw,fresh-subprocess,process-1,process-N]
                               [--overheads process,docker]

    python bench/throughput.py --overheads process,docker --repeat 2 \
        --modes raw,raw-in-image,process-N,docker-1,docker-N,docker-run-per-program

Runs the workload of ``bench/workload.py`` (20 verifier-like programs, inputs split into
(program, chunk) jobs) through several execution modes and prints executions per second
and the ratio to ``raw``:

* ``raw``: every program exec'd once in this process and called on fresh copies of its
  inputs; one core, no isolation. Always run: it is the baseline for every ratio and it
  produces the reference outputs every other mode is checked against.
* ``fresh-subprocess``: a fresh ``python -c`` per input (the human-eval style). Slow, so
  by default it runs an evenly spaced sample (``--fresh-sample``) and extrapolates.
* ``<backend>-1`` / ``<backend>-N``: a pooled sandbox with 1 or N warm workers, all jobs
  through ``Sandbox.map``. Pool start (``start()``, the cold start) is timed separately.
  Backends: ``process`` and ``docker`` (warm containers under the daemon's default OCI
  runtime, runc; needs the daemon and the image), ``docker-runsc`` (the same under gVisor:
  needs ``runsc`` registered with the daemon, see the README's docker section).
* ``docker-run-per-program``: the naive container way, one ``docker run --rm -i --network
  none IMAGE python3 -c DRIVER`` per job (program, chunk), sequentially, the job's inputs
  sent on stdin as JSON and its outputs read back from stdout. Runs an evenly spaced
  sample of jobs (``--docker-run-sample``) and extrapolates: total = raw time of all jobs
  x (calls timed inside the containers / their raw time) + jobs x the mean per-job
  container overhead (wall - calls timed inside) seen on the sample.
* ``raw-in-image``: the ``raw`` loop inside one container of the runtime image: the speed
  of the interpreter the docker backend runs programs with (not this process's).

For each backend in ``--overheads`` it also measures the per-program overhead (``run`` of
a trivial program on one input, median of 50, minus the raw call) and the per-input
overhead (a trivial program on 1,000 inputs in one ``run``: (total - raw) / 1000).

Every sandbox result must be ``ok`` and equal to the raw output, or the run fails.

Other backends plug in through ``register_backend``: give it a name and a factory
``workers -> Sandbox`` (for example a docker backend) and it gets ``NAME-1``, ``NAME-N``
modes and can be named in ``--overheads``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workload import Grid, Workload, build_workload

from arcjudge.sandbox import (
    VERIFIER_LIMITS,
    Job,
    PolicyMode,
    Program,
    ProgramStatus,
    Sandbox,
    Status,
)
from arcjudge.sandbox.docker import LABEL as DOCKER_LABEL
from arcjudge.sandbox.docker import DockerSandbox, DockerUnavailable, expected_image
from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.runtime.canonical import canonicalize
from unprivileged_backend import UnprivilegedProcessSandbox

TARGET_PER_PROGRAM_MS = 20.0
TARGET_PER_INPUT_MS = 0.5
TARGET_SPEEDUP = 1.5
TARGET_VS_DOCKER_RUN = 20.0
TARGET_COLD_START = 3.0
TRIVIAL_SOURCE = b"def p(g):\n    return g\n"
FRESH_TIMEOUT = 120.0

_now = time.perf_counter


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


@dataclass
class Overheads:
    """Fixed costs of a sandbox backend, in seconds."""

    backend: str
    per_program: float
    per_program_samples: list[float]
    raw_call: float
    per_input: float
    per_input_net: float
    batch_total: float
    batch_raw: float
    batch_size: int


def _cpu_seconds() -> float:
    """CPU seconds used so far by this process (all threads).

    Children are not counted: programs in a PID namespace are not reaped through their
    supervisor, so ``RUSAGE_CHILDREN`` would miss most of the sandbox's CPU time.
    """
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def code_state() -> str:
    """The commit and uncommitted ``src/`` changes the numbers were taken with."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
        return proc.stdout.decode(errors="replace") if proc.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    changed = [line for line in git("status", "--porcelain", "--", "src").splitlines() if line]
    if not changed:
        return f"code: {head}, src/ clean"
    digest = hashlib.sha256(git("diff", "HEAD", "--", "src").encode()).hexdigest()[:10]
    return f"code: {head} + {len(changed)} uncommitted src/ changes (diff {digest})"


def _load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} cores"


# --------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------

ModeFn = Callable[[Context], Measurement]
SandboxFactory = Callable[[int], Sandbox]

MODES: dict[str, ModeFn] = {}
BACKENDS: dict[str, SandboxFactory] = {}


def register_mode(name: str, fn: ModeFn) -> None:
    MODES[name] = fn


def register_backend(name: str, factory: SandboxFactory) -> None:
    """Add a sandbox backend: modes ``NAME-1`` and ``NAME-N`` and its overhead probe."""
    BACKENDS[name] = factory
    register_mode(f"{name}-1", lambda ctx: run_sandbox_mode(ctx, f"{name}-1", factory, 1))
    register_mode(
        f"{name}-N",
        lambda ctx: run_sandbox_mode(ctx, f"{name}-N", factory, ctx.args.workers),
    )


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


# The driver of ``docker-run-per-program``: the job (source and inputs) comes as JSON on
# stdin; the outputs, one per input in order, and the time the calls took inside the
# container go to stdout as JSON.
DOCKER_RUN_DRIVER = """\
import json, sys, time
job = json.load(sys.stdin)
namespace = {"__name__": "program"}
exec(compile(job["source"], "program.py", "exec"), namespace)
p = namespace["p"]
t0 = time.perf_counter()
outputs = [p([list(row) for row in grid]) for grid in job["inputs"]]
seconds = time.perf_counter() - t0
sys.stdout.write(json.dumps({"outputs": outputs, "seconds": seconds}))
"""


def docker_run_argv(image: str, name: str) -> list[str]:
    """The naive command: a fresh container per job, no network, removed afterwards."""
    return [
        "docker", "run", "--rm", "-i", "--network", "none",
        "--name", name, "--label", f"{DOCKER_LABEL}=1", "--label", f"{DOCKER_LABEL}.bench=run",
        "--label", f"{DOCKER_LABEL}.owner={socket.gethostname()}:{os.getpid()}",
        image, "python3", "-c", DOCKER_RUN_DRIVER,
    ]  # fmt: skip


def run_docker_run_per_program(ctx: Context) -> Measurement:
    """One ``docker run`` per job, on an evenly spaced sample of the jobs."""
    wl = ctx.workload
    image = expected_image()
    total_jobs = len(wl.jobs)
    want = ctx.args.docker_run_sample
    k = total_jobs if want <= 0 or want >= total_jobs else want
    sample = [i * total_jobs // k for i in range(k)]
    run_id = f"bench-{os.getpid()}"
    failures: list[str] = []
    per_job: list[float] = []
    overheads: list[float] = []
    inside_total = raw_sample = 0.0
    executions = 0
    start = _now()
    for n, job_index in enumerate(sample):
        job = wl.jobs[job_index]
        prog = wl.programs[job.program]
        payload = json.dumps(
            {"source": prog.source, "inputs": [[list(r) for r in g] for g in job.inputs]}
        ).encode()
        name = f"arcjudge-{run_id}-{n}"
        t0 = _now()
        try:
            proc = subprocess.run(
                docker_run_argv(image, name),
                input=payload,
                capture_output=True,
                timeout=FRESH_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
            failures.append(f"job {job_index} ({prog.name}): timed out")
            continue
        seconds = _now() - t0
        per_job.append(seconds)
        executions += len(job.inputs)
        try:
            reply = json.loads(proc.stdout) if proc.returncode == 0 else {}
            outputs, inside = reply["outputs"], float(reply["seconds"])
        except (ValueError, KeyError, TypeError):
            outputs, inside = None, 0.0
        overheads.append(seconds - inside)
        inside_total += inside
        raw_sample += sum(
            ctx.raw_call_seconds[(job.program, job.start + i)] for i in range(len(job.inputs))
        )
        if not isinstance(outputs, list) or len(outputs) != len(job.inputs):
            failures.append(
                f"job {job_index} ({prog.name}): rc={proc.returncode} "
                f"{proc.stderr.decode(errors='replace')[-300:]!r}"
            )
            continue
        for i, out in enumerate(outputs):
            grid, _ = canonicalize(out)
            if grid is None or grid != ctx.reference[(job.program, job.start + i)]:
                failures.append(f"{prog.name}[{job.start + i}]: output differs from raw")
                break
    seconds = _now() - start
    if failures:
        raise VerificationError(
            f"docker-run-per-program: {len(failures)} wrong results, e.g.: "
            + "; ".join(failures[:3])
        )
    raw_all = sum(ctx.raw_call_seconds.values())
    mean_overhead = statistics.mean(overheads)
    speed = inside_total / raw_sample if raw_sample > 0 else 1.0  # image python vs ours
    compute_all = raw_all * speed
    m = Measurement(
        "docker-run-per-program",
        executions,
        seconds,
        wl.n_inputs,
        extrapolated=k < total_jobs,
        estimated_seconds=compute_all + total_jobs * mean_overhead if k < total_jobs else None,
        per_job_overhead=mean_overhead,
    )
    q = statistics.quantiles(overheads, n=10) if len(overheads) >= 2 else overheads * 9
    m.notes.append(
        f"{k} of {total_jobs} jobs ({executions} inputs) run, one container each, one at a "
        f"time; per job {statistics.median(per_job):.3f} s median; container overhead per job"
        f" (wall - calls timed inside) mean {mean_overhead:.3f} s (p10 {q[0]:.3f}, p90"
        f" {q[-1]:.3f}); calls inside took {speed:.2f}x their raw time"
    )
    if k < total_jobs:
        m.notes.append(
            f"extrapolated: raw time of all jobs {raw_all:.1f} s x {speed:.2f} + {total_jobs}"
            f" jobs x {mean_overhead:.3f} s = {m.full_seconds:.1f} s (the sample's own rate"
            f" {executions / seconds:.0f} exec/s)"
        )
    m.notes.append(f"image {image}")
    return m


# The driver of ``raw-in-image``: the raw loop inside one container, timed inside.
RAW_IN_IMAGE_DRIVER = """\
import json, sys, time
work = json.load(sys.stdin)
outputs, seconds = [], 0.0
for source, inputs in work:
    namespace = {"__name__": "program"}
    exec(compile(source, "program.py", "exec"), namespace)
    p = namespace["p"]
    for grid in inputs:
        g = [list(row) for row in grid]
        t0 = time.perf_counter()
        out = p(g)
        seconds += time.perf_counter() - t0
        outputs.append(out)
sys.stdout.write(json.dumps({"seconds": seconds, "python": sys.version.split()[0],
                             "outputs": outputs}))
"""


def run_raw_in_image(ctx: Context) -> Measurement:
    """The raw loop inside one container of the runtime image: its interpreter's speed.

    The docker backend runs programs with the image's ``python3``, not this process's
    interpreter; this mode tells how much of a docker-vs-raw ratio is the interpreter.
    """
    wl = ctx.workload
    image = expected_image()
    order = [(j.program, j.start + k) for j in wl.jobs for k in range(len(j.inputs))]
    work = [
        (wl.programs[j.program].source, [[list(r) for r in g] for g in j.inputs]) for j in wl.jobs
    ]
    name = f"arcjudge-bench-raw-{os.getpid()}"
    argv = [
        "docker", "run", "--rm", "-i", "--network", "none", "--name", name,
        "--label", f"{DOCKER_LABEL}=1", "--label", f"{DOCKER_LABEL}.bench=raw",
        "--label", f"{DOCKER_LABEL}.owner={socket.gethostname()}:{os.getpid()}",
        image, "python3", "-c", RAW_IN_IMAGE_DRIVER,
    ]  # fmt: skip
    t0 = _now()
    proc = subprocess.run(argv, input=json.dumps(work).encode(), capture_output=True, check=False)
    outside = _now() - t0
    if proc.returncode != 0:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        raise VerificationError(f"raw-in-image: {proc.stderr.decode(errors='replace')[-500:]}")
    reply = json.loads(proc.stdout)
    wrong = [
        key
        for key, out in zip(order, reply["outputs"], strict=True)
        if canonicalize(out)[0] != ctx.reference[key]
    ]
    if wrong:
        raise VerificationError(f"raw-in-image: {len(wrong)} outputs differ from raw")
    m = Measurement("raw-in-image", len(order), reply["seconds"], wl.n_inputs)
    m.notes.append(
        f"python {reply['python']} in {image} vs {sys.version.split()[0]} here; calls timed"
        f" inside the container ({outside:.1f} s with container start and JSON both ways)"
    )
    return m


register_mode("raw", run_raw)
register_mode("fresh-subprocess", run_fresh_subprocess)
register_mode("raw-in-image", run_raw_in_image)
register_mode("docker-run-per-program", run_docker_run_per_program)
register_backend("process", lambda workers: ProcessSandbox(workers=workers))
register_backend("process-unprivileged", lambda workers: UnprivilegedProcessSandbox(workers))
# "" is the daemon's default runtime, whatever $ARCJUDGE_DOCKER_RUNTIME says
register_backend("docker", lambda workers: DockerSandbox(workers=workers, runtime=""))
register_backend("docker-runsc", lambda workers: DockerSandbox(workers=workers, runtime="runsc"))


# --------------------------------------------------------------------------------------
# Fixed overheads
# --------------------------------------------------------------------------------------


def measure_overheads(ctx: Context, backend: str, reps: int = 50, batch: int = 1000) -> Overheads:
    """Per-program and per-input overhead of one backend (one worker, trivial program)."""
    program = Program(TRIVIAL_SOURCE, entry_points=("p",), input_format="list", name="trivial")
    namespace: dict[str, object] = {}
    exec(compile(TRIVIAL_SOURCE, "program.py", "exec"), namespace)
    fn = namespace["p"]
    policy = PolicyMode(ctx.args.policy)
    pool = [g for grids in ctx.workload.inputs for g in grids]
    one = pool[0]
    inputs = (pool * (batch // max(1, len(pool)) + 1))[:batch]

    raw_calls = []
    for _ in range(reps):
        t0 = _now()
        fn([list(row) for row in one])  # type: ignore[operator]
        raw_calls.append(_now() - t0)
    raw_call = statistics.median(raw_calls)

    samples = []
    totals = []
    with BACKENDS[backend](1) as sb:
        for _ in range(3):  # warm up the worker and this process
            sb.run(program, [one], VERIFIER_LIMITS, policy=policy)
        for _ in range(reps):
            t0 = _now()
            res = sb.run(program, [one], VERIFIER_LIMITS, policy=policy)
            samples.append(_now() - t0)
            if res.status is not ProgramStatus.LOADED or res.results[0].grid != one:
                raise VerificationError(f"{backend} overhead probe: {res.status} {res.error!r}")
        for _ in range(5):
            t0 = _now()
            res = sb.run(program, inputs, VERIFIER_LIMITS, policy=policy)
            totals.append(_now() - t0)
            if res.status is not ProgramStatus.LOADED or [r.grid for r in res.results] != inputs:
                raise VerificationError(f"{backend} batch probe: {res.status} {res.error!r}")
    t0 = _now()
    for g in inputs:
        fn([list(row) for row in g])  # type: ignore[operator]
    batch_raw = _now() - t0
    per_program = statistics.median(samples) - raw_call
    batch_total = statistics.median(totals)
    return Overheads(
        backend=backend,
        per_program=per_program,
        per_program_samples=samples,
        raw_call=raw_call,
        per_input=(batch_total - batch_raw) / batch,
        per_input_net=(batch_total - batch_raw - per_program) / batch,
        batch_total=batch_total,
        batch_raw=batch_raw,
        batch_size=batch,
    )


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------


def print_workload(ctx: Context) -> None:
    wl = ctx.workload
    sizes = [len(g) * len(g[0]) for grids in wl.inputs for g in grids]
    print(
        f"workload: {len(wl.programs)} programs, {wl.n_inputs} inputs "
        f"(mean {statistics.mean(sizes):.0f} cells), {len(wl.jobs)} jobs of <= {wl.chunk} inputs"
    )


def print_raw_profile(ctx: Context) -> None:
    print("\nraw time per call, by program (ms):")
    wl = ctx.workload
    cells = []
    for i, prog in enumerate(wl.programs):
        times = [ctx.raw_call_seconds[(i, k)] for k in range(len(wl.inputs[i]))]
        if times:
            cells.append(f"{prog.name:<16} {prog.tier:<9} {1000 * statistics.mean(times):7.3f}")
    half = (len(cells) + 1) // 2
    right_column = cells[half:] + [""] * (2 * half - len(cells))
    for left, right in zip(cells[:half], right_column, strict=True):
        print(f"  {left}    {right}")


def print_table(ctx: Context, results: list[Measurement]) -> None:
    raw = ctx.raw_rate or float("nan")
    print()
    header = (
        f"{'mode':<22} {'measured':>9} {'seconds':>9} {'exec/s':>9} {'x raw':>7}"
        f" {'cold start':>10} {'exec/s incl. cold':>17} {'est. s for all':>14}"
    )
    print(header)
    print("-" * len(header))
    for m in results:
        cold = f"{m.cold_start:.3f}" if m.cold_start is not None else "-"
        cold_rate = f"{m.cold_rate:.0f}" if m.cold_rate is not None else "-"
        est = f"{m.full_seconds:.1f}" + ("*" if m.extrapolated else "")
        print(
            f"{m.mode:<22} {m.executions:>9} {m.seconds:>9.2f} {m.rate:>9.0f} {m.rate / raw:>7.3f}"
            f" {cold:>10} {cold_rate:>17} {est:>14}"
        )
    if any(m.extrapolated for m in results):
        print("* extrapolated from a sample")
    for m in results:
        for note in m.notes:
            print(f"  {m.mode}: {note}")


def print_overheads(ov: Overheads) -> None:
    q = statistics.quantiles(ov.per_program_samples, n=10)
    print(
        f"\n{ov.backend} overheads (1 worker, trivial program):\n"
        f"  per-program: {1000 * ov.per_program:.2f} ms "
        f"(median of {len(ov.per_program_samples)} runs on 1 input, "
        f"p10 {1000 * q[0]:.2f} / p90 {1000 * q[-1]:.2f} ms; raw call {1e6 * ov.raw_call:.1f} us)\n"
        f"  per-input:   {1000 * ov.per_input:.4f} ms "
        f"((run of {ov.batch_size} inputs {1000 * ov.batch_total:.1f} ms, median of 5"
        f" - raw {1000 * ov.batch_raw:.1f} ms) / {ov.batch_size}); "
        f"{1000 * ov.per_input_net:.4f} ms without the per-program part"
    )


def print_targets(ctx: Context, results: list[Measurement], overheads: list[Overheads]) -> bool:
    rows: list[tuple[str, str, str, bool | None]] = []
    for ov in overheads:
        rows.append(
            (
                f"{ov.backend} per-program overhead",
                f"<= {TARGET_PER_PROGRAM_MS:g} ms",
                f"{1000 * ov.per_program:.2f} ms",
                1000 * ov.per_program <= TARGET_PER_PROGRAM_MS,
            )
        )
        rows.append(
            (
                f"{ov.backend} per-input overhead",
                f"<= {TARGET_PER_INPUT_MS:g} ms",
                f"{1000 * ov.per_input:.4f} ms",
                1000 * ov.per_input <= TARGET_PER_INPUT_MS,
            )
        )
    by_mode = {m.mode: m for m in results}
    for m in results:
        if m.mode.endswith("-N") and ctx.raw_rate:
            ratio = m.rate / ctx.raw_rate
            rows.append(
                (
                    f"{m.mode} throughput ({ctx.args.workers} workers)",
                    f">= {TARGET_SPEEDUP:g}x raw",
                    f"{ratio:.2f}x raw",
                    ratio >= TARGET_SPEEDUP,
                )
            )
        if m.mode.endswith("-N") and m.cold_start is not None:
            rows.append(
                (
                    f"{m.mode} pool cold start ({ctx.args.workers} workers)",
                    f"<= {TARGET_COLD_START:g} s",
                    f"{m.cold_start:.2f} s",
                    m.cold_start <= TARGET_COLD_START,
                )
            )
    naive = by_mode.get("docker-run-per-program")
    notes: list[str] = []
    if naive is not None and "docker-N" in by_mode:
        pooled = by_mode["docker-N"]
        ratio = pooled.rate / naive.rate
        rows.append(
            (
                "docker-N vs docker-run-per-program",
                f">= {TARGET_VS_DOCKER_RUN:g}x",
                f"{ratio:.2f}x",
                ratio >= TARGET_VS_DOCKER_RUN,
            )
        )
        notes.extend(docker_run_break_even(ctx, naive, pooled))
    image = by_mode.get("raw-in-image")
    if image is not None:
        for name in ("docker-1", "docker-N"):
            if name in by_mode:
                notes.append(
                    f"{name} is {by_mode[name].rate / image.rate:.2f}x raw-in-image (the same"
                    f" interpreter as its workers; raw-in-image is {image.rate / ctx.raw_rate:.2f}x"
                    " raw)"
                )
    print("\ntargets:")
    ok = True
    for what, target, got, passed in rows:
        verdict = "PASS" if passed else "MISS"
        ok = ok and bool(passed)
        print(f"  {what:<44} {target:<14} {got:<14} {verdict}")
    if not rows:
        print("  (none measured)")
    for note in notes:
        print(f"  note: {note}")
    return ok


def docker_run_break_even(ctx: Context, naive: Measurement, pooled: Measurement) -> list[str]:
    """How the naive-vs-pooled ratio depends on the job size, from the measured overhead.

    The naive time is (time of all calls) + jobs x (per-container overhead), so the ratio
    grows as jobs shrink; with the pooled time held fixed, 20x needs jobs of at most
    ``n * o / (20 * T_pooled - T_calls)`` inputs.
    """
    n = ctx.workload.n_inputs
    jobs = len(ctx.workload.jobs)
    overhead = naive.per_job_overhead or 0.0
    compute = naive.full_seconds - jobs * overhead
    need = TARGET_VS_DOCKER_RUN * pooled.full_seconds - compute
    lines = [
        f"docker-run-per-program = calls {compute:.1f} s + {jobs} jobs x {overhead:.3f} s "
        f"container overhead; docker-N {pooled.full_seconds:.1f} s"
    ]
    if overhead > 0 and need > 0:
        lines.append(
            f"{TARGET_VS_DOCKER_RUN:g}x would need jobs of <= {n * overhead / need:.1f} inputs "
            f"(these are {ctx.workload.chunk}); at 1 input per container the ratio would be "
            f"~{(compute + n * overhead) / pooled.full_seconds:.0f}x"
        )
    return lines


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="total inputs (10000)")
    parser.add_argument("--chunk", type=int, default=100, help="inputs per job (100)")
    parser.add_argument("--seed", type=int, default=0, help="workload seed (0)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="N for the -N modes (cores)"
    )
    parser.add_argument(
        "--modes",
        default="raw,fresh-subprocess,process-1,process-N",
        help=f"comma-separated modes (raw always runs); known: {', '.join(MODES)}",
    )
    parser.add_argument(
        "--overheads",
        default="process",
        help="backends whose fixed overheads to measure ('' for none)",
    )
    parser.add_argument(
        "--fresh-sample",
        type=int,
        default=200,
        help="inputs the fresh-subprocess mode runs, then extrapolates (0: all)",
    )
    parser.add_argument(
        "--docker-run-sample",
        type=int,
        default=20,
        help="jobs the docker-run-per-program mode runs, then extrapolates (0: all)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="run each sandbox mode this often, keep the best"
    )
    parser.add_argument(
        "--policy",
        default=PolicyMode.OFF.value,
        choices=[p.value for p in PolicyMode],
        help="policy mode for sandbox runs (off)",
    )
    parser.add_argument(
        "--check-targets", action="store_true", help="exit with status 3 if a target is missed"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in [*modes] if m not in MODES]
    backends = [b.strip() for b in args.overheads.split(",") if b.strip()]
    unknown += [b for b in backends if b not in BACKENDS]
    if unknown:
        print(f"unknown mode/backend: {', '.join(unknown)}; modes: {', '.join(MODES)}")
        return 2
    if "raw" in modes:
        modes.remove("raw")
    modes.insert(0, "raw")

    ctx = Context(build_workload(args.inputs, args.chunk, args.seed), args)
    print(f"python {sys.version.split()[0]}, {_load_note()}")
    print(code_state())
    print_workload(ctx)
    results: list[Measurement] = []
    try:
        for mode in modes:
            print(f"running {mode} ...", flush=True)
            m = MODES[mode](ctx)
            results.append(m)
            print(
                f"  {mode}: {m.executions} in {m.seconds:.2f} s = {m.rate:.0f} exec/s"
                f" ({m.rate / (ctx.raw_rate or float('nan')):.3f}x raw)",
                flush=True,
            )
        overheads = []
        for backend in backends:
            print(f"measuring {backend} overheads ...", flush=True)
            overheads.append(measure_overheads(ctx, backend))
    except VerificationError as exc:
        print(f"\nVERIFICATION FAILED: {exc}", file=sys.stderr)
        return 1
    except DockerUnavailable as exc:
        print(f"\ndocker unavailable: {exc}", file=sys.stderr)
        return 2
    print_raw_profile(ctx)
    print_table(ctx, results)
    for ov in overheads:
        print_overheads(ov)
    ok = print_targets(ctx, results, overheads)
    print(f"\n{_load_note()} (at the end)")
    return 3 if args.check_targets and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
