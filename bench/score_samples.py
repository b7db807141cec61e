"""Benchmark `arcjudge score` with many generator samples: one program, up to 10,000 samples.

Run by hand:  python bench/score_samples.py [--samples 10000] [--workers 2] [--keep DIR]

The increased-sampling study scores a program on up to 10,000 fresh generator samples of
its task. Here the task (``5a5a0001``, made up: the rows in reverse order) and its
generator (``synthetic/samples/``, ARC-GEN layout, grids of 5..30 per side) are our own,
and the one program is right on every input, so every stored row is a right answer.
``score`` runs through the command line: cold, then warm from its store; with one sample
(the fixed cost: start-up, imports, pool); and with a second right program on the same
store (what its rows add). The harness process reports its own CPU time and peak RSS at
exit (``common/usage.py``). Targets: peak RSS < 500 MB, store <= 100 bytes per right
answer, harness CPU <= 0.03 ms per input (cold, less the fixed cost).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path

from common.measure import code_state, load_note
from common.usage import arcjudge_usage, store_bytes

TASK = "5a5a0001"
GENERATOR = Path(__file__).resolve().parent / "synthetic" / "samples"
PROGRAM = "def transform(g):\n    return g[::-1]\n"
TARGETS = {"rss_mb": 500.0, "store_bytes_per_input": 100.0, "cpu_ms_per_input": 0.03}


def write_inputs(root: Path) -> tuple[Path, Path, Path]:
    """The task file (3 demonstrations and a test pair, seeded) and two programs files.

    ``programs.jsonl`` holds the program, ``two.jsonl`` it and a second right program
    (another comment line, so another program key).
    """
    rng = random.Random(5)
    pairs = []
    for _ in range(4):
        width = rng.randint(5, 30)
        g = [[rng.randrange(10) for _ in range(width)] for _ in range(rng.randint(5, 30))]
        pairs.append({"input": g, "output": g[::-1]})
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / f"{TASK}.json").write_text(json.dumps({"train": pairs[:3], "test": pairs[3:]}))
    lines = [json.dumps({"id": f"p{k}", "task_id": TASK, "code": PROGRAM + f"# {k}\n"}) + "\n"
             for k in range(2)]  # fmt: skip
    one, two = root / "programs.jsonl", root / "two.jsonl"
    one.write_text(lines[0])
    two.write_text(lines[0] + lines[1])
    return tasks, one, two


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--keep", type=Path, help="copy the output directory here")
    args = parser.parse_args()
    print(code_state())
    print(load_note())
    inputs = args.samples + 4
    with tempfile.TemporaryDirectory() as tmp:
        tasks, one, two = write_inputs(Path(tmp))

        def argv(programs: Path, out: Path, samples: int) -> list[str]:
            return ["score", "--programs", str(programs), "--tasks", str(tasks),
                    "--generator", f"arc-gen:{GENERATOR}", "--samples", str(samples),
                    "--out", str(out), "--backend", args.backend,
                    "--workers", str(args.workers), "--no-progress"]  # fmt: skip

        out = Path(tmp) / "out"
        cold = arcjudge_usage(argv(one, out, args.samples))
        summary = json.loads((out / "summary.json").read_text())
        passed = summary["groups"]["(all)"]["passed"]
        size_one = store_bytes(out / "cache.sqlite")
        warm = arcjudge_usage(argv(one, out, args.samples))
        # the fixed cost (start-up, imports, pool): the same command with one sample
        fixed = arcjudge_usage(argv(one, Path(tmp) / "fixed", 1))
        # a second right program on the same store: what its rows add, per input
        second = arcjudge_usage(argv(two, out, args.samples))
        size_two = store_bytes(out / "cache.sqlite")
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)
    print(f"{args.samples} samples, 1 program, {inputs} inputs; passed {passed} of 1; "
          f"generator {summary['generator'][TASK]}")  # fmt: skip
    for label, u in (("cold", cold), ("warm", warm), ("1 sample", fixed), ("2nd program", second)):
        print(f"score {label}: {u.seconds:.1f} s wall; harness process {u.cpu:.2f} s CPU, "
              f"peak RSS {u.rss / 1e6:.0f} MB")  # fmt: skip
    cpu = (cold.cpu - fixed.cpu) / (inputs - 5) * 1e3
    right = (size_two - size_one) / inputs
    rss = max(cold.rss, warm.rss, second.rss) / 1e6
    print(f"harness CPU per input, cold: {cpu:.4f} ms ((cold - 1-sample run) / inputs); "
          f"warm {(warm.cpu - fixed.cpu) / (inputs - 5) * 1e3:.4f} ms")  # fmt: skip
    print(f"store: {size_one} bytes after the first program ({inputs} results and "
          f"{args.samples} samples with both grids), {size_two} after the second: "
          f"{right:.0f} bytes per right answer")  # fmt: skip
    print("targets:")
    checks = (
        ("peak RSS", rss, TARGETS["rss_mb"], "MB", rss < TARGETS["rss_mb"]),
        ("store per right answer", right, TARGETS["store_bytes_per_input"], "bytes",
         right <= TARGETS["store_bytes_per_input"]),
        ("harness CPU per input (cold)", cpu, TARGETS["cpu_ms_per_input"], "ms",
         cpu <= TARGETS["cpu_ms_per_input"]),
    )  # fmt: skip
    for name, value, target, unit, ok in checks:
        print(f"  {name}: {value:.4g} {unit} (target {target:g}): {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
