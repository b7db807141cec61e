"""5a5a0001 (made up): the rows in reverse order. Grids of 5..30 per side, as ARC's."""

import random

import common


def generate():
    g = common.grid(random.randint(5, 30), random.randint(5, 30))
    return {"input": g, "output": g[::-1]}
