"""3c9b0459: rotate the grid by 180 degrees.

All demonstrations are 3x3; about a third of the generated grids are 3x4, 4x3 or 4x4.
"""

import common


def generate(width=None, height=None, colors=None):
    if width is None or height is None:
        if common.randint(0, 2) == 0:
            width, height = common.choice([(3, 4), (4, 3), (4, 4)])
        else:
            width, height = 3, 3
    if colors is None:
        colors = common.random_colors(common.randint(2, 4), exclude=(0,))
    grid = common.random_grid(width, height, colors)
    output = [row[::-1] for row in grid[::-1]]
    return {"input": grid, "output": output}
