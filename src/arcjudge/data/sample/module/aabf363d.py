"""aabf363d: recolor the shape with the marker color found in the bottom-left corner.

The marker cell itself is cleared to the background (0).
"""


def transform(g):
    out = [list(row) for row in g]
    marker = out[-1][0]
    out[-1][0] = 0
    return [[marker if v != 0 else 0 for v in row] for row in out]
