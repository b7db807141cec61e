"""Benchmark `arcjudge dimensions build` and `score` over the 400 ARC-AGI-1 training tasks.

Run by hand:  python bench/dimensions_full.py [--data DIR] [--backend process] [--workers 2]
                  [--keep DIR]

Verifiers are our own lookup tables (``common.tables``: one `module` file per task mapping
every known input of the task (demonstrations and ARC-GEN pairs) to its output; unknown
inputs raise), so every task has a valid verifier. Steps, each timed: validate the table
source over all pairs; build the instances (with a neighbours file of our own: the next
three task ids, and H-ARC style wrong answers of our own: each test output one cell off);
check the build's distribution (``check_build.py``: Editing types, no demonstration input
in any candidate); score three synthetic answerers built from the instance keys (oracle:
reference answers, always-valid, random) over two runs. All through the command line.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from check_build import check
from common import data
from common.cli import arcjudge_or_exit
from common.tables import write_answers, write_human_errors, write_neighbours, write_tables


def run(argv: list[str]) -> float:
    """Run ``arcjudge ARGV``, print the last lines of its output; return its wall time."""
    stdout, seconds = arcjudge_or_exit(argv)
    print("\n".join(stdout.splitlines()[-6:]))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    data.add_argument(parser)
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: temporary)")
    args = parser.parse_args()
    root_data = data.root(args.data)
    tasks, arcgen = data.training_dir(root_data), data.arcgen_dir(root_data)
    root = args.keep or Path(tempfile.mkdtemp())
    box = ["--backend", args.backend, "--workers", str(args.workers), "--no-progress"]
    n = write_tables(tasks, arcgen, root / "tables")
    write_neighbours(data.task_ids(tasks), root / "neighbours.jsonl")
    write_human_errors(tasks, root / "incorrect_submissions.csv")
    print(f"{n} lookup-table verifiers in {root / 'tables'}")
    t_val = run(["validate", "--tasks", str(tasks), "--arcgen", str(arcgen), "--source",
                 f"table=module:{root / 'tables'}", "--out", str(root / "val"), *box])  # fmt: skip
    print(f"validate: {t_val:.1f} s")
    t_build = run(["dimensions", "build", "--tasks", str(tasks), "--arcgen", str(arcgen),
                   "--manifest", str(root / "val"), "--neighbours", str(root / "neighbours.jsonl"),
                   "--human-errors", str(root / "incorrect_submissions.csv"),
                   "--out", str(root / "dims"), *box])  # fmt: skip
    print(f"dimensions build: {t_build:.1f} s")
    problems, counts = check(root / "dims")
    print("check_build:", ", ".join(f"{k} {v}" for k, v in counts.items()))
    print("\n".join(f"FAIL {p}" for p in problems) or "check_build: all checks passed")
    count = write_answers(root / "dims" / "instances.jsonl", root / "answers.jsonl")
    instances = root / "dims" / "instances.jsonl"
    t_score = run(["dimensions", "score", "--instances", str(instances), "--answers",
                   str(root / "answers.jsonl"), "--out", str(root / "scored"), *box])  # fmt: skip
    print(f"dimensions score: {t_score:.1f} s for {count} answers")


if __name__ == "__main__":
    main()
