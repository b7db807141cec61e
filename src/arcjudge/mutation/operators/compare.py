"""Comparison boundaries and polarity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator

_SPACE = cst.SimpleWhitespace(" ")
_SimpleOp = (
    type[cst.LessThan]
    | type[cst.LessThanEqual]
    | type[cst.GreaterThan]
    | type[cst.GreaterThanEqual]
    | type[cst.Equal]
    | type[cst.NotEqual]
)


def flipped(op: cst.BaseCompOp) -> cst.BaseCompOp:
    """The comparison with its boundary moved or its sense negated, spacing kept.

    ``<``/``<=`` and ``>``/``>=`` swap (boundary), ``==``/``!=``, ``in``/``not in`` and
    ``is``/``is not`` swap (negation).
    """
    if not isinstance(
        op,
        cst.LessThan
        | cst.LessThanEqual
        | cst.GreaterThan
        | cst.GreaterThanEqual
        | cst.Equal
        | cst.NotEqual
        | cst.In
        | cst.NotIn
        | cst.Is
        | cst.IsNot,
    ):
        raise TypeError(f"unknown comparison {type(op).__name__}")
    before = op.whitespace_before
    after = op.whitespace_after
    simple: dict[type[cst.BaseCompOp], _SimpleOp] = {
        cst.LessThan: cst.LessThanEqual,
        cst.LessThanEqual: cst.LessThan,
        cst.GreaterThan: cst.GreaterThanEqual,
        cst.GreaterThanEqual: cst.GreaterThan,
        cst.Equal: cst.NotEqual,
        cst.NotEqual: cst.Equal,
    }
    if type(op) in simple:
        return simple[type(op)](whitespace_before=before, whitespace_after=after)
    if isinstance(op, cst.In):
        return cst.NotIn(
            whitespace_before=before, whitespace_between=_SPACE, whitespace_after=after
        )
    if isinstance(op, cst.NotIn):
        return cst.In(whitespace_before=before, whitespace_after=after)
    if isinstance(op, cst.Is):
        return cst.IsNot(
            whitespace_before=before, whitespace_between=_SPACE, whitespace_after=after
        )
    return cst.Is(whitespace_before=before, whitespace_after=after)


class CompareFlip(NodeOperator):
    """Flip one comparison operator: ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``in``/``not in``.

    Conditions in ARC programs select cells, rows or objects (``v != 0``, ``i < h``);
    a boundary off by one or a negated test picks almost the same set, so the output
    differs in a few cells. Chained comparisons (``0 <= i < h``) have one variant per
    operator (``0``, ``1``...); a single comparison has no variant.
    """

    name = "compare.flip"
    node_types = (cst.Comparison,)
    examples: ClassVar[list[Example]] = [
        ("y = [v for v in r if v != 0]\n", "y = [v for v in r if v == 0]\n"),
        ("ok = 0 <= i < h\n", "ok = 0 < i < h\n"),
        ("ok = 0 <= i < h\n", "ok = 0 <= i <= h\n", "1"),
        ("ok = x in s\n", "ok = x not in s\n"),
        ("ok = x is not None\n", "ok = x is None\n"),
        ("ok = a>b\n", "ok = a>=b\n"),
    ]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """One variant per operator of a chain, ``[None]`` for a single comparison."""
        assert isinstance(node, cst.Comparison)
        count = len(node.comparisons)
        return [None] if count == 1 else [str(k) for k in range(count)]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Replace the chosen operator by its flipped form."""
        assert isinstance(node, cst.Comparison)
        k = 0 if variant is None else int(variant)
        parts = list(node.comparisons)
        parts[k] = parts[k].with_changes(operator=flipped(parts[k].operator))
        return node.with_changes(comparisons=tuple(parts))
