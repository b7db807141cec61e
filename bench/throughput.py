"""Sandbox throughput benchmark (run by hand, not in CI).

Usage::

    python bench/throughput.py [--inputs 10000] [--workers N]
                               [--modes raw,fresh-subprocess,process-1,process-N]
                               [--overheads process,docker]

    python bench/throughput.py --overheads process,docker --repeat 2 \
        --modes raw,raw-in-image,process-N,docker-1,docker-N,docker-run-per-program

Runs the workload of ``common/workload.py`` (20 verifier-like programs, inputs split into
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
  needs ``runsc`` registered with the daemon, see docs/docker.md).
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
import os
import sys
from collections.abc import Callable, Sequence

from arcjudge.sandbox import PolicyMode, Sandbox
from arcjudge.sandbox.docker import DockerSandbox
from arcjudge.sandbox.docker_daemon import DockerUnavailable
from arcjudge.sandbox.process import ProcessSandbox
from common.measure import code_state, load_note
from common.workload import build_workload
from parts.throughput_docker import run_docker_run_per_program, run_raw_in_image
from parts.throughput_modes import (
    Context,
    Measurement,
    VerificationError,
    run_fresh_subprocess,
    run_raw,
    run_sandbox_mode,
)
from parts.throughput_overheads import measure_overheads
from parts.throughput_report import (
    print_overheads,
    print_raw_profile,
    print_table,
    print_targets,
    print_workload,
)
from unprivileged_backend import UnprivilegedProcessSandbox

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


register_mode("raw", run_raw)
register_mode("fresh-subprocess", run_fresh_subprocess)
register_mode("raw-in-image", run_raw_in_image)
register_mode("docker-run-per-program", run_docker_run_per_program)
register_backend("process", lambda workers: ProcessSandbox(workers=workers))
register_backend("process-unprivileged", lambda workers: UnprivilegedProcessSandbox(workers))
# "" is the daemon's default runtime, whatever $ARCJUDGE_DOCKER_RUNTIME says
register_backend("docker", lambda workers: DockerSandbox(workers=workers, runtime=""))
register_backend("docker-runsc", lambda workers: DockerSandbox(workers=workers, runtime="runsc"))


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
    print(f"python {sys.version.split()[0]}, {load_note()}")
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
            overheads.append(measure_overheads(ctx, backend, BACKENDS[backend]))
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
    print(f"\n{load_note()} (at the end)")
    return 3 if args.check_targets and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
