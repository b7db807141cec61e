"""The README's whole loop on the bundled sample, with the canned replies shipped with it.

validate --sample -> mutate -> dimensions build -> dimensions prompts -> (the sample's
``replies.jsonl``) -> dimensions score: the shipped replies are what
``tests/fixtures/sample_replies.py`` writes for this build (so they cannot go stale), and
the scores are what the two canned models were made to get.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.harness.validate.cli import sample_dir

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures"))
import sample_replies

SAMPLE = sample_dir()


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


@pytest.fixture(scope="module")
def loop(tmp_path_factory) -> Path:
    """The README's commands, in a fresh directory."""
    out = tmp_path_factory.mktemp("loop")
    s = SAMPLE
    run_cli("validate", "--sample", "--out", str(out / "val"))
    run_cli("mutate", "--tasks", str(s / "tasks"), "--manifest", str(out / "val"),
            "--source", f"re-arc=re-arc:{s / 're-arc'}", "--source", f"golf=golf:{s / 'golf'}",
            "--source", f"module=module:{s / 'module'}", "--out", str(out / "mut"))  # fmt: skip
    corruptions, instances = out / "mut" / "corruptions.jsonl", out / "built" / "instances.jsonl"
    run_cli("dimensions", "build", "--tasks", str(s / "tasks"), "--manifest", str(out / "val"),
            "--corruptions", str(corruptions), "--out", str(out / "built"))  # fmt: skip
    prompts = ["--tasks", str(s / "tasks"), "--out", str(out / "prompts.jsonl")]
    assert cli.main(["dimensions", "prompts", "--instances", str(instances), *prompts]) == 0
    run_cli("dimensions", "score", "--instances", str(instances),
            "--replies", str(s / "replies.jsonl"), "--out", str(out / "scored"))  # fmt: skip
    return out


def test_the_shipped_replies_are_those_of_this_build(loop):
    written = sample_replies.replies(loop / "built", loop / "prompts.jsonl")
    shipped = (SAMPLE / "replies.jsonl").read_text().splitlines(keepends=True)
    assert shipped == written, "rewrite with tests/fixtures/sample_replies.py (see its docstring)"


def _items(loop: Path) -> dict[tuple[str, str, str], dict]:
    items = [json.loads(line) for line in (loop / "scored" / "items.jsonl").open()]
    return {(i["model"], i["task_id"], i["dimension"]): i for i in items}


def test_careful_is_right_except_where_it_was_made_wrong(loop):
    instances = [json.loads(line) for line in (loop / "built" / "instances.jsonl").open()]
    items = _items(loop)
    for record in instances:
        task, dim = record["task_id"], record["dimension"]
        item = items[("careful", task, dim)]
        if dim == "definition":
            expected = task in sample_replies.PROGRAMS
        elif (task, dim) in sample_replies.CAREFUL_MISTAKES:
            expected = False
        else:
            expected = sample_replies.careful(record, 0) is not None
        assert item["passed"] is expected, item
        if dim != "definition" and expected:
            assert not item["how"].startswith("unparsable"), item


def test_hasty_scores_what_an_independent_check_says(loop):
    items = _items(loop)
    for path in sorted((SAMPLE / "tasks").glob("*.json")):
        task = json.loads(path.read_text())
        first = task["train"][0]["output"]
        copies = all(t["output"] == first for t in task["test"])
        assert items[("hasty", path.stem, "output_grid")]["passed"] is copies
        for dim in ("classification", "generation", "definition"):
            assert not items[("hasty", path.stem, dim)]["passed"]  # never all valid; copies
    summary = json.loads((loop / "scored" / "summary.json").read_text())
    stats = summary["models"]["careful"]
    assert stats["dimensions"]["output_grid"]["passed"] == 9
    assert stats["full_task"]["passed"] == 8 and stats["output_grid_drop"] == pytest.approx(0.1)
    assert summary["answers_problem_count"] == 0
    assert (loop / "scored" / "report.html").read_text().count("Output grid") >= 2


def test_the_same_loop_through_inspect_with_the_replies_played_back(loop, tmp_path):
    """``inspect eval arcjudge/potarcin ... -T replay=...``: the JSONL path's numbers."""
    if os.environ.get("ARCJUDGE_REQUIRE_INSPECT") != "1":
        pytest.importorskip("inspect_ai", reason="needs inspect_ai (the test extras)")
    from inspect_ai import eval as inspect_eval

    from arcjudge.integrations.inspect_log import replies_from_inspect_log
    from arcjudge.integrations.inspect_task import potarcin

    task = potarcin(
        instances=str(loop / "built" / "instances.jsonl"),
        prompts=str(loop / "prompts.jsonl"),
        replay=str(SAMPLE / "replies.jsonl"),
        replay_model="careful",
        backend="process",
    )
    (log,) = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (score,) = log.results.scores
    seen = {name: m.value for name, m in score.metrics.items()}
    summary = json.loads((loop / "scored" / "summary.json").read_text())
    for dim, entry in summary["models"]["careful"]["dimensions"].items():
        assert seen[dim] == entry["accuracy"] and seen[f"{dim}_items"] == entry["total"], dim
        assert [seen[f"{dim}_low"], seen[f"{dim}_high"]] == entry["ci95"], dim
    # The log converts back to the replies played (careful's lines of the shipped file).
    (log_file,) = tmp_path.glob("*.eval")
    back = replies_from_inspect_log(log_file, model="careful")
    shipped = [json.loads(line) for line in (SAMPLE / "replies.jsonl").open()]
    want = {(r["id"], r["reply"]) for r in shipped if r["model"] == "careful"}
    assert {(r["id"], r["reply"]) for r in back.replies} == want and not back.errored
