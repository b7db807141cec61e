"""One reply at a time (an eval framework's scorer) gets the item of a whole ``dimensions score``.

No inspect_ai needed: :class:`ReplyGrader` is arcjudge's side of the inspect task.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.grading import DimensionScoreConfig, DimensionScorer
from arcjudge.harness.dimensions.reply_grader import ReplyGrader
from arcjudge.integrations.inspect_log import replies_from_inspect_log
from tests.support.canned import (
    REPLY_DIMENSIONS,
    build_instances,
    expected_passes,
    oracle_reply,
    read_records,
    reply_id,
    wrong_reply,
)

MODEL = "canned"


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    return build_instances(tmp_path_factory.mktemp("grader"))


def canned(records):
    """(record, run, reply): run 1 the oracle (or wrong when none), run 2 wrong."""
    for record in records:
        yield record, "1", oracle_reply(record) or wrong_reply(record)
        yield record, "2", wrong_reply(record)


def batch_items(instances, tmp_path, replies, sandbox):
    """The items of one whole ``dimensions score --replies`` run over every reply."""
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(
        json.dumps({"id": reply_id(r), "model": MODEL, "run": run, "reply": text}) + "\n"
        for r, run, text in replies
    ))  # fmt: skip
    store = ResultStore(tmp_path / "batch.sqlite")
    try:
        scorer = DimensionScorer(DimensionScoreConfig(instances, replies_file=path))
        scorer.run(sandbox, store)
    finally:
        store.close()
    return {(i.run, i.task_id, i.dimension): i for i in scorer.items}


def unlined(detail):
    """An item's detail without the replies file's line (Definition: ``replies:LINE``)."""
    return {k: v for k, v in detail.items() if k != "program"}


def test_each_reply_gets_the_item_a_whole_run_gives_it(instances, tmp_path, sandbox):
    records = read_records(instances)
    replies = list(canned(records))
    grader = ReplyGrader(DimensionScoreConfig(instances), backend="process", workers=1)
    try:
        single = {
            (run, record["task_id"], record["dimension"]): grader.grade(
                reply_id(record), MODEL, run, text
            )
            for record, run, text in replies
        }
    finally:
        grader.close()
    batch = batch_items(instances, tmp_path, replies, sandbox)
    assert single.keys() == batch.keys()
    assert {d for _, _, d in single} == set(REPLY_DIMENSIONS)
    for key, item in single.items():
        assert item.consistency is None  # needs a model's other replies: whole runs only
        assert replace(item, answer_line=None, detail=unlined(item.detail)) == replace(
            batch[key], answer_line=None, detail=unlined(batch[key].detail), consistency=None
        )
        assert item.how
    # the oracle passes where the key has an answer, the wrong replies never do
    for dim, (oracles, total) in expected_passes(records).items():
        assert oracles >= 1, f"no oracle reply for {dim}: the fixture cannot test it"
        passed = [run for (run, _, d), item in single.items() if d == dim and item.passed]
        assert passed == ["1"] * oracles
        assert sum(1 for (_, _, d) in single if d == dim) == 2 * total


def test_an_unknown_id_is_an_input_error(instances):
    grader = ReplyGrader(DimensionScoreConfig(instances), backend="process", workers=1)
    try:
        with pytest.raises(InputError, match="no instance 'nope/inversion'"):
            grader.grade("nope/inversion", MODEL, "1", "")
    finally:
        grader.close()


def test_definition_replies_need_the_build_record(instances, tmp_path):
    moved = tmp_path / "instances.jsonl"  # without build.json beside it
    moved.write_bytes(instances.read_bytes())
    definition = next(r for r in read_records(moved) if r["dimension"] == "definition")
    grader = ReplyGrader(DimensionScoreConfig(moved), backend="process", workers=1)
    try:
        with pytest.raises(InputError, match=r"build\.json: missing"):
            grader.grade(reply_id(definition), MODEL, "1", oracle_reply(definition))
    finally:
        grader.close()


def test_a_closed_grader_opens_again_and_closes_twice(instances, tmp_path):
    record = read_records(instances)[-1]
    store = tmp_path / "store.sqlite"
    grader = ReplyGrader(DimensionScoreConfig(instances), backend="process", workers=1, store=store)
    first = grader.grade(reply_id(record), MODEL, "1", wrong_reply(record))
    grader.close()
    grader.close()
    again = grader.grade(reply_id(record), MODEL, "1", wrong_reply(record))
    grader.close()
    assert first == again and store.is_file()


def test_reading_a_log_without_inspect_ai_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails
    with pytest.raises(InputError, match=r"arcjudge\[inspect\]"):
        replies_from_inspect_log(tmp_path / "log.eval")


def test_the_converter_refuses_what_is_not_a_log(tmp_path, capsys):
    pytest.importorskip("inspect_ai", reason="needs inspect_ai (pip install -e '.[inspect]')")
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"not a zip")
    assert cli.main(["dimensions", "replies-from-inspect", str(bad), "--out",
                     str(tmp_path / "r.jsonl")]) == 2  # fmt: skip
    assert "not an inspect_ai eval log" in capsys.readouterr().err
    assert cli.main(["dimensions", "replies-from-inspect", str(tmp_path / "missing.eval"),
                     "--out", str(tmp_path / "r.jsonl")]) == 2  # fmt: skip
    assert not (tmp_path / "r.jsonl").exists()
