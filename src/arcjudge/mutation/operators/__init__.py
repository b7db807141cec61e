"""Mutation operators, one module per family (see :mod:`.base` for the interface)."""

from arcjudge.mutation.operators.base import Example, NodeOperator, Operator, Site
from arcjudge.mutation.operators.call import SwapArgs
from arcjudge.mutation.operators.compare import CompareFlip
from arcjudge.mutation.operators.comprehension import DropFilter
from arcjudge.mutation.operators.const import DslNumberNeighbour, IntNeighbour
from arcjudge.mutation.operators.expr import BinopLeft, BinopRight
from arcjudge.mutation.operators.names import DslSibling
from arcjudge.mutation.operators.slices import SliceBound
from arcjudge.mutation.operators.stmt import DropAssignRewire

ALL_OPERATOR_CLASSES: tuple[type[Operator], ...] = (
    BinopLeft,
    BinopRight,
    DropAssignRewire,
    SwapArgs,
    IntNeighbour,
    DslNumberNeighbour,
    DslSibling,
    CompareFlip,
    DropFilter,
    SliceBound,
)
"""Every built-in operator, in the default order."""

__all__ = [
    "ALL_OPERATOR_CLASSES",
    "BinopLeft",
    "BinopRight",
    "CompareFlip",
    "DropAssignRewire",
    "DropFilter",
    "DslNumberNeighbour",
    "DslSibling",
    "Example",
    "IntNeighbour",
    "NodeOperator",
    "Operator",
    "Site",
    "SliceBound",
    "SwapArgs",
]
