"""safetext: lone surrogates escaped for storage and files, control characters for terminals."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest

from arcjudge import cli
from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.core.keys import program_key
from arcjudge.harness.core.outputs import make_private_dir, write_atomic
from arcjudge.harness.core.results import StoredResult
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.core.tally import FirstFailure, Tally
from arcjudge.harness.score.records import GroupSummary, ScoreResult, ScoreSummary
from arcjudge.harness.score.report import render_score_report
from arcjudge.harness.score.scorer import summary_table
from arcjudge.safetext import clean_json, clean_text, encode_utf8, json_dumps, terminal_safe
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Program, ProgramStatus, Status
from arcjudge.vocabulary import FailureClass


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029\u202e"]


# ------------------------------------------------------------------ clean_text


def test_clean_text_escapes_lone_surrogates_and_keeps_the_rest():
    assert clean_text("plain ascii") == "plain ascii"
    assert clean_text("caf\u00e9 \U0001f600 \u4e2d") == "caf\u00e9 \U0001f600 \u4e2d"
    assert clean_text("a\ud800b") == "a\\ud800b"
    assert clean_text("\udcff\ud83d") == "\\udcff\\ud83d"  # surrogateescape bytes, half a pair
    clean_text("x\ud800").encode("utf-8")  # valid now


def test_clean_text_returns_valid_text_unchanged_object():
    text = "nothing to do here" * 100
    assert clean_text(text) is text


def test_encode_utf8_matches_clean_text():
    for text in ("", "abc", "\u00e9\U0001f600", "bad \ud800 end"):
        assert encode_utf8(text) == clean_text(text).encode("utf-8")


def test_clean_json_walks_keys_values_lists_and_tuples():
    value = {"e\ud800": ["x\udfff", ("t\ud801", 3)], "n": None, "i": 1.5, "ok": "fine"}
    assert clean_json(value) == {
        "e\\ud800": ["x\\udfff", ["t\\ud801", 3]],
        "n": None,
        "i": 1.5,
        "ok": "fine",
    }


def test_json_dumps_never_writes_a_lone_surrogate():
    record = {"error": "ValueError: \ud800", "emoji": "\U0001f600", "grid": [[1, 2]]}
    for kwargs in ({}, {"sort_keys": True, "separators": (",", ":")}, {"ensure_ascii": False}):
        text = json_dumps(record, **kwargs)
        text.encode("utf-8")
        back = json.loads(text)
        assert back["error"] == "ValueError: \\ud800"
        assert back["emoji"] == "\U0001f600"  # a real non-BMP character stays itself
        back["error"].encode("utf-8")
    assert json_dumps({"a": "b"}, sort_keys=True) == json.dumps({"a": "b"}, sort_keys=True)


# ------------------------------------------------------------------ terminal_safe


@pytest.mark.parametrize(
    "text", ["\x1b[2J\x1b[H", "\r", "\x9b2J", "a\x00b\x07c\x08\x7f", "x\u202eevil", "\u2028"]
)
def test_terminal_safe_leaves_no_raw_control_character(text):
    safe = terminal_safe(text)
    assert not _raw_controls(safe), repr(safe)
    assert safe  # escaped, not dropped


def test_terminal_safe_escapes_visibly():
    assert terminal_safe("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H"
    assert terminal_safe("a\rb") == "a\\rb"
    assert terminal_safe("\x9b") == "\\x9b"
    assert terminal_safe("line\nnext\tcell") == "line\\nnext\\tcell"
    assert terminal_safe("line\nnext\tcell", keep_newlines=True) == "line\nnext\tcell"
    assert terminal_safe("\x1b]0;title\x07", keep_newlines=True) == "\\x1b]0;title\\x07"
    assert terminal_safe("bad \ud800") == "bad \\ud800"
    assert terminal_safe("caf\u00e9 \u00a0ok") == "caf\u00e9 \u00a0ok"  # U+00A0 is not C1


# ------------------------------------------------------------------ where they are used


def test_store_keeps_texts_with_lone_surrogates(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    try:
        store.put_many([("k", StoredResult(Status.ERROR, None, None, "boom \ud800"))])
        store.put_program("p", ProgramStatus.LOAD_ERROR, "load \udcff")
        assert store.get_many(["k"])["k"].error == "boom \\ud800"
        assert store.get_program("p") == (ProgramStatus.LOAD_ERROR, "load \\udcff")
    finally:
        store.close()


def test_program_key_changes_with_the_runtime():
    program = Program(b"def transform(g):\n    return g\n", ("transform",))
    process = '{"backend":"process","numpy":"2.4.6","python":"3.11.7"}'
    docker = '{"backend":"docker","image":"sha256:abc","numpy":"2.4.6","python":"3.11.7"}'
    other_numpy = '{"backend":"process","numpy":"1.26.4","python":"3.11.7"}'
    keys = {
        program_key(program, "", "transform", DEFINITION_LIMITS, runtime, policy=PolicyMode.WARN)
        for runtime in (process, docker, other_numpy, "")
    }
    assert len(keys) == 4
    same = program_key(program, "", "transform", DEFINITION_LIMITS, process, policy=PolicyMode.WARN)
    assert same == program_key(
        program, "", "transform", DEFINITION_LIMITS, process, policy=PolicyMode.WARN
    )


def test_report_and_summary_table_take_hostile_text():
    first = FirstFailure(0, "error", ((1,),), ((1,),), None, "ValueError: \ud800\x1b[H")
    record = ScoreResult(
        "p\ud800", "t", "0" * 64, FailureClass.RUNTIME,
        tally=Tally({"train": (0, 1)}, {"train": {"error": 1}}, {"train": first}),
        fields={"model": "m\x1b[2J"},
    )  # fmt: skip
    groups = {"m\x1b[2J\ud800": GroupSummary(1, 0, {FailureClass.RUNTIME: 1})}
    summary = ScoreSummary(1, "programs.jsonl", 0, 0, 1.0, groups, {})
    html = render_score_report(summary, [record])
    html.encode("utf-8")
    assert "\\ud800" in html
    table = summary_table(summary)
    assert not _raw_controls(table.replace("\n", "")) and "\\x1b[2J" in table


def test_write_atomic_modes_and_bad_text(tmp_path):
    existing = tmp_path / "mine"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    write_atomic(existing, {"a.txt": "fine", "b.html": "lone \ud800"})
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755  # the user's directory is kept
    assert stat.S_IMODE((existing / "a.txt").stat().st_mode) == 0o600
    assert (existing / "b.html").read_text(encoding="utf-8") == "lone \\ud800"
    nested = tmp_path / "new" / "deeper" / "out"
    old_umask = os.umask(0o022)
    try:
        write_atomic(nested, {"x.json": "{}\n"})
    finally:
        os.umask(old_umask)
    for directory in (tmp_path / "new", tmp_path / "new" / "deeper", nested):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE((nested / "x.json").stat().st_mode) == 0o600
    assert not [p for p in nested.iterdir() if ".tmp-" in p.name]
    write_atomic(nested, {"x.json": "again\n"})  # replacing keeps 0600
    assert stat.S_IMODE((nested / "x.json").stat().st_mode) == 0o600
    make_private_dir(existing)  # existing: untouched
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755


def test_store_files_are_owner_only(tmp_path):
    old_umask = os.umask(0o022)
    try:
        store = ResultStore(tmp_path / "made" / "cache.sqlite")
        store.put_many([("k", StoredResult(Status.OK, ((1,),), None, None))])
        db = tmp_path / "made" / "cache.sqlite"
        wal = [p for p in (tmp_path / "made").iterdir() if p.name != "cache.sqlite"]
        assert {p.name for p in wal} >= {"cache.sqlite-wal", "cache.sqlite-shm"}
        for path in (db, *wal):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        store.close()
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o700
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1


def test_extraction_of_a_reply_with_surrogates_and_controls():
    reply = "```python\ndef transform(g):\n    return g  # \x1b[2J \ud800\n```"
    ex = extract_program(clean_text(reply), ("transform",))
    assert ex.block == 0 and not ex.unclosed
    assert ex.code.endswith("# \x1b[2J \\ud800\n")
    ex.code.encode("utf-8")


# ------------------------------------------------------------------ arcjudge run's table

RUN_TASK = {"train": [{"input": [[1, 2]], "output": [[2, 1]]}], "test": [{"input": [[3]]}]}


def test_run_table_shows_control_characters_escaped(tmp_path, capsys):
    program = tmp_path / "p.py"
    program.write_text(
        "def transform(g):\n    raise ValueError('\\x1b[2J\\x1b[H\\r\\x9bboom \\ud800')\n"
    )
    task = tmp_path / "t.json"
    task.write_text(json.dumps(RUN_TASK))
    argv = ["run", str(program), "--task", str(task), "--backend", "process", "--workers", "1"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "train[0]" in out and "error" in out
    assert not _raw_controls(out.replace("\n", "")), repr(out)
    assert "\\x1b[2J\\x1b[H" in out and "\\ud800" in out and "\\x9bboom" in out
