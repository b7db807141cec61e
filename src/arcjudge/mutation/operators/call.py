"""Call-argument order: DSL primitives are rarely symmetric in their arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.anchors import normalize_code
from arcjudge.mutation.cstindex import ModuleIndex
from arcjudge.mutation.operators.base import Example, NodeOperator


def _positional(call: cst.Call) -> list[int]:
    """Indexes of the plain positional arguments (no keyword, no ``*``/``**``)."""
    return [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]


class SwapArgs(NodeOperator):
    """Swap two neighbouring positional arguments of a call when they differ.

    Most grid primitives are not symmetric: ``hconcat(I, x0)`` vs ``hconcat(x0, I)``
    puts the copy on the wrong side, ``replace(I, SEVEN, FIVE)`` recolours the other
    way, ``subtract(a, b)`` changes sign. Swapping keeps every value the program
    computes and only misroutes two of them, so the output is usually the right
    material in the wrong arrangement. Variant ``k-(k+1)`` swaps positional arguments
    ``k`` and ``k+1`` (``0-1`` first); pairs with identical text are skipped.
    """

    name = "call.swap_args"
    node_types = (cst.Call,)
    examples: ClassVar[list[Example]] = [
        ("x1 = hconcat(I, x0)\n", "x1 = hconcat(x0, I)\n"),
        ("x = replace(I, SEVEN, FIVE)\n", "x = replace(I, FIVE, SEVEN)\n", "1-2"),
        ("y = f(a, a, b)\n", "y = f(a, b, a)\n"),
        ("y = g(k=1, *a)\nz = h(p, *a, q)\n", "y = g(k=1, *a)\nz = h(q, *a, p)\n"),
    ]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """One variant per neighbouring pair of positional arguments with different text."""
        assert isinstance(node, cst.Call)
        slots = _positional(node)
        texts = [normalize_code(index.code(node.args[i].value)) for i in slots]
        return [f"{k}-{k + 1}" for k in range(len(slots) - 1) if texts[k] != texts[k + 1]]

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        """Exchange the two argument values, keeping commas and spacing in place."""
        assert isinstance(node, cst.Call) and variant is not None
        k = int(variant.split("-")[0])
        slots = _positional(node)
        i, j = slots[k], slots[k + 1]
        args = list(node.args)
        args[i], args[j] = (
            args[i].with_changes(value=node.args[j].value),
            args[j].with_changes(value=node.args[i].value),
        )
        return node.with_changes(args=tuple(args))
