"""libcst's native parser behind the guard: deep sources never crash the harness.

Every parse of a source that crashed (or may crash) libcst's parser runs in a child
process here, so a regression is a failed test with the child's exit status, not a
pytest killed by SIGSEGV.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import arcjudge
from arcjudge.mutation import cstguard, enumerate_mutants
from arcjudge.mutation.cstguard import SourceRefused, guarded_parse, stack_needed
from arcjudge.mutation.parsing import NESTED_TOO_DEEPLY, ParsedSource, ParseFailure, parse_source

SRC = str(Path(arcjudge.__file__).resolve().parents[1])

AND_CHAIN = "def f(x):\n    return " + " and ".join(["x"] * 8000) + "\n"
"""Valid Python that overflowed libcst's parser on the main thread's 8 MiB stack."""


def in_child(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter that imports this checkout's arcjudge."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.fixture(autouse=True)
def _python_default_recursion_limit():
    """What Python's parser refuses and how deep the engine walks follow the recursion
    limit; ``arcjudge mutate`` runs with Python's default, and so do these tests (another
    test or library may have left the limit raised)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


def test_a_deep_and_chain_is_a_parse_failure_not_a_crash() -> None:
    code = (
        "from arcjudge.mutation.parsing import parse_source\n"
        "source = 'def f(x):\\n    return ' + ' and '.join(['x'] * 8000) + '\\n'\n"
        "result = parse_source(source)\n"
        "print(type(result).__name__, getattr(result, 'error', ''))\n"
    )
    proc = in_child(code)
    assert proc.returncode == 0, f"the parse killed its process ({proc.returncode})"
    # libcst parses it on the guard's stack; walking the tree hits the recursion limit
    assert proc.stdout.strip() == f"ParseFailure {NESTED_TOO_DEEPLY}", proc.stderr


def test_dotted_import_names_get_a_stack_large_enough() -> None:
    # The most stack per source byte measured (826): one string to ast, deep to libcst,
    # whose parser needs about 48 MiB for this before it gives up (RecursionError).
    code = (
        "from arcjudge.mutation.cstguard import stack_needed\n"
        "from arcjudge.mutation.parsing import parse_source\n"
        "source = 'import ' + 'a.' * 30000 + 'a\\n'\n"
        "assert stack_needed(source) >= 2048 * len(source)\n"
        "print(parse_source(source).error)\n"
    )
    proc = in_child(code)
    assert proc.returncode == 0, f"the parse killed its process ({proc.returncode})"
    assert proc.stdout.strip() == NESTED_TOO_DEEPLY, proc.stderr


def test_a_source_that_may_need_more_than_the_largest_stack_is_tried_in_a_child() -> None:
    # The largest stack made 4 MiB: the 8,000 terms (about 16 MiB) crash the forked child,
    # and the source is refused; a small source never needs the child.
    code = (
        "from arcjudge.mutation import cstguard\n"
        "from arcjudge.mutation.parsing import parse_source\n"
        "cstguard.MIN_STACK = cstguard.MAX_STACK = 4 << 20\n"
        "source = 'def f(x):\\n    return ' + ' and '.join(['x'] * 8000) + '\\n'\n"
        "print(parse_source(source).error)\n"
        "print(type(parse_source('x = 1\\n')).__name__)\n"
    )
    proc = in_child(code)
    assert proc.returncode == 0, f"the parse killed its process ({proc.returncode})"
    assert proc.stdout.splitlines() == [cstguard.CRASHED, "ParsedSource"], proc.stderr


def test_a_crash_in_the_child_is_seen_and_leaves_no_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cstguard.crashes_in_child(AND_CHAIN, 2 << 20)
    assert not cstguard.crashes_in_child("x = 1\n", 2 << 20)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("core")]


def test_the_stack_bound_follows_the_largest_top_level_statement() -> None:
    many = "x = 1\n" * 50_000  # 300 KB of small statements: the smallest stack
    assert stack_needed(many) == cstguard.MIN_STACK
    big = "def f(x):\n" + "    x = x + 1\n" * 5_000  # one 70 KB statement
    assert stack_needed(big) == len(big.encode()) * cstguard.STACK_PER_BYTE
    decorated = "@d\n" * 20_000 + "def f(): pass\n"  # decorators count with their def
    assert stack_needed(decorated) == len(decorated) * cstguard.STACK_PER_BYTE
    crlf = b"x = 1\r\n" + b"def f(x):\r\n" + b"    x = x + 1\r\n" * 5_000
    assert stack_needed(crlf) == (len(crlf) - 7) * cstguard.STACK_PER_BYTE


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def f(:\n", "does not parse (line 1: "),
        ("x = " + "-" * 5000 + "1\n", "nested too deeply for Python's parser"),
        ("f = " + "lambda: " * 5000 + "1\n", "nested too deeply for Python's parser"),
        (b"x = 1\0\n", "does not parse ("),
    ],
    ids=["syntax error", "unary minus chain", "nested lambdas", "null byte"],
)
def test_what_python_refuses_never_reaches_libcst(
    source: str | bytes, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(source: object) -> None:
        raise AssertionError("libcst's parser ran")

    monkeypatch.setattr(cstguard, "_parse", never)
    with pytest.raises(SourceRefused) as refused:
        guarded_parse(source)
    assert reason in str(refused.value)


def test_a_tree_too_deep_to_walk_is_a_parse_failure() -> None:
    # 500 terms parse on any stack; rendering them back hits Python's recursion limit
    result = parse_source("def f(x):\n    return " + " and ".join(["x"] * 500) + "\n")
    assert isinstance(result, ParseFailure) and result.error == NESTED_TOO_DEEPLY
    assert isinstance(parse_source("def f(x):\n    return x and x\n"), ParsedSource)


def test_a_tree_too_deep_for_the_operators_walk_is_an_error_not_silence() -> None:
    # 350 terms render, but the walk every operator shares hits the recursion limit
    source = "def f(x):\n    return " + " and ".join(["x"] * 350) + " + 1\n"
    result = enumerate_mutants(source, task_id="t", source_name="s")
    assert result.error == NESTED_TOO_DEEPLY and not result.failures
