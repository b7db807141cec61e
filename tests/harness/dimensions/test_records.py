"""The records of ``arcjudge dimensions`` round-trip, and malformed ones are refused.

A small real run (three sample tasks with module verifiers: validate, dimensions build,
score of Definition programs, dimensions score with self-consistency) makes the records;
each line read back with ``from_json`` and written with ``to_json`` must give the same
object and the same bytes.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.dimensions.grading import (
    DimensionScoreConfig,
    DimensionScorer,
    read_instances,
)
from arcjudge.harness.dimensions.records import (
    DimensionAnswer,
    DimensionInstance,
    DimensionItem,
)
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.safetext import json_dumps
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension, Judgment

SAMPLE = sample_dir()
TASKS = ("1e0a9b12", "67a3c6ac", "74dd1130")
COMPACT = {"sort_keys": True, "separators": (",", ":")}


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


def lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines(keepends=True) if line.strip()]


def answers_for(instances: list[dict]) -> list[dict]:
    """Two runs: answers taken from the keys (run 1) and random ones (run 2), canonical."""
    rng = random.Random(11)

    def grid() -> list[list[int]]:
        return [[rng.randrange(10) for _ in range(rng.randint(1, 4))]] * rng.randint(1, 4)

    answers = []
    for record in instances:
        dim, key = record["dimension"], record["key"]
        for run in ("1", "2"):
            if dim == "definition":
                continue
            if dim == "classification":
                answer: object = key["labels"] if run == "1" else ["valid"] * 5
            elif dim == "inversion":
                answer = {"input": key["input"] if run == "1" else grid()}
            elif dim == "output_grid":
                answer = (
                    key["test_outputs"] if run == "1" else [grid() for _ in key["test_outputs"]]
                )
            elif dim == "editing" and run == "1" and key["reference_edit"]:
                answer = key["reference_edit"]
            elif dim == "generation" and run == "1" and key["reference"]:
                answer = {"input": key["reference"]["input"], "output": key["reference"]["output"]}
            else:
                answer = {"input": grid(), "output": grid()}
            answers.append({"task_id": record["task_id"], "dimension": dim, "model": "m",
                            "run": run, "answer": answer})  # fmt: skip
    return answers


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("records")
    (root / "tasks").mkdir()
    (root / "module").mkdir()
    for task_id in TASKS:
        shutil.copy(SAMPLE / "tasks" / f"{task_id}.json", root / "tasks")
        shutil.copy(SAMPLE / "module" / f"{task_id}.py", root / "module")
    (root / "module" / "67a3c6ac.py").write_text(  # the sample's is wrong on purpose
        "def transform(g):\n    return [r[::-1] for r in g]\n"
    )
    (root / "neighbours.jsonl").write_text(
        '{"task_id": "67a3c6ac", "neighbour_task_ids": ["74dd1130"]}\n'
    )
    run_cli("validate", "--tasks", str(root / "tasks"), "--source",
            f"module=module:{root / 'module'}", "--out", str(root / "val"))  # fmt: skip
    run_cli("dimensions", "build", "--tasks", str(root / "tasks"), "--manifest",
            str(root / "val"), "--neighbours", str(root / "neighbours.jsonl"),
            "--out", str(root / "built"))  # fmt: skip
    instances = [json.loads(line) for line in lines(root / "built" / "instances.jsonl")]
    answers = answers_for(instances)
    answers.append({"task_id": TASKS[0], "dimension": "inversion", "model": "n", "run": "1"})
    (root / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    programs = [
        {"id": f"d{k}", "task_id": t, "model": "m", "run": run,
         "code": "def transform(g):\n    return [r[::-1] for r in g]\n" if k % 2 else
                 "def transform(g):\n    return g[::-1]\n"}
        for k, (t, run) in enumerate((t, r) for t in TASKS for r in ("1", "2"))
    ]  # fmt: skip
    (root / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    run_cli("score", "--programs", str(root / "programs.jsonl"), "--tasks",
            str(root / "tasks"), "--out", str(root / "defs"))  # fmt: skip
    run_cli("dimensions", "score", "--instances", str(root / "built" / "instances.jsonl"),
            "--answers", str(root / "answers.jsonl"), "--definitions", str(root / "defs"),
            "--out", str(root / "scored"))  # fmt: skip
    return root


def test_instances_round_trip(run):
    written = lines(run / "built" / "instances.jsonl")
    assert len(written) == len(BUILT_DIMENSIONS) * len(TASKS)
    for line in written:
        data = json.loads(line)
        instance = DimensionInstance.from_json(data)
        assert instance.to_json() == data
        assert json_dumps(instance.to_json(), **COMPACT) + "\n" == line
    instances = read_instances(run / "built" / "instances.jsonl")
    assert [i.dimension for i in instances.values()][:6] == list(BUILT_DIMENSIONS)
    classification = instances[(TASKS[0], Dimension.CLASSIFICATION)]
    assert len(classification.candidates()) == 5
    assert set(classification.labels()) <= set(Judgment)


def test_items_round_trip_with_and_without_optional_keys(run):
    written = lines(run / "scored" / "items.jsonl")
    seen: set[str] = set()
    for line in written:
        data = json.loads(line)
        item = DimensionItem.from_json(data)
        assert item.to_json() == data
        assert json_dumps(item.to_json(), **COMPACT) + "\n" == line
        seen.update(k for k in ("answer_line", "consistency") if k in data)
        if "consistency" in data and data["dimension"] == "classification":
            seen.add("classification consistency")
    # Every shape occurs: an unanswered item has no answer_line; consistency only when run.
    assert seen == {"answer_line", "consistency", "classification consistency"}
    assert any("answer_line" not in json.loads(line) for line in written)


def test_answers_round_trip(run):
    for line in lines(run / "answers.jsonl"):
        data = json.loads(line)
        assert DimensionAnswer.from_json(data).to_json() == data
    bare = DimensionAnswer.from_json({"task_id": "t", "dimension": "Edit", "model": "m", "run": 3})
    assert bare.dimension is Dimension.EDITING and bare.run == "3" and not bare.answered
    assert "answer" not in bare.to_json()
    assert DimensionAnswer.from_json({**bare.to_json(), "answer": None}).to_json()["answer"] is None


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda r: r.update(dimension="telepathy"), "unknown dimension"),
        (lambda r: r["key"].pop("labels"), "labels"),
        (lambda r: r["prompt"]["candidates"].pop(), "5 candidates"),
        (lambda r: r["prompt"]["candidates"][0].update(input="not a grid"), "grid"),
        (lambda r: r["verifier"].pop("path"), "path"),
        (lambda r: r.update(seed="77"), "seed"),
        (lambda r: r.update(prompt=[]), "prompt"),
    ],
)
def test_a_malformed_instance_is_refused_with_its_line(run, tmp_path, change, says):
    written = lines(run / "built" / "instances.jsonl")
    number = next(n for n, line in enumerate(written, 1) if '"classification"' in line)
    record = json.loads(written[number - 1])
    change(record)
    written[number - 1] = json.dumps(record) + "\n"
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(written))
    with pytest.raises(InputError, match=f"{path}:{number}: not an instance record .*{says}"):
        read_instances(path)


def test_malformed_answer_lines_are_problems_not_crashes(run, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"task_id": "1e0a9b12", "dimension": "inversion", "model": "m"}\n'
        '{"task_id": "1e0a9b12", "dimension": 7, "model": "m", "run": 1}\n'
        '{"task_id": "1e0a9b12", "dimension": "INVERT", "model": "m", "run": 1, "answer": 1}\n'
    )
    scorer = DimensionScorer(DimensionScoreConfig(run / "built" / "instances.jsonl", answers))
    assert scorer.problems == ["line 1: missing run", "line 2: unknown dimension '7'"]
    ((key, answer),) = scorer.answers.items()
    assert key == ("m", "1", "1e0a9b12", Dimension.INVERSION) and answer.line == 3


def test_the_progress_counts_one_verifier_call_per_task_with_a_proposed_input(run, tmp_path):
    # Generation, Editing and Inversion propose an input the task's verifier runs on (the
    # strategies that have a verifier_input); Output grid and Classification do not.
    answers = tmp_path / "answers.jsonl"
    first, second = TASKS[0], TASKS[1]
    answers.write_text(
        "".join(
            json.dumps({"task_id": t, "dimension": d, "model": "m", "run": "1", "answer": a}) + "\n"
            for t, d, a in (
                (first, "inversion", [[1]]),
                (first, "generation", {"input": [[1]], "output": [[1]]}),
                (first, "output_grid", [[1]]),
                (second, "output_grid", [[1]]),
                (second, "classification", ["valid"] * 5),
            )
        )
    )
    scorer = DimensionScorer(DimensionScoreConfig(run / "built" / "instances.jsonl", answers))
    assert len(scorer.answers) == 5
    assert scorer.work() == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(passed="yes"),
        lambda r: r.pop("reason"),
        lambda r: r.update(dimension="telepathy"),
        lambda r: r.update(answer_line="3"),
        lambda r: r.update(consistency={"agree": True}),
    ],
)
def test_a_malformed_item_is_refused(run, change):
    record = json.loads(lines(run / "scored" / "items.jsonl")[0])
    change(record)
    with pytest.raises((KeyError, TypeError, ValueError)):
        DimensionItem.from_json(record)
