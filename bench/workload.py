"""A deterministic, verifier-like workload for sandbox benchmarks.

Twenty small ARC-style programs (``def p(g): ...`` on a list of lists of ints), written
for this benchmark, and seeded random input grids. Most programs are cheap (well under a
millisecond to about a millisecond per call); a few are expensive (roughly 10-30 ms per
call on an average grid: repeated BFS, brute-force nearest neighbours, many cellular
automaton steps), so the mix looks like a bundle of real verifiers.

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

_CHEAP = {
    "flip_h": """
        def p(g):
            return [row[::-1] for row in g]
    """,
    "flip_v": """
        def p(g):
            return [list(row) for row in g[::-1]]
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
    "downscale": """
        def p(g):
            return [row[::2] for row in g[::2]]
    """,
    "swap_common": """
        from collections import Counter

        def p(g):
            counts = Counter(c for row in g for c in row).most_common(2)
            if len(counts) < 2:
                return g
            a, b = counts[0][0], counts[1][0]
            swap = {a: b, b: a}
            return [[swap.get(c, c) for c in row] for row in g]
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
    "hollow": """
        def p(g):
            h, w = len(g), len(g[0])
            out = [row[:] for row in g]
            for y in range(1, h - 1):
                for x in range(1, w - 1):
                    c = g[y][x]
                    if c and g[y - 1][x] == c and g[y + 1][x] == c and g[y][x - 1] == c and g[y][x + 1] == c:
                        out[y][x] = 0
            return out
    """,
    "extend_left": """
        def p(g):
            out = [row[:] for row in g]
            for row in out:
                c = row[0]
                if c == 0:
                    continue
                for x in range(1, len(row)):
                    if row[x] != 0:
                        break
                    row[x] = c
            return out
    """,
    "histogram": """
        from collections import Counter

        def p(g):
            counts = Counter(c for row in g for c in row if c != 0).most_common()
            if not counts:
                return [[0]]
            height = min(30, max(n for _, n in counts))
            out = [[0] * len(counts) for _ in range(height)]
            for x, (color, n) in enumerate(counts):
                for y in range(min(n, height)):
                    out[height - 1 - y][x] = color
            return out
    """,
    "count_objects": """
        from collections import deque

        def p(g):
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
                        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                            if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and g[ny][nx] == c:
                                seen[ny][nx] = True
                                queue.append((ny, nx))
            return [[min(n, 9) for n in counts]]
    """,
    "fill_enclosed": """
        def p(g):
            h, w = len(g), len(g[0])
            outside = [[False] * w for _ in range(h)]
            stack = [(y, x) for y in range(h) for x in (0, w - 1)]
            stack += [(y, x) for x in range(w) for y in (0, h - 1)]
            while stack:
                y, x = stack.pop()
                if 0 <= y < h and 0 <= x < w and not outside[y][x] and g[y][x] == 0:
                    outside[y][x] = True
                    stack += [(y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)]
            return [
                [4 if g[y][x] == 0 and not outside[y][x] else g[y][x] for x in range(w)]
                for y in range(h)
            ]
    """,
    "largest_object": """
        def p(g):
            h, w = len(g), len(g[0])
            label = [[-1] * w for _ in range(h)]
            sizes = []
            for sy in range(h):
                for sx in range(w):
                    if g[sy][sx] == 0 or label[sy][sx] >= 0:
                        continue
                    k = len(sizes)
                    label[sy][sx] = k
                    stack, size = [(sy, sx)], 0
                    while stack:
                        y, x = stack.pop()
                        size += 1
                        for dy in (-1, 0, 1):
                            for dx in (-1, 0, 1):
                                ny, nx = y + dy, x + dx
                                if 0 <= ny < h and 0 <= nx < w and g[ny][nx] and label[ny][nx] < 0:
                                    label[ny][nx] = k
                                    stack.append((ny, nx))
                    sizes.append(size)
            if not sizes:
                return g
            best = max(range(len(sizes)), key=sizes.__getitem__)
            return [[8 if label[y][x] == best else g[y][x] for x in range(w)] for y in range(h)]
    """,
    "majority_filter": """
        def p(g):
            h, w = len(g), len(g[0])
            out = []
            for y in range(h):
                row = []
                for x in range(w):
                    votes = [0] * 10
                    for ny in range(max(0, y - 1), min(h, y + 2)):
                        for c in g[ny][max(0, x - 1) : x + 2]:
                            votes[c] += 1
                    row.append(votes.index(max(votes)))
                out.append(row)
            return out
    """,
}

_EXPENSIVE = {
    # Many steps of Conway's life on the non-background mask.
    "life": """
        STEPS = 25

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
    # One BFS over background cells from every top-row cell: how much longer than a
    # straight drop is the shortest way down (8 = 8 or more, 9 = no way down).
    "top_bottom_paths": """
        from collections import deque

        def p(g):
            h, w = len(g), len(g[0])
            row = []
            for sx in range(w):
                detour = 9
                dist = {(0, sx): 0}
                queue = deque([(0, sx)] if g[0][sx] == 0 else [])
                while queue:
                    y, x = queue.popleft()
                    if y == h - 1:
                        detour = min(8, dist[(y, x)] - (h - 1))
                        break
                    for ny, nx in ((y + 1, x), (y, x - 1), (y, x + 1), (y - 1, x)):
                        if 0 <= ny < h and 0 <= nx < w and g[ny][nx] == 0 and (ny, nx) not in dist:
                            dist[(ny, nx)] = dist[(y, x)] + 1
                            queue.append((ny, nx))
                row.append(detour)
            return [row]
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
                same = sum(1 for other in shapes if other == shape)
                if same == 1:
                    for y, x in cells:
                        out[y][x] = 5
            return out
    """,
    # Morphological closing of every colour's mask, repeated until nothing changes.
    "closing": """
        ROUNDS = 4

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
            colors = sorted({c for row in g for c in row if c})[:3]
            for c in colors:
                mask = [[v == c for v in row] for row in g]
                for _ in range(ROUNDS):
                    closed = erode(dilate(mask, h, w), h, w)
                    if closed == mask:
                        break
                    mask = closed
                for y in range(h):
                    for x in range(w):
                        if mask[y][x] and out[y][x] == 0:
                            out[y][x] = c
            return out
    """,
}


@dataclass(frozen=True)
class BenchProgram:
    """One workload program: a name, its source and whether it is a heavy one."""

    name: str
    source: str
    expensive: bool


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
    """Return the workload programs (cheap ones first)."""
    out = [BenchProgram(n, textwrap.dedent(s).strip() + "\n", False) for n, s in _CHEAP.items()]
    out += [BenchProgram(n, textwrap.dedent(s).strip() + "\n", True) for n, s in _EXPENSIVE.items()]
    return out


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
        The workload; jobs are in program order, each program's chunks in input order.
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
    return wl
