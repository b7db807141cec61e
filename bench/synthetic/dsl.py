"""A tiny grid DSL for a synthetic verifier source (written by bench/validate_full.py).

Grids are tuples of tuples of ints 0..9; cell sets are frozensets of (row, column);
object lists are tuples of cell sets, largest first.
"""

from collections import deque


def as_grid(g):
    return tuple(tuple(r) for r in g)


def nonempty_or(h, g):
    return h if h and h[0] else as_grid(g)


def rot90(g):
    return tuple(zip(*g[::-1]))


def rot180(g):
    return tuple(tuple(r[::-1]) for r in g[::-1])


def rot270(g):
    return tuple(zip(*g))[::-1]


def flip_h(g):
    return tuple(tuple(r[::-1]) for r in g)


def flip_v(g):
    return tuple(tuple(r) for r in g[::-1])


def transpose(g):
    return tuple(zip(*g))


def trim(g):
    return as_grid(g) if len(g) < 3 or len(g[0]) < 3 else tuple(tuple(r[1:-1]) for r in g[1:-1])


def top_half(g):
    return tuple(tuple(r) for r in g[: max(1, len(g) // 2)])


def left_half(g):
    return tuple(tuple(r[: max(1, len(r) // 2)]) for r in g)


def upscale(g):
    return (
        as_grid(g)
        if 2 * len(g) > 30 or 2 * len(g[0]) > 30
        else tuple(tuple(v for v in r for _ in (0, 1)) for r in g for _ in (0, 1))
    )


def downscale(g):
    return tuple(tuple(r[::2]) for r in g[::2])


def shift_colors(g):
    return tuple(tuple((v + 1) % 10 if v else 0 for v in r) for r in g)


def mirror_fill(g):
    return tuple(tuple(a or b for a, b in zip(r, r[::-1])) for r in g)


def gravity(g):
    return rot270(tuple(tuple(sorted(c, key=bool)) for c in rot90(g)))


def most_color(g):
    return max(range(10), key=[v for r in g for v in r].count)


def least_color(g):
    return min({v for r in g for v in r}, key=[v for r in g for v in r].count)


def replace(g, a, b):
    return tuple(tuple(b if v == a else v for v in r) for r in g)


def swap(g, a, b):
    return tuple(tuple(b if v == a else a if v == b else v for v in r) for r in g)


def all_cells(g):
    return frozenset((i, j) for i in range(len(g)) for j in range(len(g[0])))


def cells_of(g, c):
    return frozenset((i, j) for i, r in enumerate(g) for j, v in enumerate(r) if v == c)


def foreground(g):
    return all_cells(g) - cells_of(g, most_color(g))


def bounds(p):
    return (
        (min(i for i, _ in p), min(j for _, j in p), max(i for i, _ in p), max(j for _, j in p))
        if p
        else (0, 0, 0, 0)
    )


def shift(p, di, dj):
    return frozenset((i + di, j + dj) for i, j in p)


def grow(p):
    return p | frozenset(
        (i + a, j + b) for i, j in p for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0))
    )


def box(p):
    return (lambda t, l, b, r: frozenset(
        (i, j) for i in range(t, b + 1) for j in range(l, r + 1) if i in (t, b) or j in (l, r)
    ))(*bounds(p))


def union(p, q):
    return p | q


def difference(p, q):
    return p - q


def intersection(p, q):
    return p & q


def fill(g, c, p):
    return tuple(tuple(c if (i, j) in p else v for j, v in enumerate(r)) for i, r in enumerate(g))


def crop(g, p):
    return (lambda t, l, b, r: nonempty_or(
        tuple(tuple(row[max(0, l) : r + 1]) for row in g[max(0, t) : b + 1]), g
    ))(*bounds(p))


def overlay(a, b):
    return (
        tuple(tuple(y or x for x, y in zip(r, s)) for r, s in zip(a, b))
        if len(a) == len(b) and len(a[0]) == len(b[0])
        else as_grid(a)
    )


def hcat(a, b):
    return (
        tuple(tuple(r) + tuple(s) for r, s in zip(a, b))
        if len(a) == len(b) and len(a[0]) + len(b[0]) <= 30
        else as_grid(a)
    )


def smooth(g, k):
    return g if k < 1 else smooth(
        tuple(
            tuple(
                max(range(10), key=[
                    g[a][b]
                    for a in range(max(0, i - 1), min(len(g), i + 2))
                    for b in range(max(0, j - 1), min(len(g[0]), j + 2))
                ].count)
                for j in range(len(g[0]))
            )
            for i in range(len(g))
        ),
        k - 1,
    )


def components(g):
    bg = most_color(g)
    h, w = len(g), len(g[0])
    seen = set()
    found = []
    for i in range(h):
        for j in range(w):
            if g[i][j] == bg or (i, j) in seen:
                continue
            c = g[i][j]
            seen.add((i, j))
            todo = deque([(i, j)])
            cells = []
            while todo:
                y, x = todo.popleft()
                cells.append((y, x))
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= ny < h and 0 <= nx < w and (ny, nx) not in seen and g[ny][nx] == c:
                        seen.add((ny, nx))
                        todo.append((ny, nx))
            found.append(frozenset(cells))
    return tuple(sorted(found, key=len, reverse=True))


def largest(s):
    return s[0] if s else frozenset()


def smallest(s):
    return s[-1] if s else frozenset()


def merge(s):
    return frozenset().union(*s)


def at_least(s, n):
    return tuple(o for o in s if len(o) >= n)


def paint_sizes(g, s):
    out = [list(r) for r in g]
    for o in s:
        for i, j in o:
            if i < len(out) and j < len(out[i]):
                out[i][j] = min(len(o), 9)
    return tuple(tuple(r) for r in out)


def fill_enclosed(g, c):
    bg = most_color(g)
    h, w = len(g), len(g[0])
    todo = [(i, j) for i in range(h) for j in range(w) if (i in (0, h - 1) or j in (0, w - 1))]
    todo = [(i, j) for i, j in todo if g[i][j] == bg]
    outside = set(todo)
    while todo:
        y, x = todo.pop()
        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
            if 0 <= ny < h and 0 <= nx < w and (ny, nx) not in outside and g[ny][nx] == bg:
                outside.add((ny, nx))
                todo.append((ny, nx))
    return tuple(
        tuple(c if v == bg and (i, j) not in outside else v for j, v in enumerate(r))
        for i, r in enumerate(g)
    )
