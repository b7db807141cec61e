"""a416b8f3: put a copy of the grid to the right of itself (3..5 x 3..5, sparse)."""

import common


def generate(width=None, height=None):
    if width is None:
        width = common.randint(3, 5)
    if height is None:
        height = common.randint(3, 5)
    colors = common.random_colors(common.randint(1, 3), exclude=(0,))
    grid = common.grid(width, height)
    for r in range(height):
        for c in range(width):
            if common.randint(0, 1):
                grid[r][c] = common.choice(colors)
    return {"input": grid, "output": common.hconcat(grid, grid)}
