"""aabf363d: recolor the shape with the marker color in the bottom-left corner.

7x7 grids, background 0, one 4-connected shape inside rows and columns 1..5; the
marker cell (6, 0) is cleared in the output.
"""

import common


def generate(shape_color=None, marker_color=None):
    if shape_color is None or marker_color is None:
        shape_color, marker_color = common.random_colors(2, exclude=(0,))
    cells = common.connected_shape(5, 5, common.randint(6, 14))
    grid = common.grid(7, 7)
    output = common.grid(7, 7)
    for r, c in cells:
        grid[r + 1][c + 1] = shape_color
        output[r + 1][c + 1] = marker_color
    grid[6][0] = marker_color
    return {"input": grid, "output": output}
