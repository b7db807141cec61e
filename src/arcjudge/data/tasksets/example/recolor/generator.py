"""recolor: a grid with some blue (1) cells, and the same grid with them red (2).

The entry point is the module's only public function (``make_pair``); helpers are private.
"""

import random


def _grid(height: int, width: int) -> list[list[int]]:
    others = [c for c in range(10) if c not in (1, 2)]
    return [[random.choice([1, 1, *others]) for _ in range(width)] for _ in range(height)]


def make_pair() -> dict[str, list[list[int]]]:
    """One pair, drawn from ``random`` (seeded by the caller)."""
    grid = _grid(random.randint(3, 7), random.randint(3, 7))
    grid[random.randrange(len(grid))][0] = 1  # at least one blue cell
    return {"input": grid, "output": [[2 if c == 1 else c for c in row] for row in grid]}
