"""0d3d703e: fixed color map on 3x3 grids of three constant columns.

The map pairs 1<->5, 2<->6, 3<->4 and 8<->9.
"""

import common

MAPPING = {1: 5, 5: 1, 2: 6, 6: 2, 3: 4, 4: 3, 8: 9, 9: 8}


def generate(colors=None):
    if colors is None:
        colors = common.random_colors(3, exclude=(0, 7))
    grid = [list(colors) for _ in range(3)]
    return {"input": grid, "output": common.recolor(grid, MAPPING)}
