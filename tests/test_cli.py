"""The command line: useful output, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arcjudge import cli
from tests.support.helpers import deadline

TASK = {
    "train": [{"input": [[1, 2]], "output": [[2, 1]]}, {"input": [[3, 0]], "output": [[0, 3]]}],
    "test": [{"input": [[5, 6]], "output": [[6, 5]]}],
}


@pytest.fixture
def task_file(tmp_path):
    path = tmp_path / "abcd1234.json"
    path.write_text(json.dumps(TASK))
    return path


@pytest.fixture
def program_file(tmp_path):
    path = tmp_path / "flip.py"
    path.write_text("def transform(g):\n    return [r[::-1] for r in g]\n")
    return path


def test_run_prints_per_pair_verdicts(task_file, program_file, capsys):
    assert cli.main(["run", str(program_file), "--task", str(task_file)]) == 0
    out = capsys.readouterr().out
    assert "train[1]  ok" in out and "correct" in out
    assert "train 2/2  test 1/1" in out


def test_run_reports_wrong_answers(task_file, tmp_path, capsys):
    wrong = tmp_path / "same.py"
    wrong.write_text("p = lambda g: g\n")
    assert cli.main(["run", str(wrong), "--task", str(task_file)]) == 0
    assert "train 0/2  test 0/1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "{missing}", "--task", "{task}"], "cannot read"),
        (["run", "{program}", "--task", "{missing}"], "no such file"),
        (["run", "{program}", "--task", "{program}"], "not valid JSON"),
        (["run", "{program}", "--task", "{notarc}"], "not an ARC task"),
        (["run", "{program}", "--task", "{task}", "--entrypoint", "nope"], "no entry point"),
        (["run", "{program}", "--task", "{task}", "--entrypoint", "bad name"], "identifiers"),
        (
            ["run", "{program}", "--task", "{task}", "--module-dir", "{missing}"],
            "no such directory",
        ),
        (["run", "{program}", "--task", "{task}", "--wall", "0"], "must be positive"),
        (["run", "{program}", "--task", "{deep}"], "deep.json: not valid JSON (nested too deeply)"),
        (["run", "{program}", "--task", "{fifo}"], "fifo.json: refused: not a regular file"),
        (
            ["score", "--programs", "{deep_programs}", "--tasks", "{tasks}", "--out", "{out}"],
            "deep.jsonl:1: not valid JSON (nested too deeply to decode)",
        ),
    ],
)
def test_bad_input_gives_one_line_error(args, message, task_file, program_file, tmp_path, capsys):
    notarc = tmp_path / "notarc.json"
    notarc.write_text('{"hello": 1}')
    deep = tmp_path / "deep.json"  # a RecursionError traceback before
    deep.write_text("[" * 200_000 + "]" * 200_000)
    fifo = tmp_path / "fifo.json"  # blocked for ever before
    os.mkfifo(fifo)
    deep_programs = tmp_path / "deep.jsonl"
    deep_programs.write_text(
        '{"id": "a", "task_id": "t", "code": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    )
    values = {
        "missing": str(tmp_path / "missing"),
        "task": str(task_file),
        "program": str(program_file),
        "notarc": str(notarc),
        "deep": str(deep),
        "fifo": str(fifo),
        "deep_programs": str(deep_programs),
        "tasks": str(task_file.parent),
        "out": str(tmp_path / "out"),
    }
    # process backend: with auto, a missing docker daemon adds a warning line to stderr
    argv = [a.format(**values) for a in args] + ["--backend", "process"]
    with deadline(30):
        assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcjudge: error:") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_installed_command_has_no_traceback_on_bad_input(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "arcjudge.cli", "run", str(tmp_path / "x.py"), "--task", "y.json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "arcjudge: error:" in proc.stderr


def test_unknown_backend_is_rejected_by_the_parser(task_file, program_file, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", str(program_file), "--task", str(task_file), "--backend", "vm"])
    assert exc.value.code == 2


def test_dimensions_needs_a_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["dimensions", "--out", "x"])
    assert exc.value.code == 2
