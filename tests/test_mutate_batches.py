"""`arcjudge mutate` in batches against one program per mutant, the store, --target-pairs."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from arcjudge import cli
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.results import CandidateOutcome, StoredResult, TaskInput
from arcjudge.harness.mutate.schemata import (
    CALL_FLOOR_SECONDS,
    call_deadline,
    confirmed_pairs,
    considered,
    mutant_order,
)
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.sandbox.pool import PooledSandbox
from arcjudge.sandbox.types import (
    Limits,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
)

OUTPUTS = ("mutants.jsonl", "corruptions.jsonl", "summary.json")


def argv(shared_data, out, *extra):
    root = sample_dir()
    return [
        "mutate", "--tasks", str(root / "tasks"), "--arcgen", str(shared_data / "arc-gen-100k"),
        "--source", f"re-arc=re-arc:{root / 're-arc'}", "--source", f"golf=golf:{root / 'golf'}",
        "--inputs", "12", "--max-per-task", "5", "--out", str(out), "--backend", "process",
        "--workers", "2", "--wall", "2", "--no-progress", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory, shared_data):
    base = tmp_path_factory.mktemp("batches")
    for name, extra in {
        "batched": (),
        "single": ("--one-program-per-mutant",),
        "target": ("--target-pairs", "3", "--batch", "4"),
        "target_again": ("--target-pairs", "3", "--batch", "7"),
        "target_single": ("--target-pairs", "3", "--one-program-per-mutant"),
    }.items():
        assert cli.main(argv(shared_data, base / name, *extra)) == 0
    return base


def read(out, name):
    return (out / name).read_bytes()


def test_batched_outputs_equal_one_program_per_mutant(runs):
    for name in OUTPUTS:
        assert read(runs / "batched", name) == read(runs / "single", name), name
    assert read(runs / "batched", "corruptions.jsonl"), "the sample must yield pairs"


def test_a_rerun_of_either_path_is_served_from_the_store(runs, shared_data, monkeypatch, tmp_path):
    def no_sandbox(*args, **kwargs):
        raise AssertionError("a cached mutant or original ran again")

    monkeypatch.setattr(PooledSandbox, "_execute", no_sandbox)
    monkeypatch.setattr(PooledSandbox, "run_variants", no_sandbox)
    store = runs / "batched" / "cache.sqlite"
    for extra in ((), ("--one-program-per-mutant",)):
        out = tmp_path / ("x" + "".join(extra))
        assert cli.main(argv(shared_data, out, "--store", str(store), *extra)) == 0
        for name in OUTPUTS:
            assert read(out, name) == read(runs / "batched", name), name


def test_target_pairs_is_reproducible_and_stops_early(runs):
    for name in OUTPUTS:
        assert read(runs / "target", name) == read(runs / "target_again", name), name
        assert read(runs / "target", name) == read(runs / "target_single", name), name
    full = read(runs / "batched", "mutants.jsonl").splitlines()
    cut = read(runs / "target", "mutants.jsonl").splitlines()
    assert 0 < len(cut) < len(full)
    assert set(cut) <= set(full)  # the same records, fewer of them
    assert json.loads(read(runs / "target", "summary.json"))["target_pairs"] == 3


def test_target_pairs_keeps_a_prefix_of_the_seeded_order(runs):
    full = defaultdict(list)
    for line in read(runs / "batched", "mutants.jsonl").splitlines():
        record = json.loads(line)
        full[record["task_id"]].append(record["id"])
    kept = defaultdict(set)
    for line in read(runs / "target", "mutants.jsonl").splitlines():
        kept[json.loads(line)["task_id"]].add(json.loads(line)["id"])
    for task_id, ids in full.items():
        order = [ids[k] for k in mutant_order(DEFAULT_SEED, task_id, len(ids))]
        prefix = order[: len(kept[task_id])]
        assert set(prefix) == kept[task_id], task_id


def test_considered_is_the_shortest_prefix_reaching_the_target():
    counts = {0: 0, 1: 2, 2: 0, 3: 5, 4: 1}
    assert considered([0, 1, 2, 3, 4], counts.get, 3) == [0, 1, 2, 3]
    assert considered([0, 1, 2, 3, 4], counts.get, 2) == [0, 1]
    assert considered([0, 1, 2, 3, 4], counts.get, 99) == [0, 1, 2, 3, 4]
    unknown = {0: 0, 1: None, 2: 9}
    assert considered([0, 1, 2], unknown.get, 3) is None
    assert considered([2, 1, 0], unknown.get, 3) == [2]
    assert mutant_order(1, "t", 50) == mutant_order(1, "t", 50) != mutant_order(2, "t", 50)
    assert sorted(mutant_order(1, "t", 50)) == list(range(50))


def test_call_deadline_from_the_original():
    limits = Limits(wall_seconds=10.0)
    fast = ProgramResult(ProgramStatus.LOADED, (RunResult(0, Status.OK, seconds=0.001),))
    slow = ProgramResult(ProgramStatus.LOADED, (RunResult(0, Status.OK, seconds=0.2),))
    slower = ProgramResult(ProgramStatus.LOADED, (RunResult(0, Status.OK, seconds=3.0),))
    assert call_deadline(fast, limits) == CALL_FLOOR_SECONDS
    assert call_deadline(slow, limits) == pytest.approx(2.0)
    assert call_deadline(slower, limits) == 10.0
    assert call_deadline(ProgramResult(ProgramStatus.LOAD_ERROR), limits) == 10.0


def test_confirmed_pairs_need_the_original_to_be_right():
    right, wrong = ((1,),), ((2,),)
    instances = [TaskInput("test", k, ((0,),), right) for k in range(3)]

    def outcome(*grids):
        return CandidateOutcome(results=[StoredResult(Status.OK, g, None, None) for g in grids])

    mutant = outcome(wrong, wrong, right)
    assert confirmed_pairs(mutant, outcome(right, right, right), instances) == 2
    assert confirmed_pairs(mutant, outcome(right, wrong, right), instances) == 1
    failed = CandidateOutcome(failure=(ProgramStatus.LOAD_ERROR, "x"), results=[None] * 3)
    assert confirmed_pairs(mutant, failed, instances) == 0


def test_the_batches_answer_same_where_a_mutant_is_the_original(
    runs, shared_data, monkeypatch, tmp_path
):
    """Split-stream: the sample's mutants do answer "same" and the outputs stay the same."""
    from arcjudge.sandbox import pool

    answers = []
    decode = pool.decode_variants

    def spy(reply, n_inputs, findings, same_as=None):
        for item in reply.get("variants", []):
            answers.extend(r.get("s") for r in item.get("results") or [])
        return decode(reply, n_inputs, findings, same_as)

    monkeypatch.setattr(pool, "decode_variants", spy)
    out = tmp_path / "spied"
    assert cli.main(argv(shared_data, out)) == 0
    assert answers.count("same") > 0 and answers.count("ok") > 0
    for name in OUTPUTS:
        assert read(out, name) == read(runs / "single", name), name


def test_a_forged_same_only_loses_pairs():
    """A mutant answering "same" gets the original's answer: never a pair, right or wrong."""
    right, wrong = ((1,),), ((2,),)
    instances = [TaskInput("test", k, ((0,),), right) for k in range(2)]

    def outcome(*grids):
        return CandidateOutcome(results=[StoredResult(Status.OK, g, None, None) for g in grids])

    for original in (outcome(right, right), outcome(wrong, right), outcome(wrong, wrong)):
        as_original = CandidateOutcome(results=list(original.results))
        assert confirmed_pairs(as_original, original, instances) == 0
    assert confirmed_pairs(outcome(wrong, wrong), outcome(right, right), instances) == 2
