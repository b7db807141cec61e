"""Token usage and generation settings of replies: carried to the items, totalled per model.

Three sample tasks built (as ``test_score_replies`` builds them); a reply per instance scored twice,
with a ``usage`` (and ``settings``) on some lines and without: the items and the summary
differ by exactly those keys, and the totals are counted here from the lines written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.harness.dimensions.grade_inputs import read_replies
from arcjudge.harness.dimensions.records import prompt_id, read_instances
from arcjudge.harness.validate.cli import sample_dir

SAMPLE = sample_dir()
TASKS = ("3c9b0459", "67a3c6ac", "74dd1130")
REPLIES = {
    "definition": "```python\ndef transform(g):\n    return [r[::-1] for r in g[::-1]]\n```",
    "classification": "valid, invalid, valid, invalid, valid",
}
"""A reply per dimension (right or wrong does not matter here); else a grid."""


def run_cli(*argv: str) -> int:
    return cli.main([*argv, "--backend", "process", "--no-progress"])


def instances(built: Path) -> list[dict]:
    text = (built / "built" / "instances.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The three tasks validated (with a generator, for Definition replies) and built."""
    root = tmp_path_factory.mktemp("usage")
    (root / "tasks").mkdir()
    for task_id in TASKS:
        shutil.copy(SAMPLE / "tasks" / f"{task_id}.json", root / "tasks")
    gen = f"arc-gen:{SAMPLE / 'generators' / 'arc-gen'}"
    assert run_cli("validate", "--tasks", str(root / "tasks"), "--source",
                   f"golf=golf:{SAMPLE / 'golf'}", "--generator", gen, "--samples", "3",
                   "--out", str(root / "val")) == 0  # fmt: skip
    assert run_cli("dimensions", "build", "--tasks", str(root / "tasks"), "--manifest",
                   str(root / "val"), "--out", str(root / "built")) == 0  # fmt: skip
    return root


SETTINGS = {"temperature": 1.0, "reasoning_effort": "low"}


def usage_of(number: int) -> dict[str, int] | None:
    """The usage written on the replies line ``number`` (from 0): none on every third."""
    if number % 3 == 2:
        return None
    usage = {"input": 100 + number, "output": 10 * number + 1}
    if number % 2 == 0:
        usage["reasoning"] = 7 * number
    return usage


def oracle_lines(built: Path) -> list[dict]:
    """A replies line per instance, of the model ``oracle``."""
    return [
        {"id": prompt_id(r["task_id"], r["dimension"]), "model": "oracle", "run": 1,
         "reply": REPLIES.get(r["dimension"], "[[1, 2], [3, 4]]")}
        for r in instances(built)
    ]  # fmt: skip


def score(built: Path, lines: list[dict], out: Path, capsys) -> dict:
    replies = out.with_suffix(".jsonl")
    replies.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert run_cli("dimensions", "score", "--instances", str(built / "built" / "instances.jsonl"),
                   "--replies", str(replies), "--out", str(out)) == 0  # fmt: skip
    return {
        "items": (out / "items.jsonl").read_text(),
        "summary": json.loads((out / "summary.json").read_text()),
        "printed": capsys.readouterr().out,
    }


def test_usage_goes_to_its_item_and_is_totalled_per_model(built, tmp_path, capsys):
    plain = oracle_lines(built)
    used = []
    for number, line in enumerate(plain):
        usage = usage_of(number)
        used.append({**line, **({"usage": usage, "settings": SETTINGS} if usage else {})})
    assert any(line["id"].endswith("/definition") and "usage" in line for line in used)
    with_usage = score(built, used, tmp_path / "with", capsys)
    without = score(built, plain, tmp_path / "without", capsys)

    # each item has its own line's usage and settings; the rest of the item is unchanged
    by_key = {(line["id"], str(line["run"])): line for line in used}
    items = [json.loads(x) for x in with_usage["items"].splitlines()]
    carried = 0
    for item in items:
        line = by_key.get((f"{item['task_id']}/{item['dimension']}", item["run"]))
        if line is not None and "usage" in line:
            assert item["usage"] == line["usage"] and item["settings"] == SETTINGS
            carried += 1
        else:
            assert "usage" not in item and "settings" not in item
    assert carried == sum("usage" in line for line in used) > 0
    stripped = [{k: v for k, v in i.items() if k not in ("usage", "settings")} for i in items]
    assert [json.loads(x) for x in without["items"].splitlines()] == stripped

    # no usage: no token_usage key and no tokens line; else the same summary
    assert "token_usage" not in without["summary"]
    assert "tokens " not in without["printed"]
    summary = dict(with_usage["summary"])
    totals = summary.pop("token_usage")
    assert {k: v for k, v in summary.items() if k not in ("replies",)} == {
        k: v for k, v in without["summary"].items() if k != "replies"
    }
    usages = [line["usage"] for line in used if "usage" in line]
    reasoning = [u["reasoning"] for u in usages if "reasoning" in u]
    assert totals == {
        "oracle": {
            "items": len(items),
            "replies": len(usages),
            "input": sum(u["input"] for u in usages),
            "output": sum(u["output"] for u in usages),
            "reasoning": sum(reasoning),
            "reasoning_replies": len(reasoning),
            "mean_input": round(sum(u["input"] for u in usages) / len(usages), 6),
            "mean_output": round(sum(u["output"] for u in usages) / len(usages), 6),
            "mean_reasoning": round(sum(reasoning) / len(reasoning), 6),
            "settings": [SETTINGS],
        }
    }
    expected = (f"tokens oracle: {len(usages)} of {len(items)} replies with usage; input "
                f"{sum(u['input'] for u in usages)} ")  # fmt: skip
    assert expected in with_usage["printed"]


def test_a_malformed_usage_is_a_problem_and_the_reply_still_counts(built, tmp_path):
    task = TASKS[0]
    lines = [
        {"id": f"{task}/inversion", "model": "m", "run": 1, "reply": "[[1]]",
         "usage": {"input": -1, "output": 2}},
        {"id": f"{task}/editing", "model": "m", "run": 1, "reply": "[[1]]",
         "usage": {"input": 1}, "settings": ["temperature", 1]},
        {"id": f"{task}/output_grid", "model": "m", "run": 1, "reply": "[[1]]",
         "usage": {"input": 3, "output": 4, "reasoning": 0}, "settings": SETTINGS},
    ]  # fmt: skip
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = read_replies(path, read_instances(built / "built" / "instances.jsonl"), 1)
    assert len(read.answers) == 3
    assert read.problems.count == 3
    assert [t.split(":")[0] for t in read.problems.texts] == ["line 1", "line 2", "line 2"]
    assert all("ignored" in t for t in read.problems.texts)
    ((key, extras),) = read.extras.items()
    assert key[2:] == (task, "output_grid")
    assert extras.usage is not None and extras.usage.to_json() == lines[2]["usage"]
    assert extras.settings == SETTINGS
