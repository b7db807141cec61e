"""Split-stream execution of a batch's variants: shared prefixes (standard library only).

Runs inside a variants process (``program.py``), after the base program loaded. Most
variants of a straight-line function (``def f(I): x1 = g(I); x2 = h(x1, 3); ...; return
O``) differ from the base in one statement. As AccMut does (Wang et al., 2017), per input
the base's statements run one at a time, once per process, each environment kept; a
variant that differs first in statement ``d`` starts from the base's environment before
``d`` and runs its own statements from there. When it differs in ``d`` alone and the
values its statement ``d`` binds are those the base bound there, it is the base from then
on: it answers ``same`` (:data:`SAME`) instead of a grid, on inputs the supervisor says
the base answered with a grid; the harness fills in the base's answer, which it has from
the base's own run. A forged ``same`` only makes a variant look equivalent on an input.

Exactness: a statement runs as a function of the entry point's name compiled from the
statement's own syntax tree (its lines, so a traceback reads as a full run's), whose
parameters are the environment's names and whose other locals are the full function's
(an unreachable assignment keeps them local: an unbound one raises as it would). An
environment is shared only while every value in it is deeply immutable (checked once per
base statement and input); values are compared strictly (same types, equal, the same
``repr``, so the same iteration order of sets). The base never runs the statement that
binds the value it returns, nor its ``return``: the process never computes the base's
output. Anything else (a function that is not straight-line, a statement that raises in
the base, a mutable value) runs the variant's whole entry point, as without this module.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field

SAME = "same"
"""The status a variant answers when it computes what the base computes (see above)."""

_PLAIN = (int, bool, str, bytes, float, complex, type(None))
_Env = dict[str, object]
_Step = Callable[..., object]
FULL = object()
"""What :meth:`Splitter.call` returns when the input runs the whole entry point."""


@dataclass(frozen=True)
class _Function:
    """An entry point's syntax, read from its module's source."""

    arg: str
    body: list[ast.stmt]
    plain: list[str]  # per statement: its dump (no positions)
    exact: list[str]  # per statement: its dump with positions
    targets: list[tuple[str, ...] | None]  # per statement: names an Assign binds, or None
    locals: frozenset[str]  # every name the function binds (its argument included)
    others: str  # the module without the entry point (dump with positions)


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


_UNSUPPORTED = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)


def read_function(source: bytes, entry: str) -> _Function | None:
    """The entry point's syntax when it can be run statement by statement (else ``None``).

    Args:
        source: The module's source.
        entry: The entry point's name (a module-level ``def``, defined once).

    Returns:
        Its statements and names; ``None`` when the source does not parse, the entry point
        is defined more than once or not by a plain ``def f(x):``, binds a name in more
        than one statement (a closure would see another value), or uses ``global``,
        ``nonlocal``, ``:=``, ``yield`` or ``await``.
    """
    try:
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
        or not fdef.body
    ):
        return None
    if any(isinstance(n, _UNSUPPORTED) for n in ast.walk(fdef)):
        return None
    arg = a.args[0].arg
    seen = {arg}
    targets = []
    for stmt in fdef.body:
        names = _assign_targets(stmt)
        bound = set(names) if names is not None else _bound_names(stmt)
        if bound & seen:
            return None
        seen |= bound
        targets.append(names)
    rest = [n for n in tree.body if n is not fdef]
    return _Function(
        arg=arg,
        body=fdef.body,
        plain=[ast.dump(s) for s in fdef.body],
        exact=[ast.dump(s, include_attributes=True) for s in fdef.body],
        targets=targets,
        locals=frozenset(seen),
        others=ast.dump(ast.Module(rest, []), include_attributes=True)
        + ast.dump(fdef.args, include_attributes=True)
        + repr((fdef.lineno, fdef.col_offset)),
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


def _compile(
    entry: str,
    params: tuple[str, ...],
    body: list[ast.stmt],
    ret: tuple[str, ...] | None,
    dead: frozenset[str],
    namespace: dict[str, object],
) -> _Step | None:
    """Statements as a function named ``entry`` over ``params`` (``None``: did not compile).

    ``ret``: return these names' values as a tuple after ``body``. ``dead``: names kept
    local by an assignment nothing reaches.
    """
    where = body[0]
    extra: list[ast.stmt] = []
    if ret is not None:
        names: list[ast.expr] = [ast.Name(n, ast.Load()) for n in ret]
        extra.append(ast.Return(ast.Tuple(names, ast.Load())))
    if dead:
        extra.append(ast.Assign([ast.Name(n, ast.Store()) for n in sorted(dead)],
                                ast.Constant(None)))  # fmt: skip
    for node in extra:
        ast.copy_location(node, body[-1])
    args = ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, [])
    fdef = ast.FunctionDef(entry, args, [*body, *extra], [], None, None)
    ast.copy_location(fdef, where)
    module = ast.Module([fdef], [])
    ast.fix_missing_locations(module)
    try:
        code = compile(module, "program.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == entry:
            return types.FunctionType(const, namespace, entry)
    return None


def frozen(value: object) -> bool:
    """Whether a value is deeply immutable.

    Plain scalars, tuples and frozensets of such, builtin types, and functions, builtins
    and partials over such.
    """
    todo = [value]
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        kind = type(v)
        if kind in _PLAIN:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if kind is tuple or kind is frozenset:
            todo.extend(v)  # type: ignore[arg-type]
        elif kind is types.FunctionType:
            fn: types.FunctionType = v  # type: ignore[assignment]
            for cell in fn.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:  # an empty cell: filled later, by someone
                    return False
            todo.append(fn.__defaults__)
            if fn.__kwdefaults__:
                todo.extend(fn.__kwdefaults__.values())
            if fn.__dict__:
                return False
        elif kind is types.BuiltinFunctionType:
            owner = getattr(v, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                todo.append(owner)
        elif kind is functools.partial:
            part: functools.partial[object] = v  # type: ignore[assignment]
            todo.append(part.func)
            todo.extend(part.args)
            todo.extend(part.keywords.values())
        elif kind is type:
            if getattr(v, "__module__", None) != "builtins":
                return False
        else:
            return False
    return True


def same(a: object, b: object) -> bool:
    """Whether two values are the same for any computation that follows (strictly)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    try:
        if kind is types.FunctionType:
            fa: types.FunctionType = a  # type: ignore[assignment]
            fb: types.FunctionType = b  # type: ignore[assignment]
            if (
                fa.__code__ is not fb.__code__
                or fa.__globals__ is not fb.__globals__
                or fa.__dict__
                or fb.__dict__
                or not same(fa.__defaults__, fb.__defaults__)
                or not same(fa.__kwdefaults__ or None, fb.__kwdefaults__ or None)
            ):
                return False
            ca, cb = fa.__closure__ or (), fb.__closure__ or ()
            return len(ca) == len(cb) and all(
                same(x.cell_contents, y.cell_contents) for x, y in zip(ca, cb, strict=True)
            )
        if kind is functools.partial:
            pa: functools.partial[object] = a  # type: ignore[assignment]
            pb: functools.partial[object] = b  # type: ignore[assignment]
            return (
                same(pa.func, pb.func)
                and same(pa.args, pb.args)
                and list(pa.keywords) == list(pb.keywords)
                and all(same(pa.keywords[k], pb.keywords[k]) for k in pa.keywords)
            )
        if kind is types.BuiltinFunctionType:
            return bool(a == b)
        if kind is tuple:
            ta: tuple[object, ...] = a  # type: ignore[assignment]
            tb: tuple[object, ...] = b  # type: ignore[assignment]
            if len(ta) != len(tb):
                return False
            if any(type(x) not in _PLAIN and type(x) is not tuple for x in ta):
                return all(same(x, y) for x, y in zip(ta, tb, strict=True))
        elif kind is frozenset and sys.getsizeof(a) != sys.getsizeof(b):
            return False
        return bool(a == b) and repr(a) == repr(b)
    except Exception:
        return False


@dataclass
class _Trace:
    """The base's run on one input: environments before each statement, bindings."""

    envs: list[_Env]
    binds: list[tuple[object, ...]] = field(default_factory=list)
    limit: int | None = None  # the first statement no variant may start after


@dataclass(frozen=True)
class Plan:
    """How one variant runs on each input (see :meth:`Splitter.plan`)."""

    start: int  # the first statement of the variant that differs from the base's
    check: bool  # start differs alone: compare its bindings with the base's
    step: _Step | None  # the variant's statement ``start`` alone (``check``)
    step_params: tuple[str, ...]
    step_names: tuple[str, ...]  # what ``step`` returns, in order
    after: _Step | None  # the variant's statements after ``start`` (``check``)
    after_params: tuple[str, ...]
    tail: _Step | None  # the variant's statements from ``start`` on
    tail_params: tuple[str, ...]


class Splitter:
    """The base's statement-by-statement runs (per input) and the variants' plans.

    Args:
        source: The base program's source.
        entry: Its entry point's name.
        namespace: Its module's namespace (the base's statements run in it).
    """

    def __init__(self, source: bytes, entry: str, namespace: dict[str, object]) -> None:
        self.entry = entry
        self.base = read_function(source, entry)
        self.traces: dict[int, _Trace] = {}
        self.steps: list[tuple[_Step, tuple[str, ...]] | None] = []
        self.cut = 0
        base = self.base
        if base is None:
            return
        last = base.body[-1]
        self.cut = len(base.body) - 1  # never the return
        if isinstance(last, ast.Return) and isinstance(last.value, ast.Name):
            for j, names in enumerate(base.targets):
                if names is not None and last.value.id in names:
                    self.cut = min(self.cut, j)  # nor what binds the value returned
        bound = {base.arg}
        for j in range(self.cut):
            names = base.targets[j]
            if names is None:
                self.cut = j
                break
            params = tuple(sorted(bound))
            step = _compile(entry, params, [base.body[j]], names,
                            base.locals - bound - set(names), namespace)  # fmt: skip
            if step is None:
                self.cut = j
                break
            self.steps.append((step, params))
            bound |= set(names)

    def plan(self, source: bytes, namespace: dict[str, object]) -> Plan | None:
        """How a variant (loaded in ``namespace``) shares the base's runs (``None``: not).

        A variant shares the base's statements before the first one where it differs
        (its module otherwise the same, the statements before it the same to the
        character position) and never the base's statements from ``cut`` on.
        """
        base = self.base
        if base is None or self.cut == 0:
            return None
        mine = read_function(source, self.entry)
        if mine is None or mine.others != base.others or mine.arg != base.arg:
            return None
        start = 0
        limit = min(self.cut, len(mine.body))
        while start < limit and mine.exact[start] == base.exact[start]:
            start += 1
        if start == 0 or start >= len(mine.body):
            return None
        bound = {base.arg}
        for bound_here in base.targets[:start]:
            bound |= set(bound_here or ())
        params = tuple(sorted(bound))
        dead = mine.locals - bound
        tail = _compile(self.entry, params, mine.body[start:], None, frozenset(), namespace)
        check = (
            start < self.cut
            and len(mine.body) == len(base.body)
            and mine.plain[start + 1 :] == base.plain[start + 1 :]
            and mine.targets[start] is not None
            and mine.targets[start] == base.targets[start]
        )
        step = after = None
        after_params: tuple[str, ...] = ()
        names: tuple[str, ...] = ()
        if check:
            names = mine.targets[start] or ()
            step = _compile(self.entry, params, [mine.body[start]], names,
                            dead - set(names), namespace)  # fmt: skip
            after_params = tuple(sorted(bound | set(names)))
            after = _compile(self.entry, after_params, mine.body[start + 1 :], None,
                             frozenset(), namespace)  # fmt: skip
        if tail is None or (check and (step is None or after is None)):
            return None
        return Plan(start, check, step, params, names, after, after_params, tail, params)

    def _trace(self, index: int, grid: object, upto: int) -> _Trace:
        """The base's run on input ``index``, up to the environment before ``upto``."""
        trace = self.traces.get(index)
        if trace is None:
            base = self.base
            assert base is not None
            trace = _Trace([{base.arg: grid}])
            if not frozen(grid):
                trace.limit = 0
            self.traces[index] = trace
        while trace.limit is None and len(trace.envs) <= upto:
            j = len(trace.envs) - 1
            if j >= len(self.steps):
                trace.limit = j
                break
            entry = self.steps[j]
            assert entry is not None
            step, params = entry
            env = trace.envs[j]
            try:
                values = step(*[env[p] for p in params])
            except BaseException:  # the base raises here: the variant's own run says how
                trace.limit = j
                break
            assert isinstance(values, tuple)
            names = self.base.targets[j] if self.base is not None else None
            assert names is not None
            if not all(frozen(v) for v in values):
                trace.limit = j
                break
            after = dict(env)
            after.update(zip(names, values, strict=True))
            trace.binds.append(values)
            trace.envs.append(after)
        return trace

    def call(self, plan: Plan, index: int, grid: object, marker: bool) -> tuple[bool, object]:
        """Run a variant on one input from the base's shared run.

        Args:
            plan: The variant's plan.
            index: The input's index (the base's runs are kept per input).
            grid: A fresh copy of the input (only the base's run sees it).
            marker: Whether the variant may answer ``same`` on this input.

        Returns:
            ``(True, None)`` when the variant computes what the base computes from here
            on; ``(False, value)`` with the variant's return value; ``(False, FULL)``
            when this input cannot be shared (run the whole entry point).
        """
        check = plan.check and marker
        trace = self._trace(index, grid, plan.start + (1 if check else 0))
        usable = len(trace.envs) - 1
        if trace.limit is not None:
            usable = min(usable, trace.limit)
        if usable < plan.start:
            return False, FULL
        env = trace.envs[plan.start]
        if check and len(trace.binds) > plan.start:
            assert plan.step is not None and plan.after is not None
            values = plan.step(*[env[p] for p in plan.step_params])
            assert isinstance(values, tuple)
            base_values = trace.binds[plan.start]
            if all(same(x, y) for x, y in zip(values, base_values, strict=True)):
                return True, None
            mine = dict(env)
            mine.update(zip(plan.step_names, values, strict=True))
            return False, plan.after(*[mine[p] for p in plan.after_params])
        assert plan.tail is not None
        return False, plan.tail(*[env[p] for p in plan.tail_params])
