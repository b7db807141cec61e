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
from arcjudge.harness.analyze.tables import Share
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.record import RecordError
from arcjudge.harness.core.tally import FirstFailure, Tally
from arcjudge.harness.dimensions.build_sources import read_corruptions
from arcjudge.harness.dimensions.corruptions import CandidatePair
from arcjudge.harness.dimensions.human_errors import (
    HumanError,
    human_errors_json,
    read_human_errors_json,
)
from arcjudge.harness.dimensions.mixture import PRESETS, Mixture
from arcjudge.harness.dimensions.prompts import Prompt, read_prompts
from arcjudge.harness.dimensions.records import (
    BuildInfo,
    BuildInputs,
    Consistency,
    DimensionItem,
    read_build_info,
    read_items,
)
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.harness.dimensions.summary import (
    AfterSummary,
    DefinitionScoring,
    DimensionScoreSummary,
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
    CANDIDATE_KINDS,
    INVALID_KINDS,
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


# The records of dimensions' files: prompts, score's summary, mixtures, pairs, human errors

PROMPT = Prompt(
    "t/editing",
    "t",
    Dimension.EDITING,
    ({"role": "system", "content": "s"}, {"role": "user", "content": "u"}),
    {"demonstrations": [{"input": [[1]], "output": [[2]]}], "input": [[1]], "output": [[3]]},
)


@pytest.mark.parametrize(
    ("key", "named", "value"),
    [
        ("messages", "messages[1].content", [{"role": "system", "content": "s"}, {"role": "u"}]),
        ("messages", "messages[0].role", [{"role": 1, "content": "s"}]),
        ("messages", "messages", []),
        ("dimension", "dimension", "poetry"),
        ("id", "id", "other/editing"),
        ("model_visible", "model_visible", [1]),
    ],
)
def test_a_bad_prompt_field_is_named_with_its_file_and_line(tmp_path, key, named, value):
    good = PROMPT.to_json()
    path = _lines(tmp_path / "prompts.jsonl", good, {**good, key: value})
    with pytest.raises(InputError) as caught:
        read_prompts(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: not a prompt record"), message
    assert f"field {named!r}: " in message, message


def test_prompts_round_trip():
    _round_trips(PROMPT)
    assert Prompt.from_json(json.loads(json.dumps(PROMPT.to_json()))) == PROMPT
    extra = {**PROMPT.to_json(), "messages": [{"role": "user", "content": "u", "name": "x"}]}
    assert Prompt.from_json(extra).to_json()["messages"] == [{"role": "user", "content": "u"}]


def test_a_bad_mixture_in_build_json_names_the_field(tmp_path):
    path = tmp_path / "build.json"
    mixture = Mixture("arc-agi-1", PRESETS["arc-agi-1"])
    good = BuildInfo(seed=1, mixture=mixture).to_json()
    assert good["mixture"]["weights"] == {k: PRESETS["arc-agi-1"].get(k, 0.0) for k in
                                          CANDIDATE_KINDS}  # fmt: skip
    path.write_text(json.dumps(good))
    assert read_build_info(path).mixture == mixture
    weights = {**good["mixture"]["weights"], "valid": "a quarter"}
    path.write_text(json.dumps({**good, "mixture": {"name": "x", "weights": weights}}))
    with pytest.raises(InputError, match=r"field 'mixture\.weights\.valid': expected number"):
        read_build_info(path)
    path.write_text(json.dumps({**good, "mixture": {"weights": good["mixture"]["weights"]}}))
    with pytest.raises(InputError, match=r"field 'mixture\.name': missing"):
        read_build_info(path)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(sorted(INVALID_KINDS)),
    GRIDS,
    GRIDS,
    st.none() | GRIDS,
    st.dictionaries(TEXT, st.integers(0, 9) | TEXT),
)
def test_candidate_pairs_round_trip(kind, grid_in, grid_out, correct, detail):
    _round_trips(CandidatePair("t", kind, grid_in, grid_out, correct, detail))


def test_a_bad_candidate_pair_or_human_error_names_the_field():
    good = CandidatePair("t", "color_flip", GRID, GRID, None, {"a": 1}).to_json()
    with pytest.raises(RecordError, match=r"field 'correct_output': not a grid"):
        CandidatePair.from_json({**good, "correct_output": [[1, 2], [3]]})
    with pytest.raises(RecordError, match=r"field 'count': expected int, got str"):
        HumanError.from_json({"output": [[1]], "count": "2"})
    assert HumanError.from_json({"output": [[1]]}) == HumanError(((1,),), 1, 0)


def test_human_errors_json_reads_back_to_the_same_bytes(tmp_path):
    path = tmp_path / "human_errors.json"
    path.write_text(json.dumps({
        "b": [[[1, 2]], {"output": [[3]], "count": 2, "test_index": 1}],
        "a": [{"output": [[5]], "count": 0}, {"output": [[5]], "count": "x"}],
    }))  # fmt: skip
    read = read_human_errors_json(path)
    assert read.skipped == ["task a entry 1: field 'count': expected int, got str"]
    text = human_errors_json(read)
    path.write_text(text)
    assert human_errors_json(read_human_errors_json(path)) == text
    assert json.loads(text)["b"][1] == {"output": [[3]], "count": 2, "test_index": 1}


def _summary_items() -> list[DimensionItem]:
    return [
        DimensionItem(m, r, t, d, (i + j) % 3 > 0, None)
        for i, (m, r) in enumerate([("m1", "1"), ("m1", "2"), ("m2", "1")])
        for j, (t, d) in enumerate((t, d) for t in ("t1", "t2") for d in Dimension)
    ]


SUMMARIES = st.builds(
    DimensionScoreSummary,
    instances=TEXT, answers=st.none() | TEXT, replies=st.none() | TEXT,
    attempts=st.integers(1, 3), definitions=st.none() | TEXT,
    min_distance=st.floats(0, 1), edit_max_distance=st.floats(0, 1),
    exclude_arcgen=st.booleans(), strict_generation=st.booleans(),
    tasks=st.integers(0, 9), full_tasks=st.integers(0, 9), items=st.integers(0, 99),
    answers_read=st.integers(0, 99), answers_problems=st.lists(TEXT, max_size=2).map(tuple),
    answers_problem_count=st.integers(0, 9), duplicate_answers=st.integers(0, 9),
    unmatched_answers=st.integers(0, 9), definition_notes=st.lists(TEXT, max_size=2).map(tuple),
    definition_replies=st.integers(0, 9),
    definition_scoring=st.none() | st.builds(
        DefinitionScoring, TEXT, st.none() | TEXT,
        st.none() | st.fixed_dictionaries({"kind": TEXT, "path": TEXT}),
        st.integers(0, 99), st.integers(0, 99), st.none() | TEXT,
    ),
    failure_reasons=st.dictionaries(TEXT, st.integers(1, 9)),
    models=st.just(model_statistics(_summary_items(), ["t1", "t2"])),
    after=st.none() | st.builds(
        AfterSummary, st.lists(TEXT, max_size=2).map(tuple),
        st.dictionaries(TEXT, st.dictionaries(TEXT, st.integers(0, 9))),
        st.lists(st.tuples(TEXT, TEXT), max_size=2).map(tuple),
    ),
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(SUMMARIES)
def test_dimension_score_summaries_round_trip(summary):
    data = summary.to_json()
    text = json_dumps(data, sort_keys=True, indent=1)
    back = DimensionScoreSummary.from_json(json.loads(text))
    assert json_dumps(back.to_json(), sort_keys=True, indent=1) == text
    assert ("after" in data) is (summary.after is not None)


def test_a_bad_dimension_score_summary_field_is_named():
    good = DimensionScoreSummary(
        "i.jsonl", "a.jsonl", None, 1, None, 0.1, 0.2, False, False, 2, 2, 30, 30, (), 0, 0, 0,
        (), 0, DefinitionScoring("tasks", None, None, 10, 0, None), {}, {},
    ).to_json()  # fmt: skip
    assert DimensionScoreSummary.from_json(good).to_json() == good
    # A summary from before full task's reading was recorded: computed over complete tasks.
    older = {k: v for k, v in good.items() if k not in ("full_task_over", "missing_dimensions")}
    assert DimensionScoreSummary.from_json(older).full_task_over == "complete-tasks"
    bad = {**good, "definition_scoring": {**good["definition_scoring"], "samples": "ten"}}
    with pytest.raises(RecordError, match=r"field 'definition_scoring\.samples': expected int"):
        DimensionScoreSummary.from_json(bad)
    with pytest.raises(RecordError, match=r"field 'answers_problems\[1\]': expected str"):
        DimensionScoreSummary.from_json({**good, "answers_problems": ["line 1: x", 2]})


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 50).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_shares_round_trip_and_their_derived_keys_are_checked(counts):
    share = Share(*counts)
    _round_trips(share)
    data = share.to_json()
    assert list(data) == ["count", "total", "rate", "ci95"]
    with pytest.raises(RecordError, match=r"field 'rate': expected .* \(from the other fields\)"):
        Share.from_json({**data, "rate": -1})
