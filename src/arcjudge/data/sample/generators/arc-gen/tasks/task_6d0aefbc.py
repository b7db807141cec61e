"""6d0aefbc: the 3x3 grid followed by its left-right mirror (colors 1 6 8)."""

import common


def generate(colors=None):
    if colors is None:
        colors = [1, 6, 8]
    grid = common.random_grid(3, 3, colors)
    return {"input": grid, "output": common.hconcat(grid, common.flip_lr(grid))}
