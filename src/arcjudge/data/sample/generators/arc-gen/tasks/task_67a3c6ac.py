"""67a3c6ac: mirror the grid left to right (square grids 3..9, colors 1 2 6 7)."""

import common


def generate(size=None, colors=None):
    if size is None:
        size = common.randint(3, 9)
    if colors is None:
        colors = [1, 2, 6, 7]
    grid = common.random_grid(size, size, colors)
    return {"input": grid, "output": common.flip_lr(grid)}
