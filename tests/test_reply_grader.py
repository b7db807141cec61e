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
from arcjudge.harness.dimensions.inspect_log import replies_from_inspect_log
from arcjudge.harness.dimensions.replies import parse_reply
from arcjudge.harness.dimensions.reply_grader import READS_REPLIES, ReplyGrader, reply_parsers
from canned import (
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


def gradable(instances):
    readable = reply_parsers()
    return [
        r
        for r in read_records(instances)
        if r["dimension"] != "definition" and (readable is None or r["dimension"] in readable)
    ]


def canned(records):
    """(record, run, reply): run 1 the oracle (or wrong when none), run 2 wrong."""
    for record in records:
        yield record, "1", oracle_reply(record) or wrong_reply(record)
        yield record, "2", wrong_reply(record)


def batch_items(instances, tmp_path, replies, sandbox):
    """The items of one whole run over every reply (the JSONL path)."""
    config = DimensionScoreConfig(instances, tmp_path / "answers.jsonl")
    if READS_REPLIES:
        path = tmp_path / "replies.jsonl"
        lines = [{"id": reply_id(r), "model": MODEL, "run": run, "reply": text}
                 for r, run, text in replies]  # fmt: skip
        config = replace(config, answers_file=None, **{"replies_file": path})
    else:
        path = config.answers_file
        lines = [{"task_id": r["task_id"], "dimension": r["dimension"], "model": MODEL,
                  "run": run, "answer": parse_reply(r["dimension"], text).answer}
                 for r, run, text in replies]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = ResultStore(tmp_path / "batch.sqlite")
    try:
        scorer = DimensionScorer(config)
        scorer.run(sandbox, store)
    finally:
        store.close()
    return {(i.run, i.task_id, i.dimension): i for i in scorer.items}


def test_each_reply_gets_the_item_a_whole_run_gives_it(instances, tmp_path, sandbox):
    records = gradable(instances)
    replies = list(canned(records))
    grader = ReplyGrader(DimensionScoreConfig(instances, instances), backend="process", workers=1)
    try:
        single = {}
        for record, run, text in replies:
            graded = grader.grade(reply_id(record), MODEL, run, text)
            single[(run, record["task_id"], record["dimension"])] = graded
            assert graded.how == parse_reply(record["dimension"], text).how
    finally:
        grader.close()
    batch = batch_items(instances, tmp_path, replies, sandbox)
    assert single.keys() == batch.keys()
    for key, graded in single.items():
        assert replace(graded.item, answer_line=None) == replace(batch[key], answer_line=None)
    # the oracle passes where the key has an answer, the wrong replies never do
    for dim, (oracles, total) in expected_passes(records).items():
        assert oracles >= 1, f"no oracle reply for {dim}: the fixture cannot test it"
        assert sum(g.item.passed for (r, _, d), g in single.items() if d == dim and r == "1") == (
            oracles
        )
        assert not any(g.item.passed for (r, _, d), g in single.items() if d == dim and r == "2")
        assert sum(1 for (_, _, d) in single if d == dim) == 2 * total


def test_unknown_ids_and_unreadable_dimensions_are_input_errors(instances):
    grader = ReplyGrader(DimensionScoreConfig(instances, instances), backend="process", workers=1)
    try:
        with pytest.raises(InputError, match="no instance 'nope/inversion'"):
            grader.grade("nope/inversion", MODEL, "1", "")
        definition = next(r for r in read_records(instances) if r["dimension"] == "definition")
        if not READS_REPLIES:
            with pytest.raises(InputError, match="definition replies cannot be graded"):
                grader.grade(reply_id(definition), MODEL, "1", "```python\n```")
    finally:
        grader.close()


def test_a_closed_grader_opens_again_and_closes_twice(instances, tmp_path):
    record = gradable(instances)[0]
    store = tmp_path / "store.sqlite"
    grader = ReplyGrader(
        DimensionScoreConfig(instances, instances), backend="process", workers=1, store=store
    )
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
