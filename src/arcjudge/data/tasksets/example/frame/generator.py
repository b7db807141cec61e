"""frame: a random grid without azure (8), and it inside an azure border."""

import random


def generate() -> dict[str, list[list[int]]]:
    """One pair, drawn from ``random`` (seeded by the caller)."""
    height, width = random.randint(1, 5), random.randint(1, 5)
    grid = [[random.choice([0, 1, 3, 4]) for _ in range(width)] for _ in range(height)]
    framed = [[8] * (width + 2), *([8, *row, 8] for row in grid), [8] * (width + 2)]
    return {"input": grid, "output": framed}
