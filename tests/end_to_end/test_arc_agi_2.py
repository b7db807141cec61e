"""ARC-AGI-2 end to end: real training and evaluation tasks from the data directory.

Six ARC-AGI-2 training tasks (four with two test pairs, two with 30x30 grids) with
fixtures of our own in the formats users bring: a ``module`` verifier source of lookup
tables and an ARC-GEN-layout generator. The generator draws a known pair and turns
both grids by one of the eight symmetries of the square (so its inputs are new); the
lookup tables know those turned pairs (where a turned input is new), so verifier and
generator agree by construction. Then ``validate`` (the manifest says each task's
splits), ``score`` (a right program passes every test pair and the generator samples, a
wrong one fails),
``dimensions build`` with the generator, ``dimensions score`` with answers from the keys
(all pass; the output grid asks for every test pair), the reports (30x30 pictures drawn),
and ARC-AGI-2 evaluation tasks without a generator, scored on their demonstrations and
test pairs only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arcjudge import cli
from tests.support.oracle_pipeline import lookup_source

TRAINING = ["00576224", "05a7bcf2", "12997ef3", "17b866bd", "1be83260", "b74ca5d1"]
MULTI_TEST = {"12997ef3", "17b866bd", "1be83260", "b74ca5d1"}
LARGE = {"05a7bcf2", "b74ca5d1"}  # 30x30 grids, from the first demonstration on
EVALUATION = 3  # the first evaluation tasks, no generator
SAMPLES = 6

SYMMETRIES = (
    "g",
    "[r[::-1] for r in g]",
    "g[::-1]",
    "[r[::-1] for r in g[::-1]]",
    "[list(c) for c in zip(*g)]",
    "[list(c) for c in zip(*g[::-1])]",
    "[list(c)[::-1] for c in zip(*g)]",
    "[list(c) for c in zip(*g)][::-1]",
)
"""The eight symmetries of the square, as expressions of a grid ``g``."""


def turned(grid: list[list[int]], k: int) -> list[list[int]]:
    return eval(f"lambda g: {SYMMETRIES[k]}")(grid)  # our own expressions, above


def pairs_of(task: dict) -> list[list]:
    return [[p["input"], p["output"]] for p in [*task["train"], *task["test"]]]


def turned_pairs(pairs: list[list]) -> list[list]:
    """The pairs under the seven other symmetries, where the input is new (first one wins)."""
    known = {json.dumps(i) for i, _ in pairs}
    found = []
    for k in range(1, 8):
        for grid_in, grid_out in pairs:
            new = turned(grid_in, k)
            if json.dumps(new) not in known:
                known.add(json.dumps(new))
                found.append([new, turned(grid_out, k)])
    return found


def generator_source(pairs: list[list]) -> str:
    return (
        '"""A generator of our own: a known pair of the task, both grids turned alike."""\n'
        "import json\nimport random\n\n"
        f"_PAIRS = json.loads({json.dumps(pairs)!r})\n\n\n"
        "def generate():\n"
        "    grid_in, grid_out = random.choice(_PAIRS)\n"
        '    return {"input": grid_in, "output": grid_out}\n'
    )


def run(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def world(tmp_path_factory, shared_data) -> Path:
    root = tmp_path_factory.mktemp("arc2")
    source = shared_data / "arc-agi-2" / "training"
    (root / "tasks").mkdir()
    (root / "verifiers").mkdir()
    (root / "generators" / "tasks").mkdir(parents=True)
    programs = []
    for task_id in TRAINING:
        shutil.copy(source / f"{task_id}.json", root / "tasks" / f"{task_id}.json")
        pairs = pairs_of(json.loads((source / f"{task_id}.json").read_text()))
        more = turned_pairs(pairs)
        code = lookup_source([*pairs, *more])
        (root / "verifiers" / f"{task_id}.py").write_text(code)
        (root / "generators" / "tasks" / f"task_{task_id}.py").write_text(generator_source(more))
        programs.append({"id": f"right_{task_id}", "task_id": task_id, "model": "m",
                         "run": 1, "code": code})  # fmt: skip
        programs.append({"id": f"identity_{task_id}", "task_id": task_id, "model": "m",
                         "run": 1, "code": "def transform(grid):\n    return grid\n"})  # fmt: skip
    (root / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    generator = f"arc-gen:{root / 'generators'}"
    run("validate", "--tasks", str(root / "tasks"), "--source",
        f"lookup=module:{root / 'verifiers'}", "--generator", generator, "--samples",
        str(SAMPLES), "--out", str(root / "val"))  # fmt: skip
    samples = ["--generator", generator, "--samples", str(SAMPLES)]
    run("score", "--programs", str(root / "programs.jsonl"), "--tasks", str(root / "tasks"),
        *samples, "--out", str(root / "score"))  # fmt: skip
    run("dimensions", "build", "--tasks", str(root / "tasks"), "--manifest", str(root / "val"),
        *samples, "--out", str(root / "built"))  # fmt: skip
    return root


def test_validate_takes_every_test_pair_and_says_which_splits_each_task_had(world):
    manifest = json.loads((world / "val" / "manifest.json").read_text())
    for task_id in TRAINING:
        task = json.loads((world / "tasks" / f"{task_id}.json").read_text())
        entry = manifest["tasks"][task_id]
        assert entry["chosen"] == "lookup", (task_id, entry)
        assert entry["splits"]["train"] == len(task["train"])
        assert entry["splits"]["test"] == len(task["test"]) == (2 if task_id in MULTI_TEST else 1)
        assert entry["splits"]["generator"] == SAMPLES
        assert "arc-gen" not in entry["splits"]  # ARC-AGI-2 has no stable set here


def test_score_checks_every_test_pair_and_the_generator_samples(world):
    results = {r["id"]: r for r in read_jsonl(world / "score" / "results.jsonl")}
    for task_id in TRAINING:
        tests = 2 if task_id in MULTI_TEST else 1
        right = results[f"right_{task_id}"]
        assert right["verdict"] == "pass", right
        assert right["splits"]["test"] == [tests, tests]
        assert right["splits"]["generator"] == [SAMPLES, SAMPLES]
        assert results[f"identity_{task_id}"]["verdict"] == "fail"


def oracle_answer(record: dict) -> object:
    """The right answer from an instance's key (``None``: the key has none)."""
    key, dim = record["key"], record["dimension"]
    if dim == "output_grid":
        return key["test_outputs"]
    if dim == "classification":
        return key["labels"]
    if dim == "generation":
        reference = key.get("reference")
        return None if reference is None else {"input": reference["input"],
                                                "output": reference["output"]}  # fmt: skip
    if dim == "editing":
        reference = key.get("reference_edit")
        return None if reference is None else {"input": reference["input"],
                                                "output": reference["output"]}  # fmt: skip
    if dim == "inversion":
        return key["input"]
    return None


def test_dimensions_build_and_grade_arc_agi_2_tasks(world):
    instances = read_jsonl(world / "built" / "instances.jsonl")
    grids = {r["task_id"]: r for r in instances if r["dimension"] == "output_grid"}
    assert set(grids) == set(TRAINING)
    for task_id, record in grids.items():
        assert len(record["prompt"]["test_inputs"]) == (2 if task_id in MULTI_TEST else 1)
    largest = max(len(p["input"]) for r in instances if r["task_id"] in LARGE
                  for p in r["prompt"].get("candidates", []))  # fmt: skip
    assert largest == 30  # the candidates of Classification show the large grids
    checked = subprocess.run(
        [sys.executable, str(Path(__file__).parents[2] / "bench" / "check_build.py"),
         str(world / "built"), "--tasks", str(world / "tasks")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    answers = [
        {"task_id": r["task_id"], "dimension": r["dimension"], "model": "oracle", "run": 1,
         "answer": oracle_answer(r)}
        for r in instances
        if r["dimension"] != "definition" and oracle_answer(r) is not None
    ]  # fmt: skip
    (world / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    run("dimensions", "score", "--instances", str(world / "built" / "instances.jsonl"),
        "--answers", str(world / "answers.jsonl"), "--out", str(world / "scored"))  # fmt: skip
    items = read_jsonl(world / "scored" / "items.jsonl")
    answered = {(a["task_id"], a["dimension"]) for a in answers}
    graded = {(i["task_id"], i["dimension"]): i for i in items}
    assert answered <= set(graded)
    failed = [(k, graded[k]["reason"]) for k in sorted(answered) if not graded[k]["passed"]]
    assert not failed
    assert {d for _, d in answered} >= {"output_grid", "classification", "inversion"}


def test_reports_draw_the_large_grids(world):
    page = (world / "score" / "report.html").read_text()
    assert "<svg" in page
    # the identity program's first failure is drawn for the tasks with 30-cell sides too:
    # its input and expected output, a user unit per cell (html.grid_svg)
    for task_id in LARGE:
        task = json.loads((world / "tasks" / f"{task_id}.json").read_text())
        first = task["train"][0]
        assert len(first["input"]) == len(first["input"][0]) == 30
        assert first["input"] != first["output"]
        for grid in (first["input"], first["output"]):
            assert f'viewBox="0 0 {len(grid[0])} {len(grid)}"' in page, task_id


def test_evaluation_tasks_without_a_generator_score_on_demonstrations_and_tests(
    tmp_path, shared_data
):
    source = shared_data / "arc-agi-2" / "evaluation"
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    chosen = sorted(p.stem for p in source.glob("*.json"))[:EVALUATION]
    programs = []
    for task_id in chosen:
        shutil.copy(source / f"{task_id}.json", tasks / f"{task_id}.json")
        code = lookup_source(pairs_of(json.loads((source / f"{task_id}.json").read_text())))
        programs.append({"id": task_id, "task_id": task_id, "model": "m", "run": 1, "code": code})
    (tmp_path / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    run("score", "--programs", str(tmp_path / "programs.jsonl"), "--tasks", str(tasks),
        "--out", str(tmp_path / "score"))  # fmt: skip
    for result in read_jsonl(tmp_path / "score" / "results.jsonl"):
        task = json.loads((tasks / f"{result['task_id']}.json").read_text())
        assert result["verdict"] == "pass"
        assert set(result["splits"]) == {"train", "test"}
        assert result["splits"]["test"] == [len(task["test"])] * 2
