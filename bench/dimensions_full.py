"""Benchmark `arcjudge dimensions build` and `score` over the 400 ARC-AGI-1 training tasks.

Run by hand:  python bench/dimensions_full.py [--backend process] [--workers 2] [--keep DIR]

Verifiers are our own lookup tables (one `module` file per task mapping every known input
of the task (demonstrations and ARC-GEN pairs) to its output; unknown inputs raise), so
every task has a valid verifier. Steps, each timed: validate the table source over all
pairs; build the instances (with a neighbours file of our own: the next three task ids);
score three synthetic answerers built from the instance keys (oracle: reference answers,
always-valid, random) over two runs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TABLE = (
    "import json\n"
    "_T = json.loads({data!r})\n"
    "def transform(g):\n"
    "    return _T[json.dumps(g, separators=(',', ':'))]\n"
)


def write_tables(tasks: Path, arcgen: Path, out: Path) -> int:
    out.mkdir(parents=True)
    count = 0
    for path in sorted(tasks.glob("*.json")):
        task = json.loads(path.read_text())
        pairs = [*task["train"], *task["test"]]
        extra = arcgen / path.name
        if extra.exists():
            pairs += json.loads(extra.read_text())
        table = {json.dumps(p["input"], separators=(",", ":")): p["output"] for p in pairs}
        (out / f"{path.stem}.py").write_text(TABLE.format(data=json.dumps(table)))
        count += 1
    return count


def run(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "arcjudge.cli", *argv], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        raise SystemExit(1)
    print("\n".join(proc.stdout.splitlines()[-6:]))
    return time.perf_counter() - start


def answers(instances: Path, out: Path) -> int:
    rng = random.Random(1)
    lines = []
    for text in instances.read_text().splitlines():
        record = json.loads(text)
        task, dim, key = record["task_id"], record["dimension"], record["key"]
        if dim == "definition":
            continue
        oracle: object = None
        if dim == "classification":
            oracle = key["labels"]
            lines.append({"task_id": task, "dimension": dim, "model": "always-valid", "run": 1,
                          "answer": ["valid"] * 5})  # fmt: skip
        elif dim == "generation" and key["reference"]:
            oracle = {"input": key["reference"]["input"], "output": key["reference"]["output"]}
        elif dim == "editing" and key["reference_edit"]:
            oracle = key["reference_edit"]
        elif dim == "inversion":
            oracle = {"input": key["input"]}
        for run_id in (1, 2):
            if oracle is not None:
                lines.append({"task_id": task, "dimension": dim, "model": "oracle",
                              "run": run_id, "answer": oracle})  # fmt: skip
            grid = [[rng.randrange(10) for _ in range(3)] for _ in range(3)]
            rand: object = (
                [rng.choice(["valid", "invalid"]) for _ in range(5)]
                if dim == "classification"
                else {"input": grid, "output": grid}
            )
            lines.append({"task_id": task, "dimension": dim, "model": "random", "run": run_id,
                          "answer": rand})  # fmt: skip
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="process")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: temporary)")
    args = parser.parse_args()
    tasks = args.data / "arc-agi-1" / "training"
    arcgen = args.data / "arc-gen-100k"
    root = args.keep or Path(tempfile.mkdtemp())
    box = ["--backend", args.backend, "--workers", str(args.workers), "--no-progress"]
    n = write_tables(tasks, arcgen, root / "tables")
    ids = sorted(p.stem for p in tasks.glob("*.json"))
    with (root / "neighbours.jsonl").open("w") as fh:
        for i, task in enumerate(ids):
            near = [ids[(i + k) % len(ids)] for k in (1, 2, 3)]
            fh.write(json.dumps({"task_id": task, "neighbour_task_ids": near}) + "\n")
    print(f"{n} lookup-table verifiers in {root / 'tables'}")
    t_val = run(["validate", "--tasks", str(tasks), "--arcgen", str(arcgen), "--source",
                 f"table=module:{root / 'tables'}", "--out", str(root / "val"), *box])  # fmt: skip
    print(f"validate: {t_val:.1f} s")
    t_build = run(["dimensions", "build", "--tasks", str(tasks), "--arcgen", str(arcgen),
                   "--manifest", str(root / "val"), "--neighbours", str(root / "neighbours.jsonl"),
                   "--out", str(root / "dims"), *box])  # fmt: skip
    print(f"dimensions build: {t_build:.1f} s")
    count = answers(root / "dims" / "instances.jsonl", root / "answers.jsonl")
    instances = root / "dims" / "instances.jsonl"
    t_score = run(["dimensions", "score", "--instances", str(instances), "--answers",
                   str(root / "answers.jsonl"), "--out", str(root / "scored"), *box])  # fmt: skip
    print(f"dimensions score: {t_score:.1f} s for {count} answers")


if __name__ == "__main__":
    main()
