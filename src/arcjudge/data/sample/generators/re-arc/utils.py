"""Helpers for the arcjudge sample RE-ARC style generators.

Like the real RE-ARC utils module this imports matplotlib at module level (it is only
used by `plot_grid`), so loading the generators needs matplotlib or a stand-in module.
"""

import random

import matplotlib

PALETTE = (
    "#000000",
    "#0074D9",
    "#FF4136",
    "#2ECC40",
    "#FFDC00",
    "#AAAAAA",
    "#F012BE",
    "#FF851B",
    "#7FDBFF",
    "#870C25",
)


def unifint(diff_lb, diff_ub, bounds):
    """An int in bounds = (lo, hi), drawn at a difficulty between diff_lb and diff_ub."""
    lo, hi = bounds
    difficulty = random.uniform(diff_lb, diff_ub)
    return min(hi, lo + int(round(difficulty * (hi - lo))))


def random_grid(dims, colors):
    """A grid of the given (height, width) with cells drawn from colors."""
    h, w = dims
    return tuple(tuple(random.choice(colors) for _ in range(w)) for _ in range(h))


def is_grid(value):
    """Whether value is a non-empty rectangular tuple of tuples of ints 0..9."""
    if not isinstance(value, tuple) or not value or not all(isinstance(r, tuple) for r in value):
        return False
    w = len(value[0])
    return w > 0 and all(
        len(r) == w and all(isinstance(c, int) and 0 <= c <= 9 for c in r) for r in value
    )


def format_grid(grid):
    """A grid as a list of lists (what JSON task files hold)."""
    return [list(row) for row in grid]


def plot_grid(grid, path):
    """Save a picture of a grid (needs a real matplotlib)."""
    matplotlib.use("Agg")
    from matplotlib import colors as mcolors
    from matplotlib import pyplot

    cmap = mcolors.ListedColormap(PALETTE)
    norm = mcolors.Normalize(vmin=0, vmax=9)
    figure, axes = pyplot.subplots()
    axes.imshow(format_grid(grid), cmap=cmap, norm=norm)
    axes.set_axis_off()
    figure.savefig(path)
    pyplot.close(figure)
