"""Issue 16's acceptance check on a dozen training tasks (``bench/oracle_replies.py``: all 400).

The pipeline (``tests/support/oracle_pipeline.py``): lookup-table verifiers of our own, validate,
build, prompts in both grid formats with a leak check, oracle replies from the keys in six
styles parsed back and scored, demonstration outputs as output-grid answers against plain
Python over the task files, junk replies that must fail without stopping the run. The
tasks include ones with several test inputs and ones whose test outputs are among the
first two demonstrations' outputs. Needs the shared data (skipped without it).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from arcjudge import cli
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension
from tests.support.oracle_pipeline import (
    STYLES,
    OracleReply,
    PipelineReport,
    Style,
    choose_tasks,
    demonstration_expected,
    largest_side,
    leaks,
    oracle_answer,
    parse_back,
    render_reply,
    run_pipeline,
    wrong,
)

TASKS = 12


def run_cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv)
    assert code == 0, (argv, out.getvalue()[-2000:])
    return out.getvalue()


@pytest.fixture(scope="module")
def chosen(shared_data) -> list[str]:
    return choose_tasks(shared_data / "arc-agi-1" / "training", shared_data / "arc-gen-100k", TASKS)


@pytest.fixture(scope="module")
def report(shared_data, chosen, tmp_path_factory) -> PipelineReport:
    root = tmp_path_factory.mktemp("oracle")
    tasks, arcgen = shared_data / "arc-agi-1" / "training", shared_data / "arc-gen-100k"
    box = ["--backend", "process", "--workers", "2", "--no-progress"]
    return run_pipeline(tasks, arcgen, chosen, root, run_cli, box)


def test_the_subset_has_what_the_check_needs(shared_data, chosen):
    tasks = {t: json.loads((shared_data / "arc-agi-1" / "training" / f"{t}.json").read_text())
             for t in chosen}  # fmt: skip
    assert len(chosen) == TASKS
    assert sum(len(t["test"]) > 1 for t in tasks.values()) >= TASKS // 3
    hits = demonstration_expected(shared_data / "arc-agi-1" / "training", chosen, 2)
    assert len(hits) >= 2
    large = [t for t in chosen if largest_side(shared_data / "arc-gen-100k" / f"{t}.json") > 30]
    assert large  # instances with grids past ARC's 30 per side


def test_every_check_holds(report):
    assert report.problems == [], "\n".join(report.problems[:30])


def test_every_dimension_was_built_prompted_answered_and_scored(report):
    assert report.validated == TASKS
    for dim in BUILT_DIMENSIONS:
        assert report.instances[dim] == TASKS, dim
        for fmt in ("digits", "json"):
            assert report.prompts[fmt][dim] == TASKS, (fmt, dim)
        answered = report.replies[dim] + report.unanswerable[dim]
        assert answered == TASKS, dim
        assert report.parsed_back[dim] == report.replies[dim] == report.scored[dim], dim
        assert report.passed[dim] == report.scored[dim] > 0, dim


def test_the_leak_check_had_something_to_look_for(report):
    assert report.looked_for["hidden grids"] >= 2 * TASKS * len(BUILT_DIMENSIONS)
    assert report.looked_for["candidate labels"] == 2 * 5 * TASKS


def test_every_style_was_used_on_every_dimension(report):
    for style in STYLES:
        for dim in BUILT_DIMENSIONS:
            assert report.style_dimensions[(style, dim)] > 0, (style, dim)
    assert len({how for (dim, how) in report.hows if dim == Dimension.OUTPUT_GRID}) >= 4


def test_demonstration_answers_score_what_the_task_files_say(report):
    assert len(report.demonstrations) == 2
    for result in report.demonstrations.values():
        assert result["total"] == TASKS
        assert result["passed"] == result["expected"]
        assert result["accuracy"] == result["expected_accuracy"]
    assert any(result["expected"] for result in report.demonstrations.values())


def test_junk_replies_fail_without_stopping_the_run(report):
    assert report.junk["items"] == TASKS * len(BUILT_DIMENSIONS)
    assert report.junk["passed"] == 0


# ---------------------------------------------------------------------------- the checks fail


INSTANCE = {
    "task_id": "00000000",
    "dimension": "inversion",
    "prompt": {"output": [[1]]},
    "key": {"input": [[1, 2], [3, 4]], "split": "arc-gen", "index": 0},
}


def test_a_wrong_reply_does_not_parse_back_to_the_key():
    answer = oracle_answer(INSTANCE, "")
    for style in STYLES:
        chosen = Style(style, "pipes")
        good = render_reply("inversion", answer, chosen)
        assert parse_back(OracleReply("x", "t", "inversion", chosen, good, answer))[0] == answer
        bad = render_reply("inversion", wrong(answer), chosen)
        assert parse_back(OracleReply("x", "t", "inversion", chosen, bad, answer))[0] != answer


def test_the_leak_check_finds_a_key_grid_in_a_prompt():
    prompt = {
        "id": "00000000/inversion",
        "messages": [{"role": "user", "content": "Output:\n```\n1\n```\n```\n12\n34\n```"}],
        "model_visible": {"output": [[1]]},
    }
    found = leaks(prompt, INSTANCE, [], "digits")
    assert len(found) == 1 and "grid" in found[0]
    prompt["messages"] = [{"role": "user", "content": "Output:\n```\n1\n```"}]
    assert leaks(prompt, INSTANCE, [], "digits") == []
