"""Off-by-one constants: integer literals and the DSL's number words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator

SMALL_INT = 30
"""Largest magnitude mutated: ARC grids are at most 30 cells per side."""


def _neighbours(value: int, low: int, high: int) -> list[int]:
    return [v for v in (value - 1, value + 1) if low <= v <= high]


def _bounds(value: int) -> tuple[int, int]:
    """Range a neighbour must stay in: colours stay colours, sizes stay sizes."""
    if 0 <= value <= 9:
        return 0, 9
    if value > 9:
        return 0, SMALL_INT
    return -SMALL_INT, 0


def _literal_value(index: ModuleIndex, node: cst.CSTNode) -> int | None:
    """The value of a small decimal literal (``3``, ``-1``), ``None`` otherwise.

    A literal under a unary minus is not a site of its own: the minus expression is.
    """
    if isinstance(node, cst.Integer):
        parent = index.parent(node)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return None
        text = node.value
        sign = 1
    elif (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
        and not node.expression.lpar
    ):
        text = node.expression.value
        sign = -1
    else:
        return None
    if not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        return None
    value = sign * int(text)
    return value if abs(value) <= SMALL_INT else None


class IntNeighbour(NodeOperator):
    """Replace a small integer literal ``n`` by ``n-1`` and by ``n+1`` (two variants).

    Hand-written ARC programs hard-code colours (``v != 0``), offsets (``g[-1]``) and
    sizes (``[0] * 3``); an off-by-one there is the most common near-miss bug. Colours
    ``0..9`` stay in ``0..9`` and sizes stay in ``0..30``, so the mutant still produces
    a well-formed grid and only the content is wrong. Negative literals move towards
    or away from zero; ``-1 + 1`` is written ``-0`` to keep the expression's shape. A
    slice step never becomes 0 (that only raises). Variant: the new value.
    """

    name = "const.int_neighbour"
    node_types = (cst.Integer, cst.UnaryOperation)
    examples: ClassVar[list[Example]] = [
        ("y = [v for v in r if v != 3]\n", "y = [v for v in r if v != 2]\n"),
        ("y = [v for v in r if v != 3]\n", "y = [v for v in r if v != 4]\n", "3#0:4"),
        ("c = 0\n", "c = 1\n"),
        ("m = out[-1][9]\n", "m = out[-2][9]\n"),
        ("m = out[-1][9]\n", "m = out[-0][9]\n", "0"),
        ("m = out[-1][9]\n", "m = out[-1][8]\n", "9#0:8"),
        ("p = lambda g: [r[::-1] for r in g]\n", "p = lambda g: [r[::-2] for r in g]\n"),
        ("r = g[::1]\n", "r = g[::2]\n"),
    ]
    counter_examples: ClassVar[list[str]] = ["k = 0x10 + 1_0 + 31 + 1.5 + -(2)\n"]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """The in-range neighbours of the literal's value."""
        value = _literal_value(index, node)
        if value is None:
            return []
        parent = index.parent(node)
        is_step = isinstance(parent, cst.Slice) and parent.step is node
        return [str(v) for v in _neighbours(value, *_bounds(value)) if v or not is_step]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Write the new value in the literal's place, keeping parentheses and spacing."""
        assert variant is not None
        new = int(variant)
        if isinstance(node, cst.UnaryOperation):
            assert isinstance(node.expression, cst.Integer)
            return node.with_changes(expression=node.expression.with_changes(value=str(-new)))
        assert isinstance(node, cst.Integer) and new >= 0
        return node.with_changes(value=str(new))


NUMBER_WORDS = (
    "NEG_ONE",
    "ZERO",
    "ONE",
    "TWO",
    "THREE",
    "FOUR",
    "FIVE",
    "SIX",
    "SEVEN",
    "EIGHT",
    "NINE",
    "TEN",
)
"""The RE-ARC-style DSL's integer constants, in value order (``NEG_ONE`` = -1)."""


class DslNumberNeighbour(NodeOperator):
    """Replace a DSL number word (``FIVE``) by the next lower and higher one.

    RE-ARC verifiers contain no literals: colours and counts are names such as
    ``ZERO``..``TEN``. This is :class:`IntNeighbour` for that style: ``FIVE`` becomes
    ``FOUR`` or ``SIX``, colour words stay within ``ZERO``..``NINE``. Only reads of the
    name count, and not in modules that bind the name themselves. Variant: new word.
    """

    name = "const.dsl_neighbour"
    node_types = (cst.Name,)
    examples: ClassVar[list[Example]] = [
        ("x0 = replace(I, SEVEN, FIVE)\n", "x0 = replace(I, SIX, FIVE)\n"),
        ("x0 = replace(I, SEVEN, FIVE)\n", "x0 = replace(I, SEVEN, SIX)\n", "FIVE#0:SIX"),
        ("x0 = fill(I, ZERO, x4)\n", "x0 = fill(I, ONE, x4)\n"),
        ("x0 = shift(I, NEG_ONE)\n", "x0 = shift(I, ZERO)\n"),
    ]
    counter_examples: ClassVar[list[str]] = ["ONE = 2\nx = f(ONE, obj.TWO, TWO=3)\n"]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """Neighbouring number words, if ``node`` reads one."""
        assert isinstance(node, cst.Name)
        if node.value not in NUMBER_WORDS or index.name_role(node) != "load":
            return []
        if node.value in index.bound_names:
            return []
        value = NUMBER_WORDS.index(node.value) - 1
        low, high = _bounds(value)
        return [NUMBER_WORDS[v + 1] for v in _neighbours(value, max(low, -1), min(high, 10))]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Rename the read."""
        assert isinstance(node, cst.Name) and variant is not None
        return node.with_changes(value=variant)
