"""A deterministic, verifier-like workload for sandbox benchmarks.

Twenty small ARC-style programs (``def p(g): ...`` on a list of lists of ints), written
for this benchmark, in three cost tiers (per call, on an average 5..30-sided grid, on one
core of the development machine):

* ``trivial`` (6): flips, transpose, recolour, gravity, crop; 0.01-0.05 ms. They show
  the per-input cost of a sandbox.
* ``cheap`` (9): object counting with BFS, flood fills, a 5x5 majority filter,
  brute-force nearest colour, shape matching; 0.05-1 ms.
* ``expensive`` (5): many steps of life, repeated morphology, a BFS from every border
  cell, a brute-force period search, naive repeated flood fills; 15-25 ms.

With inputs split evenly over the programs the mean is about 5 ms per call, so 10,000
inputs take about 50 s in-process on one core. Inputs are seeded ``random.Random`` grids.

Import it from other benchmarks in ``bench/`` (``python bench/x.py`` puts ``bench/`` on
``sys.path``)::

    from workload import build_workload

    wl = build_workload(n_inputs=10_000, chunk=100)
    for job in wl.jobs:  # one (program, chunk of its inputs) each
        ...
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass, field

Grid = tuple[tuple[int, ...], ...]

# --------------------------------------------------------------------------------------
# Programs. Each is a complete module source defining ``p(g)``; ``g`` is a fresh list of
# lists of ints 0..9 (5..30 per side) and every result is a valid ARC grid.
# --------------------------------------------------------------------------------------

# Trivial: tens of microseconds per call. They measure the per-input cost of a sandbox.
_TRIVIAL = {
    "flip_h": """
        def p(g):
            return [row[::-1] for row in g]
    """,
    "transpose": """
        def p(g):
            return [list(col) for col in zip(*g)]
    """,
    "rotate90": """
        def p(g):
            return [list(col) for col in zip(*g[::-1])]
    """,
    "recolor": """
        TABLE = (0, 2, 3, 4, 5, 6, 7, 8, 9, 1)

        def p(g):
            return [[TABLE[c] for c in row] for row in g]
    """,
    "gravity": """
        def p(g):
            h, w = len(g), len(g[0])
            out = [[0] * w for _ in range(h)]
            for x in range(w):
                column = [g[y][x] for y in range(h) if g[y][x] != 0]
                for k, c in enumerate(reversed(column)):
                    out[h - 1 - k][x] = c
            return out
    """,
    "crop_bbox": """
        from collections import Counter

        def p(g):
            bg = Counter(c for row in g for c in row).most_common(1)[0][0]
            cells = [(y, x) for y, row in enumerate(g) for x, c in enumerate(row) if c != bg]
            if not cells:
                return g
            ys = [y for y, _ in cells]
            xs = [x for _, x in cells]
            return [row[min(xs) : max(xs) + 1] for row in g[min(ys) : max(ys) + 1]]
    """,
}

# Cheap: roughly a millisecond per call on an average grid.
_CHEAP = {
    # Objects per colour, 4- and 8-connected, single- and multi-coloured: one row each.
    "count_objects": """
        from collections import deque

        N4 = ((-1, 0), (1, 0), (0, -1), (0, 1))
        N8 = N4 + ((-1, -1), (-1, 1), (1, -1), (1, 1))

        def count(g, steps, same_color):
            h, w = len(g), len(g[0])
            seen = [[False] * w for _ in range(h)]
            counts = [0] * 10
            for sy in range(h):
                for sx in range(w):
                    c = g[sy][sx]
                    if c == 0 or seen[sy][sx]:
                        continue
                    counts[c] += 1
                    seen[sy][sx] = True
                    queue = deque([(sy, sx)])
                    while queue:
                        y, x = queue.popleft()
                        for dy, dx in steps:
                            ny, nx = y + dy, x + dx
                            if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx]:
                                v = g[ny][nx]
                                if v == c or (v and not same_color):
                                    seen[ny][nx] = True
                                    queue.append((ny, nx))
            return [min(n, 9) for n in counts]

        def p(g):
            return [count(g, s, u) for s in (N4, N8) for u in (True, False)]
    """,
    # Background cells that a single colour encloses (no way to the border) become 4.
    "fill_enclosed": """
        def p(g):
            h, w = len(g), len(g[0])
            out = [row[:] for row in g]
            border = [(y, x) for y in range(h) for x in (0, w - 1)]
            border += [(y, x) for x in range(w) for y in (0, h - 1)]
            for wall in sorted({c for row in g for c in row if c}):
                outside = [[False] * w for _ in range(h)]
                stack = list(border)
                while stack:
                    y, x = stack.pop()
                    if 0 <= y < h and 0 <= x < w and not outside[y][x] and g[y][x] != wall:
                        outside[y][x] = True
                        stack += [(y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)]
                for y in range(h):
                    for x in range(w):
                        if g[y][x] == 0 and not outside[y][x]:
                            out[y][x] = 4
            return out
    """,
    # The largest 8-connected object becomes 8; every object's bounding box is outlined.
    "largest_object": """
        def p(g):
            h, w = len(g), len(g[0])
            label = [[-1] * w for _ in range(h)]
            objs = []
            for sy in range(h):
                for sx in range(w):
                    if g[sy][sx] == 0 or label[sy][sx] >= 0:
                        continue
                    k = len(objs)
                    label[sy][sx] = k
                    stack, cells = [(sy, sx)], []
                    while stack:
                        y, x = stack.pop()
                        cells.append((y, x))
                        for dy in (-1, 0, 1):
                            for dx in (-1, 0, 1):
                                ny, nx = y + dy, x + dx
                                if 0 <= ny < h and 0 <= nx < w and g[ny][nx] and label[ny][nx] < 0:
                                    label[ny][nx] = k
                                    stack.append((ny, nx))
                    objs.append(cells)
            if not objs:
                return g
            out = [row[:] for row in g]
            for cells in objs:
                y0, y1 = min(y for y, _ in cells), max(y for y, _ in cells)
                x0, x1 = min(x for _, x in cells), max(x for _, x in cells)
                for y in range(y0, y1 + 1):
                    for x in range(x0, x1 + 1):
                        if out[y][x] == 0 and (y in (y0, y1) or x in (x0, x1)):
                            out[y][x] = 5
            best = max(range(len(objs)), key=lambda k: len(objs[k]))
            for y, x in objs[best]:
                out[y][x] = 8
            return out
    """,
    # Mode of each 5x5 neighbourhood.
    "majority_filter": """
        def p(g):
            h, w = len(g), len(g[0])
            out = []
            for y in range(h):
                rows = g[max(0, y - 2) : y + 3]
                row = []
                for x in range(w):
                    votes = [0] * 10
                    lo = max(0, x - 2)
                    for r in rows:
                        for c in r[lo : x + 3]:
                            votes[c] += 1
                    row.append(votes.index(max(votes)))
                out.append(row)
            return out
    """,
    # Brute-force Voronoi colouring: every background cell takes the colour of the
    # nearest coloured cell (Manhattan distance, ties to the first found).
    "nearest_color": """
        def p(g):
            h, w = len(g), len(g[0])
            seeds = [(y, x, c) for y, row in enumerate(g) for x, c in enumerate(row) if c]
            if not seeds:
                return g
            out = [row[:] for row in g]
            for y in range(h):
                for x in range(w):
                    if g[y][x]:
                        continue
                    best, color = 99, 0
                    for sy, sx, c in seeds:
                        d = abs(sy - y) + abs(sx - x)
                        if d < best:
                            best, color = d, c
                    out[y][x] = color
            return out
    """,
    # Objects whose shape (under the 8 symmetries) occurs only once are recoloured 5.
    "unique_shapes": """
        def objects(g):
            h, w = len(g), len(g[0])
            seen = [[False] * w for _ in range(h)]
            found = []
            for sy in range(h):
                for sx in range(w):
                    c = g[sy][sx]
                    if c == 0 or seen[sy][sx]:
                        continue
                    seen[sy][sx] = True
                    stack, cells = [(sy, sx)], []
                    while stack:
                        y, x = stack.pop()
                        cells.append((y, x))
                        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                            if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and g[ny][nx] == c:
                                seen[ny][nx] = True
                                stack.append((ny, nx))
                    found.append(cells)
            return found

        def normal(cells):
            forms = []
            for sy in (1, -1):
                for sx in (1, -1):
                    for swap in (False, True):
                        pts = [((x * sx, y * sy) if swap else (y * sy, x * sx)) for y, x in cells]
                        my = min(a for a, _ in pts)
                        mx = min(b for _, b in pts)
                        forms.append(tuple(sorted((a - my, b - mx) for a, b in pts)))
            return min(forms)

        def p(g):
            objs = objects(g)
            shapes = [normal(cells) for cells in objs]
            out = [row[:] for row in g]
            for cells, shape in zip(objs, shapes):
                if shapes.count(shape) == 1:
                    for y, x in cells:
                        out[y][x] = 5
            return out
    """,
    # Centres of 3x3 windows that occur exactly once become 7.
    "rare_windows": """
        from collections import Counter

        def p(g):
            h, w = len(g), len(g[0])
            windows = {}
            for y in range(h - 2):
                for x in range(w - 2):
                    windows[(y, x)] = tuple(g[y + dy][x + dx] for dy in range(3) for dx in range(3))
            counts = Counter(windows.values())
            out = [row[:] for row in g]
            for (y, x), win in windows.items():
                if counts[win] == 1:
                    out[y + 1][x + 1] = 7
            return out
    """,
    # Pick the mirror image (of 3) that agrees most with the grid; fill background from it.
    "symmetrize": """
        def p(g):
            h, w = len(g), len(g[0])
            mirrors = [
                [row[::-1] for row in g],
                [row[:] for row in g[::-1]],
                [row[::-1] for row in g[::-1]],
            ]
            def agreement(m):
                return sum(
                    1 for y in range(h) for x in range(w) if g[y][x] and g[y][x] == m[y][x]
                )
            best = max(mirrors, key=agreement)
            return [[g[y][x] or best[y][x] for x in range(w)] for y in range(h)]
    """,
    # Minimum distance between every pair of objects (brute force over their cells);
    # each object is recoloured by the distance to its nearest neighbour object.
    "object_gaps": """
        def p(g):
            h, w = len(g), len(g[0])
            label = [[-1] * w for _ in range(h)]
            objs = []
            for sy in range(h):
                for sx in range(w):
                    c = g[sy][sx]
                    if c == 0 or label[sy][sx] >= 0:
                        continue
                    k = len(objs)
                    label[sy][sx] = k
                    stack, cells = [(sy, sx)], []
                    while stack:
                        y, x = stack.pop()
                        cells.append((y, x))
                        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                            if 0 <= ny < h and 0 <= nx < w and label[ny][nx] < 0 and g[ny][nx] == c:
                                label[ny][nx] = k
                                stack.append((ny, nx))
                    objs.append(cells)
            gap = [99] * len(objs)
            for i in range(len(objs)):
                for j in range(i + 1, len(objs)):
                    d = min(
                        abs(ay - by) + abs(ax - bx) for ay, ax in objs[i] for by, bx in objs[j]
                    )
                    gap[i] = min(gap[i], d)
                    gap[j] = min(gap[j], d)
            out = [row[:] for row in g]
            for cells, d in zip(objs, gap):
                for y, x in cells:
                    out[y][x] = min(d, 9) if d < 99 else 0
            return out
    """,
}

# Expensive: roughly 20 ms per call on an average grid (repeated searches and
# deliberate inner loops), like the slowest verifiers in a bundle.
_EXPENSIVE = {
    # Many steps of Conway's life on the non-background mask.
    "life": """
        STEPS = 120

        def p(g):
            h, w = len(g), len(g[0])
            alive = [[1 if c else 0 for c in row] for row in g]
            for _ in range(STEPS):
                nxt = [[0] * w for _ in range(h)]
                for y in range(h):
                    for x in range(w):
                        n = 0
                        for ny in (y - 1, y, y + 1):
                            if 0 <= ny < h:
                                r = alive[ny]
                                for nx in (x - 1, x, x + 1):
                                    if 0 <= nx < w:
                                        n += r[nx]
                        n -= alive[y][x]
                        nxt[y][x] = 1 if n == 3 or (n == 2 and alive[y][x]) else 0
                alive = nxt
            return [[3 if a else 0 for a in row] for row in alive]
    """,
    # Alternating openings and closings of every colour's mask.
    "morphology": """
        ROUNDS = 2

        def dilate(mask, h, w):
            return [
                [
                    any(mask[ny][nx] for ny in range(max(0, y - 1), min(h, y + 2))
                        for nx in range(max(0, x - 1), min(w, x + 2)))
                    for x in range(w)
                ]
                for y in range(h)
            ]

        def erode(mask, h, w):
            return [
                [
                    all(mask[ny][nx] for ny in range(max(0, y - 1), min(h, y + 2))
                        for nx in range(max(0, x - 1), min(w, x + 2)))
                    for x in range(w)
                ]
                for y in range(h)
            ]

        def p(g):
            h, w = len(g), len(g[0])
            out = [row[:] for row in g]
            for c in sorted({c for row in g for c in row if c}):
                mask = [[v == c for v in row] for row in g]
                for _ in range(ROUNDS):
                    mask = dilate(erode(mask, h, w), h, w)
                    mask = erode(dilate(mask, h, w), h, w)
                for y in range(h):
                    for x in range(w):
                        if mask[y][x] and out[y][x] == 0:
                            out[y][x] = c
            return out
    """,
    # An 8-connected BFS through the background from every background border cell; each border cell
    # is recoloured by how far into the grid it can reach (its eccentricity, capped).
    "border_reach": """
        from collections import deque

        def p(g):
            h, w = len(g), len(g[0])
            out = [row[:] for row in g]
            starts = {(y, x) for y in range(h) for x in (0, w - 1)}
            starts |= {(y, x) for x in range(w) for y in (0, h - 1)}
            for sy, sx in sorted(starts):
                if g[sy][sx]:
                    continue
                dist = {(sy, sx): 0}
                queue = deque([(sy, sx)])
                far = 0
                while queue:
                    y, x = queue.popleft()
                    d = dist[(y, x)]
                    far = d
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            ny, nx = y + dy, x + dx
                            inside = 0 <= ny < h and 0 <= nx < w
                            if inside and g[ny][nx] == 0 and (ny, nx) not in dist:
                                dist[(ny, nx)] = d + 1
                                queue.append((ny, nx))
                out[sy][sx] = min(9, 1 + far // 4)
            return out
    """,
    # Find the 2-D period that explains the grid best (every period up to half the area,
    # each scored by rebuilding the grid from its residue classes) and repaint the grid.
    "best_period": """
        def p(g):
            h, w = len(g), len(g[0])
            best = None
            for ph in range(1, h + 1):
                for pw in range(1, w + 1):
                    if ph * pw * 2 > h * w and (ph, pw) != (h, w):
                        continue
                    votes = {}
                    for y in range(h):
                        row = g[y]
                        ry = y % ph
                        for x in range(w):
                            key = (ry, x % pw)
                            v = votes.get(key)
                            if v is None:
                                v = votes[key] = [0] * 10
                            v[row[x]] += 1
                    wrong = h * w - sum(max(v) for v in votes.values())
                    score = wrong + ph * pw
                    if best is None or score < best[0]:
                        best = (score, ph, pw, {k: v.index(max(v)) for k, v in votes.items()})
            _, ph, pw, cls = best
            return [[cls[(y % ph, x % pw)] for x in range(w)] for y in range(h)]
    """,
    # Naive region sizes: a fresh flood fill from every background cell on the even
    # lattice; the cell is recoloured by the (log) size of its region.
    "region_sizes": """
        def p(g):
            h, w = len(g), len(g[0])
            out = [row[:] for row in g]
            for sy in range(0, h, 2):
                for sx in range(0, w, 2):
                    if g[sy][sx]:
                        continue
                    seen = {(sy, sx)}
                    stack = [(sy, sx)]
                    while stack:
                        y, x = stack.pop()
                        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                            inside = 0 <= ny < h and 0 <= nx < w
                            if inside and g[ny][nx] == 0 and (ny, nx) not in seen:
                                seen.add((ny, nx))
                                stack.append((ny, nx))
                    out[sy][sx] = min(9, len(seen).bit_length())
            return out
    """,
}


@dataclass(frozen=True)
class BenchProgram:
    """One workload program: a name, its source and its cost tier."""

    name: str
    source: str
    tier: str  # "trivial", "cheap" or "expensive"


@dataclass(frozen=True)
class BenchJob:
    """One (program, chunk) unit of work: ``inputs`` are ``program``'s inputs ``start..``."""

    program: int
    start: int
    inputs: tuple[Grid, ...]


@dataclass
class Workload:
    """Programs, their inputs, and the jobs (program, chunk) that cover them."""

    programs: list[BenchProgram]
    inputs: list[list[Grid]]
    chunk: int
    jobs: list[BenchJob] = field(default_factory=list)

    @property
    def n_inputs(self) -> int:
        return sum(len(x) for x in self.inputs)

    def pairs(self) -> list[tuple[int, int]]:
        """Every (program index, input index) in job order."""
        return [(j.program, j.start + k) for j in self.jobs for k in range(len(j.inputs))]


def programs() -> list[BenchProgram]:
    """Return the workload programs, cheapest tier first."""
    tiers = (("trivial", _TRIVIAL), ("cheap", _CHEAP), ("expensive", _EXPENSIVE))
    return [
        BenchProgram(name, textwrap.dedent(source).strip() + "\n", tier)
        for tier, table in tiers
        for name, source in table.items()
    ]


def random_grid(rng: random.Random) -> Grid:
    """A 5..30 x 5..30 grid: background 0, a few rectangles (some hollow), some noise."""
    h, w = rng.randint(5, 30), rng.randint(5, 30)
    g = [[0] * w for _ in range(h)]
    for _ in range(rng.randint(1, 6)):
        color = rng.randint(1, 9)
        y0, x0 = rng.randrange(h), rng.randrange(w)
        y1, x1 = min(h, y0 + rng.randint(1, 8)), min(w, x0 + rng.randint(1, 8))
        hollow = rng.random() < 0.4
        for y in range(y0, y1):
            for x in range(x0, x1):
                if not hollow or y in (y0, y1 - 1) or x in (x0, x1 - 1):
                    g[y][x] = color
    noise = rng.uniform(0.0, 0.12)
    for y in range(h):
        for x in range(w):
            if rng.random() < noise:
                g[y][x] = rng.randint(0, 9)
    return tuple(tuple(row) for row in g)


def build_workload(n_inputs: int = 10_000, chunk: int = 100, seed: int = 0) -> Workload:
    """Split ``n_inputs`` evenly over the programs and cut each share into chunks.

    Args:
        n_inputs: Total number of (program, input) executions.
        chunk: Inputs per job, as the harness sends per (program, chunk).
        seed: Seed of the ``random.Random`` that draws the grids.

    Returns:
        The workload; its jobs in a seeded random order.
    """
    progs = programs()
    rng = random.Random(seed)
    base, extra = divmod(n_inputs, len(progs))
    inputs = [
        [random_grid(rng) for _ in range(base + (1 if i < extra else 0))] for i in range(len(progs))
    ]
    wl = Workload(progs, inputs, chunk)
    for i, grids in enumerate(inputs):
        for start in range(0, len(grids), chunk):
            wl.jobs.append(BenchJob(i, start, tuple(grids[start : start + chunk])))
    # A seeded shuffle: a harness meets programs in no particular order of cost (in tier
    # order all the slow jobs would come last and leave workers idle at the end).
    rng.shuffle(wl.jobs)
    return wl
