"""c59eb873: scale a square grid (2..5) up by two."""

import common


def generate(size=None):
    if size is None:
        size = common.randint(2, 5)
    colors = [0] + common.random_colors(common.randint(1, 3), exclude=(0,))
    grid = common.random_grid(size, size, colors)
    return {"input": grid, "output": common.upscale(grid, 2)}
