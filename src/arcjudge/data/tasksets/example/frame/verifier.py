"""frame: the input inside a one-cell border of azure (8)."""

BORDER = 8


def transform(grid: list[list[int]]) -> list[list[int]]:
    """Add the border: two rows and two columns more."""
    width = len(grid[0]) + 2
    return [[BORDER] * width, *([BORDER, *row, BORDER] for row in grid), [BORDER] * width]
