"""The inputs of ``dimensions_full.py``: lookup-table verifiers, neighbours and answers.

A table verifier (``bench/synthetic/lookup_table.py.tmpl``) maps every known input of its
task (demonstrations and ARC-GEN pairs) to its output; unknown inputs raise. So every
task has a valid verifier of our own.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "synthetic" / "lookup_table.py.tmpl"


def write_tables(tasks: Path, arcgen: Path, out: Path) -> int:
    """Write one ``<task id>.py`` table verifier per task into ``out`` (a new directory).

    Returns:
        The number of verifiers written.
    """
    template = TEMPLATE.read_text()
    out.mkdir(parents=True)
    count = 0
    for path in sorted(tasks.glob("*.json")):
        task = json.loads(path.read_text())
        pairs = [*task["train"], *task["test"]]
        extra = arcgen / path.name
        if extra.exists():
            pairs += json.loads(extra.read_text())
        table = {json.dumps(p["input"], separators=(",", ":")): p["output"] for p in pairs}
        (out / f"{path.stem}.py").write_text(template.format(data=json.dumps(table)))
        count += 1
    return count


def write_neighbours(ids: list[str], out: Path) -> None:
    """Each task's neighbours: the next three task ids (cyclically), as JSON lines."""
    with out.open("w") as fh:
        for i, task in enumerate(ids):
            near = [ids[(i + k) % len(ids)] for k in (1, 2, 3)]
            fh.write(json.dumps({"task_id": task, "neighbour_task_ids": near}) + "\n")


def write_answers(instances: Path, out: Path) -> int:
    """Answers of three synthetic models to the instances, over two runs.

    ``oracle`` answers from each instance's hidden key (the reference), ``always-valid``
    labels every classification candidate valid (run 1 only), ``random`` draws seeded
    random labels and 3x3 grids.

    Returns:
        The number of answers written.
    """
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


def write_human_errors(tasks: Path, out: Path) -> int:
    """An H-ARC style ``incorrect_submissions.csv`` of our own: per task, its first test
    output with one cell changed (the top-left cell's color plus one), count 2.

    Returns:
        The number of rows written.
    """
    rows = ["task_name,task_type,test_output_grid,count"]
    for path in sorted(tasks.glob("*.json")):
        test = json.loads(path.read_text())["test"][0]
        if "output" not in test:
            continue
        grid = [list(row) for row in test["output"]]
        grid[0][0] = (grid[0][0] + 1) % 10
        cells = "|".join("".join(map(str, row)) for row in grid)
        rows.append(f"{path.name},training,|{cells}|,2")
    out.write_text("\n".join(rows) + "\n")
    return len(rows) - 1
