"""Records declared once: every reader names the file, line and field of a bad value.

And every record reads back what it writes (round-trip properties over generated records).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge.errors import InputError
from arcjudge.harness.analyze.inputs import read_definition_results
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.record import RecordError
from arcjudge.harness.core.tally import FirstFailure, Tally
from arcjudge.harness.dimensions.build_sources import read_corruptions
from arcjudge.harness.dimensions.records import (
    BuildInfo,
    BuildInputs,
    Consistency,
    DimensionItem,
    read_build_info,
    read_items,
)
from arcjudge.harness.mutate.records import (
    MutantRecord,
    MutateSummary,
    MutationProblem,
    OperatorYield,
)
from arcjudge.harness.score.records import ExtractionRecord, ScoreResult, TimingLine
from arcjudge.harness.validate.records import (
    DisputedInput,
    DisputedOutput,
    VerdictRecord,
    differential_from_json,
    read_suspects,
    read_verdicts,
)
from arcjudge.safetext import json_dumps
from arcjudge.sandbox.types import ProgramStatus
from arcjudge.vocabulary import (
    MUTANT_STATUSES,
    Dimension,
    MutantStatus,
    ScoreFailure,
    ScoreVerdict,
    Split,
    Verdict,
)

GRID = ((1, 2), (3, 4))
TALLY = Tally(
    {"train": (1, 2), "test": (1, 1)},
    {"train": {"ok": 2}},
    {"train": FirstFailure(1, "ok", GRID, GRID, ((0,),), None)},
)
GOOD: dict[str, dict[str, Any]] = {
    "verdict": VerdictRecord("t", "s", {"kind": "golf"}, Verdict.INVALID, TALLY).to_json(),
    "suspect": DisputedInput(
        "t", Split.TRAIN, 0, None, GRID, GRID, (DisputedOutput(GRID, ("a",), True),)
    ).to_json(),
    "result": ScoreResult(
        "p", "t", "ab", ScoreFailure.RULE, TALLY, fields={"model": "m", "run": 1}
    ).to_json(),
    "item": DimensionItem("m", "1", "t", Dimension.EDITING, False, "far", {"d": 3}).to_json(),
    "corruption": CorruptionRecord(
        "t", "t:s:op:a", Split.TEST, 0, GRID, GRID, ((4, 3), (2, 1)), 0.5, True
    ).to_json(),
}


def _lines(path: Path, good: dict[str, Any], bad: dict[str, Any]) -> Path:
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    return path


READERS: list[tuple[str, Callable[[Path], object], str, str, object]] = [
    # (good record, reader, key changed, field named, bad value)
    ("verdict", read_verdicts, "verdict", "verdict", "great"),
    ("verdict", read_verdicts, "statuses", "statuses.train.ok", {"train": {"ok": "two"}}),
    ("verdict", read_verdicts, "first_failure", "first_failure.train.index", {
        "train": {"index": "0", "status": "ok", "input": [[1]], "expected": [[1]],
                  "produced": None, "error": None}
    }),
    ("suspect", read_suspects, "outputs", "outputs[0].is_expected", [
        {"output": [[1]], "sources": ["a"], "is_expected": "yes"}
    ]),
    ("result", read_definition_results, "failure", "failure", "boredom"),
    ("result", read_definition_results, "code_sha256", "code_sha256", 5),
    ("item", read_items, "passed", "passed", "yes"),
    ("corruption", read_corruptions, "hamming", "hamming", "0.5"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "reader", "key", "named", "value"), READERS)
def test_a_bad_field_is_named_with_its_file_and_line(tmp_path, kind, reader, key, named, value):
    good = GOOD[kind]
    path = _lines(tmp_path / f"{kind}.jsonl", good, {**good, key: value})
    with pytest.raises(InputError) as caught:
        reader(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: not a"), message
    assert f"field {named!r}: " in message, message


def test_a_bad_build_json_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "build.json"
    good = BuildInfo(seed=1, repeats=2, inputs=BuildInputs("tasks", "manifest")).to_json()
    path.write_text(json.dumps(good))
    assert read_build_info(path) == BuildInfo.from_json(good)
    path.write_text(json.dumps({**good, "inputs": {**good["inputs"], "arcgen": 3}}))
    with pytest.raises(InputError, match=re.escape(f"{path}: not a dimensions build record")):
        read_build_info(path)
    with pytest.raises(InputError, match=r"field 'inputs\.arcgen': expected str, got int"):
        read_build_info(path)
    path.write_text("[1]")
    with pytest.raises(InputError, match="expected object"):
        read_build_info(path)


def test_a_record_error_names_the_path_inside_lists_and_objects():
    data = {**GOOD["suspect"], "outputs": [GOOD["suspect"]["outputs"][0], {"output": [[1]]}]}
    with pytest.raises(RecordError) as caught:
        differential_from_json(data)
    assert caught.value.path == ("outputs", 1, "sources")
    assert str(caught.value) == "field 'outputs[1].sources': missing"


# Round trips -------------------------------------------------------------------------

TEXT = st.text(max_size=8)
IDS = st.one_of(TEXT, st.integers(-(10**6), 10**6))
GRIDS = st.integers(1, 3).flatmap(
    lambda w: st.lists(st.lists(st.integers(0, 9), min_size=w, max_size=w), min_size=1,
                       max_size=3).map(lambda rows: tuple(map(tuple, rows)))
)  # fmt: skip
COUNTS = st.tuples(st.integers(0, 50), st.integers(0, 50))
FIRST_FAILURES = st.builds(
    FirstFailure, st.integers(0, 9), st.sampled_from(["ok", "error", "timeout"]), GRIDS, GRIDS,
    st.none() | GRIDS, st.none() | TEXT, st.none() | st.integers(0, 10**9),
)  # fmt: skip
SPLITS = st.sampled_from(["train", "test", "arc-gen", "generator"])
TALLIES = st.builds(
    Tally,
    st.dictionaries(SPLITS, COUNTS),
    st.dictionaries(SPLITS, st.dictionaries(st.sampled_from(["ok", "error"]), st.integers(0, 9))),
    st.dictionaries(SPLITS, FIRST_FAILURES),
)
CARRIED = st.dictionaries(
    st.sampled_from(["model", "run", "note", "status", "findings", "splits"]),
    st.one_of(st.none(), TEXT, st.integers(0, 9), st.lists(TEXT, max_size=2)),
)


@st.composite
def score_results(draw: st.DrawFn) -> ScoreResult:
    failure = draw(st.none() | st.sampled_from(list(ScoreFailure)))
    ran = failure is None or draw(st.booleans())
    load = [s for s in ProgramStatus if s is not ProgramStatus.LOADED]
    return ScoreResult(
        draw(IDS),
        draw(IDS),
        draw(TEXT),
        failure,
        tally=draw(TALLIES) if ran else None,
        status=None if ran else draw(st.none() | st.sampled_from(load)),
        error=None if ran else draw(st.none() | TEXT),
        findings=tuple(draw(st.lists(TEXT, max_size=2))),
        extraction=draw(
            st.none()
            | st.builds(
                ExtractionRecord,
                st.none() | st.integers(0, 3),
                st.integers(0, 3),
                TEXT,
                st.booleans(),
            )
        ),
        fields=draw(CARRIED),
        entry_points=tuple(draw(st.lists(st.sampled_from(["transform", "solve"]), max_size=2))),
    )


def _round_trips(record: Any) -> None:
    data = record.to_json()
    text = json_dumps(data, sort_keys=True, separators=(",", ":"))
    back = type(record).from_json(json.loads(text))
    assert json_dumps(back.to_json(), sort_keys=True, separators=(",", ":")) == text


@settings(max_examples=150, deadline=None)
@given(score_results())
def test_score_results_round_trip(result):
    _round_trips(result)
    back = ScoreResult.from_json(json.loads(json.dumps(result.to_json())))
    assert back.verdict is (ScoreVerdict.PASS if result.failure is None else ScoreVerdict.FAIL)
    assert (back.failure, back.status, back.tally) == (result.failure, result.status, result.tally)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(list(Verdict)),
    st.none() | TALLIES,
    st.none() | TEXT,
    st.lists(TEXT, max_size=2),
)
def test_verdicts_round_trip(verdict, tally, error, findings):
    if verdict is Verdict.MISSING:
        tally, error, findings = None, None, []
    elif tally is not None:
        error = None
    else:
        findings = []
    _round_trips(VerdictRecord("t", "s", {"kind": "golf"}, verdict, tally, error, tuple(findings)))


@settings(max_examples=100, deadline=None)
@given(
    st.builds(
        MutantRecord, TEXT, TEXT, TEXT, TEXT, TEXT, st.none() | TEXT, TEXT,
        st.sampled_from(list(MutantStatus)), st.dictionaries(TEXT, st.integers(0, 99)),
    ),
    st.builds(
        CorruptionRecord, TEXT, TEXT, st.sampled_from(list(Split)), st.integers(0, 9), GRIDS,
        GRIDS, GRIDS, st.floats(0, 1), st.booleans(),
    ),
    st.builds(TimingLine, IDS, st.floats(0, 100)),
)  # fmt: skip
def test_mutants_corruptions_and_timings_round_trip(mutant, corruption, timing):
    for record in (mutant, corruption, timing):
        _round_trips(record)


@settings(max_examples=100, deadline=None)
@given(
    st.builds(
        DimensionItem, TEXT, TEXT, TEXT, st.sampled_from(list(Dimension)), st.booleans(),
        st.none() | TEXT, st.dictionaries(TEXT, st.integers(0, 9)),
        st.none() | st.integers(1, 99),
        st.none() | st.builds(
            Consistency, st.booleans(),
            st.booleans() | st.lists(st.none() | st.booleans(), max_size=5).map(tuple),
            st.none() | st.lists(st.none() | st.booleans(), max_size=5).map(tuple),
        ),
        st.none() | TEXT,
    )
)  # fmt: skip
def test_items_round_trip(item):
    _round_trips(item)


def test_an_operator_yield_counts_every_mutant_status_in_order():
    fields = list(OperatorYield.of([]).to_json())
    assert fields == ["tried", *MUTANT_STATUSES]
    statuses = [MutantStatus.KILLED, MutantStatus.CRASHES, MutantStatus.KILLED]
    counted = OperatorYield.of(statuses)
    assert (counted.tried, counted.killed, counted.crashes, counted.invalid_output) == (3, 2, 1, 0)


@settings(max_examples=100, deadline=None)
@given(
    st.builds(
        MutateSummary,
        target_pairs=st.none() | st.integers(1, 9), seed=st.integers(0, 99),
        inputs=st.integers(0, 99), demonstration_inputs=st.booleans(),
        operator_set=st.sampled_from(["all", "given", "paper"]),
        max_per_task=st.none() | st.integers(1, 9),
        operators=st.dictionaries(TEXT, st.builds(OperatorYield, *[st.integers(0, 9)] * 5)),
        tasks_with_valid_verifier=st.integers(0, 9), tasks_with_corrupted_pairs=st.integers(0, 9),
        corrupted_pairs=st.integers(0, 99),
        problems=st.dictionaries(TEXT, st.lists(st.builds(MutationProblem, TEXT, TEXT)).map(tuple)),
        task_set=st.none() | st.dictionaries(TEXT, TEXT, min_size=1),
    )
)  # fmt: skip
def test_mutate_summaries_round_trip(summary):
    _round_trips(summary)
    assert MutateSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
