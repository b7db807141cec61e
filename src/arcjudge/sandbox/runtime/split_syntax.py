"""An entry point's statements, read from its source and compiled one by one (stdlib only).

What ``splitstream.py`` runs a batch's variants from: per statement of a straight-line
entry point, its text and position and the names it binds and reads
(:func:`read_function`), and statements compiled as a function of the entry point's name
at their own lines (:func:`compile_statements`), so a traceback reads as a full run's.
"""

from __future__ import annotations

import ast
import itertools
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from . import pinned
else:
    try:  # tests import this module from the package, the supervisor by bare name
        from . import pinned
    except ImportError:
        import pinned

pinned.pin(globals())  # this module runs beside programs: see pinned.py

Step = Callable[..., object]
"""Statements compiled as a function (:func:`compile_statements`)."""
_Node = TypeVar("_Node", bound=ast.AST)


@dataclass(frozen=True)
class StatementFacts:
    """What one statement binds and reads (kept per statement text: variants share most)."""

    targets: tuple[str, ...] | None  # the names a straight-line assignment binds, or None
    bound: frozenset[str]  # every name it binds in the function's scope
    loads: frozenset[str]  # every name it reads (nested scopes included)
    supported: bool  # no ``global``, ``nonlocal``, ``:=``, ``yield``, ``await``, ``match``
    nested: bool  # it makes a scope of its own (a lambda, comprehension, def or class)


@dataclass(frozen=True)
class EntryFunction:
    """An entry point's syntax, read from its module's source."""

    arg: str
    body: list[ast.stmt]
    plain: list[bytes]  # per statement: its text
    exact: list[tuple[bytes, int, int]]  # per statement: its text, line and column
    facts: list[StatementFacts]
    locals: frozenset[str]  # every name the function binds (its argument included)
    others: tuple[object, ...]  # the module but the entry point's body, and where it is


def _assign_targets(node: ast.stmt) -> tuple[str, ...] | None:
    """The names a straight-line assignment binds (``None``: not one)."""
    if not isinstance(node, ast.Assign):
        return None
    names: list[str] = []
    for target in node.targets:
        items = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        for item in items:
            if not isinstance(item, ast.Name):
                return None
            if item.id not in names:
                names.append(item.id)
    return tuple(names)


_UNSUPPORTED = (
    ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.Match,
)  # fmt: skip
_SCOPES = (
    ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp,
)  # fmt: skip


def _facts(stmt: ast.stmt) -> StatementFacts:
    targets = _assign_targets(stmt)
    nodes = list(ast.walk(stmt))
    return StatementFacts(
        targets=targets,
        bound=frozenset(targets) if targets is not None else frozenset(_bound_names(stmt)),
        loads=frozenset(
            n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ),
        supported=not any(isinstance(n, _UNSUPPORTED) for n in nodes),
        nested=any(isinstance(n, _SCOPES) for n in nodes),
    )


def _offsets(lines: list[bytes]) -> list[int]:
    return [0, *itertools.accumulate(map(len, lines))]


def read_function(
    source: bytes, entry: str, known: dict[bytes, StatementFacts] | None = None
) -> EntryFunction | None:
    """The entry point's syntax when it can be run statement by statement (else ``None``).

    Args:
        source: The module's source (UTF-8, no coding declaration: else ``None``).
        entry: The entry point's name (a module-level ``def``, defined once).
        known: Facts of statements by their text, filled as statements are read.

    Returns:
        Its statements and names; ``None`` when the source does not parse, the entry point
        is defined more than once or not by a plain ``def f(x):``, binds a name in more
        than one statement or a name in a nested scope before it is bound (a closure
        would see another value), or uses ``global``, ``nonlocal``, ``:=``, ``yield``,
        ``await`` or ``match``.
    """
    lines = source.splitlines(keepends=True)
    if any(b"coding" in line for line in lines[:2]):
        return None  # positions are UTF-8 offsets: only UTF-8 text is cut by them
    try:
        source.decode("utf-8")
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    defs = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == entry
    ]
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef):
        return None
    fdef = defs[0]
    a = fdef.args
    if (
        fdef.decorator_list
        or a.posonlyargs
        or len(a.args) != 1
        or a.vararg
        or a.kwonlyargs
        or a.kwarg
        or a.defaults
        or a.args[0].annotation
        or fdef.returns
        or not fdef.body
    ):
        return None
    starts = _offsets(lines)

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col

    if known is None:
        known = {}
    arg = a.args[0].arg
    seen = {arg}
    plain: list[bytes] = []
    exact: list[tuple[bytes, int, int]] = []
    facts: list[StatementFacts] = []
    for stmt in fdef.body:
        end_line, end_col = stmt.end_lineno, stmt.end_col_offset
        if end_line is None or end_col is None:
            return None
        text = source[offset(stmt.lineno, stmt.col_offset) : offset(end_line, end_col)]
        fact = known.get(text)
        if fact is None:
            fact = known[text] = _facts(stmt)
        if not fact.supported or fact.bound & seen:
            return None
        seen |= fact.bound
        plain.append(text)
        exact.append((text, stmt.lineno, stmt.col_offset))
        facts.append(fact)
    later: set[str] = set()
    for fact in reversed(facts):  # a closure must not see a name bound from here on
        later |= fact.bound
        if fact.nested and fact.loads & later:
            return None
    if fdef.end_lineno is None or fdef.end_col_offset is None:
        return None
    first = offset(fdef.lineno, fdef.col_offset)
    last = offset(fdef.end_lineno, fdef.end_col_offset)
    body_at = offset(fdef.body[0].lineno, fdef.body[0].col_offset)
    after = source[last:]
    return EntryFunction(
        arg=arg,
        body=fdef.body,
        plain=plain,
        exact=exact,
        facts=facts,
        locals=frozenset(seen),
        others=(
            source[:first],
            source[first:body_at],
            after,
            fdef.end_lineno if after.strip() else None,  # what follows keeps its lines
        ),
    )


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Every name a statement binds in the function's scope (not in nested scopes)."""
    bound: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            todo.extend(node.decorator_list)
            continue
        elif isinstance(node, ast.Lambda | ast.comprehension):
            continue
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return bound


def compile_statements(
    entry: str,
    params: tuple[str, ...],
    body: list[ast.stmt],
    ret: tuple[str, ...] | None,
    dead: frozenset[str],
    namespace: dict[str, object],
) -> Step | None:
    """Statements as a function named ``entry`` over ``params`` (``None``: did not compile).

    ``ret``: return these names' values as a tuple after ``body``. ``dead``: names kept
    local by an assignment nothing reaches.
    """
    last, first = body[-1], body[0]

    def at(node: _Node, where: ast.stmt = last) -> _Node:
        return ast.copy_location(node, where)

    extra: list[ast.stmt] = []
    if ret is not None:
        names: list[ast.expr] = [at(ast.Name(n, ast.Load())) for n in ret]
        extra.append(at(ast.Return(at(ast.Tuple(names, ast.Load())))))
    if dead:
        stores: list[ast.expr] = [at(ast.Name(n, ast.Store())) for n in sorted(dead)]
        extra.append(at(ast.Assign(stores, at(ast.Constant(None)), None)))
    args = ast.arguments([], [at(ast.arg(p), first) for p in params], None, [], [], None, [])
    fdef = at(ast.FunctionDef(entry, args, [*body, *extra], [], None, None), first)
    module = ast.Module([fdef], [])
    try:
        code = compile(module, "program.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == entry:
            return types.FunctionType(const, namespace, entry)
    return None
