"""Benchmark `arcjudge score` with many generator samples: one program, up to 10,000 samples.

Run by hand:  python bench/score_samples.py [--samples 10000] [--tasks 1] [--workers 2]
                  [--keep DIR]

The increased-sampling study scores a program on up to 10,000 fresh generator samples of
its task. Here the task (``5a5a0001``, made up: the rows in reverse order) and its
generator (``synthetic/samples/``, ARC-GEN layout, grids of 5..30 per side) are our own,
and the program is right on every input, so every result row is a right answer
(``--tasks N``: N such tasks under other ids, one program each, to see memory stay flat).
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


def write_inputs(root: Path, n_tasks: int = 1) -> tuple[Path, Path, Path, Path]:
    """Task files, a generator checkout and two programs files, in ``root``.

    Task ``5a5a0001`` (and with ``n_tasks`` > 1, ``5a5a0002`` ...: the same rule and
    generator under other ids) has 3 demonstrations and a test pair, seeded.
    ``programs.jsonl`` holds the program for each task, ``two.jsonl`` those and a second
    right program for the first task (another comment line, so another program key).

    Returns:
        The tasks directory, the generator directory and the two programs files.
    """
    rng = random.Random(5)
    tasks = root / "tasks"
    tasks.mkdir()
    generator = root / "generator"
    shutil.copytree(GENERATOR, generator)
    ids = [f"{int(TASK, 16) + k:08x}" for k in range(n_tasks)]
    lines = []
    for task_id in ids:
        pairs = []
        for _ in range(4):
            width = rng.randint(5, 30)
            g = [[rng.randrange(10) for _ in range(width)] for _ in range(rng.randint(5, 30))]
            pairs.append({"input": g, "output": g[::-1]})
        data = {"train": pairs[:3], "test": pairs[3:]}
        (tasks / f"{task_id}.json").write_text(json.dumps(data))
        code = (generator / "tasks" / f"task_{TASK}.py").read_text()
        (generator / "tasks" / f"task_{task_id}.py").write_text(code)
        line = {"id": f"p-{task_id}", "task_id": task_id, "code": PROGRAM + "# 0\n"}
        lines.append(json.dumps(line) + "\n")
    second = {"id": "second", "task_id": TASK, "code": PROGRAM + "# 1\n"}
    one, two = root / "programs.jsonl", root / "two.jsonl"
    one.write_text("".join(lines))
    two.write_text("".join(lines) + json.dumps(second) + "\n")
    return tasks, generator, one, two


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="process")
    parser.add_argument("--tasks", type=int, default=1, help="tasks (one program each)")
    parser.add_argument("--keep", type=Path, help="copy the output directory here")
    args = parser.parse_args()
    print(code_state())
    print(load_note())
    inputs = (args.samples + 4) * args.tasks
    with tempfile.TemporaryDirectory() as tmp:
        tasks, generator, one, two = write_inputs(Path(tmp), args.tasks)

        def argv(programs: Path, out: Path, samples: int) -> list[str]:
            return ["score", "--programs", str(programs), "--tasks", str(tasks),
                    "--generator", f"arc-gen:{generator}", "--samples", str(samples),
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
        # a second right program (first task) on the same store: what its rows add
        second = arcjudge_usage(argv(two, out, args.samples))
        size_two = store_bytes(out / "cache.sqlite")
        task_inputs = args.samples + 4
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)
    print(f"{args.samples} samples x {args.tasks} task(s), one program each, {inputs} "
          f"inputs; passed {passed} of {args.tasks}; generator of {TASK}: "
          f"{summary['generator'][TASK]}")  # fmt: skip
    for label, u in (("cold", cold), ("warm", warm), ("1 sample", fixed), ("2nd program", second)):
        print(f"score {label}: {u.seconds:.1f} s wall; harness process {u.cpu:.2f} s CPU, "
              f"peak RSS {u.rss / 1e6:.0f} MB")  # fmt: skip
    cpu = (cold.cpu - fixed.cpu) / (inputs - 5 * args.tasks) * 1e3
    right = (size_two - size_one) / task_inputs
    rss = max(cold.rss, warm.rss, second.rss) / 1e6
    print(f"harness CPU per input, cold: {cpu:.4f} ms ((cold - 1-sample run) / inputs); "
          f"warm {(warm.cpu - fixed.cpu) / (inputs - 5 * args.tasks) * 1e3:.4f} ms")  # fmt: skip
    print(f"store: {size_one} bytes after the first run ({inputs} results and "
          f"{args.samples * args.tasks} samples with both grids), {size_two} after the "
          f"second program ({task_inputs} more results): {right:.0f} bytes per right "
          "answer")  # fmt: skip
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
