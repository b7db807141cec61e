r"""Grids and pairs as prompt text, and the model-visible JSON they are read back from.

Every dimension's prompt (:mod:`.strategies`) writes its grids with these, each grid in a
fenced code block of its own, so all templates show grids alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from arcjudge.grids import Grid, to_grid, to_lists
from arcjudge.vocabulary import GridFormat

__all__ = [
    "grid_block",
    "grid_lists",
    "grid_text",
    "pair_text",
    "pairs_text",
    "read_grids",
    "read_pairs",
]


def grid_text(grid: Sequence[Sequence[int]], grid_format: GridFormat | str) -> str:
    r"""A grid as text.

    Args:
        grid: The grid (rows of ints 0..9).
        grid_format: ``digits``: one row a line, one digit a cell, no separators
            (``"012\n340"``); ``json``: nested lists on one line (``"[[0,1,2],[3,4,0]]"``).

    Returns:
        The text, with no trailing newline.

    Raises:
        ValueError: For an unknown grid format.
    """
    grid_format = GridFormat(grid_format)
    if grid_format is GridFormat.JSON:
        return json.dumps([list(row) for row in grid], separators=(",", ":"))
    return "\n".join("".join(str(cell) for cell in row) for row in grid)


def grid_block(grid: Grid, grid_format: GridFormat) -> str:
    """A grid in a fenced code block of its own."""
    return f"```\n{grid_text(grid, grid_format)}\n```"


def pair_text(pair: tuple[Grid, Grid], grid_format: GridFormat) -> str:
    """``Input:`` / grid / ``Output:`` / grid."""
    return (
        f"Input:\n{grid_block(pair[0], grid_format)}\nOutput:\n{grid_block(pair[1], grid_format)}"
    )


def pairs_text(pairs: Sequence[tuple[Grid, Grid]], label: str, grid_format: GridFormat) -> str:
    """Pairs as ``LABEL N`` blocks (numbered from 1), a blank line between them."""
    return "\n\n".join(
        f"{label} {n}\n{pair_text(pair, grid_format)}" for n, pair in enumerate(pairs, 1)
    )


def grid_lists(value: object) -> list[list[int]]:
    """A grid checked and written as lists of lists (raises ``GridRejected`` if it is none)."""
    return to_lists(to_grid(value))


def read_pairs(value: object) -> list[tuple[Grid, Grid]]:
    """Pairs from model-visible JSON (a list of ``{"input", "output"}``).

    Raises:
        TypeError, KeyError, GridRejected: The value is not such a list.
    """
    if not isinstance(value, list):
        raise TypeError("expected a list of pairs")
    pairs = []
    for item in value:
        if not isinstance(item, Mapping):
            raise TypeError("a pair must be an object")
        pairs.append((to_grid(item["input"]), to_grid(item["output"])))
    return pairs


def read_grids(value: object) -> list[Grid]:
    """A non-empty list of grids from model-visible JSON.

    Raises:
        TypeError, GridRejected: The value is not such a list.
    """
    if not isinstance(value, list) or not value:
        raise TypeError("expected a non-empty list of grids")
    return [to_grid(g) for g in value]
