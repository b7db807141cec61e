"""Full validation benchmark: one verifier source over all 400 tasks and 100,000 ARC-GEN pairs.

Usage::

    python bench/validate_full.py [--data DIR] [--kind re-arc|golf] [--backends process,docker]
                                  [--workers 2] [--tasks-limit N] [--chunk N]
                                  [--also-chunk N] [--repeat R] [--raw-parallel]
                                  [--raw-in-image] [--profile] [--cprofile] [--scale S]
                                  [--samples N] [--gen-ms MS] [--slow-gen-ms MS] [--timeline]
                                  [--baseline-src DIR]

We have no real verifier source for the 400 ARC-AGI-1 training tasks, so the benchmark
GENERATES one (``common.verifier_source``: seeded random straight-line chains over the
DSL of ``bench/synthetic/dsl.py``, RE-ARC or golf layout) into its work directory, its
cost calibrated (``--ms-per-call``, 2 ms like real RE-ARC verifiers) unless ``--scale``
is given.

Measured (``bench/README.md`` has the details):

1. ``raw``: the source imported once in this process, every task's verifier on every
   train/test/ARC-GEN input, compared with the output; one core, no isolation
   (``parts.validate_raw``; ``--raw-parallel``: in ``--workers`` processes at once;
   ``--raw-in-image``: in one container of the runtime image).
2. ``validate``: ``Validator`` through the API in a child process of its own
   (``parts.validate_child``): wall, harness CPU and peak RSS, the sandbox's and the
   rest of the machine's CPU, jobs and inputs sent; 3. ``warm``: the same on the filled
   store.

``--samples N`` adds N generator samples per task from generators of our own
(``parts.validate_samples``; raw then also draws and verifies them in-process) and prints
each run's CPU timeline (``parts.validate_timeline``; ``--timeline`` without samples).
``--baseline-src DIR`` runs each cold validate on DIR's harness too (e.g. the main
checkout's ``src``), just before, for a before/after under the same load.

Targets: validate wall <= 0.6 x raw (<= 0.55 x with samples); harness peak memory
< 1 GiB. ``--profile`` adds where the time goes (``parts.validate_profile``), ``--cprofile``
a validate run with the harness under cProfile.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from common import data
from common.measure import code_state, load_note, mib, now
from common.verifier_source import golf_numbers, plan_source, write_source
from parts.validate_child import child_validate, spawn_validate, validate_specs
from parts.validate_profile import compile_costs, print_profile, profile_backend
from parts.validate_raw import (
    calibrate,
    load_functions,
    raw_child,
    run_raw,
    run_raw_in_image,
    run_raw_parallel,
    usable_arcgen,
)
from parts.validate_report import cpu_text, print_results
from parts.validate_samples import generator_costs, raw_samples, write_generators
from parts.validate_timeline import timeline_lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data.add_argument(parser)
    parser.add_argument("--tasks-dir", type=Path, help="default: DATA/arc-agi-1/training")
    parser.add_argument("--arcgen-dir", type=Path, help="default: DATA/arc-gen-100k")
    parser.add_argument("--kind", choices=("re-arc", "golf"), default="re-arc")
    parser.add_argument("--backends", default="process,docker", help="comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--chunk", type=int, default=0, help="ValidateConfig.chunk (0: its default, as validate)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="cold validate runs per backend (best kept)"
    )
    parser.add_argument(
        "--also-chunk",
        type=int,
        default=0,
        help="also a cold validate per backend with this chunk (e.g. 512: 1 program per task)",
    )
    parser.add_argument("--tasks-limit", type=int, default=0, help="first N tasks only (0: all)")
    parser.add_argument(
        "--samples", type=int, default=0, help="generator samples per task (ours; 0: none)"
    )
    parser.add_argument(
        "--gen-ms", type=float, default=4.0, help="mean generator ms per sample (--samples)"
    )
    parser.add_argument(
        "--slow-gen-ms", type=float, default=1100.0, help="ms per sample of the one slow generator"
    )
    parser.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="also run each cold validate with this src directory on PYTHONPATH, just before",
    )
    parser.add_argument(
        "--timeline", action="store_true", help="print each run's CPU timeline (on with --samples)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assignments", type=int, default=9000, help="total, over 400 tasks")
    parser.add_argument("--ms-per-call", type=float, default=2.0, help="calibration target")
    parser.add_argument("--scale", type=float, default=None, help="skip calibration")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-cache runs")
    parser.add_argument("--profile", action="store_true", help="measure where the time goes")
    parser.add_argument(
        "--cprofile", action="store_true", help="one extra process run under cProfile"
    )
    parser.add_argument("--keep", type=Path, default=None, help="work in DIR and keep it")
    parser.add_argument(
        "--raw-parallel",
        action="store_true",
        help="also run raw as --workers processes at once (what 2 cores give at best)",
    )
    parser.add_argument(
        "--raw-in-image",
        action="store_true",
        help="also run raw in one container of the runtime image (its interpreter)",
    )
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--raw-child", type=Path, default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


@contextlib.contextmanager
def work_dir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="validate-full-") as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        print(json.dumps(child_validate(json.loads(args.child.read_text()))))
        return 0
    if args.raw_child is not None:
        print(json.dumps(raw_child(json.loads(args.raw_child.read_text()))))
        return 0
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if args.tasks_dir is None or args.arcgen_dir is None:
        root = data.root(args.data)
        args.tasks_dir = args.tasks_dir or data.training_dir(root)
        args.arcgen_dir = args.arcgen_dir or data.arcgen_dir(root)
    from arcjudge.tasks import task_files

    all_ids = [p.stem for p in task_files(args.tasks_dir)]
    task_ids = all_ids[: args.tasks_limit] if args.tasks_limit > 0 else all_ids
    print(f"python {sys.version.split()[0]}, {load_note()}")
    print(code_state())
    with work_dir(args.keep) as work:
        tasks_dir = args.tasks_dir
        if len(task_ids) < len(all_ids):  # a task directory with only the first N tasks
            tasks_dir = work / "tasks"
            tasks_dir.mkdir(exist_ok=True)
            for t in task_ids:
                link = tasks_dir / f"{t}.json"
                if not link.exists():
                    link.symlink_to((args.tasks_dir / f"{t}.json").resolve())
        t0 = now()
        arcgen_dir, arcgen = usable_arcgen(args.arcgen_dir, work, task_ids)
        print(
            f"data: {len(task_ids)} tasks, {arcgen['pairs']} ARC-GEN pairs the harness can read"
            f" (checked in {now() - t0:.1f} s)"
        )
        if arcgen["dropped"]:
            lost = sum(n for n, _ in arcgen["dropped"].values())
            print(
                f"  WARNING: {lost} ARC-GEN pairs in {len(arcgen['dropped'])} files break the"
                " grid rules (> 30 rows or columns) and make load_arcgen_pairs reject the whole"
                " file, which stops validate; left out here: "
                + ", ".join(f"{t} {n}/{m}" for t, (n, m) in sorted(arcgen["dropped"].items()))
            )
        total = round(args.assignments * len(task_ids) / len(all_ids))
        plans = plan_source(task_ids, args.seed, args.kind == "golf", total)
        source_dir = work / "source"
        if args.scale is None:
            print(f"calibrating to {args.ms_per_call} ms per call ...", flush=True)
            scale, lines = calibrate(
                plans, args.kind, source_dir, tasks_dir, arcgen_dir, args.ms_per_call
            )
            for line in lines:
                print(f"  {line}")
        else:
            scale = args.scale
        write_source(source_dir, args.kind, plans, scale)
        n_assign = sum(len(p.steps) for p in plans)
        ops = Counter(s.op for p in plans for s in p.steps)
        print(
            f"source: {args.kind}, {len(plans)} tasks, {n_assign} assignments "
            f"(min {min(len(p.steps) for p in plans)}, max {max(len(p.steps) for p in plans)}),"
            f" {len(ops)} distinct ops, smoothing scale {scale:.3f}; written to {source_dir}"
        )
        gen_dir = work / "generators"
        if args.samples:
            costs = generator_costs(task_ids, args.seed, args.gen_ms, args.slow_gen_ms)
            write_generators(gen_dir, task_ids, tasks_dir, arcgen_dir, costs)
            slow = max(costs, key=lambda t: costs[t])
            print(
                f"generators: ours (ARC-GEN layout), {args.samples} samples per task, mean"
                f" {sum(costs.values()) / len(costs):.1f} ms per sample, slowest {slow}"
                f" {costs[slow]:.0f} ms; written to {gen_dir}"
            )
        print(f"running raw (in-process, 1 core) over {len(task_ids)} tasks ...", flush=True)
        raw = run_raw(source_dir, args.kind, task_ids, tasks_dir, arcgen_dir, golf_numbers())
        print(
            f"  raw: {raw.calls} calls in {raw.seconds:.1f} s"
            f" ({1000 * raw.seconds / raw.calls:.3f} ms per call)",
            flush=True,
        )
        if args.samples:
            fns = load_functions(source_dir, args.kind, task_ids, golf_numbers())
            drawn = raw_samples(gen_dir, fns, args.kind, task_ids, args.samples)
            print(
                f"  raw samples: {drawn['calls']} drawn in {drawn['gen_seconds']:.1f} s (slowest"
                f" {drawn['slowest'][0]} {drawn['slowest'][1]:.1f} s), verified in"
                f" {drawn['verify_seconds']:.1f} s; raw in all"
                f" {raw.seconds + drawn['gen_seconds'] + drawn['verify_seconds']:.1f} s",
                flush=True,
            )
            raw.seconds += drawn["gen_seconds"] + drawn["verify_seconds"]
            raw.cpu_seconds += drawn["cpu_seconds"]
            raw.calls += drawn["calls"]
        raw_spec = {
            "kind": args.kind,
            "source_dir": str(source_dir),
            "task_ids": list(task_ids),
            "tasks_dir": str(tasks_dir),
            "arcgen_dir": str(arcgen_dir),
            "numbers": golf_numbers(),
        }
        extra_raw: dict[str, dict] = {}
        if args.raw_parallel:
            print(f"running raw x{args.workers} (processes at once) ...", flush=True)
            cost = {t: seconds for t, (_, seconds) in raw.per_task.items()}
            extra_raw["parallel"] = run_raw_parallel(raw_spec, work, cost, args.workers)
            print(f"  raw x{args.workers}: {extra_raw['parallel']['wall']:.1f} s", flush=True)
        if args.raw_in_image:
            from arcjudge.sandbox.docker_daemon import expected_image

            image = expected_image()
            print(f"running raw in the image {image} ...", flush=True)
            mounts = [args.tasks_dir, args.arcgen_dir]
            extra_raw["image"] = run_raw_in_image(raw_spec, work, image, mounts)
            print(f"  raw in the image: {extra_raw['image']['seconds']:.1f} s", flush=True)
        runs = []
        if not args.chunk:
            from common.harness import default_chunk

            args.chunk = default_chunk()
        paths = {
            "source_dir": source_dir,
            "tasks_dir": tasks_dir,
            "arcgen_dir": arcgen_dir,
            "gen_dir": gen_dir,
        }
        specs = validate_specs(args, backends, work, paths)
        for spec in specs:
            tries = []
            for _ in range(args.repeat if spec.get("fresh") and not spec.get("cprofile") else 1):
                if spec.get("fresh") and Path(spec["store"]).parent.exists():
                    shutil.rmtree(Path(spec["store"]).parent)
                print(f"running {spec['label']} ... ({load_note()})", flush=True)
                result = spawn_validate(spec, work)
                print(
                    f"  {spec['label']}: {result['wall']:.1f} s"
                    f" ({result['wall'] / raw.seconds:.3f}x raw), harness CPU"
                    f" {result['harness_cpu']:.1f} s, sandbox CPU"
                    f" {cpu_text(result['sandbox_cpu'])},"
                    f" machine busy {result['machine_busy']:.1f} s, peak RSS"
                    f" {mib(result['maxrss_bytes'])}",
                    flush=True,
                )
                if args.samples or args.timeline:
                    lines = timeline_lines(result["timeline"], args.workers)
                    print(textwrap.indent("\n".join(lines), "    "), flush=True)
                tries.append(result)
            result = min(tries, key=lambda r: r["wall"])
            result.update(
                label=spec["label"],
                backend=spec["backend"],
                workers=args.workers,
                baseline=spec.get("baseline", False),
                walls=[r["wall"] for r in tries],
            )
            runs.append(result)
        probes, costs = [], {}
        if args.profile:
            print("profiling ...", flush=True)
            costs = compile_costs(source_dir, args.kind, task_ids[0])
            for backend in backends:
                probes.append(
                    profile_backend(backend, args.kind, source_dir, task_ids, tasks_dir, arcgen_dir)
                )
    timed = [r for r in runs if not r.get("cprofile")]
    ok = print_results(raw, timed, len(task_ids), extra_raw, 0.55 if args.samples else 0.6)
    if args.profile:
        print_profile(raw, timed, probes, costs)
    for r in runs:
        if r.get("cprofile"):
            print(
                f"\n{r['label']}: {r['wall']:.1f} s; the harness's hottest functions by CPU time"
                " (thread_time, all threads; waiting is not counted):"
            )
            print(textwrap.indent(r["cprofile"].strip(), "  "))
    print(f"\n{load_note()} (at the end)")
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
