"""Static policy pre-check for untrusted Python programs (ARC verifiers, model-written code).

This module is a **pre-check, not the security boundary**. It reads a program's source
and reports constructs that an ARC transform or verifier has no business using: imports
of process/file/network/introspection modules, calls such as ``open``/``exec``/``eval``,
and dunder attribute access (the usual ``().__class__.__bases__[0].__subclasses__()``
escape). A static scan of a dynamic language can always be evaded (string building,
aliasing through allowed modules, bugs in this checker), so a clean result proves
nothing. Isolation comes from the sandbox that runs the program (separate process,
resource limits, no network, read-only mounts); this check exists to reject or flag
obviously hostile or sloppy programs early, with readable reasons, and to record
what a program tried to do.

Two opinions are combined:

* an :mod:`ast` scan with the rules below, and
* RestrictedPython's :func:`~RestrictedPython.compile_restricted_exec`, whose ``errors``
  become ``restricted_python`` findings. RestrictedPython errors that repeat an ast
  finding on the same line (same identifier) are dropped, and so are its
  ``"*" imports are not allowed`` errors: the ast scan judges every import by module
  name instead, and RE-ARC verifiers all start with ``from dsl import *``.

Rule names are stable and dotted:

* ``import.<module>``: import of a module in :data:`FORBIDDEN_MODULES` (the first
  component of the dotted name counts, so ``import os.path`` is ``import.os``).
* ``call.<name>``: call of a builtin in :data:`FORBIDDEN_CALLS`; also a bare reference to
  one of them (``map(eval, xs)``) when the module never binds that name itself.
* ``attr.dunder``: an attribute (``x.__class__``) or name (``__builtins__``) that starts
  and ends with ``__``, or a string constant spelling one (``getattr(x, "__globals__")``).
  Names in :data:`HARMLESS_DUNDER_NAMES` and the string ``"__main__"`` are not flagged.
* ``restricted_python``: an error reported by RestrictedPython.
* ``syntax``: the source does not parse (the only finding in that case).
* ``dsl.statement`` / ``dsl.expression``: only with ``dsl_only=True``; a construct outside
  the straight-line DSL allow-list (see :func:`check`).

Failures are values: :func:`check` never raises for any program text.
"""

from __future__ import annotations

import ast
import re
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from RestrictedPython.compile import compile_restricted_exec

__all__ = [
    "FORBIDDEN_CALLS",
    "FORBIDDEN_MODULES",
    "HARMLESS_DUNDER_NAMES",
    "Finding",
    "PolicyMode",
    "check",
    "decide",
]

FORBIDDEN_MODULES: frozenset[str] = frozenset(
    {
        # Processes, OS and interpreter access.
        "os",
        "posix",
        "nt",
        "sys",
        "subprocess",
        "pty",
        "signal",
        "resource",
        "fcntl",
        "mmap",
        "ctypes",
        "builtins",
        "importlib",
        "runpy",
        "code",
        "codeop",
        "gc",
        "inspect",
        # Concurrency.
        "threading",
        "_thread",
        "multiprocessing",
        "concurrent",
        "asyncio",
        # Files and serialisation that can run code.
        "io",
        "shutil",
        "pathlib",
        "tempfile",
        "glob",
        "pickle",
        "marshal",
        "shelve",
        # Network.
        "socket",
        "ssl",
        "urllib",
        "http",
        "ftplib",
        "smtplib",
        "webbrowser",
    }
)
"""Top-level module names whose import is a finding (``import.<name>``)."""

FORBIDDEN_CALLS: frozenset[str] = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "help",
    }
)
"""Builtin names whose call (by bare name) is a finding (``call.<name>``)."""

HARMLESS_DUNDER_NAMES: frozenset[str] = frozenset({"__name__", "__doc__"})
"""Dunder *names* (not attributes) that are not flagged, e.g. ``if __name__ == "__main__":``.

RestrictedPython's complaints about these names are dropped as well.
"""

_DUNDER_STRINGS_ALLOWED: frozenset[str] = frozenset({"__main__"})
_DUNDER_RE = re.compile(r"__\w+__", re.ASCII)
_RP_ERROR_RE = re.compile(r"Line (\d+|None): (.*)", re.DOTALL)
_RP_QUOTED_RE = re.compile(r'"([^"]*)"')
_RP_STAR_IMPORT = '"*" imports are not allowed.'
_RP_CALL_ERRORS = {"Exec calls are not allowed.": "exec", "Eval calls are not allowed.": "eval"}


class PolicyMode(str, Enum):  # noqa: UP042 - same (str, Enum) contract as types.Status
    """What the runner does with policy findings (values are stable)."""

    OFF = "off"
    """Do not check at all."""
    WARN = "warn"
    """Record findings with the result; run the program anyway (the default)."""
    ENFORCE = "enforce"
    """Reject a program with any finding; the findings are the reasons."""


@dataclass(frozen=True)
class Finding:
    """One policy finding.

    Attributes:
        rule: Stable dotted rule name, e.g. ``import.os``, ``call.eval``, ``attr.dunder``.
        message: Human-readable explanation.
        line: 1-based source line, or ``None`` when unknown.

    """

    rule: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        line = "?" if self.line is None else str(self.line)
        return f"line {line}: {self.rule}: {self.message}"


def _sort_key(finding: Finding) -> tuple[int, str, str]:
    return (-1 if finding.line is None else finding.line, finding.rule, finding.message)


def _is_dunder(identifier: str) -> bool:
    return len(identifier) > 4 and _DUNDER_RE.fullmatch(identifier) is not None


def _line(node: ast.AST) -> int | None:
    return getattr(node, "lineno", None)


def _bound_names(tree: ast.AST) -> set[str]:
    """Return every name the program binds itself (so ``input = grid`` shadows a builtin)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _import_findings(node: ast.Import | ast.ImportFrom) -> Iterator[Finding]:
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif node.level == 0 and node.module:
        modules = [node.module]
    else:  # Relative imports only reach the program's own package directory.
        modules = []
    for module in modules:
        top = module.split(".")[0]
        if top in FORBIDDEN_MODULES:
            yield Finding(f"import.{top}", f"import of forbidden module '{module}'", _line(node))


def _scan(tree: ast.AST) -> tuple[list[Finding], set[tuple[int | None, str]]]:
    """Run the ast rules.

    Returns:
        The findings, and the ``(line, identifier)`` pairs they cover (plus the harmless
        names that were deliberately allowed), used to drop RestrictedPython repeats.

    """
    findings: list[Finding] = []
    covered: set[tuple[int | None, str]] = set()
    bound = _bound_names(tree)
    called: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(id(node.func))

    for node in ast.walk(tree):
        line = _line(node)
        if isinstance(node, ast.Import | ast.ImportFrom):
            findings.extend(_import_findings(node))
        elif isinstance(node, ast.Name):
            name = node.id
            if name in FORBIDDEN_CALLS and id(node) in called:
                findings.append(
                    Finding(f"call.{name}", f"call of forbidden builtin '{name}'", line)
                )
                covered.add((line, name))
            elif name in FORBIDDEN_CALLS and name not in bound:
                message = f"reference to forbidden builtin '{name}' (may be called indirectly)"
                findings.append(Finding(f"call.{name}", message, line))
                covered.add((line, name))
            elif name in HARMLESS_DUNDER_NAMES:
                covered.add((line, name))
            elif _is_dunder(name):
                findings.append(Finding("attr.dunder", f"use of dunder name '{name}'", line))
                covered.add((line, name))
        elif isinstance(node, ast.Attribute) and _is_dunder(node.attr):
            message = f"access to dunder attribute '{node.attr}'"
            findings.append(Finding("attr.dunder", message, line))
            covered.add((line, node.attr))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _is_dunder(node.value)
            and node.value not in _DUNDER_STRINGS_ALLOWED
        ):
            message = f"string constant '{node.value}' names a dunder attribute"
            findings.append(Finding("attr.dunder", message, line))
    return findings, covered


def _restricted_findings(source: bytes, covered: set[tuple[int | None, str]]) -> Iterator[Finding]:
    """Yield RestrictedPython's errors that the ast scan did not already report."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = compile_restricted_exec(source, filename="<policy>")
        errors: Iterable[str] = result.errors
    except Exception as exc:  # RestrictedPython is an opinion; its crash is a finding.
        message = f"RestrictedPython could not analyse the program: {type(exc).__name__}"
        yield Finding("restricted_python", message, None)
        return
    for error in errors:
        match = _RP_ERROR_RE.fullmatch(error)
        if match is None:
            yield Finding("restricted_python", error, None)
            continue
        line = None if match.group(1) == "None" else int(match.group(1))
        message = match.group(2)
        if message == _RP_STAR_IMPORT:
            continue
        subject = _RP_CALL_ERRORS.get(message)
        if subject is None:
            quoted = _RP_QUOTED_RE.match(message)
            subject = quoted.group(1) if quoted else None
        if subject is not None and (line, subject) in covered:
            continue
        yield Finding("restricted_python", message, line)


class _DslChecker:
    """Allow-list checker for straight-line RE-ARC style DSL verifiers."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def _statement(self, node: ast.AST, message: str) -> None:
        self.findings.append(Finding("dsl.statement", message, _line(node)))

    def _expression(self, node: ast.AST, message: str) -> None:
        self.findings.append(Finding("dsl.expression", message, _line(node)))

    def module(self, tree: ast.Module) -> None:
        for index, stmt in enumerate(tree.body):
            if index == 0 and _is_docstring(stmt):
                continue
            if isinstance(stmt, ast.ImportFrom) and [a.name for a in stmt.names] == ["*"]:
                continue
            if isinstance(stmt, ast.Import):
                self._statement(stmt, "plain import (only 'from <module> import *' is allowed)")
            elif isinstance(stmt, ast.ImportFrom):
                self._statement(stmt, "named import (only 'from <module> import *' is allowed)")
            elif isinstance(stmt, ast.FunctionDef):
                self.function(stmt)
            else:
                name = type(stmt).__name__
                self._statement(stmt, f"{name} statement not allowed at module level")

    def function(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self._statement(decorator, f"decorator on function '{node.name}'")
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if arg.annotation is not None:
                self.expression(arg.annotation)
        if args.vararg is not None or args.kwarg is not None:
            self._statement(node, f"*args/**kwargs in function '{node.name}'")
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.expression(default)
        if node.returns is not None:
            self.expression(node.returns)

        body = node.body[1:] if _is_docstring(node.body[0]) else node.body
        if not body or not isinstance(body[-1], ast.Return):
            self._statement(node, f"function '{node.name}' does not end with a return")
        for index, stmt in enumerate(body):
            last = index == len(body) - 1
            if isinstance(stmt, ast.Assign):
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    self._statement(stmt, "assignment target must be a single name")
                self.expression(stmt.value)
            elif isinstance(stmt, ast.Return) and last:
                if stmt.value is None:
                    self._statement(stmt, "bare return (a verifier must return a value)")
                else:
                    self.expression(stmt.value)
            elif isinstance(stmt, ast.Return):
                self._statement(stmt, "return before the end of the function")
            else:
                name = type(stmt).__name__
                self._statement(stmt, f"{name} statement not allowed in a DSL verifier")

    def expression(self, node: ast.expr, *, call_argument: bool = False) -> None:
        if isinstance(node, ast.Name) or _is_constant(node):
            return
        if isinstance(node, ast.Call):
            self.expression(node.func)
            for arg in node.args:
                self.expression(arg, call_argument=True)
            for keyword in node.keywords:
                if keyword.arg is None:
                    self._expression(keyword, "'**' argument unpacking not allowed")
                else:
                    self.expression(keyword.value, call_argument=True)
            return
        if isinstance(node, ast.Tuple) and call_argument:
            if not _is_plain_tuple(node):
                self._expression(node, "tuple arguments may hold only names and constants")
            return
        name = type(node).__name__
        self._expression(node, f"{name} expression not allowed in a DSL verifier")


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_constant(node: ast.expr) -> bool:
    """Return whether ``node`` is a constant, counting ``-1`` (unary minus on a number)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex)
    return isinstance(node, ast.Constant)


def _is_plain_tuple(node: ast.Tuple) -> bool:
    return all(
        isinstance(elt, ast.Name)
        or _is_constant(elt)
        or (isinstance(elt, ast.Tuple) and _is_plain_tuple(elt))
        for elt in node.elts
    )


_AST_LOCK = threading.RLock()
"""Serializes parsing: CPython 3.11's AST conversion keeps its recursion-depth counter in
per-interpreter state, so two threads parsing at once can fail with ``SystemError: AST
constructor recursion depth mismatch`` (cpython gh-106905). Pools check programs from
worker threads."""


def _parse(source: bytes) -> ast.Module | Finding:
    """Parse ``source`` as bytes (coding cookies honoured, warnings silenced)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):  # a SystemError from gh-106905 is transient: try again
                try:
                    return ast.parse(source, filename="<policy>", mode="exec")
                except SystemError:
                    continue
            return ast.parse(source, filename="<policy>", mode="exec")
    except SyntaxError as exc:
        return Finding("syntax", exc.msg or "invalid syntax", exc.lineno)
    except (ValueError, UnicodeError, LookupError) as exc:  # null bytes, bad coding cookie
        return Finding("syntax", f"{type(exc).__name__}: {exc}", None)
    except (RecursionError, MemoryError, SystemError) as exc:
        return Finding("syntax", f"source too deeply nested to parse ({type(exc).__name__})")


def check(source: bytes, *, dsl_only: bool = False) -> tuple[Finding, ...]:
    """Statically check an untrusted program; a pre-check, not a security boundary.

    Args:
        source: Program text as bytes. It is parsed as bytes, so ``#coding:L1`` (latin-1)
            files and zlib-packed golf programs behind such a line parse as Python would.
        dsl_only: Also apply the allow-list for straight-line RE-ARC style verifiers. The
            module may then contain only a docstring, ``from <module> import *`` lines
            and undecorated function definitions. Each function body may contain only a
            docstring, ``name = <expr>`` assignments and a final ``return <expr>``, where
            an expression is a name, a constant (``-1`` counts), or a call whose function
            and arguments are expressions; call arguments may also be tuples of names and
            constants. Anything else is a ``dsl.statement`` or ``dsl.expression`` finding.

    Returns:
        The findings, deduplicated and sorted by ``(line, rule, message)`` (unknown lines
        first). A program that does not parse yields exactly one ``syntax`` finding.

    Raises:
        TypeError: If ``source`` is a ``str`` rather than bytes (a caller bug).

    """
    if isinstance(source, str):
        raise TypeError("policy.check expects source as bytes")
    source = bytes(source)
    with _AST_LOCK:
        tree = _parse(source)
        if isinstance(tree, Finding):
            return (tree,)
        try:
            findings, covered = _scan(tree)
            findings.extend(_restricted_findings(source, covered))
            if dsl_only:
                dsl = _DslChecker()
                dsl.module(tree)
                findings.extend(dsl.findings)
        except (RecursionError, SystemError):
            return (Finding("syntax", "source too deeply nested to analyse", None),)
    return tuple(sorted(set(findings), key=_sort_key))


def decide(mode: PolicyMode, findings: Sequence[Finding]) -> tuple[bool, tuple[str, ...]]:
    """Apply a policy mode to findings.

    Args:
        mode: ``OFF`` ignores findings, ``WARN`` records them, ``ENFORCE`` records them and
            rejects the program if there is any.
        findings: Findings from :func:`check`.

    Returns:
        ``(rejected, recorded)`` where ``recorded`` holds the findings as strings.

    """
    mode = PolicyMode(mode)
    if mode is PolicyMode.OFF:
        return False, ()
    recorded = tuple(str(finding) for finding in findings)
    if mode is PolicyMode.WARN:
        return False, recorded
    return bool(findings), recorded
