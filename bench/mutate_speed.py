"""``arcjudge mutate`` speed: one program per mutant (``before``) against batches (``after``).

Usage::

    python bench/mutate_speed.py [--tasks 41] [--modes before,after] [--target-pairs K]
                                 [--inputs 20] [--workers 2] [--scale 1.0] [--seed 0]
                                 [--dsl-padding 160] [--batch N] [--keep DIR]
                                 [--before-pinned] [--before-src DIR]

    python bench/mutate_speed.py --tasks 41 --modes before,after
    python bench/mutate_speed.py --tasks 400 --modes after --target-pairs 6

The source is GENERATED, RE-ARC-shaped (``common.verifier_source``, as
``validate_full.py`` makes it: our own ``bench/synthetic/dsl.py`` and a ``verifiers.py``
of seeded straight-line chains, one ``verify_<task id>`` per task, ``--scale`` sets the
cost of its smoothing steps; ``--dsl-padding`` generated filler functions, never called,
bring ``dsl.py`` to RE-ARC's ~3,000 lines, which a fresh process compiles on every
import: the sandbox writes no bytecode). The tasks are the first ``--tasks`` ARC-AGI-1 training
tasks' inputs (train inputs as demonstrations, ARC-GEN inputs as the ``--inputs`` test
pairs) with outputs computed by that synthetic verifier (in this process: our own
code), so every verifier is right on its task and its mutants' wrong grids confirm.

Each mode runs ``arcjudge mutate`` (``--backend process --workers N``, every operator, a
fresh output directory and result store) as a subprocess: ``before`` as before issue 18,
one program per mutant (``--one-program-per-mutant``) with the supervisors placed by the
kernel (``ARCJUDGE_PIN_CPUS=0``; ``--before-pinned``: pinned as ``after``'s are) or, with
``--before-src DIR``, ``arcjudge mutate`` of that ``src/`` (e.g. the commit before issue 18,
a44188d, whose only way was one program per mutant), ``after``
as ``mutate`` runs by default. It prints the mutants, wall
time, mutants per second and the CPU time of the run (the command and its sandbox
processes), and the CPU time the mutants' own work would take if each mutant cost what
its original does in-process (a floor no sandbox beats much: mutants that fail early
cost less). With two modes on the same settings it also says whether their
``mutants.jsonl``, ``corruptions.jsonl`` and ``summary.json`` are identical (they may
differ only where a mutant times out: the batched path stops a mutant at its first
timeout, with a deadline from the original's time).

Targets: ``after`` >= 10x ``before`` in mutants per second; a 400-task source with
``--target-pairs 6`` in <= 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from common import data
from common.cli import arcjudge_or_exit
from common.measure import code_state, load_note
from common.verifier_source import plan_source, write_source

OUTPUTS = ("mutants.jsonl", "corruptions.jsonl", "summary.json")


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _valid(grid: object) -> bool:
    if not isinstance(grid, tuple) or not 1 <= len(grid) <= 30:
        return False
    width = len(grid[0]) if isinstance(grid[0], tuple) else 0
    return 1 <= width <= 30 and all(
        isinstance(r, tuple) and len(r) == width and all(type(c) is int and 0 <= c <= 9 for c in r)
        for r in grid
    )


PAD_TEMPLATE = """

def pad_{n:03d}(grid, k={k}):
    \"\"\"Generated filler (unused by the verifiers): RE-ARC's dsl.py is ~3,000 lines.\"\"\"
    rows = tuple(tuple((c * {a} + k) % 10 for c in r) for r in grid)
    if len(rows) > k:
        rows = rows[k:] + rows[:k]
    cols = tuple(zip(*rows))
    seen = set()
    for r in cols:
        for c in r:
            if c % {b} == 0:
                seen.add(c)
    out = []
    for r in cols:
        out.append(tuple(c if c in seen else (c + {b}) % 10 for c in r))
    if not out:
        return grid
    return tuple(out)
"""


def pad_dsl(path: Path, functions: int, seed: int) -> None:
    """Append ``functions`` generated filler functions to the DSL (its import cost)."""
    import random

    rng = random.Random(seed)
    parts = [
        PAD_TEMPLATE.format(n=n, k=rng.randint(1, 3), a=rng.randint(2, 7), b=rng.randint(2, 5))
        for n in range(functions)
    ]
    with open(path, "a") as fh:
        fh.write("".join(parts))


def build(
    work: Path, root: Path, n_tasks: int, inputs: int, seed: int, scale: float, pad: int
) -> int:
    """Write ``work/re-arc`` (the source) and ``work/tasks``; return the tasks written."""
    training = data.training_dir(root)
    arcgen = data.arcgen_dir(root)
    ids = data.task_ids(training)[:n_tasks]
    plans = plan_source(ids, seed, False, 15 * len(ids))
    write_source(work / "re-arc", "re-arc", plans, scale)
    pad_dsl(work / "re-arc" / "dsl.py", pad, seed)
    sys.path.insert(0, str(work / "re-arc"))
    verifiers = _load(work / "re-arc" / "verifiers.py", "bench_mutate_verifiers")
    tasks = work / "tasks"
    tasks.mkdir()
    written = 0
    for task_id in ids:
        fn = getattr(verifiers, f"verify_{task_id}")
        task = json.loads((training / f"{task_id}.json").read_bytes())
        pool = [p["input"] for p in task["train"]]
        path = arcgen / f"{task_id}.json"
        extra = [p["input"] for p in json.loads(path.read_bytes())] if path.exists() else []
        extra += [p["input"] for p in task["test"]]

        def pairs(
            grids: list[list[list[int]]], limit: int, fn: object = fn
        ) -> list[dict[str, object]]:
            out = []
            for g in grids:
                if len(out) >= limit:
                    break
                try:
                    answer = fn(tuple(tuple(r) for r in g))  # type: ignore[operator]
                except Exception:
                    continue
                if _valid(answer):
                    out.append({"input": g, "output": [list(r) for r in answer]})
            return out

        train = pairs(pool, 4)
        test = pairs([g for g in extra if g not in pool], inputs)
        if train and test:
            (tasks / f"{task_id}.json").write_text(json.dumps({"train": train, "test": test}))
            written += 1
            start = time.process_time()
            for pair in test:
                fn(tuple(tuple(r) for r in pair["input"]))  # type: ignore[operator]
            ORIGINAL_CPU[task_id] = time.process_time() - start
    return written


ORIGINAL_CPU: dict[str, float] = {}
"""Per task: CPU seconds of the original verifier over its test inputs, in-process."""


def work_floor(out: Path) -> float:
    """CPU seconds the mutants' own work would take if each cost what its original does."""
    per_task: dict[str, int] = {}
    for line in open(out / "mutants.jsonl"):
        task_id = json.loads(line)["task_id"]
        per_task[task_id] = per_task.get(task_id, 0) + 1
    return sum(n * ORIGINAL_CPU.get(t, 0.0) for t, n in per_task.items())


def run_mode(mode: str, work: Path, args: argparse.Namespace) -> dict[str, float]:
    """Run ``arcjudge mutate`` once; return its numbers."""
    out = work / f"out-{mode}"
    argv = [
        "mutate", "--tasks", str(work / "tasks"), "--source",
        f"re-arc=re-arc:{work / 're-arc'}", "--inputs", str(args.inputs), "--out", str(out),
        "--backend", "process", "--workers", str(args.workers), "--no-progress",
        "--seed", str(args.seed),
    ]  # fmt: skip
    if not (mode == "before" and args.before_src):
        argv += ["--operators", "all"]  # every operator (an older mutate: its default)
    env = {}
    if mode == "before" and args.before_src:  # the code of before issue 18 itself
        env["PYTHONPATH"] = str(args.before_src)
    elif mode == "before":  # as before issue 18: a program per mutant, placed by the kernel
        argv.append("--one-program-per-mutant")
        if not args.before_pinned:
            env["ARCJUDGE_PIN_CPUS"] = "0"
    if args.target_pairs is not None:
        argv += ["--target-pairs", str(args.target_pairs)]
    if args.batch is not None:
        argv += ["--batch", str(args.batch)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    stdout, wall = arcjudge_or_exit(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    mutants = sum(1 for _ in open(out / "mutants.jsonl"))
    summary = json.loads((out / "summary.json").read_text())
    print(f"  arcjudge {' '.join(argv)}")
    print(f"  {stdout.strip().splitlines()[-2]}")
    return {
        "mutants": mutants,
        "wall": wall,
        "cpu": cpu,
        "per_second": mutants / wall if wall else 0.0,
        "pairs": summary["corrupted_pairs"],
        "tasks_with_pairs": summary["tasks_with_corrupted_pairs"],
        "floor": work_floor(out),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data.add_argument(parser)
    parser.add_argument("--tasks", type=int, default=41)
    parser.add_argument("--modes", default="before,after")
    parser.add_argument("--target-pairs", type=int)
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scale", type=float, default=1.0, help="smoothing cost scale")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dsl-padding",
        type=int,
        default=160,
        help="generated filler functions appended to dsl.py (RE-ARC's is ~3,000 lines)",
    )
    parser.add_argument("--batch", type=int, help="mutants per batch (default: mutate's)")
    parser.add_argument(
        "--before-src",
        type=Path,
        help="run before with this src/ (e.g. `git archive a44188d src`: the code the issue "
        "measured) instead of this checkout's --one-program-per-mutant",
    )
    parser.add_argument(
        "--before-pinned",
        action="store_true",
        help="run before with the supervisors pinned to CPUs (default: placed by the kernel, "
        "as before issue 18)",
    )
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not set(modes) <= {"before", "after"}:
        parser.error("--modes: before, after")
    root = data.root(args.data)
    work = args.keep or Path(tempfile.mkdtemp(prefix="arcjudge-mutate-speed-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        n = build(work, root, args.tasks, args.inputs, args.seed, args.scale, args.dsl_padding)
        dsl_lines = (work / "re-arc" / "dsl.py").read_text().count("\n")
        print(f"code: {code_state()}; {load_note()}")
        if args.before_src:
            print(f"before: arcjudge mutate of {args.before_src}")
        print(
            f"{n} tasks (of {args.tasks}), <= {args.inputs} inputs each, scale {args.scale}, "
            f"dsl.py {dsl_lines} lines"
        )
        results = {}
        for mode in modes:
            print(f"{mode}:")
            results[mode] = r = run_mode(mode, work, args)
            print(
                f"  {r['mutants']:.0f} mutants in {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU: "
                f"{r['per_second']:.1f} mutants/s; {r['pairs']:.0f} pairs, "
                f"{r['tasks_with_pairs']:.0f} tasks with pairs; the mutants' own work at "
                f"their originals' cost: {r['floor']:.1f} s CPU"
            )
        if len(results) == 2:
            speedup = results["after"]["per_second"] / max(1e-9, results["before"]["per_second"])
            print(f"after / before: {speedup:.1f}x mutants per second")
            for name in OUTPUTS:
                same = (work / "out-before" / name).read_bytes() == (
                    work / "out-after" / name
                ).read_bytes()
                print(f"  {name}: {'identical' if same else 'DIFFERENT'}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
