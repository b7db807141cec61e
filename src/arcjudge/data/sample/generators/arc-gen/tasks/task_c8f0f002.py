"""c8f0f002: orange (7) cells become gray (5); 3 rows, 4..6 columns of 1 7 8."""

import common


def generate(width=None):
    if width is None:
        width = common.randint(4, 6)
    grid = common.random_grid(width, 3, [1, 7, 8])
    return {"input": grid, "output": common.recolor(grid, {7: 5})}
