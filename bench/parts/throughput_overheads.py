"""Fixed overheads of a sandbox backend (``throughput.py --overheads``)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import psutil

from arcjudge.sandbox import VERIFIER_LIMITS, PolicyMode, Program, ProgramStatus
from common.measure import now as _now
from parts.throughput_modes import Context, SandboxFactory, VerificationError

TRIVIAL_SOURCE = b"def p(g):\n    return g\n"


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
    worker_cpu: float | None = None  # per input: the worker's processes (supervisor, programs)
    harness_cpu: float = 0.0  # per input: this process (encoding the job, decoding replies)


def _tree_cpu() -> float:
    """CPU seconds of this process's descendants, reaped ones included (once, by their reaper)."""
    total = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def measure_overheads(
    ctx: Context, backend: str, factory: SandboxFactory, reps: int = 50, batch: int = 1000
) -> Overheads:
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
    with factory(1) as sb:
        for _ in range(3):  # warm up the worker and this process
            sb.run(program, [one], VERIFIER_LIMITS, policy=policy)
        for _ in range(reps):
            t0 = _now()
            res = sb.run(program, [one], VERIFIER_LIMITS, policy=policy)
            samples.append(_now() - t0)
            if res.status is not ProgramStatus.LOADED or res.results[0].grid != one:
                raise VerificationError(f"{backend} overhead probe: {res.status} {res.error!r}")
        tree0, own0 = _tree_cpu(), time.process_time()
        for _ in range(5):
            t0 = _now()
            res = sb.run(program, inputs, VERIFIER_LIMITS, policy=policy)
            totals.append(_now() - t0)
            if res.status is not ProgramStatus.LOADED or [r.grid for r in res.results] != inputs:
                raise VerificationError(f"{backend} batch probe: {res.status} {res.error!r}")
        tree = _tree_cpu() - tree0  # 0 when the workers are not our processes (docker)
        harness_cpu = (time.process_time() - own0) / (5 * batch)
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
        worker_cpu=tree / (5 * batch) if tree > 0 else None,
        harness_cpu=harness_cpu,
    )
