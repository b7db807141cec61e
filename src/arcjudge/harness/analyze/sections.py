"""What a section of the analysis is, and the names every section shares.

:mod:`.study` lists the sections (``SECTIONS``); the sections in their own modules
(:mod:`.budget`, :mod:`.sampling`) and the report (:mod:`.report`) import these from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arcjudge.harness.analyze.tables import Table
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension

__all__ = ["FULL_TASK", "LABELS", "MEASURES", "POOLED", "Section"]

POOLED = "(all models)"
"""The row label of numbers pooled over every model."""

FULL_TASK = "full_task"
"""The name of the full-task measure beside the dimensions."""

LABELS: dict[str, str] = {
    Dimension.OUTPUT_GRID: "Output grid",
    Dimension.DEFINITION: "Definition",
    Dimension.CLASSIFICATION: "Classification",
    Dimension.GENERATION: "Generation",
    Dimension.EDITING: "Editing",
    Dimension.INVERSION: "Inversion",
    FULL_TASK: "Full task",
}
"""Display names of the measures."""

MEASURES: tuple[str, ...] = (*BUILT_DIMENSIONS, FULL_TASK)
"""Table 3's measures, in column order."""


@dataclass(frozen=True)
class Section:
    """One part of the analysis: its numbers and its tables.

    Attributes:
        key: Its key in ``analysis.json``.
        data: Every number it has (JSON).
        tables: The tables made of them.
    """

    key: str
    data: Mapping[str, Any]
    tables: tuple[Table, ...]
