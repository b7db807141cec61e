"""74dd1130: transpose a 3x3 grid of two or three colors."""

import common


def generate(colors=None):
    if colors is None:
        colors = common.random_colors(common.randint(2, 3), exclude=(0,))
    grid = common.random_grid(3, 3, colors)
    return {"input": grid, "output": common.transpose(grid)}
