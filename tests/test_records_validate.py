"""validate's records: what real runs write reads back to the same objects and bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import test_differential
import test_validate
from arcjudge.errors import InputError
from arcjudge.harness.core.tally import Tally
from arcjudge.harness.validate.records import (
    AmbiguousTask,
    DisputedInput,
    SuspectSample,
    VerdictRecord,
    differential_from_json,
    read_suspects,
    read_verdicts,
)
from arcjudge.harness.validate.validator import write_outputs
from arcjudge.safetext import json_dumps
from arcjudge.vocabulary import Verdict

LINE = {"sort_keys": True, "separators": (",", ":")}  # how validate writes its lines


def assert_lines_round_trip(path: Path, parse) -> list[dict]:
    """Every line of ``path``: from_json then to_json gives the same dict and bytes."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines, path
    objects = []
    for line in lines:
        data = json.loads(line)
        back = parse(data).to_json()
        assert back == data
        assert json_dumps(back, **LINE) == line
        objects.append(data)
    return objects


def test_verdicts_of_every_kind_round_trip(sandbox, tmp_path):
    world = test_validate.make_world(tmp_path)
    validator = test_validate.run_validate(world, sandbox)
    write_outputs(validator, tmp_path / "out")
    path = tmp_path / "out" / "verdicts.jsonl"
    objects = assert_lines_round_trip(path, VerdictRecord.from_json)
    verdicts = {o["verdict"] for o in objects}
    assert {"valid", "invalid", "missing", "load_error"} <= verdicts
    assert any("error" in o for o in objects)  # a load error's text
    assert not any("error" in o for o in objects if "splits" in o)  # never with a tally
    assert read_verdicts(path) == list(validator.verdict_records())


def test_suspects_and_disputes_round_trip(sandbox, tmp_path):
    world = test_differential.make_world(tmp_path)
    validator = test_differential.run(
        world, sandbox, tmp_path, quarantine_suspects=True, probe_samples=12
    )
    write_outputs(validator, tmp_path / "out")
    path = tmp_path / "out" / "suspects.jsonl"
    assert_lines_round_trip(path, differential_from_json)
    kinds = {type(r) for r in read_suspects(path)}
    assert {SuspectSample, DisputedInput, AmbiguousTask} == kinds
    assert read_suspects(path) == list(validator.differential_records())
    verdicts = tmp_path / "out" / "verdicts.jsonl"
    objects = assert_lines_round_trip(verdicts, VerdictRecord.from_json)
    assert "valid_quarantined" in {o["verdict"] for o in objects}


def test_a_missing_verdict_has_no_counts_and_a_load_error_keeps_a_null_error():
    missing = VerdictRecord("t", "s", {}, Verdict.MISSING)
    assert missing.to_json() == {
        "task_id": "t",
        "source": "s",
        "provenance": {},
        "verdict": "missing",
    }
    failed = VerdictRecord("t", "s", {"kind": "golf"}, Verdict.LOAD_ERROR)
    assert failed.to_json()["error"] is None
    assert VerdictRecord.from_json(failed.to_json()) == failed


def test_findings_are_written_only_when_there_are_some():
    ran = VerdictRecord("t", "s", {}, Verdict.VALID, Tally({"train": (1, 1)}, {}, {}))
    assert "findings" not in ran.to_json()
    flagged = VerdictRecord("t", "s", {}, Verdict.VALID, ran.tally, findings=("imports os",))
    assert flagged.to_json()["findings"] == ["imports os"]
    assert VerdictRecord.from_json(flagged.to_json()) == flagged


def test_a_verdict_cannot_have_both_a_tally_and_an_error():
    with pytest.raises(ValueError, match="not both"):
        VerdictRecord("t", "s", {}, Verdict.INFRA, Tally({}, {}, {}), error="boom")


GOOD = '{"provenance":{},"source":"s","task_id":"t","verdict":"load_error","error":"x"}'


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (
            '{"provenance":{},"source":"s","task_id":"t","verdict":"great"}',
            "field 'verdict': expected one of .*'great'",
        ),
        ('{"source":"s","task_id":"t","verdict":"valid"}', "field 'provenance': missing"),
        ("[1, 2]", "not a JSON object"),
        ("{not json", "Expecting"),
        (
            '{"provenance":{},"source":"s","task_id":"t","verdict":"valid",'
            '"splits":{"train":[1]},"statuses":{},"first_failure":{}}',
            r"field 'splits\.train': expected list of 2, got list",
        ),
        (
            '{"provenance":{},"source":"s","task_id":"t","verdict":"valid",'
            '"splits":{},"statuses":{},"first_failure":{},"findings":"import os"}',
            "field 'findings': expected list of str, got str",
        ),
    ],
)
def test_a_malformed_verdict_line_names_its_file_and_line(tmp_path, bad, why):
    path = tmp_path / "verdicts.jsonl"
    path.write_text(f"{GOOD}\n{bad}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"verdicts\.jsonl:2: not a validate record .*{why}"):
        read_verdicts(path)


def test_a_malformed_suspect_line_names_its_file_and_line(tmp_path):
    path = tmp_path / "suspects.jsonl"
    path.write_text('{"kind":"rumour","task_id":"t"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"suspects\.jsonl:1: .*rumour"):
        read_suspects(path)
    path.write_text(
        '{"kind":"suspect","task_id":"t","split":"train","index":0,"seed":null,'
        '"input":[[1]],"expected":"grid","agreeing_output":[[2]],"sources":[]}\n'
    )
    with pytest.raises(InputError, match=r"suspects\.jsonl:1: .*field 'expected': not a grid"):
        read_suspects(path)


def test_an_unreadable_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"missing\.jsonl"):
        read_verdicts(tmp_path / "missing.jsonl")
