"""A deterministic, verifier-like workload for sandbox benchmarks (``throughput.py``).

Twenty small ARC-style programs of our own (``def p(g): ...`` on a list of lists of
ints), one file each in ``bench/synthetic/throughput/<tier>/`` (see its README), in three
cost tiers (per call, on an average 5..30-sided grid, on one core of the development
machine):

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

    from common.workload import build_workload

    wl = build_workload(n_inputs=10_000, chunk=100)
    for job in wl.jobs:  # one (program, chunk of its inputs) each
        ...
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

Grid = tuple[tuple[int, ...], ...]

PROGRAMS = Path(__file__).resolve().parents[1] / "synthetic" / "throughput"
TIERS = ("trivial", "cheap", "expensive")


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
    """Return the workload programs, cheapest tier first (read from ``PROGRAMS``)."""
    return [
        BenchProgram(path.stem.split("_", 1)[1], path.read_text(), tier)
        for tier in TIERS
        for path in sorted((PROGRAMS / tier).glob("*.py"))
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
