"""The Classification candidate mixture on 400 tasks: realized shares beside the study's.

Run by hand:  python bench/mixture_shares.py [--data DIR] [--keep DIR] [--backend process]
                  [--workers 2] [--human-share 0.94] [--corrupted-share 0.75] [--seeds 2]
              python bench/mixture_shares.py --simulate BUILD_DIR   (no sandbox: the model only)

The reference study's Table 1 gives the realized candidates per type on ARC-AGI-1 (3,996
candidates): human error 562, corrupted verifier 432, valid 1146, color flip 353,
retrieval 417, instance mismatch 1086; and the trivial answerers of strict Classification:
always-invalid 19.1%, always-valid 0.3%. This bench builds the 400 ARC-AGI-1 training tasks
with inputs of our own that are shaped like the study's, ``--seeds`` times per
``--mixture-rule`` (seeds 77, 78, ...: 800 Classification instances by default, about the
study's 799), and prints each rule's realized shares beside the study's:

* verifiers: ``common.tables``'s lookup tables (every task has a valid verifier);
* retrieval: each task's next three task ids as neighbours;
* human errors (H-ARC style ``incorrect_submissions.csv``): for ``--human-share`` of the
  tasks (drawn with a fixed seed), one wrong answer to the first test input (one cell off,
  count 2): H-ARC has errors for about 94% of the training tasks, and the study's realized
  human share (14.1% against a weight of 23.5%) is what one distinct error per task gives;
* corrupted verifiers (``corruptions.jsonl`` in ``mutate``'s format): for
  ``--corrupted-share`` of the tasks, 1 to 3 pairs, each the lookup table with one output
  cell changed, as a killed mutant of the table would answer one ARC-GEN input.

Then, with no sandbox, a pure-Python model of several candidate rules over the build's
per-task pools (``build.json``: confirmed candidates per type, the valid pool), so rules
can be compared cheaply: ``without-replacement``, ``renormalized`` and ``fixed-valid`` are
the builder's rules; the ``alt:`` rows are alternatives considered and not built. With
``--keep DIR`` of an earlier run, the inputs, validation and builds found there are reused.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from common import data
from common.cli import arcjudge_or_exit
from common.tables import write_neighbours, write_tables

KINDS = (
    "valid",
    "human_error",
    "instance_mismatch",
    "corrupted_verifier",
    "retrieval",
    "color_flip",
)
INVALID = KINDS[1:]
SHORT = dict(
    zip(KINDS, ("valid", "human", "mismatch", "corrupted", "retrieval", "flip"), strict=True)
)
STUDY_COUNTS = {
    "valid": 1146,
    "human_error": 562,
    "instance_mismatch": 1086,
    "corrupted_verifier": 432,
    "retrieval": 417,
    "color_flip": 353,
}
STUDY_BASELINES = {"always_invalid": 0.191, "always_valid": 0.003}
WEIGHTS = {  # the arc-agi-1 preset (src/arcjudge/harness/dimensions/mixture.py)
    "valid": 0.250,
    "human_error": 0.235,
    "instance_mismatch": 0.215,
    "corrupted_verifier": 0.130,
    "retrieval": 0.103,
    "color_flip": 0.067,
}
SLOTS = 5
SIMULATED_DRAWS = 100  # model instances per task
LABEL = 44  # width of the shares table's first column


# ------------------------------------------------------------------ inputs


def write_human_errors(tasks: Path, out: Path, share: float) -> int:
    """H-ARC style rows for ``share`` of the tasks: the first test output one cell off."""
    ids = data.task_ids(tasks)
    chosen = set(random.Random("mixture-shares:human").sample(ids, round(share * len(ids))))
    rows = ["task_name,task_type,test_output_grid,count"]
    for task_id in ids:
        test = json.loads((tasks / f"{task_id}.json").read_text())["test"][0]
        if task_id not in chosen or "output" not in test:
            continue
        grid = [list(row) for row in test["output"]]
        grid[0][0] = (grid[0][0] + 1) % 10
        cells = "|".join("".join(map(str, row)) for row in grid)
        rows.append(f"{task_id}.json,training,|{cells}|,2")
    out.write_text("\n".join(rows) + "\n")
    return len(rows) - 1


def write_corruptions(tasks: Path, arcgen: Path, out: Path, share: float) -> int:
    """``corruptions.jsonl`` for ``share`` of the tasks: 1-3 one-cell-off table answers each."""
    ids = data.task_ids(tasks)
    rng = random.Random("mixture-shares:corrupted")
    chosen = set(rng.sample(ids, round(share * len(ids))))
    lines = []
    for task_id in ids:
        if task_id not in chosen:
            continue
        pairs = json.loads((arcgen / f"{task_id}.json").read_text())
        for index in rng.sample(range(len(pairs)), min(len(pairs), rng.randint(1, 3))):
            pair = pairs[index]
            wrong = [list(row) for row in pair["output"]]
            row, col = rng.randrange(len(wrong)), rng.randrange(len(wrong[0]))
            wrong[row][col] = (wrong[row][col] + 1) % 10
            cells = sum(len(r) for r in wrong)
            lines.append({
                "task_id": task_id, "kind": "corrupted_verifier",
                "mutant_id": f"{task_id}:table:cell:{index}", "split": "arc-gen",
                "index": index, "input": pair["input"], "output": wrong,
                "correct_output": pair["output"], "hamming": round(1 / cells, 6),
                "same_shape": True,
            })  # fmt: skip
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return len(lines)


# ------------------------------------------------------------------ shares


def realized(builds: list[Path]) -> tuple[dict[str, float], dict[str, float], int]:
    """Shares per type, the two trivial baselines (strict), and the instance count.

    Counted over the Classification instances of ``builds`` (``instances.jsonl`` files)
    together, as ``dimensions analyze`` counts the baselines: the share of instances whose
    five labels are all invalid (all valid).
    """
    kinds: Counter[str] = Counter()
    labels = []
    for instances in builds:
        for text in instances.read_text().splitlines():
            record = json.loads(text)
            if record["dimension"] == "classification":
                kinds.update(record["key"]["kinds"])
                labels.append(record["key"]["labels"])
    total = sum(kinds.values())
    shares = {k: kinds[k] / total for k in KINDS}
    baselines = {
        "always_invalid": sum(all(x == "invalid" for x in ls) for ls in labels) / len(labels),
        "always_valid": sum(all(x == "valid" for x in ls) for ls in labels) / len(labels),
    }
    return shares, baselines, len(labels)


def study_shares() -> dict[str, float]:
    """The study's realized shares (Table 1's counts)."""
    total = sum(STUDY_COUNTS.values())
    return {k: STUDY_COUNTS[k] / total for k in KINDS}


def distance(shares: Mapping[str, float], baselines: Mapping[str, float]) -> float:
    """Sum of absolute differences to the study, in percentage points (6 shares, 2 baselines)."""
    study = study_shares()
    gaps = [abs(shares[k] - study[k]) for k in KINDS]
    gaps += [abs(baselines[b] - STUDY_BASELINES[b]) for b in STUDY_BASELINES]
    return 100 * sum(gaps)


def header() -> str:
    """The shares table's header and the study's row."""
    head = " " * LABEL + "".join(f"{SHORT[k]:>11s}" for k in KINDS)
    head += f"{'all-inv':>9s}{'all-val':>9s}{'L1 pp':>8s}"
    study = study_shares()
    row = "study (Table 1, 3,996 candidates)".ljust(LABEL)
    row += "".join(f"{100 * study[k]:10.1f}%" for k in KINDS)
    row += f"{100 * STUDY_BASELINES['always_invalid']:8.1f}%"
    row += f"{100 * STUDY_BASELINES['always_valid']:8.1f}%"
    return head + "\n" + row


def row(name: str, shares: Mapping[str, float], baselines: Mapping[str, float]) -> str:
    """One line of the shares table."""
    line = name.ljust(LABEL) + "".join(f"{100 * shares[k]:10.1f}%" for k in KINDS)
    line += f"{100 * baselines['always_invalid']:8.1f}%{100 * baselines['always_valid']:8.1f}%"
    return line + f"{distance(shares, baselines):8.1f}"


# ------------------------------------------------------------------ the model

Rule = Callable[[Mapping[str, int], Mapping[str, int]], dict[str, float]]


def _spread_over_invalid(have: Mapping[str, int]) -> dict[str, float]:
    """Valid keeps its weight; the missing invalid weight goes to the invalid types in ``have``."""
    live = [k for k in INVALID if have.get(k, 0) > 0]
    invalid_total = sum(WEIGHTS[k] for k in INVALID)
    live_total = sum(WEIGHTS[k] for k in live)
    return {"valid": WEIGHTS["valid"], **{k: WEIGHTS[k] * invalid_total / live_total for k in live}}


def _all_with(have: Mapping[str, int]) -> dict[str, float]:
    return {k: WEIGHTS[k] for k in KINDS if have.get(k, 0) > 0}


RULES: dict[str, tuple[Rule, bool]] = {
    # name: (weights from (pool, unused), candidates drawn without replacement)
    "fixed-valid (before)": (lambda pool, left: _spread_over_invalid(pool), False),
    "without-replacement (default)": (
        lambda pool, left: {k: w for k, w in _spread_over_invalid(pool).items() if left[k] > 0},
        True,
    ),
    "renormalized": (lambda pool, left: _all_with(left), True),
    "alt: no replacement, valid fixed": (lambda pool, left: _spread_over_invalid(left), True),
    "alt: unavailable->all, reuse": (lambda pool, left: _all_with(pool), False),
}
BUILT_RULES = ("without-replacement", "renormalized", "fixed-valid")
"""``--mixture-rule`` values, as the builder names them."""


def _model_instance(
    pool: Mapping[str, int], rule: Rule, fresh_only: bool, rng: random.Random
) -> list[str]:
    left = {k: pool.get(k, 0) for k in KINDS}
    drawn = []
    for _ in range(SLOTS):
        weights = rule(pool, left) if fresh_only else rule(pool, pool)
        if not weights:  # every pool used up: draw again from what the task has
            weights = _all_with(pool)
        kinds = [k for k in KINDS if weights.get(k, 0) > 0]
        point = rng.random() * sum(weights[k] for k in kinds)
        kind = kinds[-1]
        for k in kinds:
            point -= weights[k]
            if point < 0:
                kind = k
                break
        left[kind] = max(left[kind] - 1, 0)
        drawn.append(kind)
    return drawn


def simulate(build: Mapping[str, Any]) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    """Each rule of :data:`RULES` over the build's per-task pools (shares, baselines)."""
    pools = []
    for info in build["tasks"].values():
        pool = {k: int(info["confirmed"].get(k, 0)) for k in INVALID}
        pool["valid"] = max(int(info["valid_pool"]) - 1, 1)  # valid[0] is Inversion's
        pools.append(pool)
    results = []
    for name, (rule, fresh_only) in RULES.items():
        rng = random.Random(f"mixture-shares:model:{name}")
        kinds: Counter[str] = Counter()
        all_invalid = all_valid = n = 0
        for pool in pools:
            if not any(pool[k] for k in INVALID):
                continue
            for _ in range(SIMULATED_DRAWS):
                drawn = _model_instance(pool, rule, fresh_only, rng)
                kinds.update(drawn)
                all_invalid += "valid" not in drawn
                all_valid += all(k == "valid" for k in drawn)
                n += 1
        total = sum(kinds.values())
        shares = {k: kinds[k] / total for k in KINDS}
        results.append(
            (name, shares, {"always_invalid": all_invalid / n, "always_valid": all_valid / n})
        )
    return results


def pool_summary(build: Mapping[str, Any]) -> str:
    """Tasks with a confirmed candidate of each invalid type, and mean pool sizes."""
    tasks = list(build["tasks"].values())
    parts = []
    for kind in INVALID:
        sizes = [t["confirmed"].get(kind, 0) for t in tasks]
        have = [s for s in sizes if s]
        mean = sum(have) / len(have) if have else 0.0
        parts.append(f"{kind} {len(have)} ({mean:.1f} each)")
    return f"tasks built {len(tasks)}; with candidates of the type: " + ", ".join(parts)


def print_model(build_dir: Path) -> None:
    """The model's table over ``build_dir/build.json``'s pools."""
    build = json.loads((build_dir / "build.json").read_text())
    print(pool_summary(build))
    print(f"model ({SIMULATED_DRAWS} instances per task, no sandbox):")
    print(header())
    for name, shares, baselines in simulate(build):
        print(row(name, shares, baselines))


# ------------------------------------------------------------------ main


def run(argv: list[str]) -> float:
    """Run ``arcjudge ARGV``; return its wall time."""
    _, seconds = arcjudge_or_exit(argv)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--human-share", type=float, default=0.94)
    parser.add_argument("--corrupted-share", type=float, default=0.75)
    parser.add_argument(
        "--seeds", type=int, default=2, help="builds per rule, seeds 77.. (2: 800 instances)"
    )
    parser.add_argument("--simulate", type=Path, help="only the model, over BUILD_DIR's pools")
    data.add_argument(parser)
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: temporary)")
    args = parser.parse_args()
    if args.simulate is not None:
        print_model(args.simulate)
        return
    root_data = data.root(args.data)
    tasks, arcgen = data.training_dir(root_data), data.arcgen_dir(root_data)
    root = args.keep or Path(tempfile.mkdtemp())
    box = ["--backend", args.backend, "--workers", str(args.workers), "--no-progress"]
    if not (root / "val" / "manifest.json").is_file():  # --keep DIR of an earlier run: made
        write_tables(tasks, arcgen, root / "tables")
        write_neighbours(data.task_ids(tasks), root / "neighbours.jsonl")
        humans = write_human_errors(tasks, root / "incorrect_submissions.csv", args.human_share)
        pairs = write_corruptions(tasks, arcgen, root / "corruptions.jsonl", args.corrupted_share)
        print(f"inputs in {root}: human errors for {humans} tasks, {pairs} corrupted pairs")
        tables = f"table=module:{root / 'tables'}"
        seconds = run(["validate", "--tasks", str(tasks), "--arcgen", str(arcgen), "--source",
                       tables, "--out", str(root / "val"), *box])  # fmt: skip
        print(f"validate: {seconds:.1f} s")
    rows = []
    for rule in BUILT_RULES:
        builds = []
        for seed in range(77, 77 + args.seeds):
            out = root / f"dims-{rule}-{seed}"
            builds.append(out / "instances.jsonl")
            if (out / "instances.jsonl").is_file():
                continue
            seconds = run(["dimensions", "build", "--tasks", str(tasks), "--arcgen", str(arcgen),
                           "--manifest", str(root / "val"),
                           "--neighbours", str(root / "neighbours.jsonl"),
                           "--human-errors", str(root / "incorrect_submissions.csv"),
                           "--corruptions", str(root / "corruptions.jsonl"),
                           "--mixture-rule", rule, "--seed", str(seed), "--out", str(out),
                           *box])  # fmt: skip
            print(f"dimensions build --mixture-rule {rule} --seed {seed}: {seconds:.1f} s")
        shares, baselines, n = realized(builds)
        rows.append(row(f"build: {rule} ({n} instances)", shares, baselines))
    print(header())
    print("\n".join(rows))
    print_model(root / f"dims-{BUILT_RULES[0]}-77")


if __name__ == "__main__":
    main()
