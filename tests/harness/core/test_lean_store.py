"""The lean driver and its store: answers judged in wire form, right answers kept as digests.

A fake sandbox (answers computed here, calls counted) drives the real ``Engine`` and
``ResultStore``, so each test sees exactly which inputs ran and what rows were written.
The generator samples drawn per task (``SamplePlan``) are checked against
``draw_samples`` on the bundled sample's generator, through the real process sandbox.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from arcjudge.harness.core.engine import Candidate, Engine
from arcjudge.harness.core.inputs import SamplePlan, draw_samples
from arcjudge.harness.core.keys import PART, input_digest, program_part, result_key, result_keys
from arcjudge.harness.core.results import CandidateOutcome, Expected, StoredResult, TaskInput
from arcjudge.harness.core.store import CACHE_KIB, SCHEMA_VERSION, ResultStore, StoreError
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.sandbox.runtime.canonical import to_wire
from arcjudge.sandbox.types import (
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
    WiredGrids,
    compact,
)
from arcjudge.sandbox.wire import decode_result, encode_job
from arcjudge.tasks import TaskFormatError, load_arcgen_pairs, read_pairs
from arcjudge.verifiers.sources import parse_generator_spec

Answer = Callable[[Grid], Grid]


def flip(g: Grid) -> Grid:
    return tuple(reversed(g))


class FakeSandbox:
    """Answers each input with ``answer(grid)`` in wire form, as a supervisor's reply does."""

    size = 1

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.inputs: list[Grid] = []  # every input run, in order

    def runtime_fingerprint(self) -> str:
        return "fake"

    def run(self, program, inputs: Sequence[Grid], limits, *, policy) -> ProgramResult:
        assert isinstance(inputs, WiredGrids)  # the engine encodes a task's inputs once
        assert inputs.wires == [to_wire(g) for g in inputs]
        self.inputs.extend(inputs)
        reply = {
            "status": "loaded",
            "results": [{"s": "ok", "g": to_wire(self.answer(g)), "t": 0.0} for g in inputs],
        }
        return decode_result(reply, len(inputs), ())


GRIDS: list[Grid] = [((1, 2), (3, 4)), ((5,), (6,), (7,)), ((0, 0, 9), (1, 1, 1)), ((8, 1), (1, 8))]
PROGRAM = Program(b"def transform(g):\n    return g[::-1]\n")


def instances(expected: Answer = flip) -> list[TaskInput]:
    return [TaskInput("train", i, g, expected(g)) for i, g in enumerate(GRIDS)]


def run(store: ResultStore, sandbox: FakeSandbox, insts: list[TaskInput]) -> CandidateOutcome:
    engine = Engine(sandbox, store, Limits(), chunk=2)  # type: ignore[arg-type]
    got: list[CandidateOutcome] = []
    engine.run(
        iter([("t", insts, [Candidate(PROGRAM, "key", None)])]),
        lambda _t, _i, _c, outcomes: got.extend(outcomes),
    )
    return got[0]


def rows(path: Path) -> list[tuple[bytes, str, bytes | None, str | None]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, status, digest, grid FROM results ORDER BY key").fetchall()


def test_the_store_opens_with_its_page_cache(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    try:
        assert store._db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    finally:
        store.close()


def test_right_answers_are_stored_as_a_digest_and_wrong_ones_in_full(tmp_path):
    # right on the first two inputs only: the program flips, the expected output of the
    # last two is the input itself (no input is its own flip)
    expected = {g: (flip(g) if i < 2 else g) for i, g in enumerate(GRIDS)}
    store = ResultStore(tmp_path / "c.sqlite")
    outcome = run(store, FakeSandbox(flip), instances(expected.__getitem__))
    store.close()
    assert [r.right for r in outcome.results] == [True, True, False, False]
    got = rows(tmp_path / "c.sqlite")
    assert len(got) == 4
    digests = [r for r in got if r[3] is None]
    full = sorted(r[3] for r in got if r[3] is not None)
    # a right row: no grid, the 16-byte BLAKE2b of the expected output's "width:digits"
    assert sorted(r[2] for r in digests) == sorted(
        hashlib.blake2b(f"{w}:{d}".encode(), digest_size=16).digest()
        for w, d in (to_wire(flip(g)) for g in GRIDS[:2])
    )
    assert all(len(r[0]) == 32 for r in got)  # binary keys: program part, input part
    # a wrong row: the grid the program returned, no digest
    assert full == sorted(f"{w}:{d}" for w, d in (to_wire(flip(g)) for g in GRIDS[2:]))
    assert all(r[2] is None for r in got if r[3] is not None)
    with sqlite3.connect(tmp_path / "c.sqlite") as db:  # one table, one row per result
        tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        assert sorted(t[0] for t in tables) == ["programs", "results"]


def test_a_rerun_reads_right_and_wrong_answers_back_without_running(tmp_path):
    expected = {g: (flip(g) if i % 2 else g) for i, g in enumerate(GRIDS)}
    insts = instances(expected.__getitem__)
    store = ResultStore(tmp_path / "c.sqlite")
    first = run(store, FakeSandbox(flip), insts)
    store.close()
    store = ResultStore(tmp_path / "c.sqlite")
    sandbox = FakeSandbox(flip)
    again = run(store, sandbox, insts)
    store.close()
    assert sandbox.inputs == []  # all four from the store
    assert [r.right for r in again.results] == [r.right for r in first.results]
    assert again.tally(insts) == first.tally(insts)
    for inst, res in zip(insts, again.results, strict=True):
        assert res is not None and res.grid == flip(inst.grid)
        if res.right:
            assert res.grid is inst.expected  # a right answer's grid is the expected output


def test_a_digest_that_is_not_the_expected_outputs_is_a_miss(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    run(store, FakeSandbox(flip), instances())  # all right: four digests
    store.close()
    # the same program and inputs, but the expected output of input 1 is another grid now
    # (e.g. a sample's output from --verifiers): only the digest is stored, so it reruns
    changed = instances()
    changed[1] = TaskInput("train", 1, GRIDS[1], GRIDS[1])
    store = ResultStore(tmp_path / "c.sqlite")
    sandbox = FakeSandbox(flip)
    outcome = run(store, sandbox, changed)
    store.close()
    assert sandbox.inputs == [GRIDS[1]]
    assert [r.right for r in outcome.results] == [True, False, True, True]
    assert outcome.results[1] is not None and outcome.results[1].grid == flip(GRIDS[1])
    assert outcome.tally(changed).first_failure["train"].produced == flip(GRIDS[1])


def test_a_stored_wrong_grid_is_judged_against_the_expected_output_of_now(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    run(store, FakeSandbox(flip), instances(lambda g: g))  # all wrong: grids stored
    store.close()
    store = ResultStore(tmp_path / "c.sqlite")
    sandbox = FakeSandbox(flip)
    outcome = run(store, sandbox, instances())  # now the flip is expected
    store.close()
    assert sandbox.inputs == []
    assert [r.right for r in outcome.results] == [True] * 4


def test_judging_compares_wire_forms_and_decodes_wrong_answers_only_when_read():
    result = decode_result(
        {"status": "loaded", "results": [
            {"s": "ok", "g": [2, "2143"]}, {"s": "ok", "g": [2, "1234"]}, {"s": "error", "e": "x"},
        ]},
        3, (),
    )  # fmt: skip
    right, wrong, failed = result.results
    assert right.wire == (2, "2143") and right.grid == ((2, 1), (4, 3))
    expected = Expected(((2, 1), (4, 3)))
    judged = StoredResult.judged(right, expected)
    assert judged.right is True and judged.grid is expected.grid
    judged = StoredResult.judged(wrong, expected)
    assert judged.right is False and judged.wire == (2, "1234")
    assert judged.grid == ((1, 2), (3, 4))
    assert StoredResult.judged(failed, expected).right is False
    # a grid of other cells or shape is never equal, nor anything to an empty expected
    assert StoredResult.judged(RunResult(0, Status.OK, ((2, 1, 4, 3),)), expected).right is False
    assert StoredResult.judged(right, Expected(())).right is False


@pytest.mark.parametrize(
    "value",
    [[2, "21430"], [0, ""], [2, "21a3"], [101, "1" * 101], ["2", "2143"], [2, 2143], [2]],
)
def test_a_malformed_wire_form_is_infra_not_an_answer(value):
    result = decode_result({"status": "loaded", "results": [{"s": "ok", "g": value}]}, 1, ())
    assert result.status is ProgramStatus.INFRA and "malformed" in (result.error or "")


def test_compact_forms_and_wired_inputs():
    for grid in GRIDS:
        assert list(compact(grid) or ()) == to_wire(grid)
    for bad in ((), ((1, 2), (3,)), ((10,),), ((-1,),), (("1",),), ((1.0,),), ((1,),) * 101):
        assert compact(bad) is None, bad
    frame = encode_job(PROGRAM, WiredGrids(GRIDS[:1], [["sent", "as is"]]), Limits())
    assert frame["inputs"] == [["sent", "as is"]]
    assert encode_job(PROGRAM, GRIDS[:1], Limits())["inputs"] == [to_wire(GRIDS[0])]
    with pytest.raises(ValueError):
        WiredGrids(GRIDS, [])


OLD = """
CREATE TABLE results (key TEXT PRIMARY KEY, status TEXT NOT NULL, grid TEXT, output TEXT,
    error TEXT);
CREATE TABLE programs (key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT,
    findings TEXT NOT NULL);
INSERT INTO results VALUES ('k', 'ok', '[[1]]', NULL, NULL);
PRAGMA user_version = 2;
"""


SCHEMA_3 = """
CREATE TABLE results (key BLOB PRIMARY KEY, status TEXT NOT NULL, digest BLOB) WITHOUT ROWID;
CREATE TABLE extras (key BLOB PRIMARY KEY, grid TEXT, output TEXT, error TEXT);
CREATE TABLE programs (key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT,
    findings TEXT NOT NULL);
INSERT INTO results VALUES (x'00', 'ok', NULL);
PRAGMA user_version = 3;
"""


@pytest.mark.parametrize(
    ("script", "version", "query", "rows"),
    [
        (OLD, 2, "SELECT grid FROM results", [("[[1]]",)]),
        (SCHEMA_3, 3, "SELECT COUNT(*) FROM results", [(1,)]),
    ],
)
def test_an_older_schema_store_is_refused_and_left_as_it_was(
    tmp_path, script, version, query, rows
):
    assert SCHEMA_VERSION == 4
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.executescript(script)
    with pytest.raises(StoreError, match=rf"schema {version}.*schema 4 only.*delete the file"):
        ResultStore(old)
    with sqlite3.connect(old) as db:
        assert db.execute(query).fetchall() == rows
        assert db.execute("PRAGMA user_version").fetchone()[0] == version


def test_a_programs_keys_share_its_part_and_differ_by_input():
    digests = [input_digest(g) for g in GRIDS]
    keys = result_keys("prog-a", digests)
    other = result_keys("prog-b", digests)
    assert keys == [result_key("prog-a", d) for d in digests]
    assert {k[:PART] for k in keys} == {program_part("prog-a")}
    assert len(set(keys)) == len(GRIDS) and not set(keys) & set(other)
    assert [k[PART:] for k in keys] == [o[PART:] for o in other]


def test_lookups_see_only_their_programs_rows(tmp_path):
    # a program with no row is answered by one probe; its neighbours' rows never answer
    store = ResultStore(tmp_path / "c.sqlite")
    try:
        digests = [input_digest(g) for g in GRIDS]
        mine = result_keys("prog-a", digests)
        store.put_many([(mine[1], StoredResult(Status.ERROR, error="boom"))])
        assert list(store.get_many(mine)) == [mine[1]]
        assert store.get_many(mine)[mine[1]].error == "boom"
        assert store.get_many(result_keys("prog-b", digests)) == {}
        mixed = [mine[0], *result_keys("prog-b", digests), mine[1]]
        assert list(store.get_many(mixed)) == [mine[1]]
    finally:
        store.close()


def test_task_files_without_booleans_are_checked_the_same_fast(tmp_path):
    good = [{"input": [[1, 2], [3, 4]], "output": [[0]]}]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(good))
    assert load_arcgen_pairs(path)[0].input == ((1, 2), (3, 4))
    for cell in (10, -1, 1.0, "1", None, [1], 2**70):
        path.write_text(json.dumps([{"input": [[1, cell]], "output": [[0]]}]))
        with pytest.raises(TaskFormatError, match=r"pairs\[0\]\.input is not a grid"):
            load_arcgen_pairs(path)
    path.write_text(json.dumps([{"input": [[1, True]], "output": [[0]]}]))  # strict path
    with pytest.raises(TaskFormatError, match="unsupported cell type: bool"):
        load_arcgen_pairs(path)
    with pytest.raises(TaskFormatError, match="ragged"):
        read_pairs([{"input": [[1, 2], [3]], "output": [[0]]}], "x", bools=False)


def test_samples_drawn_per_task_in_chunks_are_those_drawn_at_once(sandbox, tmp_path):
    generator = parse_generator_spec(f"arc-gen:{sample_dir() / 'generators' / 'arc-gen'}")
    task_ids = sorted(p.stem for p in (sample_dir() / "tasks").glob("*.json"))[:3]
    store = ResultStore(tmp_path / "a.sqlite")
    drawn, report = draw_samples(sandbox, store, generator, task_ids, 5, 77)
    store.close()
    store = ResultStore(tmp_path / "b.sqlite")
    drawer = SamplePlan(sandbox, store, generator, 5, 77, chunk=2)
    for task_id in task_ids:
        samples, entry = drawer.draw(task_id)
        assert entry == report[task_id]
        assert samples == drawn.get(task_id, [])
    store.close()
    assert any(drawn.values())
    store = ResultStore(tmp_path / "b.sqlite")  # again: every job from the store
    drawer = SamplePlan(sandbox, store, generator, 5, 77, chunk=2)
    drawer.sandbox = None  # type: ignore[assignment]  # would fail if anything ran
    for task_id in task_ids:
        if "requested" in report[task_id]:
            assert drawer.draw(task_id) == (drawn[task_id], report[task_id])
    store.close()
