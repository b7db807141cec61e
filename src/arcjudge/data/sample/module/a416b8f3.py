"""a416b8f3: put a copy of the grid to the right of itself.

Bug: the copy is cut to `h` columns instead of `w`. Every demonstration is at least as
tall as it is wide, so only the wide ARC-GEN grids expose it.
"""


def transform(g):
    h, w = len(g), len(g[0])
    return [row + row[:h] for row in g]
