"""``dimensions score --replies``: raw model text per prompt id, parsed, graded, recorded.

One build of three sample tasks (validated with a generator, so Definition replies are
scored on demonstrations, ARC-GEN pairs and fresh samples), then replies in several
styles: an oracle written from the instances' keys, broken replies, Definition replies as
programs in code blocks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.dimensions.grading import DimensionScoreConfig, DimensionScorer
from arcjudge.harness.dimensions.records import DimensionItem, prompt_id
from arcjudge.harness.validate.cli import sample_dir

SAMPLE = sample_dir()
TASKS = ("3c9b0459", "67a3c6ac", "74dd1130")  # rotate 180, mirror, transpose
RIGHT = {
    "3c9b0459": "def transform(g):\n    return [r[::-1] for r in g[::-1]]\n",
    "67a3c6ac": "def transform(g):\n    return [r[::-1] for r in g]\n",
}
WRONG = "def transform(g):\n    return g\n"


def run_cli(*argv: str) -> int:
    return cli.main([*argv, "--backend", "process", "--no-progress"])


def rows(grid: list[list[int]]) -> str:
    return "\n".join(" ".join(map(str, row)) for row in grid)


def oracle_reply(record: dict, style: int) -> str | None:
    """The reply of a model that knows the key, in one of three styles."""
    dim, key = record["dimension"], record["key"]
    if dim == "output_grid":
        grids = key["test_outputs"]
        if style == 0:
            return "".join(f"Test {i + 1}:\n```\n{rows(g)}\n```\n" for i, g in enumerate(grids))
        return f"The outputs are {json.dumps(grids)}."
    if dim == "classification":
        if style == 0:
            return "\n".join(f"Candidate {i + 1}: {label}" for i, label in enumerate(key["labels"]))
        return "Judgments: " + json.dumps(key["labels"])
    pair = {"generation": key.get("reference"), "editing": key.get("reference_edit")}.get(dim)
    if dim in ("generation", "editing"):
        if not pair:
            return None
        if style == 0:
            grid_in, grid_out = rows(pair["input"]), rows(pair["output"])
            return f"Input:\n```\n{grid_in}\n```\nOutput:\n```\n{grid_out}\n```"
        return json.dumps({"input": pair["input"], "output": pair["output"]})
    if dim == "inversion":
        return f"My first guess [[9]] is wrong; the input is:\n```\n{rows(key['input'])}\n```"
    if dim == "definition":
        code = RIGHT.get(record["task_id"], WRONG)
        return f"Here is the program.\n```python\n{code}```\nIt works."
    raise AssertionError(dim)


def reply_line(task: str, dim: str, model: str, reply: object, run: object = 1) -> str:
    return json.dumps({"id": prompt_id(task, dim), "model": model, "run": run, "reply": reply})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("replies")
    (root / "tasks").mkdir()
    for task_id in TASKS:
        shutil.copy(SAMPLE / "tasks" / f"{task_id}.json", root / "tasks")
    gen = f"arc-gen:{SAMPLE / 'generators' / 'arc-gen'}"
    assert run_cli("validate", "--tasks", str(root / "tasks"), "--source",
                   f"golf=golf:{SAMPLE / 'golf'}", "--generator", gen, "--samples", "3",
                   "--out", str(root / "val")) == 0  # fmt: skip
    # the manifest's generator gives the valid pairs: 3 samples, as validate drew
    assert run_cli("dimensions", "build", "--tasks", str(root / "tasks"), "--manifest",
                   str(root / "val"), "--samples", "3",
                   "--out", str(root / "built")) == 0  # fmt: skip
    return root


def instances(built: Path) -> list[dict]:
    text = (built / "built" / "instances.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def scored(built) -> dict:
    lines = []
    for record in instances(built):
        reply = oracle_reply(record, TASKS.index(record["task_id"]) % 2)
        if reply is not None:
            lines.append(reply_line(record["task_id"], record["dimension"], "oracle", reply))
    task = TASKS[0]
    lines += [
        reply_line(task, "inversion", "broken", "I do not know."),
        reply_line(task, "output_grid", "broken", "```\n1 2\n3\n```"),
        reply_line(task, "classification", "broken", {"not": "text"}),
        reply_line(task, "definition", "broken", "No code today."),
        reply_line("no-such-task", "inversion", "broken", "[[1]]"),
        reply_line(task, "vibes", "broken", "[[1]]"),
        '{"id": "x"',
        json.dumps({"id": prompt_id(task, "inversion"), "model": "broken", "run": 1}),
        reply_line(task, "inversion", "broken", "I do not know either."),  # a second reply
    ]
    (built / "replies.jsonl").write_text("\n".join(lines) + "\n")
    instances_file = str(built / "built" / "instances.jsonl")
    replies = str(built / "replies.jsonl")
    code = run_cli("dimensions", "score", "--instances", instances_file, "--replies", replies,
                   "--out", str(built / "scored"))  # fmt: skip
    assert code == 0
    items = [
        DimensionItem.from_json(json.loads(line))
        for line in (built / "scored" / "items.jsonl").read_text().splitlines()
    ]
    summary = json.loads((built / "scored" / "summary.json").read_text())
    return {"items": items, "summary": summary, "dir": built / "scored"}


def test_oracle_replies_pass_where_the_oracle_can_answer(scored, built):
    items = {(i.task_id, i.dimension): i for i in scored["items"] if i.model == "oracle"}
    for record in instances(built):
        key = (record["task_id"], record["dimension"])
        if record["dimension"] == "definition":
            assert items[key].passed is (record["task_id"] in RIGHT), items[key]
            continue
        if oracle_reply(record, 0) is None:
            assert items[key].reason == "no answer"
            continue
        assert items[key].passed, items[key]
        assert items[key].how and not items[key].how.startswith("unparsable"), items[key]
    stats = scored["summary"]["models"]["oracle"]
    assert stats["dimensions"]["output_grid"]["accuracy"] == 1.0
    assert stats["dimensions"]["classification"]["accuracy"] == 1.0
    assert stats["dimensions"]["definition"]["passed"] == len(RIGHT)


def test_how_each_answer_was_read_is_recorded(scored):
    hows = {(i.dimension, i.how) for i in scored["items"] if i.model == "oracle"}
    assert ("classification", "candidate lines") in hows
    assert ("classification", "json") in hows
    assert ("generation", "labelled grids") in hows or ("editing", "labelled grids") in hows
    assert ("inversion", "code block rows (last of 2 grids)") in hows
    assert ("definition", "code: last block defining the entry point") in hows


def test_broken_replies_fail_their_items_with_the_reason(scored):
    mine = [i for i in scored["items"] if i.model == "broken" and i.task_id == TASKS[0]]
    broken = {i.dimension: i for i in mine}
    assert broken["inversion"].reason == "unparsable: no grid found"
    assert broken["inversion"].how == broken["inversion"].reason
    assert broken["output_grid"].reason.startswith("unparsable: code block rows: rows of")
    assert broken["classification"].reason == "unparsable: the reply is not text"
    assert broken["definition"].reason.startswith("static")  # no code: does not load
    assert not any(i.passed for i in scored["items"] if i.model == "broken")
    others = [i for i in scored["items"] if i.model == "broken" and i.task_id != TASKS[0]]
    assert {i.reason for i in others} == {"no answer", "no Definition program"}
    problems = scored["summary"]["answers_problems"]
    assert any("no prompt 'no-such-task/inversion'" in p for p in problems)
    assert any("no prompt" in p and "vibes" in p for p in problems)
    assert any("not valid JSON" in p for p in problems)
    assert any("missing reply" in p for p in problems)
    assert any("second reply for the same item" in p for p in problems)
    assert scored["summary"]["answers_problem_count"] == 5


def test_definition_replies_are_scored_on_every_split_and_written(scored):
    results = [
        json.loads(line) for line in (scored["dir"] / "definitions.jsonl").read_text().splitlines()
    ]
    oracle = [r for r in results if r["model"] == "oracle"]
    assert len(oracle) == len(TASKS)
    for result in oracle:
        assert set(result["splits"]) >= {"train", "test", "generator"}, result["splits"]
        assert result["splits"]["generator"][1] == 3
        assert result["verdict"] == ("pass" if result["task_id"] in RIGHT else "fail")
        assert result["extraction"]["reason"] == "last block defining the entry point"
    scoring = scored["summary"]["definition_scoring"]
    assert scoring["samples"] == 3 and scoring["generator"]["kind"] == "arc-gen"


def test_the_replies_path_grades_as_the_answers_path(scored, built, tmp_path):
    """The answers the replies were parsed into, given as JSON answers, grade the same."""
    answers = []
    for item in scored["items"]:
        if item.model != "oracle" or item.dimension == "definition" or item.answer_line is None:
            continue
        line = (built / "replies.jsonl").read_text().splitlines()[item.answer_line - 1]
        record = json.loads(line)
        from arcjudge.harness.dimensions.strategies import parse_reply

        tests = 1
        if item.dimension == "output_grid":
            instance = next(
                r for r in instances(built)
                if r["task_id"] == item.task_id and r["dimension"] == "output_grid"
            )  # fmt: skip
            tests = len(instance["prompt"]["test_inputs"])
        parsed = parse_reply(item.dimension, record["reply"], tests=tests)
        answers.append({"task_id": item.task_id, "dimension": item.dimension,
                        "model": "oracle", "run": "1", "answer": parsed.answer})  # fmt: skip
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    config = DimensionScoreConfig(
        built / "built" / "instances.jsonl", answers_file=tmp_path / "answers.jsonl"
    )
    via_answers = DimensionScorer(config)
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.backends import make_sandbox

    store = ResultStore(tmp_path / "cache.sqlite")
    with make_sandbox("process", module_dirs=via_answers.module_dirs()) as sandbox:
        via_answers.run(sandbox, store)
    store.close()
    graded = {(i.task_id, i.dimension): (i.passed, i.reason) for i in via_answers.items}
    replied = {
        (i.task_id, i.dimension): (i.passed, i.reason)
        for i in scored["items"]
        if i.model == "oracle" and (i.task_id, i.dimension) in graded
    }
    assert graded == replied and len(graded) >= 4 * len(TASKS)


def test_pass_at_two_counts_a_second_attempt(built, tmp_path):
    record = next(
        r for r in instances(built)
        if r["dimension"] == "output_grid" and len(r["key"]["test_outputs"]) == 1
    )  # fmt: skip
    (right,) = record["key"]["test_outputs"]
    wrong = [[(cell + 1) % 10 for cell in row] for row in right]
    # The right grid first: at pass@1 the last grid is the answer (a model's correction).
    reply = f"Attempt 1:\n{json.dumps(right)}\nAttempt 2:\n{json.dumps(wrong)}"
    (tmp_path / "r.jsonl").write_text(reply_line(record["task_id"], "output_grid", "m", reply))
    results = {}
    for attempts in ("1", "2"):
        out = tmp_path / f"out{attempts}"
        assert run_cli("dimensions", "score", "--instances",
                       str(built / "built" / "instances.jsonl"), "--replies",
                       str(tmp_path / "r.jsonl"), "--attempts", attempts,
                       "--out", str(out)) == 0  # fmt: skip
        items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
        (item,) = [i for i in items if i["task_id"] == record["task_id"]]
        results[attempts] = item["passed"]
    assert results == {"1": False, "2": True}


def test_answers_and_replies_are_exclusive(built, capsys):
    instances_file = str(built / "built" / "instances.jsonl")
    with pytest.raises(SystemExit) as stop:
        run_cli("dimensions", "score", "--instances", instances_file, "--replies",
                str(built / "replies.jsonl"), "--answers", str(built / "replies.jsonl"),
                "--out", str(built / "x"))  # fmt: skip
    assert stop.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_definition_replies_need_the_build_record(built, tmp_path):
    shutil.copy(built / "built" / "instances.jsonl", tmp_path / "instances.jsonl")
    (tmp_path / "r.jsonl").write_text(reply_line(TASKS[0], "definition", "m", "```python\n```"))
    with pytest.raises(InputError, match=r"build\.json: missing"):
        DimensionScorer(
            DimensionScoreConfig(tmp_path / "instances.jsonl", replies_file=tmp_path / "r.jsonl")
        )
    # Replies of other dimensions need no build record.
    (tmp_path / "r.jsonl").write_text(reply_line(TASKS[0], "inversion", "m", "[[1]]"))
    scorer = DimensionScorer(
        DimensionScoreConfig(tmp_path / "instances.jsonl", replies_file=tmp_path / "r.jsonl")
    )
    assert len(scorer.answers) == 1
