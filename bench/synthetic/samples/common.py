"""score_samples.py's generator helpers (ARC-GEN layout, our own): global `random` only."""

import random


def grid(height, width):
    """A grid of random colors, mostly background."""
    return [[random.choice((0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)) for _ in range(width)]
            for _ in range(height)]
