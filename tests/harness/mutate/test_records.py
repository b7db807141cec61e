"""Mutate's records round-trip: real ``mutate`` lines read back give the same dict and bytes.

The corruption record is also the format ``dimensions build --corruptions`` reads, so its
reader's rejections (one ``file:line`` error) are checked here too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.record import RecordError
from arcjudge.harness.dimensions.build_sources import read_corruptions
from arcjudge.harness.mutate.records import MutantRecord
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.safetext import json_dumps
from arcjudge.vocabulary import MutantStatus, Split


@pytest.fixture(scope="module")
def mutated(tmp_path_factory) -> Path:
    root = sample_dir()
    out = tmp_path_factory.mktemp("records") / "m"
    argv = [
        "mutate", "--tasks", str(root / "tasks"), "--source", f"re-arc=re-arc:{root / 're-arc'}",
        "--inputs", "4", "--max-per-task", "3", "--out", str(out), "--backend", "process",
        "--wall", "2", "--no-progress",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    return out


def _dumps(data: dict) -> str:
    return json_dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


@pytest.mark.parametrize(
    ("name", "record"), [("mutants.jsonl", MutantRecord), ("corruptions.jsonl", CorruptionRecord)]
)
def test_real_lines_round_trip(mutated, name, record):
    lines = (mutated / name).read_text().splitlines(keepends=True)
    assert len(lines) > 3, f"the sample must give some {name} lines"
    for line in lines:
        data = json.loads(line)
        again = record.from_json(data).to_json()
        assert again == data
        assert _dumps(again) == line


def test_records_carry_vocabulary_words(mutated):
    mutants = [MutantRecord.from_json(json.loads(x)) for x in open(mutated / "mutants.jsonl")]
    assert {m.status for m in mutants} == set(MutantStatus)  # the sample shows every class
    assert all(isinstance(m.status, MutantStatus) for m in mutants)
    pairs = [CorruptionRecord.from_json(json.loads(x)) for x in open(mutated / "corruptions.jsonl")]
    assert all(isinstance(p.split, Split) and p.output != p.correct_output for p in pairs)
    assert {p.mutant_id for p in pairs} <= {m.id for m in mutants if m.status == "killed"}


def test_mutant_record_rejects_an_unknown_status(mutated):
    data = json.loads((mutated / "mutants.jsonl").read_text().splitlines()[0])
    with pytest.raises(RecordError, match=r"field 'status': expected one of .*'nope'"):
        MutantRecord.from_json({**data, "status": "nope"})
    del data["counts"]
    with pytest.raises(RecordError, match="field 'counts': missing"):
        MutantRecord.from_json(data)


def test_the_dimensions_reader_reads_real_lines(mutated):
    lines = (mutated / "corruptions.jsonl").read_text().splitlines()
    read = read_corruptions(mutated / "corruptions.jsonl")
    assert sum(len(v) for v in read.values()) == len(lines)
    first = CorruptionRecord.from_json(json.loads(lines[0]))
    candidate = read[first.task_id][0]
    assert candidate.kind == "corrupted_verifier" and candidate.output == first.output
    assert candidate.correct_output == first.correct_output
    assert candidate.detail == {"mutant_id": first.mutant_id, "split": first.split.value,
                                "index": first.index}  # fmt: skip
    assert type(candidate.detail["split"]) is str


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"task_id": None}, "field 'task_id': expected str, got null"),
        ({"input": "x"}, "field 'input': not a grid"),
        ({"output": [[1, 2], [3]]}, "field 'output': not a grid: ragged rows"),
        ({"mutant_id": 7}, "field 'mutant_id': expected str, got int"),
        ({"split": "nope"}, "field 'split': expected one of train, test, arc-gen"),
        ({"index": True}, "field 'index': expected int, got bool"),
        ({"hamming": "0.5"}, "field 'hamming': expected number, got str"),
        ({"same_shape": 1}, "field 'same_shape': expected bool, got int"),
        ({"kind": "color_flip"}, "field 'kind': expected 'corrupted_verifier'"),
        ({"correct_output": None}, "field 'correct_output': not a grid: NoneType"),
    ],
)
def test_the_reader_rejects_a_malformed_record_with_its_line(mutated, tmp_path, change, reason):
    lines = (mutated / "corruptions.jsonl").read_text().splitlines()
    bad = {**json.loads(lines[1]), **change}
    path = tmp_path / "c.jsonl"
    path.write_text(f"{lines[0]}\n\n{json.dumps(bad)}\n")
    with pytest.raises(InputError) as info:
        read_corruptions(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: not a corruption record (")
    assert reason in message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"input": [[1]], "output": [[2]]}', "field 'task_id': missing"),
        ("[1, 2]", "not a JSON object"),
        ("{not json", "Expecting property name"),
    ],
)
def test_the_reader_keeps_its_messages(tmp_path, text, reason):
    path = tmp_path / "c.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(InputError, match=rf"^{path}:1: not a corruption record \(.*") as info:
        read_corruptions(path)
    assert reason in str(info.value)


def test_a_record_missing_a_key_mutate_writes_is_rejected(mutated, tmp_path):
    data = json.loads((mutated / "corruptions.jsonl").read_text().splitlines()[0])
    for key in ("mutant_id", "split", "index", "correct_output", "hamming", "same_shape", "kind"):
        partial = {k: v for k, v in data.items() if k != key}
        path = tmp_path / "c.jsonl"
        path.write_text(json.dumps(partial) + "\n")
        with pytest.raises(
            InputError, match=rf"not a corruption record \(field '{key}': missing\)"
        ):
            read_corruptions(path)
