"""Sibling DSL primitives: the same kind of operation along another axis or end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator

SIBLING_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("vmirror", "hmirror", "dmirror", "cmirror"),
    ("rot90", "rot180", "rot270"),
    ("tophalf", "bottomhalf", "lefthalf", "righthalf"),
    ("hconcat", "vconcat"),
    ("hsplit", "vsplit"),
    ("hupscale", "vupscale"),
    ("first", "last"),
    ("argmax", "argmin"),
    ("valmax", "valmin"),
    ("mostcolor", "leastcolor"),
    ("height", "width"),
    ("increment", "decrement"),
    ("uppermost", "lowermost", "leftmost", "rightmost"),
    ("ulcorner", "urcorner", "llcorner", "lrcorner"),
    ("fill", "underfill"),
    ("paint", "underpaint"),
    ("both", "either"),
    ("add", "subtract"),
    ("UP", "DOWN", "LEFT", "RIGHT"),
    ("ORIGIN", "UNITY"),
    ("TWO_BY_TWO", "THREE_BY_THREE"),
)
"""Our grouping of RE-ARC-style DSL names that do the same job differently."""

_FAMILY = {name: family for family in SIBLING_FAMILIES for name in family}


class DslSibling(NodeOperator):
    """Replace a DSL primitive or constant by a sibling (``vmirror`` -> ``hmirror``).

    Choosing the wrong axis, end or corner is the typical near miss of a DSL program:
    the mutant has the same shape and cost as the original, still type-checks at run
    time, and returns a plausible grid (mirrored the other way, the other half, the
    minimum instead of the maximum). Applies to every read of the name, called or
    passed as a value (``apply(vmirror, x)``), unless the module binds it. Variant:
    the sibling's name, in family order.
    """

    name = "name.dsl_sibling"
    node_types = (cst.Name,)
    examples: ClassVar[list[Example]] = [
        ("x0 = vmirror(I)\n", "x0 = hmirror(I)\n"),
        ("x0 = vmirror(I)\n", "x0 = cmirror(I)\n", "cmirror"),
        ("x2 = apply(last, x1)\n", "x2 = apply(first, x1)\n"),
        ("x = shift(obj, DOWN)\n", "x = shift(obj, UP)\n"),
    ]
    counter_examples: ClassVar[list[str]] = ["first = 1\nx = first + g.last + f(last=2)\n"]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """The other members of the name's family, if ``node`` reads a family name."""
        assert isinstance(node, cst.Name)
        family = _FAMILY.get(node.value)
        if family is None or index.name_role(node) != "load":
            return []
        if node.value in index.bound_names:
            return []
        return [name for name in family if name != node.value]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Rename the read."""
        assert isinstance(node, cst.Name) and variant is not None
        return node.with_changes(value=variant)
