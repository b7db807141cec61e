"""Comprehension filters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import libcst as cst

from arcjudge.mutation.cstindex import REMOVE, ModuleIndex, _Remove
from arcjudge.mutation.operators.base import Example, NodeOperator


class DropFilter(NodeOperator):
    """Drop one ``if`` clause of a comprehension.

    Filters decide which cells, rows or objects take part (``[v for v in col if v]``);
    without one, background cells or unwanted objects leak into the result, usually
    changing a few cells or the length of a row. Each ``if`` clause is its own site,
    anchored by its own text (``if v!=0#0``).
    """

    name = "comprehension.drop_filter"
    node_types = (cst.CompIf,)
    examples: ClassVar[list[Example]] = [
        ("cells = [v for v in column if v != 0]\n", "cells = [v for v in column]\n"),
        (
            "s = {c for r in g if r for c in r if c if c > 2}\n",
            "s = {c for r in g for c in r if c if c > 2}\n",
        ),
        (
            "s = {c for r in g if r for c in r if c if c > 2}\n",
            "s = {c for r in g if r for c in r if c}\n",
            "if c>2#0",
        ),
    ]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> Sequence[str | None]:
        """Every ``if`` clause is one site."""
        return [None]

    def mutate(
        self, index: ModuleIndex, node: cst.CSTNode, variant: str | None
    ) -> cst.CSTNode | _Remove:
        """Remove the clause from its ``for``."""
        return REMOVE
