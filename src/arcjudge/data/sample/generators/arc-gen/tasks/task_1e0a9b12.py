"""1e0a9b12: colored cells fall to the bottom of their column.

Square grids 4..6; each used column holds one to three cells of a single color.
"""

import common


def generate(size=None):
    if size is None:
        size = common.randint(4, 6)
    grid = common.grid(size, size)
    for c in common.sample(range(size), common.randint(2, size)):
        color = common.randint(1, 9)
        for r in common.sample(range(size), common.randint(1, 3)):
            grid[r][c] = color
    output = common.grid(size, size)
    for c in range(size):
        cells = [grid[r][c] for r in range(size) if grid[r][c]]
        for k, color in enumerate(cells):
            output[size - len(cells) + k][c] = color
    return {"input": grid, "output": output}
