"""mirror: a random grid of a few colors and its left-right mirror image."""

import random


def generate() -> dict[str, list[list[int]]]:
    """One pair, drawn from ``random`` (seeded by the caller)."""
    height, width = random.randint(2, 6), random.randint(2, 6)
    colors = random.sample(range(1, 10), 3)
    grid = [[random.choice([0, 0, *colors]) for _ in range(width)] for _ in range(height)]
    if all(row == row[::-1] for row in grid):  # a symmetric grid would not show the rule
        grid[0][0], grid[0][-1] = colors[0], 0
    return {"input": grid, "output": [row[::-1] for row in grid]}
