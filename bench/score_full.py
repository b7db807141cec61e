"""Benchmark `arcjudge score`: 2,000 programs of our own x (demonstrations + ARC-GEN pairs).

Run by hand:  python bench/score_full.py [--data DIR] [--programs 2000] [--backend process]
                  [--workers 2] [--executor local|ray] [--ray-address ADDR] [--keep DIR]
                  [--skip-raw]

Programs are generated (``common.programs``, bodies in ``bench/synthetic/score/``): for each
of 400 training tasks, five Definition-style programs that apply simple grid transforms
(identity, flips, transpose, a colour map, and a slow-ish neighbourhood count), so most fail
by rule, some pass by luck, and the per-call cost varies. Compared with raw in-process
execution on one core (exec once, call on fresh copies, compare), the same work.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from common import data
from common.measure import code_state, load_average, now
from common.programs import read_score_programs, write_score_programs
from common.usage import arcjudge_usage, store_bytes

TARGETS = {"ratio": 1.5, "cpu_ms_per_input": 0.03}


def raw(programs: Path, tasks: Path, arcgen: Path) -> tuple[float, int]:
    """Exec each program once in this process and call it on every pair of its task."""
    from arcjudge.tasks import load_arcgen_pairs, load_task

    records = read_score_programs(programs)
    cache = {}
    for task_id in sorted({r["task_id"] for r in records}):  # data loading is not timed
        task = load_task(tasks / f"{task_id}.json")
        cache[task_id] = [*task.train, *task.test, *load_arcgen_pairs(arcgen / f"{task_id}.json")]
    calls = 0
    start = now()
    for rec in records:
        task_id = rec["task_id"]
        namespace: dict = {}
        exec(compile(rec["code"], "p", "exec"), namespace)
        fn = namespace["transform"]
        for pair in cache[task_id]:
            calls += 1
            try:
                out = fn([list(r) for r in pair.input])
                _ = tuple(map(tuple, out)) == pair.output
            except Exception:
                pass
    return now() - start, calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    data.add_argument(parser)
    parser.add_argument("--executor", default="local", choices=("local", "ray"))
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--keep", type=Path, help="copy results.jsonl here (to compare runs)")
    parser.add_argument("--skip-raw", action="store_true")
    args = parser.parse_args()
    print(code_state())
    root = data.root(args.data)
    tasks, arcgen = data.training_dir(root), data.arcgen_dir(root)
    with tempfile.TemporaryDirectory() as tmp:
        programs = Path(tmp) / "programs.jsonl"
        write_score_programs(programs, args.programs, data.task_ids(tasks))
        raw_seconds, calls = (float("nan"), 0) if args.skip_raw else raw(programs, tasks, arcgen)
        print(f"raw in-process (1 core): {args.programs} programs, {calls} calls, "
              f"{raw_seconds:.1f} s")  # fmt: skip
        out = Path(tmp) / "out"
        cold_ratio = cold_cpu = float("nan")
        for label in ("cold", "warm"):  # warm: the same out directory, its store filled
            argv = ["score", "--programs", str(programs), "--tasks", str(tasks),
                    "--arcgen", str(arcgen), "--out", str(out), "--backend", args.backend,
                    "--workers", str(args.workers), "--no-progress",
                    "--executor", args.executor]  # fmt: skip
            if args.ray_address:
                argv += ["--ray-address", args.ray_address]
            usage = arcjudge_usage(argv)
            stdout, seconds = usage.stdout, usage.seconds
            rate = args.programs / seconds * 60
            per_input = usage.cpu / calls * 1e3 if calls else float("nan")
            print(f"score {label} ({args.executor}, {args.backend}, {args.workers} workers): "
                  f"{seconds:.1f} s = "
                  f"{rate:.0f} programs/min, {seconds / raw_seconds:.3f}x raw; harness "
                  f"process {usage.cpu:.1f} s CPU ({per_input:.4f} ms per input), peak RSS "
                  f"{usage.rss / (1 << 20):.0f} MiB; sandbox processes {usage.children_cpu:.1f} s "
                  f"CPU")  # fmt: skip
            print("\n".join(stdout.splitlines()[:3]))
            print("\n".join(x for x in stdout.splitlines() if x.startswith("node ")))
            if label == "cold":
                cold_ratio, cold_cpu = seconds / raw_seconds, per_input
                size = store_bytes(out / "cache.sqlite")
                print(f"store: {size} bytes, {size / calls:.0f} per input" if calls else "")
            if args.keep and label == "cold":
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / "results.jsonl").write_bytes((out / "results.jsonl").read_bytes())
        print("targets:")
        for name, value, target in (
            ("cold wall / raw", cold_ratio, TARGETS["ratio"]),
            ("harness CPU per input (cold, ms)", cold_cpu, TARGETS["cpu_ms_per_input"]),
        ):
            print(f"  {name}: {value:.4g} (target <= {target:g}): "
                  f"{'met' if value <= target else 'MISSED'}")  # fmt: skip
        print(f"load average {load_average():.2f}")


if __name__ == "__main__":
    main()
