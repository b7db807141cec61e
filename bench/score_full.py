"""Benchmark `arcjudge score`: 2,000 programs of our own x (demonstrations + ARC-GEN pairs).

Run by hand:  python bench/score_full.py [--programs 2000] [--backend process] [--workers 2]
                  [--executor local|ray] [--ray-address ADDR] [--keep DIR] [--skip-raw]

Programs are generated (our own code): for each of 400 training tasks, five Definition-style
programs that apply simple grid transforms (identity, flips, transpose, a colour map, and a
slow-ish neighbourhood count), so most fail by rule, some pass by luck, and the per-call cost
varies. Compared with raw in-process execution on one core (exec once, call on fresh copies,
compare), the same work.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BODIES = [
    "def transform(g):\n    return g\n",
    "def transform(g):\n    return g[::-1]\n",
    "def transform(g):\n    return [r[::-1] for r in g]\n",
    "def transform(g):\n    return [list(c) for c in zip(*g)]\n",
    "def transform(g):\n    m = {0: 0, 1: 2, 2: 1}\n"
    "    return [[m.get(c, c) for c in r] for r in g]\n",
    "def transform(g):\n    h, w = len(g), len(g[0])\n    out = [[0] * w for _ in range(h)]\n"
    "    for i in range(h):\n        for j in range(w):\n            n = 0\n"
    "            for di in (-1, 0, 1):\n                for dj in (-1, 0, 1):\n"
    "                    if 0 <= i + di < h and 0 <= j + dj < w and g[i + di][j + dj]:\n"
    "                        n += 1\n            out[i][j] = g[i][j] if n > 4 else 0\n"
    "    return out\n",
]


def write_programs(path: Path, n: int, task_ids: list[str]) -> None:
    with path.open("w") as fh:
        for k in range(n):
            body = BODIES[k % len(BODIES)] + f"# program {k}\n"
            line = {"id": f"p{k}", "task_id": task_ids[k % len(task_ids)],
                    "model": f"m{k % 4}", "code": body}  # fmt: skip
            fh.write(json.dumps(line) + "\n")


def raw(programs: Path, tasks: Path, arcgen: Path) -> tuple[float, int]:
    from arcjudge.tasks import load_arcgen_pairs, load_task

    records = [json.loads(line) for line in programs.read_text().splitlines()]
    cache = {}
    for task_id in sorted({r["task_id"] for r in records}):  # data loading is not timed
        task = load_task(tasks / f"{task_id}.json")
        cache[task_id] = [*task.train, *task.test, *load_arcgen_pairs(arcgen / f"{task_id}.json")]
    calls = 0
    start = time.perf_counter()
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
    return time.perf_counter() - start, calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--executor", default="local", choices=("local", "ray"))
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--keep", type=Path, help="copy results.jsonl here (to compare runs)")
    parser.add_argument("--skip-raw", action="store_true")
    args = parser.parse_args()
    tasks = args.data / "arc-agi-1" / "training"
    arcgen = args.data / "arc-gen-100k"
    task_ids = sorted(p.stem for p in tasks.glob("*.json"))
    with tempfile.TemporaryDirectory() as tmp:
        programs = Path(tmp) / "programs.jsonl"
        write_programs(programs, args.programs, task_ids)
        raw_seconds, calls = (float("nan"), 0) if args.skip_raw else raw(programs, tasks, arcgen)
        print(f"raw in-process (1 core): {args.programs} programs, {calls} calls, "
              f"{raw_seconds:.1f} s")  # fmt: skip
        for label, store in (("cold", None), ("warm", Path(tmp) / "out" / "cache.sqlite")):
            out = Path(tmp) / "out"
            argv = [sys.executable, "-m", "arcjudge.cli", "score", "--programs", str(programs),
                    "--tasks", str(tasks), "--arcgen", str(arcgen), "--out", str(out),
                    "--backend", args.backend, "--workers", str(args.workers),
                    "--no-progress", "--executor", args.executor]  # fmt: skip
            if args.ray_address:
                argv += ["--ray-address", args.ray_address]
            start = time.perf_counter()
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            seconds = time.perf_counter() - start
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                print(proc.stderr[-2000:])
                raise SystemExit(1)
            rate = args.programs / seconds * 60
            print(f"score {label} ({args.executor}, {args.backend}, {args.workers} workers): "
                  f"{seconds:.1f} s = "
                  f"{rate:.0f} programs/min, {seconds / raw_seconds:.3f}x raw; peak RSS of "
                  f"children so far {usage.ru_maxrss / 1024:.0f} MiB")  # fmt: skip
            print("\n".join(proc.stdout.splitlines()[:3]))
            print("\n".join(x for x in proc.stdout.splitlines() if x.startswith("node ")))
            if args.keep and label == "cold":
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / "results.jsonl").write_bytes((out / "results.jsonl").read_bytes())
            del store
        print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
