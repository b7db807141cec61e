"""Slice bounds and steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator

_TIGHT_OPERATORS = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.MatrixMultiply,
    cst.Power,
)
_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.Float,
    cst.SimpleString,
    cst.List,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
)


def _signed_int(expr: cst.BaseExpression) -> int | None:
    """Value of a plain decimal literal, possibly negated (``3``, ``-1``)."""
    sign = 1
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr, sign = expr.expression, -1
    if isinstance(expr, cst.Integer) and expr.value.isdigit() and not expr.lpar:
        return sign * int(expr.value)
    return None


def _int_node(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


def shifted(expr: cst.BaseExpression, delta: int) -> cst.BaseExpression:
    """``expr + delta``: a new literal for literals, else ``expr+1`` / ``expr-1``.

    Args:
        expr: A slice bound.
        delta: ``+1`` or ``-1``.

    Returns:
        The shifted bound, parenthesized when ``expr`` binds less tightly than ``+``.
    """
    value = _signed_int(expr)
    if value is not None:
        return _int_node(value + delta).with_changes(lpar=expr.lpar, rpar=expr.rpar)
    tight = expr.lpar or isinstance(expr, _ATOMS)
    tight = tight or (
        isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _TIGHT_OPERATORS)
    )
    tight = tight or (
        isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not)
    )
    if not tight:
        expr = expr.with_changes(lpar=(cst.LeftParen(),), rpar=(cst.RightParen(),))
    operator = cst.Add if delta > 0 else cst.Subtract
    space = cst.SimpleWhitespace("")
    return cst.BinaryOperation(
        expr, operator(whitespace_before=space, whitespace_after=space), cst.Integer("1")
    )


class SliceBound(NodeOperator):
    """Move a slice bound by one (``lower±1``, ``upper±1``) or drop its step (``nostep``).

    Slices cut rows and columns (``row[:w]``, ``g[1:-1]``) and mirror them
    (``r[::-1]``); a fence-post error keeps one row or column too many or too few, and
    a dropped step un-mirrors, so the output is the right material with a small
    geometric error. Literal bounds get a new literal (``-1`` -> ``-2``), other bounds
    ``+1``/``-1`` appended. Anchor: the whole subscript's text and occurrence.
    """

    name = "slice.bound"
    node_types = (cst.Slice,)
    examples: ClassVar[list[Example]] = [
        ("p = lambda g: [r[::-1] for r in g[::-1]]\n", "p = lambda g: [r[:] for r in g[::-1]]\n"),
        ("y = row[:h]\n", "y = row[:h-1]\n"),
        ("y = row[:h]\n", "y = row[:h+1]\n", "upper+1"),
        ("y = g[1:-1]\n", "y = g[0:-1]\n"),
        ("y = g[1:-1]\n", "y = g[1:-2]\n", "upper-1"),
        ("y = g[a or b:]\n", "y = g[(a or b)-1:]\n"),
    ]

    def anchor_node(self, index: ModuleIndex, node: cst.CSTNode) -> cst.CSTNode:
        """The enclosing subscript (``r[::-1]``)."""
        element = index.parent(node)
        subscript = index.parent(element) if element is not None else None
        return subscript if isinstance(subscript, cst.Subscript) else node

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """``lower±1`` and ``upper±1`` for present bounds, ``nostep`` for a present step."""
        assert isinstance(node, cst.Slice)
        out: list[str | None] = []
        if node.lower is not None:
            out += ["lower-1", "lower+1"]
        if node.upper is not None:
            out += ["upper-1", "upper+1"]
        if node.step is not None:
            out.append("nostep")
        return out

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Apply the variant to the slice."""
        assert isinstance(node, cst.Slice) and variant is not None
        if variant == "nostep":
            return node.with_changes(step=None, second_colon=cst.MaybeSentinel.DEFAULT)
        part, delta = variant[:5], (1 if variant[5] == "+" else -1)
        bound = node.lower if part == "lower" else node.upper
        assert bound is not None
        return node.with_changes(**{part: shifted(bound, delta)})
