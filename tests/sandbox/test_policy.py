"""Tests for the static policy pre-check."""

from __future__ import annotations

import warnings
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge.sandbox.policy import (
    FORBIDDEN_CALLS,
    FORBIDDEN_MODULES,
    Finding,
    PolicyMode,
    check,
    decide,
)

BENIGN = b"""\
import numpy as np
from collections import Counter


def transform(grid):
    h, w = len(grid), len(grid[0])
    out = [[0] * w for _ in range(h)]
    for i in range(h):
        for j in range(w):
            out[i][j] = grid[h - 1 - i][j]
    arr = np.array(out)
    colours = Counter(c for row in grid for c in row)
    return [[int(v) if v != colours.most_common(1)[0][0] else 0 for v in row] for row in arr]


if __name__ == "__main__":
    print(transform([[1, 2], [3, 4]]))
"""

REARC_VERIFIER = b"""\
from dsl import *

def verify_abc(I: Grid) -> Grid:
    x0 = objects(I, T, F, T)
    x1 = argmax(x0, size)
    x2 = fill(I, EIGHT, x1)
    return x2
"""


def rules(source: bytes, *, dsl_only: bool = False) -> set[str]:
    return {finding.rule for finding in check(source, dsl_only=dsl_only)}


def test_benign_transform_has_no_findings() -> None:
    assert check(BENIGN) == ()


def test_shadowed_builtin_name_is_not_a_reference() -> None:
    source = b"def transform(input):\n    vars = input\n    return vars\n"
    assert check(source) == ()


@pytest.mark.parametrize("module", sorted(FORBIDDEN_MODULES))
def test_each_forbidden_module_import(module: str) -> None:
    assert f"import.{module}" in rules(f"import {module}\n".encode())
    assert f"import.{module}" in rules(f"from {module} import thing\n".encode())


@pytest.mark.parametrize("name", sorted(FORBIDDEN_CALLS))
def test_each_forbidden_call(name: str) -> None:
    findings = check(f"x = {name}('a')\n".encode())
    assert Finding(f"call.{name}", f"call of forbidden builtin '{name}'", 1) in findings


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        (b"import os\n", "import.os"),
        (b"import os.path\n", "import.os"),
        (b"import numpy, sys as s\n", "import.sys"),
        (b"from subprocess import run\n", "import.subprocess"),
        (b"from importlib.util import find_spec\n", "import.importlib"),
        (b"from os import *\n", "import.os"),
        (b"import _thread\n", "import._thread"),
        (b"def f():\n    import socket\n", "import.socket"),
        (b"open('/etc/passwd').read()\n", "call.open"),
        (b"exec('x = 1')\n", "call.exec"),
        (b"eval('1 + 1')\n", "call.eval"),
        (b"compile('1', 'f', 'eval')\n", "call.compile"),
        (b"__import__('os')\n", "call.__import__"),
        (b"getattr(x, '__globals__')\n", "call.getattr"),
        (b"getattr(x, '__globals__')\n", "attr.dunder"),
        (b"setattr(x, 'y', 1)\n", "call.setattr"),
        (b"globals()['x'] = 1\n", "call.globals"),
        (b"breakpoint()\n", "call.breakpoint"),
        (b"xs = list(map(eval, ys))\n", "call.eval"),
        (b"y = x.__class__\n", "attr.dunder"),
        (b"y = __builtins__\n", "attr.dunder"),
        (b"().__class__.__bases__[0].__subclasses__()\n", "attr.dunder"),
        (b"(lambda: 0).__globals__\n", "attr.dunder"),
        (b"_secret = 1\n", "restricted_python"),
        (b"y = x.gi_frame\n", "restricted_python"),
    ],
)
def test_forbidden_constructs_are_flagged(source: bytes, rule: str) -> None:
    assert rule in rules(source)


def test_subclasses_escape_names_each_dunder() -> None:
    findings = check(b"().__class__.__bases__[0].__subclasses__()\n")
    messages = {f.message for f in findings if f.rule == "attr.dunder"}
    assert messages == {
        "access to dunder attribute '__class__'",
        "access to dunder attribute '__bases__'",
        "access to dunder attribute '__subclasses__'",
    }
    # RestrictedPython says the same thing about the same names: deduplicated away.
    assert all(f.rule != "restricted_python" for f in findings)


def test_dunder_import_is_one_finding() -> None:
    assert check(b"__import__('os')\n") == (
        Finding("call.__import__", "call of forbidden builtin '__import__'", 1),
    )


def test_restricted_python_exec_error_is_deduplicated() -> None:
    assert [f.rule for f in check(b"exec('1')\n")] == ["call.exec"]


def test_star_import_is_not_a_restricted_python_finding() -> None:
    assert check(b"from numpy import *\n") == ()


@pytest.mark.parametrize(
    "source",
    [b"def f(:\n    pass\n", b"x = (\n", b"return 1 +\n", b"x = 1\x00\n", b"\xff\xfe = 1\n"],
)
def test_syntax_error_is_a_single_finding(source: bytes) -> None:
    findings = check(source)
    assert len(findings) == 1
    assert findings[0].rule == "syntax"


def test_syntax_error_reports_line() -> None:
    (finding,) = check(b"x = 1\ny = 2\ndef f(:\n")
    assert finding.line == 3
    assert str(finding).startswith("line 3: syntax: ")


def test_latin1_coding_line_parses() -> None:
    source = b"#coding:L1\ns = '\xe9\xff'\ndef transform(g):\n    return g\n"
    with pytest.raises(UnicodeDecodeError):
        source.decode("utf-8")
    assert check(source) == ()


def test_zlib_packed_golf_file_parses() -> None:
    payload = zlib.compress(b"p=lambda g:[r[::-1]for r in g]", 9)
    escapes = [
        (b"\\", b"\\\\"),
        (b"'", b"\\'"),
        (b"\0", b"\\x00"),
        (b"\r", b"\\r"),
        (b"\n", b"\\n"),
    ]
    for raw, escaped in escapes:  # backslash first, like a golf packer
        payload = payload.replace(raw, escaped)
    source = b"#coding:L1\nimport zlib\nexec(zlib.decompress(bytes('" + payload + b"','L1')))\n"
    namespace: dict[str, object] = {}
    exec(compile(source, "<golf>", "exec"), namespace)  # trusted payload built above
    assert namespace["p"]([[1, 2]]) == [[2, 1]]  # type: ignore[operator]
    found = rules(source)
    assert "syntax" not in found
    assert "call.exec" in found


@pytest.mark.parametrize(
    "source",
    [b"p=lambda g:[[2for c in r]for r in g]\n", b"p=lambda g:[r[::-1]for r in g]if 1else 0\n"],
)
def test_golf_code_parses_without_warnings(source: bytes) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        findings = check(source)
    assert caught == []
    assert "syntax" not in {f.rule for f in findings}


def test_golf_code_under_warnings_as_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check(b"p=lambda g:[[2for c in r]for r in g]\n") == ()


def test_deeply_nested_source_is_a_value() -> None:
    findings = check(b"x = " + b"-" * 200_000 + b"1\n")
    assert all(isinstance(f, Finding) for f in findings)
    assert findings


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(alphabet="(){}[]:=.,_ \n\tafgimoprtx0123'\"#*", max_size=120).map(str.encode),
    ),
    st.booleans(),
)
def test_check_never_raises(source: bytes, dsl_only: bool) -> None:
    findings = check(source, dsl_only=dsl_only)
    assert all(isinstance(f, Finding) for f in findings)
    assert findings == check(source, dsl_only=dsl_only)


def test_str_source_is_a_caller_bug() -> None:
    with pytest.raises(TypeError):
        check("x = 1")  # type: ignore[arg-type]


def test_dsl_mode_accepts_rearc_verifier() -> None:
    assert check(REARC_VERIFIER, dsl_only=True) == ()
    assert check(REARC_VERIFIER) == ()


def test_dsl_mode_accepts_docstrings_tuples_and_negative_constants() -> None:
    source = b'''\
"""Verifiers."""
from dsl import *


def verify_x(I: Grid) -> Grid:
    """Docstring."""
    x0 = canvas(ZERO, (ONE, TWO))
    x1 = shift(x0, (-1, (0, NEG_ONE)))
    x2 = compose(rbind(fill, x1), identity)(I)
    return branch(x2, x1, -1)
'''
    assert check(source, dsl_only=True) == ()


@pytest.mark.parametrize(
    ("body", "rule", "line"),
    [
        ("    for x in I:\n        pass\n    return I\n", "dsl.statement", 4),
        ("    if I:\n        return I\n    return I\n", "dsl.statement", 4),
        ("    while I:\n        pass\n    return I\n", "dsl.statement", 4),
        ("    with I:\n        pass\n    return I\n", "dsl.statement", 4),
        ("    try:\n        pass\n    except E:\n        pass\n    return I\n", "dsl.statement", 4),
        ("    global G\n    return I\n", "dsl.statement", 4),
        ("    def g(a):\n        return a\n    return I\n", "dsl.statement", 4),
        ("    x0 = I\n", "dsl.statement", 3),
        ("    return I\n    x0 = I\n", "dsl.statement", 4),
        ("    x0, x1 = I\n    return I\n", "dsl.statement", 4),
        ("    import os\n    return I\n", "dsl.statement", 4),
        ("    x0 = I.shape\n    return x0\n", "dsl.expression", 4),
        ("    x0 = apply(lambda a: a, I)\n    return x0\n", "dsl.expression", 4),
        ("    x0 = [a for a in I]\n    return x0\n", "dsl.expression", 4),
        ("    x0 = I[0]\n    return x0\n", "dsl.expression", 4),
        ("    x0 = I + I\n    return x0\n", "dsl.expression", 4),
        ("    x0 = f(*I)\n    return x0\n", "dsl.expression", 4),
        ("    x0 = (I, I)\n    return x0\n", "dsl.expression", 4),
        ("    x0 = f((I.a, ONE))\n    return x0\n", "dsl.expression", 4),
        ("    return I.shape\n", "dsl.expression", 4),
    ],
)
def test_dsl_mode_rejects(body: str, rule: str, line: int) -> None:
    source = f"from dsl import *\n\ndef verify_abc(I: Grid) -> Grid:\n{body}".encode()
    findings = check(source, dsl_only=True)
    assert any(f.rule == rule and f.line == line for f in findings), findings


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        (b"import os\n", "dsl.statement"),
        (b"import os\n", "import.os"),
        (b"from dsl import fill\n", "dsl.statement"),
        (b"X = 1\n", "dsl.statement"),
        (b"class C:\n    pass\n", "dsl.statement"),
        (b"@cache\ndef verify(I):\n    return I\n", "dsl.statement"),
    ],
)
def test_dsl_mode_module_level(source: bytes, rule: str) -> None:
    assert rule in rules(source, dsl_only=True)


def test_dsl_findings_only_in_dsl_mode() -> None:
    source = b"from dsl import *\n\ndef verify(I):\n    for x in I:\n        pass\n    return I\n"
    assert check(source) == ()
    assert rules(source, dsl_only=True) == {"dsl.statement"}


def test_findings_are_deterministic_and_sorted() -> None:
    source = (
        b"import sys\nimport os\n"
        b"y = x.__class__.__dict__\n"
        b"eval(open('f').read())\n"
        b"_a = __builtins__\n"
    )
    first = check(source, dsl_only=True)
    second = check(source, dsl_only=True)
    assert first == second
    assert len(first) >= 8
    keys = [(f.line, f.rule, f.message) for f in first]
    assert keys == sorted(keys)
    assert len(set(first)) == len(first)


def test_finding_str() -> None:
    assert str(Finding("call.open", "call of forbidden builtin 'open'", 4)) == (
        "line 4: call.open: call of forbidden builtin 'open'"
    )
    assert str(Finding("syntax", "bad", None)) == "line ?: syntax: bad"


FINDINGS = (Finding("import.os", "import of forbidden module 'os'", 1),)


@pytest.mark.parametrize(
    ("mode", "findings", "expected"),
    [
        (PolicyMode.OFF, FINDINGS, (False, ())),
        (PolicyMode.OFF, (), (False, ())),
        (
            PolicyMode.WARN,
            FINDINGS,
            (False, ("line 1: import.os: import of forbidden module 'os'",)),
        ),
        (PolicyMode.WARN, (), (False, ())),
        (
            PolicyMode.ENFORCE,
            FINDINGS,
            (True, ("line 1: import.os: import of forbidden module 'os'",)),
        ),
        (PolicyMode.ENFORCE, (), (False, ())),
    ],
)
def test_decide(
    mode: PolicyMode, findings: tuple[Finding, ...], expected: tuple[bool, tuple[str, ...]]
) -> None:
    assert decide(mode, findings) == expected


def test_policy_mode_values() -> None:
    assert [m.value for m in PolicyMode] == ["off", "warn", "enforce"]
    assert PolicyMode("warn") is PolicyMode.WARN


def test_transient_ast_systemerror_is_retried(monkeypatch):
    """CPython 3.11's AST conversion can fail with a spurious SystemError when two threads
    parse at once (gh-106905); the check retries instead of crashing or rejecting."""
    import ast

    from arcjudge.sandbox import policy

    real_parse = ast.parse
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=36, after=38)")
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(policy.ast, "parse", flaky)
    findings = policy.check(b"import os\ndef transform(g):\n    return g\n")
    assert len(calls) >= 2
    assert all(f.rule != "syntax" for f in findings)
    assert any("os" in f.message for f in findings)
