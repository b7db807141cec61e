"""Shared helpers for the arcjudge sample generators (ARC-GEN layout).

Grids are lists of rows (lists of ints 0..9). Every helper draws from Python's global
`random`, so a caller that runs `random.seed(s)` before `generate()` gets the same pair
for the same `s`.
"""

import random

COLORS = list(range(10))


def randint(lo, hi):
    """A random int in lo..hi (both included)."""
    return random.randint(lo, hi)


def choice(seq):
    """A random element of a sequence."""
    return random.choice(list(seq))


def sample(seq, count):
    """`count` distinct elements of a sequence, in random order."""
    return random.sample(list(seq), count)


def random_colors(count, exclude=()):
    """`count` distinct colors, none of them in `exclude`."""
    pool = [c for c in COLORS if c not in exclude]
    return random.sample(pool, count)


def grid(width, height, color=0):
    """A height x width grid filled with one color."""
    return [[color] * width for _ in range(height)]


def random_grid(width, height, colors):
    """A height x width grid whose cells are drawn from `colors`."""
    return [[random.choice(colors) for _ in range(width)] for _ in range(height)]


def copy(g):
    """A deep copy of a grid."""
    return [list(row) for row in g]


def flip_lr(g):
    """The grid mirrored left to right."""
    return [row[::-1] for row in g]


def flip_ud(g):
    """The grid mirrored top to bottom."""
    return [list(row) for row in g[::-1]]


def transpose(g):
    """The grid mirrored along its main diagonal."""
    return [list(col) for col in zip(*g)]


def recolor(g, mapping):
    """Every cell c becomes mapping.get(c, c)."""
    return [[mapping.get(c, c) for c in row] for row in g]


def hconcat(a, b):
    """Two grids of equal height side by side."""
    return [list(ra) + list(rb) for ra, rb in zip(a, b)]


def upscale(g, factor):
    """Every cell becomes a factor x factor block."""
    return [[c for c in row for _ in range(factor)] for row in g for _ in range(factor)]


def connected_shape(width, height, count):
    """`count` 4-connected cells inside a height x width box, grown from a random seed."""
    start = (randint(0, height - 1), randint(0, width - 1))
    cells = {start}
    while len(cells) < count:
        r, c = choice(sorted(cells))
        dr, dc = choice([(0, 1), (1, 0), (0, -1), (-1, 0)])
        if 0 <= r + dr < height and 0 <= c + dc < width:
            cells.add((r + dr, c + dc))
    return sorted(cells)
