"""``score``'s records read back what ``score`` wrote: the same objects, the same bytes."""

from __future__ import annotations

import json

import pytest

from arcjudge import cli
from arcjudge.harness.core.record import RecordError
from arcjudge.harness.score.records import (
    GroupSummary,
    ScoreResult,
    ScoreSummary,
    TimingLine,
)
from arcjudge.safetext import json_dumps
from arcjudge.sandbox.types import ProgramStatus
from arcjudge.vocabulary import FailureClass, ScoreFailure, ScoreVerdict

TASK = "aaaa0001"  # flip the rows
GRIDS = [[[1, 2], [3, 4]], [[0, 1, 0], [2, 2, 2]], [[3, 3], [0, 3], [4, 4]], [[5, 6]]]
FLIP = "def transform(g):\n    return g[::-1]\n"
# Right on every input, with a policy finding (attr.dunder): rejected under enforce.
DUNDER = "def transform(g):\n    assert g.__class__ is list\n    return g[::-1]\n"
PROGRAMS = [
    {"id": "pass", "task_id": TASK, "model": "a", "run": 1, "code": FLIP},
    {"id": 7, "task_id": TASK, "model": "a", "note": {"nested": [1, None]}, "code": FLIP},
    {"id": "dunder", "task_id": TASK, "model": "b", "code": DUNDER},
    {"id": "rule", "task_id": TASK, "model": "b", "code": "def transform(g):\n    return g\n"},
    {"id": "runtime", "task_id": TASK, "model": None, "code": "def transform(g):\n    1 / 0\n"},
    {"id": "syntax", "task_id": TASK, "code": "def transform(g)\n    pass\n"},
    {"id": "reply", "task_id": TASK, "model": "m\ud800", "response": f"```python\n{FLIP}```\n"},
    {"id": "no_code", "task_id": TASK, "response": "the rule flips the grid", "status": "mine"},
    {"id": "unclosed", "task_id": TASK, "response": "```python\ndef transform(g):\n  return g"},
]  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("records_score")
    (root / "tasks").mkdir()
    pairs = [{"input": g, "output": g[::-1]} for g in GRIDS]
    task = {"train": pairs[:2], "test": pairs[2:3], "arc-gen": pairs[3:]}
    (root / "tasks" / f"{TASK}.json").write_text(json.dumps(task))
    gen = root / "gen"
    (gen / "tasks").mkdir(parents=True)
    (gen / "tasks" / f"task_{TASK}.py").write_text(
        "import random\n\ndef generate():\n"
        "    g = [[random.randint(0, 9) for _ in range(2)] for _ in range(random.randint(2, 3))]\n"
        "    return {'input': g, 'output': g[::-1]}\n"
    )
    (root / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROGRAMS))
    for policy in ("warn", "enforce"):
        argv = [
            "score", "--programs", str(root / "programs.jsonl"), "--tasks", str(root / "tasks"),
            "--generator", f"arc-gen:{gen}", "--samples", "3", "--wall", "2", "--policy", policy,
            "--out", str(root / policy), "--backend", "process", "--workers", "1", "--no-progress",
        ]  # fmt: skip
        assert cli.main(argv) == 0
    return root


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("policy", ["warn", "enforce"])
def test_results_round_trip(world, policy):
    results = {}
    for line in lines(world / policy / "results.jsonl"):
        data = json.loads(line)
        result = ScoreResult.from_json(data)
        assert result.to_json() == data
        assert json_dumps(result.to_json(), sort_keys=True, separators=(",", ":")) == line
        assert ScoreResult.from_json(result.to_json()) == result
        results[result.id] = result
    assert len(results) == len(PROGRAMS)
    assert results["pass"].passed and results["pass"].fields == {"model": "a", "run": 1}
    assert results[7].tally is not None and "generator" in results[7].tally.splits
    assert results["rule"].failure is ScoreFailure.RULE
    assert results["rule"].tally.first_failure["generator"].seed is not None
    assert results["runtime"].failure is ScoreFailure.RUNTIME and results["runtime"].model == "None"
    rejected = ProgramStatus.LOAD_ERROR if policy == "warn" else ProgramStatus.POLICY_REJECTED
    assert results["syntax"].status is rejected and results["syntax"].model is None
    assert results["syntax"].failure is ScoreFailure.STATIC and results["syntax"].tally is None
    no_code = results["no_code"]
    assert no_code.status is None and no_code.error and no_code.extraction is not None
    assert no_code.fields["status"] == "mine"  # a field of the program record, carried over
    assert results["unclosed"].extraction.fence_unclosed
    # The entry points it ran with, for whoever runs it again (dimensions score).
    assert {r.entry_points for r in results.values()} == {("transform", "solve", "p", "main")}
    old = {k: v for k, v in results["pass"].to_json().items() if k != "entry_points"}
    assert ScoreResult.from_json(old).entry_points == ()  # a result from before: none
    carried = ScoreResult.from_json({**old, "entry_points": "not a list"})
    assert carried.entry_points == () and carried.fields["entry_points"] == "not a list"
    dunder = results["dunder"]
    assert dunder.findings and "attr.dunder" in dunder.findings[0]
    if policy == "warn":
        assert dunder.passed and dunder.tally is not None
    else:
        assert dunder.status is ProgramStatus.POLICY_REJECTED and dunder.failure is not None


def test_timings_and_summary_round_trip(world):
    for line in lines(world / "warn" / "timings.jsonl"):
        timing = TimingLine.from_json(json.loads(line))
        assert json_dumps(timing.to_json(), sort_keys=True) == line
    text = (world / "warn" / "summary.json").read_text(encoding="utf-8")
    summary = ScoreSummary.from_json(json.loads(text))
    assert json_dumps(summary.to_json(), sort_keys=True, indent=1) + "\n" == text
    assert next(iter(summary.groups)) == "(all)" and summary.groups["(all)"].programs == len(
        PROGRAMS
    )
    assert summary.generator[TASK]
    group = GroupSummary.from_json(json.loads(text)["groups"]["b"])
    assert group == summary.groups["b"] and group.failures[ScoreFailure.RULE] == 1


def test_malformed_records_are_rejected(world):
    good = json.loads(lines(world / "warn" / "results.jsonl")[0])
    bad_records = [
        ({**good, "verdict": "fail"}, "verdict"),  # a failed program needs its failure
        ({**good, "verdict": "maybe"}, "verdict"),
        ({**good, "failure": "boredom", "verdict": "fail"}, "failure"),
        ({k: v for k, v in good.items() if k != "code_sha256"}, "code_sha256"),
        ({**good, "id": [1]}, "id"),
    ]
    for data, field in bad_records:
        with pytest.raises(RecordError) as caught:
            ScoreResult.from_json(data)
        assert caught.value.path[:1] == (field,), caught.value
    for data in (
        {**good, "splits": {"train": "many"}},  # a pass needs its tally
        {k: v for k, v in good.items() if k != "statuses"},
    ):
        with pytest.raises(ValueError):
            ScoreResult.from_json(data)
    load = json.loads(lines(world / "warn" / "results.jsonl")[5])  # syntax: a load failure
    # No tally: the load error (or why nothing ran) is needed.
    with pytest.raises(RecordError, match="'error': missing"):
        ScoreResult.from_json({k: v for k, v in load.items() if k != "error"})
    odd = {**load, "status": "exploded", "findings": "x"}  # not what a result writes there
    assert ScoreResult.from_json(odd).fields == {"status": "exploded", "findings": "x"}
    assert ScoreResult.from_json(odd).to_json() == odd
    with pytest.raises(RecordError, match="'seconds': expected number, got str"):
        TimingLine.from_json({"id": "x", "seconds": "fast"})
    with pytest.raises(RecordError, match=r"'failures\.boredom'"):
        GroupSummary.from_json({"programs": 1, "passed": 0, "failures": {"boredom": 1}})
    assert ScoreFailure.RULE == FailureClass.RULE and ScoreResult.from_json(good).verdict is (
        ScoreVerdict.PASS
    )
