from dsl import *
from utils import *


def generate_0d3d703e(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 30))
    w = unifint(diff_lb, diff_ub, (1, 30))
    colors = random.sample((1, 2, 3, 4, 5, 6, 8, 9), unifint(diff_lb, diff_ub, (1, 8)))
    gi = random_grid((h, w), colors)
    go = switch(gi, ONE, FIVE)
    go = switch(go, TWO, SIX)
    go = switch(go, THREE, FOUR)
    go = switch(go, EIGHT, NINE)
    return {"input": gi, "output": go}


def generate_1e0a9b12(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (2, 30))
    w = unifint(diff_lb, diff_ub, (2, 30))
    gi = canvas(ZERO, (h, w))
    go = canvas(ZERO, (h, w))
    for j in random.sample(range(w), unifint(diff_lb, diff_ub, (1, w))):
        color = random.randint(1, 9)
        count = random.randint(1, max(1, h // 2))
        rows = random.sample(range(h), count)
        gi = fill(gi, color, frozenset((i, j) for i in rows))
        go = fill(go, color, frozenset((i, j) for i in range(h - count, h)))
    return {"input": gi, "output": go}


def generate_3c9b0459(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 30))
    w = unifint(diff_lb, diff_ub, (1, 30))
    colors = random.sample(range(10), unifint(diff_lb, diff_ub, (1, 10)))
    gi = random_grid((h, w), colors)
    go = rot180(gi)
    return {"input": gi, "output": go}


def generate_67a3c6ac(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 30))
    w = unifint(diff_lb, diff_ub, (1, 30))
    colors = random.sample(range(10), unifint(diff_lb, diff_ub, (1, 10)))
    gi = random_grid((h, w), colors)
    go = vmirror(gi)
    return {"input": gi, "output": go}


def generate_6d0aefbc(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 30))
    w = unifint(diff_lb, diff_ub, (1, 15))
    colors = random.sample(range(10), unifint(diff_lb, diff_ub, (1, 10)))
    gi = random_grid((h, w), colors)
    go = hconcat(gi, vmirror(gi))
    return {"input": gi, "output": go}


def generate_aabf363d(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (4, 30))
    w = unifint(diff_lb, diff_ub, (4, 30))
    shape_color, marker_color = random.sample(range(1, 10), 2)
    start = (random.randint(0, h - 3), random.randint(1, w - 1))
    patch = {start}
    target = unifint(diff_lb, diff_ub, (1, max(1, (h - 2) * (w - 1) // 2)))
    while len(patch) < target:
        loc = random.choice(sorted(patch))
        nxt = random.choice(sorted(neighbors(loc)))
        if 0 <= nxt[0] <= h - 3 and 1 <= nxt[1] <= w - 1:
            patch.add(nxt)
    patch = frozenset(patch)
    gi = fill(canvas(ZERO, (h, w)), shape_color, patch)
    gi = fill(gi, marker_color, initset((h - 1, 0)))
    go = fill(canvas(ZERO, (h, w)), marker_color, patch)
    return {"input": gi, "output": go}


def generate_c59eb873(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 15))
    w = unifint(diff_lb, diff_ub, (1, 15))
    colors = random.sample(range(10), unifint(diff_lb, diff_ub, (1, 10)))
    gi = random_grid((h, w), colors)
    go = upscale(gi, TWO)
    return {"input": gi, "output": go}


def generate_c8f0f002(diff_lb, diff_ub):
    h = unifint(diff_lb, diff_ub, (1, 30))
    w = unifint(diff_lb, diff_ub, (1, 30))
    others = random.sample((0, 1, 2, 3, 4, 6, 8, 9), unifint(diff_lb, diff_ub, (1, 8)))
    gi = random_grid((h, w), (SEVEN,) + tuple(others))
    go = replace(gi, SEVEN, FIVE)
    return {"input": gi, "output": go}
