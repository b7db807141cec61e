"""Split-stream execution of a batch's variants: shared prefixes (standard library only).

Runs inside a variants process (``program.py``), after the base program loaded. Most
variants of a straight-line function (``def f(I): x1 = g(I); x2 = h(x1, 3); ...; return
O``) differ from the base in one statement, or lack a few (deleted, their readers
rewired). As AccMut does (Wang et al., 2017), per input the base's statements run one at
a time, once per process, each environment kept; a variant that differs first in
statement ``d`` starts from the base's environment before ``d`` and runs its own
statements from there. At each point from which its remaining statements are the base's
remaining ones, when every name they read holds what it holds in the base's run at the
matching point, it is the base from then on: it answers ``same`` (:data:`SAME`) instead
of a grid, on inputs the supervisor says the base answered with a grid; the harness fills
in the base's answer, which it has from the base's own run. A forged ``same`` only makes
a variant look equivalent on an input.

Exactness: the base's statements run as functions of the entry point's name compiled
from each statement's own syntax tree (its lines, so a traceback reads as a full run's),
whose parameters are the environment's names and whose other locals are the full
function's (an unreachable assignment keeps them local: an unbound one raises as it
would); a variant's statements from ``d`` on run as one generator function compiled the
same way, which yields the values to compare at each such point (a ``StopIteration``
it lets out, which a generator turns into ``RuntimeError``, reruns the input whole). An
environment is shared only while every value in it is deeply immutable (checked once per
base statement and input); values are compared strictly (same types, equal, the same
``repr``, so the same iteration order of sets). The base never runs the statement that
binds the value it returns, nor its ``return``: the process never computes the base's
output. Anything else (a function that is not straight-line, a statement that raises in
the base, a mutable value) runs the variant's whole entry point, as without this module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import pinned
    from .split_syntax import EntryFunction, StatementFacts, Step, compile_statements, read_function
    from .split_values import frozen, same
else:
    try:  # tests import this module from the package, the supervisor by bare name
        from . import pinned
        from .split_syntax import (
            EntryFunction,
            StatementFacts,
            Step,
            compile_statements,
            read_function,
        )
        from .split_values import frozen, same
    except ImportError:
        import pinned
        from split_syntax import (
            EntryFunction,
            StatementFacts,
            Step,
            compile_statements,
            read_function,
        )
        from split_values import frozen, same

pinned.pin(globals())  # this module runs beside programs: see pinned.py

SAME = "same"
"""The status a variant answers when it computes what the base computes (see above)."""

_Env = dict[str, object]
FULL = object()
"""What :meth:`Splitter.call` returns when the input runs the whole entry point."""


@dataclass
class _Trace:
    """The base's run on one input: the environment before each statement run so far."""

    envs: list[_Env]
    limit: int | None = None  # the first statement no variant may start after (-1: none)


_MISSING = object()


class Plan:
    """How one variant runs from the base's shared runs (made by :meth:`Splitter.plan`).

    The variant's statements before ``start`` are the base's; its statements from
    ``suffix`` on are the base's from ``suffix + shift`` on (``shift``: statements the
    base has more). Before its own statement ``q`` (``q >= suffix``), when every name its
    remaining statements read holds what it holds in the base's run before the base's
    statement ``q + shift`` (``q + shift <= cut``), the variant computes what the base
    computes. Its statements from ``start`` on run as one generator function (compiled
    when first needed) that yields, at each such point ``q`` (while every statement so
    far is a straight-line assignment), ``(q, values of the names in have[q])``.
    """

    def __init__(
        self, mine: EntryFunction, base_locals: frozenset[str], start: int, shift: int,
        suffix: int, cut: int, entry: str, namespace: dict[str, object],
    ) -> None:  # fmt: skip
        self.mine = mine
        self.start = start
        self.shift = shift
        self.entry = entry
        self.namespace = namespace
        self._runner: tuple[Step, tuple[str, ...]] | None = None
        self._compiled = False
        self.have: dict[int, tuple[str, ...]] = {}  # q -> names bound and read from q on
        self.missing: dict[int, tuple[str, ...]] = {}  # q -> names read but not bound
        names = mine.locals | base_locals
        live: set[str] = set()
        lives: dict[int, set[str]] = {}
        for q in range(len(mine.body) - 1, suffix - 1, -1):
            fact = mine.facts[q]
            live = (live - fact.bound) | (fact.loads & names)
            lives[q] = set(live)
        bound = set(self.bound_before(start))
        for q in range(start, len(mine.body)):
            if q >= suffix and 0 <= q + shift <= cut:
                self.have[q] = tuple(sorted(lives[q] & bound))
                self.missing[q] = tuple(sorted(lives[q] - bound))
            if mine.facts[q].targets is None:
                break  # what a compound statement binds may be unbound: no more points
            bound |= mine.facts[q].bound

    def bound_before(self, q: int) -> tuple[str, ...]:
        """The names bound before the variant's statement ``q`` (all straight-line)."""
        names = {self.mine.arg}
        for fact in self.mine.facts[:q]:
            names |= fact.bound
        return tuple(sorted(names))

    def runner(self) -> tuple[Step, tuple[str, ...]] | None:
        """The variant's statements from ``start`` on: (generator function, parameters)."""
        if not self._compiled:
            self._compiled = True
            body: list[ast.stmt] = []
            for j in range(self.start, len(self.mine.body)):
                stmt = self.mine.body[j]
                body.append(stmt)
                names = self.have.get(j + 1)
                if names is not None:
                    values = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
                    point = ast.Tuple([ast.Constant(j + 1), values], ast.Load())
                    body.append(ast.Expr(ast.Yield(point)))
                    for node in ast.walk(body[-1]):
                        if isinstance(node, ast.expr | ast.stmt):
                            ast.copy_location(node, stmt)
            last = body[-1]
            never = ast.Yield(None)
            end = [ast.Return(None), ast.Expr(never)]  # a generator, always
            for node in (*end, never):
                ast.copy_location(node, last)
            params = self.bound_before(self.start)
            fn = compile_statements(
                self.entry, params, [*body, *end], None, frozenset(), self.namespace
            )
            self._runner = (fn, params) if fn is not None else None
        return self._runner


class Splitter:
    """The base's statement-by-statement runs (per input) and the variants' plans.

    Args:
        source: The base program's source.
        entry: Its entry point's name.
        namespace: Its module's namespace (the base's statements run in it).
    """

    def __init__(self, source: bytes, entry: str, namespace: dict[str, object]) -> None:
        self.entry = entry
        self.known: dict[bytes, StatementFacts] = {}
        self.base = read_function(source, entry, self.known)
        self.traces: dict[int, _Trace] = {}
        self.steps: list[tuple[Step, tuple[str, ...]] | None] = []
        self.cut = 0
        base = self.base
        if base is None:
            return
        last = base.body[-1]
        self.cut = len(base.body) - 1  # never the return
        if isinstance(last, ast.Return) and isinstance(last.value, ast.Name):
            for j, fact in enumerate(base.facts):
                if (names := fact.targets) is not None and last.value.id in names:
                    self.cut = min(self.cut, j)  # nor what binds the value returned
        bound = {base.arg}
        for j in range(self.cut):
            names = base.facts[j].targets
            if names is None:
                self.cut = j
                break
            params = tuple(sorted(bound))
            step = compile_statements(entry, params, [base.body[j]], names,
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
        character position) and never the base's statements from ``cut`` on. One that
        differs in the first statement shares no run, only the points where it is the
        base again (and the input, which must be deeply immutable).
        """
        base = self.base
        if base is None or self.cut == 0:
            return None
        mine = read_function(source, self.entry, self.known)
        if mine is None or mine.others != base.others or mine.arg != base.arg:
            return None
        start = 0
        limit = min(self.cut, len(mine.body))
        while start < limit and mine.exact[start] == base.exact[start]:
            start += 1
        if start >= len(mine.body):
            return None
        shift = len(base.body) - len(mine.body)
        suffix = len(mine.body)
        while (
            suffix > 0
            and suffix + shift > 0
            and (mine.plain[suffix - 1] == base.plain[suffix - 1 + shift])
        ):
            suffix -= 1
        suffix = max(suffix, start)
        return Plan(mine, base.locals, start, shift, suffix, self.cut, self.entry, namespace)

    def _trace(self, index: int, grid: object, upto: int) -> _Trace:
        """The base's run on input ``index``, up to the environment before ``upto``."""
        trace = self.traces.get(index)
        if trace is None:
            base = self.base
            assert base is not None
            trace = _Trace([{base.arg: grid}])
            if not frozen(grid):
                trace.limit = -1  # not even the input is shared
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
            names = self.base.facts[j].targets if self.base is not None else None
            assert names is not None
            if not all(frozen(v) for v in values):
                trace.limit = j
                break
            after = dict(env)
            after.update(zip(names, values, strict=True))
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
        q = plan.start
        trace = self._trace(index, grid, q)
        made = plan.runner()
        if made is None or self._usable(trace) < q:
            return False, FULL
        fn, params = made
        env = trace.envs[q]
        if marker and q in plan.have:  # before the variant's first statement
            if self._matches(plan, index, grid, q, tuple(env[n] for n in plan.have[q])):
                return True, None
        run = fn(*[env[p] for p in params])
        step = run.__next__  # type: ignore[attr-defined]
        try:
            while True:
                q, values = step()
                if marker and self._matches(plan, index, grid, q, values):
                    run.close()  # type: ignore[attr-defined]
                    return True, None
        except StopIteration as stop:
            return False, stop.value
        except RuntimeError as exc:  # PEP 479: a StopIteration the variant let out
            if isinstance(exc.__cause__, StopIteration):
                return False, FULL  # its own full run raises it as it would
            raise

    def _matches(
        self, plan: Plan, index: int, grid: object, q: int, values: tuple[object, ...]
    ) -> bool:
        """Whether the variant before its statement ``q`` is the base before ``q + shift``.

        ``values``: those of the names in ``plan.have[q]``, in the variant's run.
        """
        names = plan.have.get(q)
        if names is None:
            return False
        at = q + plan.shift
        trace = self._trace(index, grid, at)
        if self._usable(trace) < at:
            return False
        theirs = trace.envs[at]
        if any(n in theirs for n in plan.missing[q]):
            return False
        return all(same(v, theirs.get(n, _MISSING)) for n, v in zip(names, values, strict=True))

    @staticmethod
    def _usable(trace: _Trace) -> int:
        """How far a base's run may be shared (environments before statements ``0..n``)."""
        usable = len(trace.envs) - 1
        return usable if trace.limit is None else min(usable, trace.limit)
