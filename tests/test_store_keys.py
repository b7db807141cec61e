"""Honest cache keys: a store answers only for the setting that produced its answers.

Every command with a store (validate, score, mutate) is run twice on one store: the
cached rerun must write the first run's bytes (policy findings included), and a changed
policy mode, limit or module file must not replay old answers.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import arcjudge
from arcjudge import cli
from arcjudge.harness.core import keys
from arcjudge.harness.core.results import Expected, StoredResult
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import GeneratorCall, Limits, Program, ProgramStatus, RunResult, Status
from helpers import cached_rows

TASK = "aaaa0001"  # flip the rows
GRIDS = [[[1, 2], [3, 4]], [[0, 1, 0], [2, 2, 2]], [[3, 3], [0, 3], [4, 4]], [[5, 6]]]
# Right on every input, with a policy finding (attr.dunder): rejected under enforce only.
DUNDER = "def transform(g):\n    assert g.__class__ is list\n    return g[::-1]\n"
PLAIN = "def transform(g):\n    return g[::-1]\n"
SRC = str(Path(arcjudge.__file__).resolve().parents[1])


def flip(g):
    return [list(r) for r in g[::-1]]


@pytest.fixture
def world(tmp_path):
    (tmp_path / "tasks").mkdir()
    pairs = [{"input": g, "output": flip(g)} for g in GRIDS]
    task = {"train": pairs[:2], "test": pairs[2:3], "arc-gen": pairs[3:]}
    (tmp_path / "tasks" / f"{TASK}.json").write_text(json.dumps(task))
    for name, code in (("plain", PLAIN), ("dunder", DUNDER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{TASK}.py").write_text(code)
    # A verifier whose rule lives in a subpackage of its module directory.
    pkg = tmp_path / "pkg"
    (pkg / "helpers").mkdir(parents=True)
    (pkg / "helpers" / "__init__.py").write_text("")
    (pkg / "helpers" / "rule.py").write_text("def apply(g):\n    return g[::-1]\n")
    (pkg / f"{TASK}.py").write_text(
        "from helpers.rule import apply\n\ndef transform(g):\n    return apply(g)\n"
    )
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / f"{TASK}.py").write_text(
        "import time\n\ndef transform(g):\n    time.sleep(0.6)\n    return g[::-1]\n"
    )
    gen = tmp_path / "gen"
    (gen / "tasks").mkdir(parents=True)
    (gen / "common.py").write_text(
        "import random\n\ndef grid():\n"
        "    h, w = random.randint(1, 3), random.randint(1, 3)\n"
        "    return [[random.randint(0, 9) for _ in range(w)] for _ in range(h)]\n"
    )
    (gen / "tasks" / f"task_{TASK}.py").write_text(
        "import common\n\ndef generate():\n    g = common.grid()\n"
        "    return {'input': g, 'output': g[::-1]}\n"
    )
    programs = [
        {"id": "plain", "task_id": TASK, "model": "a", "code": PLAIN},
        {"id": "dunder", "task_id": TASK, "model": "a", "code": DUNDER},
        {"id": "wrong", "task_id": TASK, "model": "b", "code": "def transform(g):\n    return g\n"},
        {"id": "syntax", "task_id": TASK, "model": "b", "code": "def transform(g)\n    pass\n"},
    ]
    (tmp_path / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    return tmp_path


def common(out: Path, *extra: str) -> list[str]:
    return ["--out", str(out), "--backend", "process", "--workers", "1", "--no-progress", *extra]


def validate_argv(world, out, *extra, sources=("plain", "dunder", "pkg")):
    argv = ["validate", "--tasks", str(world / "tasks")]
    for name in sources:
        argv += ["--source", f"{name}=module:{world / name}"]
    argv += ["--generator", f"arc-gen:{world / 'gen'}", "--samples", "3"]
    return argv + common(out, *extra)


def score_argv(world, out, *extra):
    return [
        "score", "--programs", str(world / "programs.jsonl"), "--tasks", str(world / "tasks"),
        "--generator", f"arc-gen:{world / 'gen'}", "--samples", "3", "--wall", "2",
        *common(out, *extra),
    ]  # fmt: skip


def mutate_argv(world, out, *extra):
    return [
        "mutate", "--tasks", str(world / "tasks"), "--source", f"plain=module:{world / 'plain'}",
        "--source", f"dunder=module:{world / 'dunder'}", "--inputs", "4", "--wall", "2",
        *common(out, *extra),
    ]  # fmt: skip


ARGV = {"validate": validate_argv, "score": score_argv, "mutate": mutate_argv}
MAIN_FILE = {"validate": "verdicts.jsonl", "score": "results.jsonl", "mutate": "mutants.jsonl"}


def outputs(out: Path) -> dict[str, bytes]:
    """Every output file but the store."""
    return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith("cache")}


def records(path: Path) -> dict[str, dict]:
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    return {str(r.get("source", r.get("id"))): r for r in lines}


@pytest.mark.parametrize(
    ("command", "policy"),
    [("validate", "warn"), ("score", "warn"), ("score", "enforce"), ("mutate", None)],
)
def test_fully_cached_rerun_writes_the_same_bytes(world, command, policy):
    out = world / "out"
    extra = ("--policy", policy) if policy else ()  # mutate has none: the policy is off
    assert cli.main(ARGV[command](world, out, *extra)) == 0
    first = outputs(out)
    rows = cached_rows(out / "cache.sqlite")
    assert rows > 0
    assert cli.main(ARGV[command](world, out, *extra)) == 0
    assert cached_rows(out / "cache.sqlite") == rows  # nothing was run again
    second = outputs(out)
    assert set(second) == set(first)
    if command == "score":  # sandbox seconds spent in this run: none when cached
        timings = [json.loads(x) for x in second.pop("timings.jsonl").decode().splitlines()]
        assert timings and all(t["seconds"] == 0.0 for t in timings)
        assert any(json.loads(x)["seconds"] > 0 for x in first.pop("timings.jsonl").splitlines())
    for name in first:
        assert second[name] == first[name], name
    if policy:  # findings kept, for a program that ran (warn) or was rejected (score, enforce)
        found = records(out / MAIN_FILE[command])
        assert found["dunder"]["findings"] and "attr.dunder" in found["dunder"]["findings"][0]
        assert (found["dunder"].get("status") == "policy_rejected") == (policy == "enforce")


@pytest.mark.parametrize("command", ["validate", "score"])
@pytest.mark.parametrize(("before", "after"), [("enforce", "warn"), ("warn", "enforce")])
def test_policy_mode_change_does_not_replay(world, command, before, after):
    fresh = world / "fresh"
    assert cli.main(ARGV[command](world, fresh, "--policy", after)) == 0
    store = world / "shared.sqlite"
    for out, mode in (("one", before), ("two", after)):
        assert (
            cli.main(ARGV[command](world, world / out, "--policy", mode, "--store", str(store)))
            == 0
        )
    name = MAIN_FILE[command]
    assert (world / "two" / name).read_bytes() == (fresh / name).read_bytes()
    dunder = records(world / "two" / name)["dunder"]
    rejected = {"validate": dunder.get("verdict"), "score": dunder.get("status")}[command]
    assert (rejected == "policy_rejected") == (after == "enforce")
    assert "attr.dunder" in json.dumps(dunder)  # the findings (or the rejection naming them)


def test_changed_wall_limit_does_not_replay(world):
    store = str(world / "s.sqlite")
    argv = [*validate_argv(world, world / "short", sources=("slow",)), "--store", store]
    assert cli.main([*argv, "--wall", "0.3"]) == 0
    assert records(world / "short" / "verdicts.jsonl")["slow"]["verdict"] == "invalid"
    argv = [*validate_argv(world, world / "long", sources=("slow",)), "--store", store]
    assert cli.main([*argv, "--wall", "5"]) == 0
    assert records(world / "long" / "verdicts.jsonl")["slow"]["verdict"] == "valid"


def test_changed_module_file_does_not_replay(world):
    store = str(world / "s.sqlite")
    argv = [*validate_argv(world, world / "before", sources=("pkg",)), "--store", store]
    assert cli.main(argv) == 0
    assert records(world / "before" / "verdicts.jsonl")["pkg"]["verdict"] == "valid"
    # A file in a subpackage (not the program, not a top-level module) changes the answer.
    (world / "pkg" / "helpers" / "rule.py").write_text("def apply(g):\n    return g\n")
    argv = [*validate_argv(world, world / "after", sources=("pkg",)), "--store", store]
    assert cli.main(argv) == 0
    assert records(world / "after" / "verdicts.jsonl")["pkg"]["verdict"] == "invalid"


def test_program_key_covers_every_setting(monkeypatch):
    program = Program(b"def transform(g):\n    return g\n")
    base = ("fp", "transform", Limits(), "runtime")
    by_mode = {keys.program_key(program, *base, policy=m) for m in PolicyMode}
    assert len(by_mode) == len(PolicyMode)
    key = keys.program_key(program, *base, policy=PolicyMode.WARN)
    variants = [
        (Program(b"def transform(g):\n    return g \n"), *base),
        (program, "fp2", *base[1:]),
        (program, "fp", "generate", *base[2:]),
        (program, "fp", "transform", Limits(disk_bytes=1 << 20), "runtime"),
        (program, *base[:3], "other runtime"),
    ]
    for args in variants:
        assert keys.program_key(*args, policy=PolicyMode.WARN) != key, args
    monkeypatch.setattr(keys, "sandbox_code_fingerprint", lambda: "changed sandbox")
    assert keys.program_key(program, *base, policy=PolicyMode.WARN) != key


def test_module_fingerprint_sees_nested_files_and_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    (a / "sub" / "x.py").write_text("X = 1\n")
    (b / "y.py").write_text("Y = 1\n")
    before = keys.module_fingerprint([str(a), str(b)])
    assert keys.module_fingerprint([str(b), str(a)]) != before
    (a / "__pycache__").mkdir()
    (a / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (a / ".git").mkdir()
    (a / ".git" / "HEAD").write_text("ref\n")
    assert keys.module_fingerprint([str(a), str(b)]) == before
    (a / "sub" / "x.py").write_text("X = 2\n")
    assert keys.module_fingerprint([str(a), str(b)]) != before


def ordinary_module_dirs(root: Path) -> list[str]:
    """Two module directories of regular files only (nested, binary, empty, 3 MiB)."""
    a, b = root / "a", root / "b"
    (a / "sub" / "deeper").mkdir(parents=True)
    (a / "__pycache__").mkdir()
    b.mkdir()
    (a / "dsl.py").write_text("X = 1\n")
    (a / "empty.py").write_bytes(b"")
    (a / "sub" / "helpers.py").write_bytes(bytes(range(256)) * 3)
    (a / "sub" / "deeper" / "big.bin").write_bytes(b"0123456789abcdef" * (3 << 16))
    (a / ".hidden.py").write_text("ignored\n")
    (a / "__pycache__" / "dsl.cpython-311.pyc").write_bytes(b"\0")
    (b / "y.py").write_text("Y = 2\n")
    return [str(a), str(b)]


# module_fingerprint(ordinary_module_dirs(...)) as the implementation before the
# untrusted-path rule computed it (it read every file whole): stored results stay keyed.
ORDINARY_FINGERPRINT = "4e995a532e12d15615c43c4b5c6e14951fcca037ec6ffea6cd89ecf83047cb1d"


def test_an_ordinary_directory_keeps_its_fingerprint(tmp_path):
    assert keys.module_fingerprint(ordinary_module_dirs(tmp_path)) == ORDINARY_FINGERPRINT


FINGERPRINT_HOSTILE = """
import os, resource, sys
from arcjudge.harness.core.keys import module_fingerprint
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))  # /dev/zero read whole: fails
print(module_fingerprint([sys.argv[1]]))
"""


def test_a_fifo_or_a_symlink_to_dev_zero_is_hashed_as_such(tmp_path):
    # Run apart, with a deadline and an address-space cap: before the rule, the FIFO
    # blocked the fingerprint forever and /dev/zero was read until memory ran out.
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "dsl.py").write_text("X = 1\n")
    os.mkfifo(mods / "pipe.py")
    (mods / "zero.py").symlink_to("/dev/zero")
    (mods / "pkg").symlink_to("/usr")  # a linked directory: its target's text, not walked

    def fingerprint() -> str:
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.run(
            [sys.executable, "-c", FINGERPRINT_HOSTILE, str(mods)],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.strip()

    first = fingerprint()
    assert first == fingerprint() == keys.module_fingerprint([str(mods)])
    (mods / "zero.py").unlink()
    (mods / "zero.py").symlink_to("/dev/null")  # another target: another fingerprint
    assert keys.module_fingerprint([str(mods)]) != first
    (mods / "zero.py").unlink()
    (mods / "zero.py").symlink_to("/dev/zero")
    assert keys.module_fingerprint([str(mods)]) == first
    (mods / "pipe.py").unlink()
    (mods / "pipe.py").write_bytes(b"")  # an empty file is not a FIFO
    assert keys.module_fingerprint([str(mods)]) != first


OLD_SCHEMA = """
CREATE TABLE results (key TEXT PRIMARY KEY, status TEXT NOT NULL, grid TEXT, output TEXT,
    error TEXT);
CREATE TABLE programs (key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT,
    entry_point TEXT);
INSERT INTO results VALUES ('k', 'ok', '[[1]]', NULL, NULL);
"""


def test_old_store_is_refused_not_mixed(world, capsys):
    from arcjudge.harness.core.store import ResultStore, StoreError

    old = world / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.executescript(OLD_SCHEMA)
    with pytest.raises(StoreError, match=r"schema 1.*delete the file"):
        ResultStore(old)
    assert cli.main(validate_argv(world, world / "o", "--store", str(old))) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcjudge: error:") and "schema 1" in err and "Traceback" not in err
    assert not (world / "o" / "verdicts.jsonl").exists()
    with sqlite3.connect(old) as db:  # left as it was
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0


def test_store_versions(tmp_path):
    from arcjudge.harness.core.store import SCHEMA_VERSION, ResultStore, StoreError

    path = tmp_path / "new.sqlite"
    ResultStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match=f"schema {SCHEMA_VERSION + 1}"):
        ResultStore(path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, just text long enough to be looked at" * 20)
    with pytest.raises(StoreError, match="not a result store"):
        ResultStore(junk)


# Keys and rows of fixed inputs, as the code computed them before keys and stored values
# left store.py (issue 31): a store written then must still be read and hit. The sandbox
# code fingerprint (a hash of the code itself) is held fixed here.
PINNED_GRID = ((1, 2), (3, 4))
PINNED_CALL = GeneratorCall(7, (("size", 3),))
PINNED_PROGRAM = Program(b"def transform(g):\n    return g\n")
PINNED_KEYS = {
    PolicyMode.OFF: "f4e303e4d59dcca6578abb495a69fb1a30413915f26a008ab1b477faa15f42e4",
    PolicyMode.WARN: "84458aa7653fc4001b94cf302b324799d027609b104c65ba9e4147613a07e93e",
    PolicyMode.ENFORCE: "0209f302f9e815c49b40421ea70d07deb7298b60202600e871d77712786f0a41",
}


@pytest.fixture
def fixed_sandbox_code(monkeypatch):
    monkeypatch.setattr(keys, "sandbox_code_fingerprint", lambda: "sandbox code")


def test_keys_of_fixed_inputs_are_pinned(fixed_sandbox_code):
    assert keys.input_text(PINNED_GRID) == "2:1234"
    assert keys.input_text(((10,),)) == "[[10]]"  # not a grid of 0..9: its JSON
    assert keys.input_text(PINNED_CALL) == '{"kwargs": {"size": 3}, "seed": 7}'
    grid_digest = "9084f18f37152f7eb92dd977764bfe5486c238c9222ec43deaa5be86882cf0d1"
    assert keys.input_digest(PINNED_GRID).hex() == grid_digest
    assert keys.input_digest(PINNED_GRID, [2, "1234"]).hex() == grid_digest
    assert keys.input_digest(((10,),)).hex() == (
        "9817b1a5d015da4d63c165a0b1d580eb74d508273e834eca229b5abdc1c156a2"
    )
    assert keys.input_digest(PINNED_CALL).hex() == (
        "9f1b7863f0584432ad4c4818f9503f079788b60fa62d265246234a01df0bdd6d"
    )
    assert PINNED_PROGRAM.sha256 == (
        "393ef7fad12c092d15387288d07316e3f7ffeb3c757ad703c78649faa2c004db"
    )
    assert Limits().key() == "w10.0:m1073741824:p64:o1048576:t300.0:d67108864"
    for mode, key in PINNED_KEYS.items():
        assert (
            keys.program_key(PINNED_PROGRAM, "fp", "transform", Limits(), "runtime", policy=mode)
            == key
        ), mode
    other = Program(b"x=1", ("solve", "p"), ("/m",), "tuple")
    assert (
        keys.program_key(
            other, "", "generate", Limits(wall_seconds=2.5), "rt", policy=PolicyMode.WARN
        )
        == "8d82d9771480730ae06994cb168c626ee29f0d781eb2160c9f69e8e231dc40a6"
    )
    key = PINNED_KEYS[PolicyMode.WARN]
    assert keys.program_part(key).hex() == "b39e95e2cbcd060729d6ae5993670dc1"
    assert keys.result_key(key, keys.input_digest(PINNED_GRID)).hex() == (
        "b39e95e2cbcd060729d6ae5993670dc1" + grid_digest[:32]
    )
    assert keys.grid_digest((2, "1234")).hex() == "4d1e277493137743a1fd2b88b7191afb"
    assert keys.wire_text((2, "1234")) == "2:1234"


def test_rows_of_fixed_results_are_pinned(tmp_path, fixed_sandbox_code):
    from arcjudge.harness.core.store import ResultStore

    key = PINNED_KEYS[PolicyMode.WARN]
    right, wrong, sample = (
        keys.result_key(key, keys.input_digest(g)) for g in (PINNED_GRID, ((10,),), PINNED_CALL)
    )
    store = ResultStore(tmp_path / "s.sqlite")
    expected = Expected(PINNED_GRID)
    store.put_many([
        (right, StoredResult.judged(RunResult(0, Status.OK, wire=(2, "1234")), expected)),
        (wrong, StoredResult.judged(RunResult(1, Status.ERROR, error="boom \udc80"), expected)),
        (sample, StoredResult(Status.OK, wire=(1, "5"), output_wire=(2, "67"))),
    ])  # fmt: skip
    store.put_program(key, ProgramStatus.LOADED, None, ["attr.dunder: x"])
    store.close()
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        got = db.execute("SELECT * FROM results ORDER BY key").fetchall()
        programs = db.execute("SELECT * FROM programs").fetchall()
    assert got == sorted([
        (right, "ok", bytes.fromhex("4d1e277493137743a1fd2b88b7191afb"), None, None, None),
        (wrong, "error", None, None, None, "boom \\udc80"),
        (sample, "ok", None, "1:5", "2:67", None),
    ])  # fmt: skip
    assert programs == [(key, "loaded", None, '["attr.dunder: x"]')]
