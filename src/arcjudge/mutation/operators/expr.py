"""Binary-expression pruning: keep one operand of ``a OP b``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator


def keep_parens(outer: cst.BaseExpression, inner: cst.BaseExpression) -> cst.BaseExpression:
    """``inner`` wearing ``outer``'s parentheses too, so it fits wherever ``outer`` was.

    A child of an operator binds at least as tightly as the operator itself, so the
    child is safe in the parent's place; only the parentheses written around the parent
    (which may be needed for spacing, as in ``if(a+b)``) have to move with it.

    Args:
        outer: The expression being replaced.
        inner: Its replacement (usually a child of ``outer``).

    Returns:
        ``inner`` with ``outer``'s ``lpar``/``rpar`` wrapped around its own.
    """
    if not outer.lpar:
        return inner
    return inner.with_changes(
        lpar=(*outer.lpar, *inner.lpar),
        rpar=(*inner.rpar, *outer.rpar),
    )


class BinopLeft(NodeOperator):
    """Replace ``a OP b`` by its left operand ``a``.

    The pruning used for non-DSL verifiers in the reference study: dropping one side of
    an arithmetic or sequence expression (``[0] * k + cells`` -> ``[0] * k``, ``h - n``
    -> ``h``) keeps the program running but skips a step, a classic near miss.
    """

    name = "expr.binop_left"
    node_types = (cst.BinaryOperation,)
    examples: ClassVar[list[Example]] = [
        ("y = a + b * c\n", "y = a\n"),
        ("y = (h - n) * 2\n", "y = (h - n)\n"),
        ("p = lambda g: [r + r[::-1] for r in g]\n", "p = lambda g: [r for r in g]\n"),
        ("if(a+b)>c: pass\n", "if(a)>c: pass\n"),
    ]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """Every binary operation is one site."""
        return [None]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Keep the left operand."""
        assert isinstance(node, cst.BinaryOperation)
        return keep_parens(node, node.left)


class BinopRight(NodeOperator):
    """Replace ``a OP b`` by its right operand ``b``.

    The mirror of :class:`BinopLeft`: keeps the other half of a combination (``r + r2``
    -> ``r2``, ``x % n`` -> ``n``), so together they cover both ways a step can be lost.
    """

    name = "expr.binop_right"
    node_types = (cst.BinaryOperation,)
    examples: ClassVar[list[Example]] = [
        ("y = a + b * c\n", "y = b * c\n"),
        ("y = (h - n) * 2\n", "y = 2\n"),
        ("y = a * (b + c)\n", "y = (b + c)\n"),
    ]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """Every binary operation is one site."""
        return [None]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Keep the right operand."""
        assert isinstance(node, cst.BinaryOperation)
        return keep_parens(node, node.right)
