"""Statement deletion with rewiring, for straight-line single-assignment code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.anchors import AnchorCounter
from arcjudge.mutation.cstindex import ModuleIndex, replace_nodes
from arcjudge.mutation.operators.base import Example, Operator, Site

MAX_SPAN = 3
"""Longest run of consecutive assignments deleted at once."""


@dataclass
class _Facts:
    """Def-use facts about one function, enough to delete and rewire safely.

    Attributes:
        block: The function body.
        stores: How often each name is bound anywhere in the function (params included).
        declared: Names in ``global``/``nonlocal`` declarations.
        loads: Name -> (body statement index, ``Name`` node) of every read in the body.
        bound: (statement index, name) of names bound exactly once, by a parameter
            (index -1) or a top-level simple assignment, in binding order.
    """

    block: cst.IndentedBlock
    stores: Counter[str] = field(default_factory=Counter)
    declared: set[str] = field(default_factory=set)
    loads: dict[str, list[tuple[int, cst.Name]]] = field(default_factory=dict)
    bound: list[tuple[int, str]] = field(default_factory=list)

    def assigned_name(self, i: int) -> str | None:
        """The name statement ``i`` binds if it is a deletable ``name = value`` line."""
        stmt = self.block.body[i]
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            return None
        target = small.targets[0].target
        if not isinstance(target, cst.Name):
            return None
        name = target.value
        uses = self.loads.get(name)
        if self.stores[name] != 1 or name in self.declared or not uses:
            return None
        if any(k <= i for k, _ in uses):
            return None
        return name

    def candidates(self, i: int) -> list[str]:
        """Names that can stand in for the one bound at statement ``i``, best first.

        The call's own variable arguments (in argument order), then the other names
        bound before ``i`` (most recent first), then the parameters.
        """
        ready = [name for k, name in self.bound if k < i]
        ready_set = set(ready)
        out: list[str] = []
        line = self.block.body[i]
        assert isinstance(line, cst.SimpleStatementLine)
        small = line.body[0]
        assert isinstance(small, cst.Assign)  # ``i`` has an assigned_name
        value = small.value
        if isinstance(value, cst.Call):
            for arg in value.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in ready_set:
                    out.append(arg.value.value)
        params = [name for k, name in self.bound if k < 0]
        out.extend(name for k, name in reversed(self.bound) if k >= 0 and k < i)
        out.extend(params)
        return list(dict.fromkeys(out))


def _param_names(params: cst.Parameters) -> list[cst.Name]:
    """Parameter names in declaration order."""
    names = [p.name for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name)
    names.extend(p.name for p in params.kwonly_params)
    if isinstance(params.star_kwarg, cst.Param):
        names.append(params.star_kwarg.name)
    return names


def _simple_bindings(stmt: cst.BaseStatement) -> list[str]:
    """Names a top-level simple statement surely binds (assignments, incl. unpacking)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return []
    names: list[str] = []
    for small in stmt.body:
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            targets = [small.target]
        while targets:
            target = targets.pop(0)
            if isinstance(target, cst.Name):
                names.append(target.value)
            elif isinstance(target, cst.Tuple | cst.List):
                targets[:0] = [e.value for e in target.elements]
    return names


@dataclass(frozen=True)
class _Span:
    """What a :class:`DropAssignRewire` site deletes: body statements ``first:stop``.

    Attributes:
        facts: The function's def-use facts.
        first: Index of the first deleted statement.
        stop: Index one past the last deleted statement.
        replacement: The name later reads of the deleted names are rewired to.
    """

    facts: _Facts
    first: int
    stop: int
    replacement: str


def _leading_lines(stmt: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """The comments and empty lines before ``stmt``."""
    assert isinstance(stmt, cst.SimpleStatementLine | cst.BaseCompoundStatement)
    return stmt.leading_lines


def _analyse(index: ModuleIndex, fdef: cst.FunctionDef) -> _Facts | None:
    """Collect the def-use facts of ``fdef``'s body, or ``None`` without an indented body."""
    block = fdef.body
    if not isinstance(block, cst.IndentedBlock):
        return None
    facts = _Facts(block)
    stmt_of: dict[int, int] = {}
    for i, stmt in enumerate(block.body):
        start = index.pos(stmt)
        for p in range(start, index.end[start]):
            stmt_of[p] = i
    start = index.pos(fdef)
    for p in range(start, index.end[start]):
        node = index.nodes[p]
        if not isinstance(node, cst.Name):
            continue
        role = index.name_role(node)
        if role == "store":
            facts.stores[node.value] += 1
        elif role == "global":
            facts.declared.add(node.value)
        elif role == "load" and p in stmt_of:
            facts.loads.setdefault(node.value, []).append((stmt_of[p], node))
    once = {n for n, c in facts.stores.items() if c == 1 and n not in facts.declared}
    facts.bound = [(-1, n.value) for n in _param_names(fdef.params) if n.value in once]
    for i, stmt in enumerate(block.body):
        facts.bound.extend((i, n) for n in _simple_bindings(stmt) if n in once)
    return facts


class DropAssignRewire(Operator):
    """Delete an intermediate ``xK = f(...)`` and rewire later reads of ``xK``.

    RE-ARC verifiers are chains of single assignments; skipping one step (or a run of 2
    or 3) and feeding the next step an earlier value gives a program that still runs
    and usually returns a grid that is close to right: exactly the near miss a judge
    must catch. Each name bound before the deleted line (the call's own variable
    arguments first, then the other assigned names most recent first, then the
    parameters) is its own variant; a run of 2-3 lines is rewired to the first
    candidate of its first line (the name feeding it). Only names bound exactly once
    are touched and every later read is rewired, so no mutant reads an unbound name;
    lines whose value is never read are not sites (deleting them changes nothing).
    Anchor: the deleted name (``x3``), or ``x3..x5`` for a run.
    """

    name = "stmt.drop_assign_rewire"
    examples: ClassVar[list[Example]] = [
        (
            "def f(I):\n    x0 = g(I)\n    x1 = h(x0, ONE)\n    return x1\n",
            "def f(I):\n    x1 = h(I, ONE)\n    return x1\n",
        ),
        (
            "def f(I):\n    x0 = g(I)\n    x1 = h(x0, ONE)\n    return x1\n",
            "def f(I):\n    x0 = g(I)\n    return x0\n",
            "x1:x0",
        ),
        (
            "def f(I):\n    x0 = g(I)\n    x1 = h(x0, ONE)\n    x2 = k(x1, x0)\n    return x2\n",
            "def f(I):\n    x0 = g(I)\n    return x0\n",
            "x1..x2:x0",
        ),
        (
            "def f(g):\n    h = len(g)\n    # keep me\n    n = h - 1\n    return g[n]\n",
            "def f(g):\n    # keep me\n    n = g - 1\n    return g[n]\n",
        ),
    ]

    def find_sites(self, index: ModuleIndex) -> list[Site]:
        """Single deletions (one site per rewire candidate), then runs of 2 and 3."""
        counter = AnchorCounter()
        sites: list[Site] = []
        for fdef in index.of_type(cst.FunctionDef):
            assert isinstance(fdef, cst.FunctionDef)
            facts = _analyse(index, fdef)
            if facts is None:
                continue
            scope = index.scope_of(fdef)
            stmts = facts.block.body
            names = [facts.assigned_name(i) for i in range(len(stmts))]
            for i, name in enumerate(names):
                if name is None:
                    continue
                candidates = facts.candidates(i)
                anchor = counter.name_anchor(scope, name)
                for replacement in candidates:
                    data = _Span(facts, i, i + 1, replacement)
                    sites.append(Site(anchor, replacement, scope, stmts[i], data))
                if not candidates:
                    continue
                for length in range(2, MAX_SPAN + 1):
                    run = [n for n in names[i : i + length] if n is not None]
                    if len(run) < length:  # past the end, or a line that is not a site
                        break
                    last = i + length - 1
                    if not any(k > last for n in run for k, _ in facts.loads[n]):
                        continue
                    anchor = counter.name_anchor(scope, f"{name}..{run[-1]}")
                    data = _Span(facts, i, i + length, candidates[0])
                    sites.append(Site(anchor, candidates[0], scope, stmts[i], data))
        return sites

    def rewrite(self, index: ModuleIndex, site: Site) -> cst.CSTNode:
        """Drop the site's statements and rewire later reads of their names."""
        span = site.data
        assert isinstance(span, _Span)
        facts, first, stop, replacement = span.facts, span.first, span.stop, span.replacement
        block = facts.block
        # every deleted line binds a name (that is what made it a site)
        deleted = [n for i in range(first, stop) if (n := facts.assigned_name(i)) is not None]
        body: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        for j, stmt in enumerate(block.body):
            if first <= j < stop:
                carry.extend(_leading_lines(stmt))
                continue
            if j >= stop:
                renames: dict[cst.CSTNode, cst.CSTNode] = {
                    node: node.with_changes(value=replacement)
                    for name in deleted
                    for k, node in facts.loads[name]
                    if k == j
                }
                if renames:
                    renamed = replace_nodes(index, stmt, renames)
                    assert isinstance(renamed, cst.BaseStatement)
                    stmt = renamed
            if carry:
                stmt = stmt.with_changes(leading_lines=(*carry, *_leading_lines(stmt)))
                carry = []
            body.append(stmt)
        new_block = block.with_changes(body=tuple(body))
        return replace_nodes(index, index.module, {block: new_block})
