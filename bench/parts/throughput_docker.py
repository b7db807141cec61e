"""The container baselines of ``throughput.py``: a ``docker run`` per job, raw in the image."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from arcjudge.sandbox.docker_daemon import expected_image
from arcjudge.sandbox.runtime.canonical import canonicalize
from common import containers
from common.measure import now as _now
from parts.throughput_modes import FRESH_TIMEOUT, Context, Measurement, VerificationError

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
                [
                    *containers.run_argv(image, name, "run", stdin=True),
                    "python3",
                    "-c",
                    DOCKER_RUN_DRIVER,
                ],
                input=payload,
                capture_output=True,
                timeout=FRESH_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            containers.remove(name)
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
        *containers.run_argv(image, name, "raw", stdin=True),
        "python3",
        "-c",
        RAW_IN_IMAGE_DRIVER,
    ]
    t0 = _now()
    proc = subprocess.run(argv, input=json.dumps(work).encode(), capture_output=True, check=False)
    outside = _now() - t0
    if proc.returncode != 0:
        containers.remove(name)
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
