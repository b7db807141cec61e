"""Full validation benchmark: one verifier source over all 400 tasks and 100,000 ARC-GEN pairs.

Usage::

    python bench/validate_full.py [--kind re-arc|golf] [--backends process,docker]
                                  [--workers 2] [--tasks-limit N] [--chunk N]
                                  [--also-chunk N] [--repeat R] [--raw-parallel]
                                  [--raw-in-image] [--profile] [--cprofile]

We have no real verifier source for the 400 ARC-AGI-1 training tasks, so the benchmark
GENERATES one into a temporary directory:

* ``--kind re-arc`` (default): a RE-ARC-style checkout: ``dsl.py`` (a tiny grid DSL of our
  own, grids are tuples of tuples) and ``verifiers.py`` starting with ``from dsl import *``,
  with one straight-line ``verify_<task_id>(I)`` per task (``x0 = f(I)``, ``x1 = g(x0, ..)``,
  ..., ``return xK``; 5 to 25 assignments each, ~9,000 in all).
* ``--kind golf``: 400 ``taskNNN.py`` files (NNN = 1-based index of the task id in sorted
  order) each defining ``p`` as a lambda over the lambda-expressible part of the same DSL.

The chains are random (seeded) and mostly wrong: correctness does not matter, the work
does. Their cost is calibrated (on a sample of ARC-GEN inputs, in this process) to about
``--ms-per-call`` (2 ms, like real RE-ARC verifiers) by the repeat counts of one smoothing
operation.

Measured:

1. ``raw``: the source imported once in this process; for every task its verifier called
   on every train/test/ARC-GEN input (a fresh copy each) and compared with the expected
   output; one core, no isolation. Only the calls and comparisons are timed (reading the
   data is timed apart).
2. ``validate``: ``arcjudge validate`` through the API (``Validator``,
   ``ValidateConfig(samples=0)``, a fresh ``ResultStore`` in a temporary directory,
   ``make_sandbox(backend, workers)``, outputs written), in a subprocess, so its peak RSS
   (``ru_maxrss``) is the harness's alone; its CPU time is the harness's (the sandbox's
   workers are separate processes).
3. ``warm``: the same again with the now-filled store (should be fast).

Optional baselines: ``--raw-parallel`` (raw in ``--workers`` processes at once, on shares
of equal cost: what the cores give at best) and ``--raw-in-image`` (raw in one container
of the runtime image: the speed of the interpreter the docker backend's programs run on).
For each validate run the CPU time of the harness, of the sandbox and of everything else
on the machine is printed, so other load shows.

Targets: validate wall <= 0.6 x raw; harness peak memory < 1 GiB.

``--profile`` adds where the time goes: per-program load cost of the sliced source (and
of ``from dsl import *``), per-input overhead, with a CPU budget of the validate run;
``--cprofile`` runs one extra validate (process backend) under cProfile and prints the
harness's hottest functions.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import cProfile
import hashlib
import importlib
import io
import json
import math
import os
import pstats
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TASKS = Path("/work/shared/data/arc-agi-1/training")
DEFAULT_ARCGEN = Path("/work/shared/data/arc-gen-100k")
TARGET_RATIO = 0.6
TARGET_MEMORY = 1 << 30
SOURCE_NAME = "synthetic"
CALIBRATION_PAIRS = 8  # ARC-GEN inputs per task used to calibrate the cost per call

_now = time.perf_counter

# --------------------------------------------------------------------------------------
# The synthetic DSL (written to dsl.py). Functions whose body is a single ``return`` are
# also usable by golf sources, as ``name=lambda args:expr``.
# --------------------------------------------------------------------------------------

DSL_SOURCE = '''\
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
'''

# Operations the generator may chain: name -> (argument kinds, result type, weight).
# Types: G grid, C colour, P cell set, S object list. Literal kinds: c colour 0..9 (or a C
# variable), d small offset -2..2, n size 1..5, k the calibrated smoothing repeat count.
OPS: dict[str, tuple[tuple[str, ...], str, float]] = {
    "rot90": (("G",), "G", 2),
    "rot180": (("G",), "G", 1),
    "rot270": (("G",), "G", 1),
    "flip_h": (("G",), "G", 1),
    "flip_v": (("G",), "G", 1),
    "transpose": (("G",), "G", 1),
    "trim": (("G",), "G", 1),
    "top_half": (("G",), "G", 0.5),
    "left_half": (("G",), "G", 0.5),
    "upscale": (("G",), "G", 0.5),
    "downscale": (("G",), "G", 0.5),
    "shift_colors": (("G",), "G", 1),
    "mirror_fill": (("G",), "G", 1),
    "gravity": (("G",), "G", 1),
    "replace": (("G", "c", "c"), "G", 3),
    "swap": (("G", "c", "c"), "G", 2),
    "most_color": (("G",), "C", 2),
    "least_color": (("G",), "C", 1.5),
    "all_cells": (("G",), "P", 0.5),
    "cells_of": (("G", "c"), "P", 3),
    "foreground": (("G",), "P", 2),
    "shift": (("P", "d", "d"), "P", 1.5),
    "grow": (("P",), "P", 1.5),
    "box": (("P",), "P", 1),
    "union": (("P", "P"), "P", 1),
    "difference": (("P", "P"), "P", 1),
    "intersection": (("P", "P"), "P", 0.5),
    "fill": (("G", "c", "P"), "G", 4),
    "crop": (("G", "P"), "G", 1.5),
    "overlay": (("G", "G"), "G", 1),
    "hcat": (("G", "G"), "G", 0.5),
    "smooth": (("G", "k"), "G", 1.5),
    "components": (("G",), "S", 1.5),
    "largest": (("S",), "P", 1),
    "smallest": (("S",), "P", 0.5),
    "merge": (("S",), "P", 0.5),
    "at_least": (("S", "n"), "S", 0.5),
    "paint_sizes": (("G", "S"), "G", 1),
    "fill_enclosed": (("G", "c"), "G", 1),
}


@dataclass(frozen=True)
class DslInfo:
    """The DSL's functions: golf (lambda) forms and what each depends on."""

    lambdas: dict[str, str]  # name -> "name=lambda args:expr" (single-return functions)
    deps: dict[str, set[str]]  # name -> DSL functions it calls

    def closure(self, names: set[str]) -> list[str]:
        """``names`` and everything they use, in DSL order."""
        todo, seen = list(names), set()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.deps[name])
        return [n for n in self.deps if n in seen]


def dsl_info() -> DslInfo:
    tree = ast.parse(DSL_SOURCE)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    names = {f.name for f in functions}
    lambdas, deps = {}, {}
    for f in functions:
        deps[f.name] = {n.id for n in ast.walk(f) if isinstance(n, ast.Name) and n.id in names} - {
            f.name
        }
        if len(f.body) == 1 and isinstance(f.body[0], ast.Return) and f.body[0].value:
            args = ",".join(a.arg for a in f.args.args)
            lambdas[f.name] = f"{f.name}=lambda {args}:{ast.unparse(f.body[0].value)}"
    return DslInfo(lambdas, deps)


# --------------------------------------------------------------------------------------
# Generating the source
# --------------------------------------------------------------------------------------


@dataclass
class Step:
    """One assignment: ``op(args)``; ``args`` are variable names, literals or ('k', r, u)."""

    op: str
    args: list[object]
    kind: str  # result type


@dataclass
class Plan:
    task_id: str
    steps: list[Step]


def assignment_counts(rng: random.Random, n_tasks: int, total: int) -> list[int]:
    """Counts in 5..25, skewed high, adjusted to sum to ``total`` (as far as possible)."""
    counts = [max(5, min(25, 25 - int(rng.expovariate(1 / 3.0)))) for _ in range(n_tasks)]
    total = max(5 * n_tasks, min(25 * n_tasks, total))
    while sum(counts) != total:
        i = rng.randrange(n_tasks)
        if sum(counts) < total and counts[i] < 25:
            counts[i] += 1
        elif sum(counts) > total and counts[i] > 5:
            counts[i] -= 1
    return counts


def plan_task(rng: random.Random, task_id: str, n_steps: int, golf: bool, lambdas: set) -> Plan:
    """Draw one straight-line chain; every random draw is made whatever the scale."""
    ops = {k: v for k, v in OPS.items() if not golf or k in lambdas}
    variables: dict[str, list[str]] = {"G": ["I"], "C": [], "P": [], "S": []}
    steps: list[Step] = []
    for k in range(n_steps):
        last = k == n_steps - 1
        feasible = [
            name
            for name, (kinds, result, _w) in ops.items()
            if all(variables.get(t) for t in kinds if t.isupper()) and (not last or result == "G")
        ]
        name = rng.choices(feasible, weights=[ops[n][2] for n in feasible])[0]
        kinds, result, _w = ops[name]
        args: list[object] = []
        for t in kinds:
            if t.isupper():
                pool = variables[t]
                args.append(pool[-1] if rng.random() < 0.6 else rng.choice(pool))
            elif t == "c":
                if variables["C"] and rng.random() < 0.5:
                    args.append(rng.choice(variables["C"]))
                else:
                    args.append(rng.randint(0, 9))
            elif t == "d":
                args.append(rng.randint(-2, 2))
            elif t == "n":
                args.append(rng.randint(1, 5))
            else:  # k: repeat count = floor(scale * r + u), so its mean is linear in scale
                args.append(("k", rng.uniform(0.0, 2.0), rng.random()))
        steps.append(Step(name, args, result))
        variables[result].append(f"x{k}")
    return Plan(task_id, steps)


def plan_source(task_ids: Sequence[str], seed: int, golf: bool, total: int) -> list[Plan]:
    rng = random.Random(seed)
    counts = assignment_counts(rng, len(task_ids), total)
    lambdas = set(dsl_info().lambdas)
    return [plan_task(rng, t, n, golf, lambdas) for t, n in zip(task_ids, counts, strict=True)]


def _arg_text(arg: object, scale: float) -> str:
    if isinstance(arg, tuple):
        _, r, u = arg
        return str(math.floor(scale * r + u))
    return str(arg)


def _call(step: Step, scale: float) -> str:
    return f"{step.op}({', '.join(_arg_text(a, scale) for a in step.args)})"


def render_rearc(plans: Sequence[Plan], scale: float) -> str:
    parts = ['"""Synthetic verifiers (bench/validate_full.py); wrong on purpose."""\n\n']
    parts.append("from dsl import *\n")
    for plan in plans:
        body = [f"    x{k} = {_call(s, scale)}\n" for k, s in enumerate(plan.steps)]
        body.append(f"    return x{len(plan.steps) - 1}\n")
        parts.append(f"\n\ndef verify_{plan.task_id}(I):\n" + "".join(body))
    return "".join(parts)


def render_golf(plan: Plan, scale: float, info: DslInfo) -> str:
    used = {s.op for s in plan.steps}
    helpers = [info.lambdas[name] for name in info.closure(used)]
    chain = ",".join(
        f"x{k}:={_call(s, scale).replace(', ', ',')}" for k, s in enumerate(plan.steps)
    )
    return "\n".join([*helpers, f"p=lambda I:[{chain}][-1]"]) + "\n"


def golf_numbers() -> dict[str, int]:
    """Task id -> golf file number (1-based index among the sorted training ids)."""
    from arcjudge.verifiers.sources import training_ids

    return {tid: i for i, tid in enumerate(training_ids(), 1)}


def write_source(directory: Path, kind: str, plans: Sequence[Plan], scale: float) -> None:
    """Write the source for ``plans`` at ``scale`` into ``directory`` (replacing it)."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    if kind == "re-arc":
        (directory / "dsl.py").write_text(DSL_SOURCE)
        (directory / "verifiers.py").write_text(render_rearc(plans, scale))
        return
    info = dsl_info()
    numbers = golf_numbers()
    for plan in plans:
        (directory / f"task{numbers[plan.task_id]:03d}.py").write_text(
            render_golf(plan, scale, info)
        )


# --------------------------------------------------------------------------------------
# Data and the raw (in-process) run
# --------------------------------------------------------------------------------------

Grid = tuple[tuple[int, ...], ...]


def _grid(value: list) -> Grid:
    return tuple(tuple(row) for row in value)


def task_pairs(tasks_dir: Path, arcgen_dir: Path, task_id: str) -> list[tuple[Grid, Grid]]:
    """Train and test pairs with outputs, then the ARC-GEN pairs (as ``validate`` sees them).

    Standard library only (raw runs also happen in the runtime image's interpreter); the
    data is checked by the harness's own reader in ``usable_arcgen``.
    """
    task = json.loads((tasks_dir / f"{task_id}.json").read_bytes())
    pairs = [
        (_grid(p["input"]), _grid(p["output"]))
        for p in (*task["train"], *task["test"])
        if "output" in p
    ]
    path = arcgen_dir / f"{task_id}.json"
    arc_gen = json.loads(path.read_bytes()) if path.is_file() else task.get("arc-gen", [])
    pairs += [(_grid(p["input"]), _grid(p["output"])) for p in arc_gen if "output" in p]
    return pairs


def usable_arcgen(arcgen_dir: Path, work: Path, task_ids: Sequence[str]) -> tuple[Path, dict]:
    """The ARC-GEN directory the harness can read, and what had to be left out.

    ``load_arcgen_pairs`` rejects a whole file when one grid breaks the ARC rules (e.g.
    more than 30 rows), which stops ``validate``. Files that load are linked as they are;
    the others are copied without their unreadable pairs (counted in the report).
    """
    from arcjudge.grids import validate_plain
    from arcjudge.tasks import TaskFormatError, load_arcgen_pairs

    dropped: dict[str, tuple[int, int]] = {}
    total = 0
    target = work / "arc-gen"
    for task_id in task_ids:
        path = arcgen_dir / f"{task_id}.json"
        if not path.is_file():
            continue
        try:
            total += len(load_arcgen_pairs(path))
            continue
        except TaskFormatError:
            pass
        raw = json.loads(path.read_bytes())
        keep = [
            p
            for p in raw
            if validate_plain(p.get("input"))[0] is not None
            and validate_plain(p.get("output"))[0] is not None
        ]
        dropped[task_id] = (len(raw) - len(keep), len(raw))
        total += len(keep)
        target.mkdir(exist_ok=True)
        (target / path.name).write_text(json.dumps(keep))
    if not dropped:
        return arcgen_dir, {"pairs": total, "dropped": {}}
    for task_id in task_ids:
        path = arcgen_dir / f"{task_id}.json"
        link = target / path.name
        if path.is_file() and task_id not in dropped and not link.exists():
            link.symlink_to(path.resolve())
    return target, {"pairs": total, "dropped": dropped}


def load_functions(
    source_dir: Path, kind: str, task_ids: Sequence[str], numbers: dict[str, int]
) -> dict[str, object]:
    """Import the source once: task id -> its verifier function (golf: by file number)."""
    if kind == "re-arc":
        for name in ("dsl", "verifiers"):
            sys.modules.pop(name, None)
        sys.path.insert(0, str(source_dir))
        importlib.invalidate_caches()
        try:
            import verifiers  # type: ignore[import-not-found]
        finally:
            sys.path.remove(str(source_dir))
        return {t: getattr(verifiers, f"verify_{t}") for t in task_ids}
    fns = {}
    for t in task_ids:
        path = source_dir / f"task{numbers[t]:03d}.py"
        namespace: dict[str, object] = {"__name__": path.stem}
        exec(compile(path.read_bytes(), str(path), "exec"), namespace)
        fns[t] = namespace["p"]
    return fns


@dataclass
class RawResult:
    seconds: float = 0.0  # calls and comparisons only
    cpu_seconds: float = 0.0  # CPU time of the same (well below ``seconds``: contention)
    load_seconds: float = 0.0  # reading task and ARC-GEN files
    import_seconds: float = 0.0
    calls: int = 0
    verdicts: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    per_task: dict[str, tuple[int, float]] = field(default_factory=dict)


def run_raw(
    source_dir: Path,
    kind: str,
    task_ids: Sequence[str],
    tasks_dir: Path,
    arcgen_dir: Path,
    numbers: dict[str, int],
    preloaded: dict[str, list[tuple[Grid, Grid]]] | None = None,
) -> RawResult:
    """Call every verifier on every input of its task, in this process, one core.

    ``preloaded`` (task id -> pairs) replaces reading the data (for calibration samples).
    """
    res = RawResult()
    t0 = _now()
    fns = load_functions(source_dir, kind, task_ids, numbers)
    res.import_seconds = _now() - t0
    copy = (
        (lambda g: tuple(tuple(r) for r in g))
        if kind == "re-arc"
        else (lambda g: [list(r) for r in g])
    )
    for task_id in task_ids:
        t0 = _now()
        if preloaded is not None:
            pairs = preloaded[task_id]
        else:
            pairs = task_pairs(tasks_dir, arcgen_dir, task_id)
        res.load_seconds += _now() - t0
        fn = fns[task_id]
        right = 0
        c0 = time.process_time()
        t0 = _now()
        for grid, expected in pairs:
            try:
                out = fn(copy(grid))
            except Exception:
                res.statuses["error"] += 1
                continue
            res.statuses["ok"] += 1
            if type(out) is not tuple or (out and type(out[0]) is not tuple):
                try:
                    out = tuple(tuple(r) for r in out)
                except TypeError:
                    continue
            right += out == expected
        seconds = _now() - t0
        res.cpu_seconds += time.process_time() - c0
        res.seconds += seconds
        res.calls += len(pairs)
        res.per_task[task_id] = (len(pairs), seconds)
        res.verdicts["valid" if right == len(pairs) else "invalid"] += 1
    return res


def raw_to_json(res: RawResult) -> dict:
    return {
        "seconds": res.seconds,
        "cpu_seconds": res.cpu_seconds,
        "load_seconds": res.load_seconds,
        "import_seconds": res.import_seconds,
        "calls": res.calls,
        "verdicts": dict(res.verdicts),
        "statuses": dict(res.statuses),
        "python": sys.version.split()[0],
    }


def raw_child(spec: dict) -> dict:
    """A raw run over ``spec['task_ids']`` (standard library only: runs in the image too)."""
    res = run_raw(
        Path(spec["source_dir"]),
        spec["kind"],
        spec["task_ids"],
        Path(spec["tasks_dir"]),
        Path(spec["arcgen_dir"]),
        spec["numbers"],
    )
    return raw_to_json(res)


def _child_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def balanced_shares(cost: dict[str, float], n: int) -> list[list[str]]:
    """Split tasks into ``n`` shares of about equal cost (longest first, to the lightest)."""
    shares: list[list[str]] = [[] for _ in range(n)]
    load = [0.0] * n
    for task_id in sorted(cost, key=lambda t: -cost[t]):
        k = load.index(min(load))
        shares[k].append(task_id)
        load[k] += cost[task_id]
    return [sorted(share) for share in shares]


def run_raw_parallel(spec: dict, work: Path, cost: dict[str, float], n: int) -> dict:
    """``n`` raw runs at once on shares of equal raw cost: what ``n`` cores give at best."""
    procs = []
    t0 = _now()
    for k, share in enumerate(balanced_shares(cost, n)):
        path = work / f"raw-{k}.json"
        path.write_text(json.dumps({**spec, "task_ids": share}))
        procs.append(
            subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--raw-child", str(path)],
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    outs = [_child_json(proc.communicate()[0]) for proc in procs]
    wall = _now() - t0
    return {
        "wall": wall,
        "seconds": [o["seconds"] for o in outs],
        "cpu_seconds": [o["cpu_seconds"] for o in outs],
        "calls": sum(o["calls"] for o in outs),
    }


def run_raw_in_image(spec: dict, work: Path, image: str, mounts: Sequence[Path]) -> dict:
    """The raw run inside one container of the runtime image (its interpreter, one core)."""
    path = work / "raw-image.json"
    path.write_text(json.dumps(spec))
    script = Path(os.path.abspath(__file__))
    dirs = sorted({str(Path(m).resolve()) for m in (*mounts, script.parent, work)})
    volumes = [a for d in dirs for a in ("-v", f"{d}:{d}:ro")]
    name = f"arcjudge-bench-raw-{os.getpid()}"
    argv = [
        "docker", "run", "--rm", "--network", "none", "--name", name,
        "--label", "arcjudge=1", "--label", "arcjudge.bench=raw",
        "--label", f"arcjudge.owner={socket.gethostname()}:{os.getpid()}", *volumes,
        "--user", f"{os.getuid()}:{os.getgid()}",  # to read the (private) work directory
        image, "python3", "-s", "-B", str(script), "--raw-child", str(path),
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        raise RuntimeError(
            f"raw in the image failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    return _child_json(proc.stdout)


def calibrate(
    plans: Sequence[Plan],
    kind: str,
    work: Path,
    tasks_dir: Path,
    arcgen_dir: Path,
    target_ms: float,
) -> tuple[float, list[str]]:
    """Find the smoothing scale whose mean cost per call is ``target_ms`` (on a sample)."""
    ids = [p.task_id for p in plans]
    lines = []
    # The ARC-GEN end of each task's inputs: what dominates a full run.
    sample = {t: task_pairs(tasks_dir, arcgen_dir, t)[-CALIBRATION_PAIRS:] for t in ids}

    def mean_ms(scale: float) -> float:
        write_source(work, kind, plans, scale)
        raw = run_raw(work, kind, ids, tasks_dir, arcgen_dir, golf_numbers(), sample)
        ms = 1000 * raw.seconds / max(1, raw.calls)
        lines.append(f"scale {scale:.3f}: {ms:.3f} ms per call ({raw.calls} calls)")
        return ms

    # The cost is about linear in the scale but lumpy (a few big grids weigh a lot), so
    # bracket the target and narrow the bracket (false position, bisecting when stuck).
    lo, a = 0.0, mean_ms(0.0)
    if a >= target_ms:
        return 0.0, lines
    hi, b = 2.0, mean_ms(2.0)
    while b < target_ms and hi < 1000:
        lo, a = hi, b
        hi *= 2
        b = mean_ms(hi)
    best = (abs(b - target_ms), hi)
    for step in range(6):
        if best[0] <= 0.03 * target_ms:
            break
        guess = lo + (target_ms - a) * (hi - lo) / (b - a)
        if step % 2 or not lo < guess < hi:  # every other step, bisect
            guess = (lo + hi) / 2
        got = mean_ms(guess)
        best = min(best, (abs(got - target_ms), guess))
        if got < target_ms:
            lo, a = guess, got
        else:
            hi, b = guess, got
    return best[1], lines


# --------------------------------------------------------------------------------------
# The validate run (in a child process)
# --------------------------------------------------------------------------------------


def _machine_busy_seconds() -> float:
    """CPU seconds all cores spent busy since boot (from /proc/stat); includes others' load."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def container_cpu_seconds(container_id: str) -> float | None:
    """CPU seconds a running container has used (cgroup v1 or v2), or ``None``."""
    v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage")
    v2 = Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat")
    try:
        if v1.is_file():
            return int(v1.read_text()) / 1e9
        if v2.is_file():
            for line in v2.read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError):
        pass
    return None


def child_validate(spec: dict) -> dict:
    """Run one validation as ``arcjudge validate`` would; report wall, CPU and peak RSS."""
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.harness.validate.validator import ValidateConfig, Validator, write_outputs
    from arcjudge.sandbox.backends import make_sandbox
    from arcjudge.verifiers.sources import VerifierSource

    t_begin = _now()
    source = VerifierSource(SOURCE_NAME, spec["kind"], spec["source_dir"])
    config = ValidateConfig(
        Path(spec["tasks_dir"]),
        sources=(source,),
        arcgen_dir=Path(spec["arcgen_dir"]),
        samples=0,
        chunk=spec["chunk"],
    )
    store = ResultStore(spec["store"])
    counted = {"jobs": 0, "inputs": 0}
    try:
        sb = make_sandbox(spec["backend"], spec["workers"], module_dirs=source.module_dirs)
        with sb:
            t0 = _now()
            sb.start()
            t_started = _now()
            inner_run = sb.run
            lock = threading.Lock()
            # --cprofile: CPU time (thread_time) per thread, so waiting does not count; the
            # harness calls the sandbox from a thread pool, each thread gets its profiler.
            profiling = bool(spec.get("cprofile"))
            thread_profilers: list[cProfile.Profile] = []
            local = threading.local()

            def counting_run(program, inputs, *args, **kwargs):  # count the work items
                with lock:
                    counted["jobs"] += 1
                    counted["inputs"] += len(inputs)
                if not profiling:
                    return inner_run(program, inputs, *args, **kwargs)
                prof = getattr(local, "profiler", None)
                if prof is None:
                    prof = local.profiler = cProfile.Profile(time.thread_time)
                    with lock:
                        thread_profilers.append(prof)
                return prof.runcall(inner_run, program, inputs, *args, **kwargs)

            inner_map = sb.map

            def counting_map(jobs, *args, **kwargs):  # if the harness sends batches instead
                def counted_jobs():
                    for job in jobs:
                        with lock:
                            counted["jobs"] += 1
                            counted["inputs"] += len(job.inputs)
                        yield job

                return inner_map(counted_jobs(), *args, **kwargs)

            sb.run = counting_run  # type: ignore[method-assign]
            sb.map = counting_map  # type: ignore[method-assign]
            validator = Validator(config, sb, store)
            profiler = cProfile.Profile(time.thread_time) if profiling else None
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            if profiler:
                profiler.enable()
            validator.run()
            if profiler:
                profiler.disable()
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            t_run = _now()
            containers = [
                getattr(w, "container", None) for w in getattr(sb, "workers", [])
            ]  # docker: read the containers' CPU time before they go
            container_cpu = [container_cpu_seconds(c.id) for c in containers if c is not None]
        t_closed = _now()
        manifest = write_outputs(validator, Path(spec["out"]))
        t_end = _now()
    finally:
        store.close()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "wall": t_end - t_begin,
        "setup": t0 - t_begin,
        "start": t_started - t0,
        "run": t_run - t_started,
        "close": t_closed - t_run,
        "outputs": t_end - t_closed,
        "harness_cpu": me.ru_utime + me.ru_stime,
        "harness_cpu_run": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
        "children_cpu": kids.ru_utime + kids.ru_stime,
        "sandbox_cpu": (
            sum(container_cpu)  # type: ignore[arg-type]
            if container_cpu and None not in container_cpu
            else (kids.ru_utime + kids.ru_stime if spec["backend"] == "process" else None)
        ),
        "maxrss_bytes": me.ru_maxrss * 1024,
        "verdicts": manifest["per_source"][SOURCE_NAME],
        "jobs": counted["jobs"],
        "inputs": counted["inputs"],
    }
    if profiler:
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        for prof in thread_profilers:
            stats.add(prof)
        stats.sort_stats("tottime").print_stats(30)
        result["cprofile"] = text.getvalue()
    return result


def spawn_validate(spec: dict, work: Path) -> dict:
    """Run ``child_validate`` in a fresh interpreter; add machine-wide CPU and wall."""
    spec_path = work / f"spec-{spec['label']}.json"
    spec_path.write_text(json.dumps(spec))
    busy0, t0 = _machine_busy_seconds(), _now()
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", str(spec_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    busy1, t1 = _machine_busy_seconds(), _now()
    if proc.returncode != 0:
        raise RuntimeError(f"validate child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["machine_busy"] = busy1 - busy0
    result["process_wall"] = t1 - t0
    return result


# --------------------------------------------------------------------------------------
# Profile: where the time of a validate run goes
# --------------------------------------------------------------------------------------


def _median_run(sb, program, inputs, reps: int) -> float:
    from arcjudge.sandbox.types import ProgramStatus

    for _ in range(2):
        sb.run(program, inputs)
    times = []
    for _ in range(reps):
        t0 = _now()
        res = sb.run(program, inputs)
        times.append(_now() - t0)
        if res.status is not ProgramStatus.LOADED:
            raise RuntimeError(f"probe {program.name}: {res.status.value}: {res.error}")
    return statistics.median(times)


def profile_backend(
    backend: str,
    kind: str,
    source_dir: Path,
    task_ids: Sequence[str],
    tasks_dir: Path,
    arcgen_dir: Path,
    reps: int = 20,
) -> dict:
    """Per-program load cost and per-input overhead of one backend (1 worker)."""
    from arcjudge.sandbox.backends import make_sandbox
    from arcjudge.sandbox.types import Program
    from arcjudge.verifiers.sources import VerifierSource

    source = VerifierSource(SOURCE_NAME, kind, source_dir)
    fmt = "tuple" if kind == "re-arc" else "list"
    dirs = source.module_dirs
    task_id = task_ids[0]
    program = source.program_for(task_id).program
    assert program is not None
    pairs = task_pairs(tasks_dir, arcgen_dir, task_id)
    one = [pairs[0][0]]
    batch = [g for g, _ in pairs][:256]
    fns = load_functions(source_dir, kind, [task_id], golf_numbers())
    t0 = _now()
    for _ in range(reps):
        fns[task_id](tuple(tuple(r) for r in one[0]) if kind == "re-arc" else one[0])
    raw_one = (_now() - t0) / reps
    trivial = Program(b"def p(g):\n    return g\n", ("p",), dirs, fmt, "trivial")
    import_only = Program(
        b"from dsl import *\n\ndef p(g):\n    return g\n", ("p",), dirs, fmt, "import-dsl"
    )
    out = {"backend": backend, "task": task_id, "raw_one": raw_one}
    with make_sandbox(backend, 1, module_dirs=dirs) as sb:
        out["trivial"] = _median_run(sb, trivial, one, reps)
        if kind == "re-arc":
            out["import_dsl"] = _median_run(sb, import_only, one, reps)
        out["verifier"] = _median_run(sb, program, one, reps)
        out["trivial_batch"] = _median_run(sb, trivial, batch, max(3, reps // 4))
        out["batch"] = len(batch)
    return out


def compile_costs(source_dir: Path, kind: str, task_id: str) -> dict:
    """In-process compile times of what each program load compiles."""
    from arcjudge.verifiers.sources import VerifierSource

    source = VerifierSource(SOURCE_NAME, kind, source_dir)
    program = source.program_for(task_id).program
    assert program is not None
    costs = {"program_bytes": len(program.source), "program_lines": program.source.count(b"\n")}
    t0 = _now()
    for _ in range(20):
        compile(program.source, "program.py", "exec", dont_inherit=True)
    costs["program_compile"] = (_now() - t0) / 20
    if kind == "re-arc":
        dsl = (source_dir / "dsl.py").read_bytes()
        t0 = _now()
        for _ in range(20):
            compile(dsl, "dsl.py", "exec", dont_inherit=True)
        costs["dsl_compile"] = (_now() - t0) / 20
        costs["dsl_lines"] = dsl.count(b"\n")
        # A RE-ARC-sized dsl.py (~3,500 lines): the same text repeated, for its compile cost.
        big = b"\n".join([dsl] * max(1, 3500 // max(1, costs["dsl_lines"])))
        t0 = _now()
        for _ in range(5):
            compile(big, "dsl.py", "exec", dont_inherit=True)
        costs["big_dsl_compile"] = (_now() - t0) / 5
        costs["big_dsl_lines"] = big.count(b"\n")
    return costs


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------


def code_state() -> str:
    """The commit and uncommitted ``src/`` changes the numbers were taken with."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
        return proc.stdout.decode(errors="replace") if proc.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    changed = [line for line in git("status", "--porcelain", "--", "src").splitlines() if line]
    if not changed:
        return f"code: {head}, src/ clean"
    digest = hashlib.sha256(git("diff", "HEAD", "--", "src").encode()).hexdigest()[:10]
    return f"code: {head} + {len(changed)} uncommitted src/ changes (diff {digest})"


def _load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} cores"


def _cpu(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


def _others(r: dict) -> float | None:
    """Busy CPU seconds during the run that were neither the harness's nor the sandbox's."""
    if r.get("sandbox_cpu") is None:
        return None
    return r["machine_busy"] - r["harness_cpu"] - r["sandbox_cpu"]


def _mib(n: float) -> str:
    return f"{n / (1 << 20):.0f} MiB"


def _verdicts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def print_results(raw: RawResult, runs: list[dict], n_tasks: int, extra: dict) -> bool:
    print()
    header = (
        f"{'run':<34} {'wall s':>7} {'x raw':>6} {'harness CPU':>11} {'sandbox CPU':>11}"
        f" {'others CPU':>10} {'peak RSS':>9} {'jobs':>5} {'inputs':>7}  verdicts"
    )
    print(header)
    print("-" * len(header))
    dash = "-"
    print(
        f"{'raw (1 core)':<34} {raw.seconds:>7.1f} {1.0:>6.3f} {raw.cpu_seconds:>11.1f}"
        f" {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5} {raw.calls:>7}  {_verdicts(raw.verdicts)}"
    )
    par = extra.get("parallel")
    if par:
        label = f"raw x{len(par['seconds'])} processes"
        print(
            f"{label:<34} {par['wall']:>7.1f} {par['wall'] / raw.seconds:>6.3f}"
            f" {sum(par['cpu_seconds']):>11.1f} {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5}"
            f" {par['calls']:>7}"
        )
    image = extra.get("image")
    if image:
        label = f"raw in image (py {image['python']})"
        print(
            f"{label:<34} {image['seconds']:>7.1f} {image['seconds'] / raw.seconds:>6.3f}"
            f" {image['cpu_seconds']:>11.1f} {dash:>11} {dash:>10} {dash:>9} {n_tasks:>5}"
            f" {image['calls']:>7}  {_verdicts(image['verdicts'])}"
        )
    for r in runs:
        others = _others(r)
        print(
            f"{r['label']:<34} {r['wall']:>7.1f} {r['wall'] / raw.seconds:>6.3f}"
            f" {r['harness_cpu']:>11.1f} {_cpu(r['sandbox_cpu'])[:-2]:>11}"
            f" {dash if others is None else f'{others:.1f}':>10} {_mib(r['maxrss_bytes']):>9}"
            f" {r['jobs']:>5} {r['inputs']:>7}  {_verdicts(r['verdicts'])}"
        )
    print(
        "  CPU seconds: harness = the validate process (raw rows: the raw process(es));"
        " sandbox = supervisors and programs (process: reaped children; docker: the"
        " containers' cgroups); others = the rest of the machine's busy time during the run"
        " (other users, dockerd, ...)"
    )
    print(
        f"  raw: {raw.calls} calls in {raw.seconds:.1f} s = {1000 * raw.seconds / raw.calls:.3f}"
        f" ms per call ({_verdicts(raw.statuses)}); its CPU time {raw.cpu_seconds:.1f} s"
        f" ({raw.cpu_seconds / raw.seconds:.0%} of the wall: the rest is other load); reading"
        f" the data {raw.load_seconds:.1f} s"
        f" more, importing the source {raw.import_seconds:.2f} s (not in the raw time)"
    )
    if par:
        print(
            "  raw x{}: the tasks split over {} processes started together, in shares of"
            " equal raw time; their call times {} s (CPU {} s): side by side, {:+.0%}"
            " against alone".format(
                len(par["seconds"]),
                len(par["seconds"]),
                " / ".join(f"{x:.1f}" for x in par["seconds"]),
                " / ".join(f"{x:.1f}" for x in par["cpu_seconds"]),
                sum(par["seconds"]) / raw.seconds - 1,
            )
        )
    if image:
        print(
            f"  raw in image: the same loop in one container of the runtime image, python"
            f" {image['python']} (the interpreter the docker backend runs programs with);"
            f" CPU {image['cpu_seconds']:.1f} s; {raw.seconds / image['seconds']:.2f}x as fast"
            f" as this process's python {sys.version.split()[0]}"
        )
    for r in runs:
        print(
            f"  {r['label']}: setup {r['setup']:.2f} s, sandbox start {r['start']:.2f} s, "
            f"Validator.run {r['run']:.1f} s, close {r['close']:.2f} s, outputs "
            f"{r['outputs']:.2f} s; harness CPU in run {r['harness_cpu_run']:.1f} s; machine"
            f" busy {r['machine_busy']:.1f} s of {os.cpu_count()} x {r['process_wall']:.1f} s"
            + (
                "; walls of the repeats " + ", ".join(f"{w:.1f}" for w in r["walls"]) + " s"
                if len(r.get("walls", [])) > 1
                else ""
            )
        )
    print("\ntargets:")
    ok = True
    for r in runs:
        if r["label"].endswith("warm"):
            continue
        rows = [
            (
                f"{r['label']} wall / raw",
                f"<= {TARGET_RATIO:g}",
                f"{r['wall'] / raw.seconds:.3f}",
                r["wall"] / raw.seconds <= TARGET_RATIO,
            ),
            (
                f"{r['label']} harness peak memory",
                "< 1 GiB",
                _mib(r["maxrss_bytes"]),
                r["maxrss_bytes"] < TARGET_MEMORY,
            ),
        ]
        for what, target, got, passed in rows:
            ok = ok and passed
            print(f"  {what:<50} {target:<10} {got:<10} {'PASS' if passed else 'MISS'}")
    notes = []
    for r in runs:
        if r["label"].endswith("warm"):
            continue
        if r.get("sandbox_cpu") is not None:
            demand = r["harness_cpu"] + r["sandbox_cpu"]
            cores = os.cpu_count() or 1
            notes.append(
                f"{r['label']}: CPU used by the harness and the sandbox {demand:.1f} s -> even"
                f" with the {cores} cores to itself the run needs >= {demand / cores:.1f} s ="
                f" {demand / cores / raw.seconds:.3f}x raw"
            )
        if par:
            notes.append(
                f"{r['label']}: {r['wall'] / par['wall']:.2f}x the wall of raw x"
                f"{len(par['seconds'])} processes ({par['wall']:.1f} s, the best 2 cores give)"
            )
        if image and r["backend"] == "docker":
            notes.append(
                f"{r['label']}: {r['wall'] / image['seconds']:.3f}x raw in the image"
                f" ({image['seconds']:.1f} s, same interpreter as its workers)"
            )
    for note in notes:
        print(f"  note: {note}")
    return ok


def print_profile(raw: RawResult, runs: list[dict], probes: list[dict], costs: dict) -> None:
    print("\nprofile (where the time goes):")
    print(
        f"  compile in-process: sliced program {costs['program_lines']} lines /"
        f" {costs['program_bytes']} bytes: {1000 * costs['program_compile']:.2f} ms"
    )
    if "dsl_compile" in costs:
        print(
            f"  compile in-process: dsl.py {costs['dsl_lines']} lines:"
            f" {1000 * costs['dsl_compile']:.2f} ms; a {costs['big_dsl_lines']}-line dsl.py"
            f" (RE-ARC size): {1000 * costs['big_dsl_compile']:.1f} ms (paid by every program"
            f" load: nothing is cached between programs)"
        )
    raw_ms = 1000 * raw.seconds / raw.calls
    for p in probes:
        per_program = p["trivial"] - p["raw_one"]
        load = p["verifier"] - p["trivial"] - p["raw_one"]
        per_input = (p["trivial_batch"] - p["trivial"]) / (p["batch"] - 1)
        line = (
            f"  {p['backend']} (1 worker): trivial program on 1 input {1000 * p['trivial']:.2f} ms;"
            f" task {p['task']}'s sliced verifier on 1 input {1000 * p['verifier']:.2f} ms"
            f" (raw call {1000 * p['raw_one']:.2f} ms) -> load cost {1000 * load:.2f} ms"
        )
        if "import_dsl" in p:
            line += f" (of which 'from dsl import *' {1000 * (p['import_dsl'] - p['trivial']):.2f})"
        print(line)
        print(
            f"      per-input overhead {1000 * per_input:.3f} ms (trivial program on"
            f" {p['batch']} inputs {1000 * p['trivial_batch']:.1f} ms)"
        )
        for r in runs:
            if r["backend"] != p["backend"] or r["label"].endswith("warm"):
                continue
            fixed = r["jobs"] * (per_program + max(0.0, load))
            inputs = r["inputs"] * per_input
            need = raw.seconds + fixed + inputs
            harness_ms = 1000 * r["harness_cpu"] / max(1, r["inputs"])
            print(
                f"      {r['label']}: {r['jobs']} programs x"
                f" {1000 * (per_program + max(0.0, load)):.1f} ms = {fixed:.1f} s;"
                f" {r['inputs']} inputs x {1000 * per_input:.3f} ms = {inputs:.1f} s; calls"
                f" (raw) {raw.seconds:.1f} s ({raw_ms:.3f} ms each) -> sandbox work ~{need:.1f}"
                f" s; harness CPU {r['harness_cpu']:.1f} s ({harness_ms:.3f}"
                f" ms per input); machine busy {r['machine_busy']:.1f} s of"
                f" {os.cpu_count()} x {r['process_wall']:.1f} s"
            )
            workers = r["workers"]
            best = max((need + r["harness_cpu"]) / (os.cpu_count() or 1), need / workers)
            print(
                f"      lower bound on wall with {workers} workers on {os.cpu_count()} cores:"
                f" ~{best:.1f} s = {best / raw.seconds:.3f} x raw"
            )


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks-dir", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--arcgen-dir", type=Path, default=DEFAULT_ARCGEN)
    parser.add_argument("--kind", choices=("re-arc", "golf"), default="re-arc")
    parser.add_argument("--backends", default="process,docker", help="comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--chunk", type=int, default=0, help="ValidateConfig.chunk (0: its default, as validate)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="cold validate runs per backend (best kept)"
    )
    parser.add_argument(
        "--also-chunk",
        type=int,
        default=0,
        help="also a cold validate per backend with this chunk (e.g. 512: 1 program per task)",
    )
    parser.add_argument("--tasks-limit", type=int, default=0, help="first N tasks only (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assignments", type=int, default=9000, help="total, over 400 tasks")
    parser.add_argument("--ms-per-call", type=float, default=2.0, help="calibration target")
    parser.add_argument("--scale", type=float, default=None, help="skip calibration")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-cache runs")
    parser.add_argument("--profile", action="store_true", help="measure where the time goes")
    parser.add_argument(
        "--cprofile", action="store_true", help="one extra process run under cProfile"
    )
    parser.add_argument("--keep", type=Path, default=None, help="work in DIR and keep it")
    parser.add_argument(
        "--raw-parallel",
        action="store_true",
        help="also run raw as --workers processes at once (what 2 cores give at best)",
    )
    parser.add_argument(
        "--raw-in-image",
        action="store_true",
        help="also run raw in one container of the runtime image (its interpreter)",
    )
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--raw-child", type=Path, default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


@contextlib.contextmanager
def work_dir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="validate-full-") as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        print(json.dumps(child_validate(json.loads(args.child.read_text()))))
        return 0
    if args.raw_child is not None:
        print(json.dumps(raw_child(json.loads(args.raw_child.read_text()))))
        return 0
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    from arcjudge.tasks import task_files

    all_ids = [p.stem for p in task_files(args.tasks_dir)]
    task_ids = all_ids[: args.tasks_limit] if args.tasks_limit > 0 else all_ids
    print(f"python {sys.version.split()[0]}, {_load_note()}")
    print(code_state())
    with work_dir(args.keep) as work:
        tasks_dir = args.tasks_dir
        if len(task_ids) < len(all_ids):  # a task directory with only the first N tasks
            tasks_dir = work / "tasks"
            tasks_dir.mkdir(exist_ok=True)
            for t in task_ids:
                link = tasks_dir / f"{t}.json"
                if not link.exists():
                    link.symlink_to((args.tasks_dir / f"{t}.json").resolve())
        t0 = _now()
        arcgen_dir, arcgen = usable_arcgen(args.arcgen_dir, work, task_ids)
        print(
            f"data: {len(task_ids)} tasks, {arcgen['pairs']} ARC-GEN pairs the harness can read"
            f" (checked in {_now() - t0:.1f} s)"
        )
        if arcgen["dropped"]:
            lost = sum(n for n, _ in arcgen["dropped"].values())
            print(
                f"  WARNING: {lost} ARC-GEN pairs in {len(arcgen['dropped'])} files break the"
                " grid rules (> 30 rows or columns) and make load_arcgen_pairs reject the whole"
                " file, which stops validate; left out here: "
                + ", ".join(f"{t} {n}/{m}" for t, (n, m) in sorted(arcgen["dropped"].items()))
            )
        total = round(args.assignments * len(task_ids) / len(all_ids))
        plans = plan_source(task_ids, args.seed, args.kind == "golf", total)
        source_dir = work / "source"
        if args.scale is None:
            print(f"calibrating to {args.ms_per_call} ms per call ...", flush=True)
            scale, lines = calibrate(
                plans, args.kind, source_dir, tasks_dir, arcgen_dir, args.ms_per_call
            )
            for line in lines:
                print(f"  {line}")
        else:
            scale = args.scale
        write_source(source_dir, args.kind, plans, scale)
        n_assign = sum(len(p.steps) for p in plans)
        ops = Counter(s.op for p in plans for s in p.steps)
        print(
            f"source: {args.kind}, {len(plans)} tasks, {n_assign} assignments "
            f"(min {min(len(p.steps) for p in plans)}, max {max(len(p.steps) for p in plans)}),"
            f" {len(ops)} distinct ops, smoothing scale {scale:.3f}; written to {source_dir}"
        )
        print(f"running raw (in-process, 1 core) over {len(task_ids)} tasks ...", flush=True)
        raw = run_raw(source_dir, args.kind, task_ids, tasks_dir, arcgen_dir, golf_numbers())
        print(
            f"  raw: {raw.calls} calls in {raw.seconds:.1f} s"
            f" ({1000 * raw.seconds / raw.calls:.3f} ms per call)",
            flush=True,
        )
        raw_spec = {
            "kind": args.kind,
            "source_dir": str(source_dir),
            "task_ids": list(task_ids),
            "tasks_dir": str(tasks_dir),
            "arcgen_dir": str(arcgen_dir),
            "numbers": golf_numbers(),
        }
        extra_raw: dict[str, dict] = {}
        if args.raw_parallel:
            print(f"running raw x{args.workers} (processes at once) ...", flush=True)
            cost = {t: seconds for t, (_, seconds) in raw.per_task.items()}
            extra_raw["parallel"] = run_raw_parallel(raw_spec, work, cost, args.workers)
            print(f"  raw x{args.workers}: {extra_raw['parallel']['wall']:.1f} s", flush=True)
        if args.raw_in_image:
            from arcjudge.sandbox.docker import expected_image

            image = expected_image()
            print(f"running raw in the image {image} ...", flush=True)
            mounts = [args.tasks_dir, args.arcgen_dir]
            extra_raw["image"] = run_raw_in_image(raw_spec, work, image, mounts)
            print(f"  raw in the image: {extra_raw['image']['seconds']:.1f} s", flush=True)
        runs = []
        specs = []
        if not args.chunk:
            from arcjudge.harness.validate.validator import ValidateConfig

            args.chunk = ValidateConfig(tasks_dir, sources=()).chunk
        for backend in backends:
            store = work / f"store-{backend}" / "cache.sqlite"
            if store.parent.exists():
                shutil.rmtree(store.parent)
            base = {
                "kind": args.kind,
                "source_dir": str(source_dir),
                "tasks_dir": str(tasks_dir),
                "arcgen_dir": str(arcgen_dir),
                "backend": backend,
                "workers": args.workers,
                "store": str(store),
                "out": str(work / f"out-{backend}"),
                "chunk": args.chunk,
            }
            name = f"validate {backend}-{args.workers} chunk {args.chunk}"
            specs.append({**base, "label": name, "fresh": True})
            if not args.no_warm:
                specs.append({**base, "label": f"{name} warm"})
            if args.also_chunk:
                specs.append(
                    {
                        **base,
                        "chunk": args.also_chunk,
                        "store": str(work / f"store-{backend}-chunk" / "cache.sqlite"),
                        "out": str(work / f"out-{backend}-chunk"),
                        "label": f"validate {backend}-{args.workers} chunk {args.also_chunk}",
                        "fresh": True,
                    }
                )
        if args.cprofile:
            store = work / "store-cprofile" / "cache.sqlite"
            if store.parent.exists():
                shutil.rmtree(store.parent)
            specs.append(
                {
                    **specs[0],
                    "backend": "process",
                    "store": str(store),
                    "out": str(work / "out-cprofile"),
                    "label": f"validate process-{args.workers} chunk {args.chunk} cProfile",
                    "cprofile": True,
                    "fresh": True,
                }
            )
        for spec in specs:
            tries = []
            for _ in range(args.repeat if spec.get("fresh") and not spec.get("cprofile") else 1):
                if spec.get("fresh") and Path(spec["store"]).parent.exists():
                    shutil.rmtree(Path(spec["store"]).parent)
                print(f"running {spec['label']} ... ({_load_note()})", flush=True)
                result = spawn_validate(spec, work)
                print(
                    f"  {spec['label']}: {result['wall']:.1f} s"
                    f" ({result['wall'] / raw.seconds:.3f}x raw), harness CPU"
                    f" {result['harness_cpu']:.1f} s, sandbox CPU {_cpu(result['sandbox_cpu'])},"
                    f" machine busy {result['machine_busy']:.1f} s, peak RSS"
                    f" {_mib(result['maxrss_bytes'])}",
                    flush=True,
                )
                tries.append(result)
            result = min(tries, key=lambda r: r["wall"])
            result.update(
                label=spec["label"],
                backend=spec["backend"],
                workers=args.workers,
                walls=[r["wall"] for r in tries],
            )
            runs.append(result)
        probes, costs = [], {}
        if args.profile:
            print("profiling ...", flush=True)
            costs = compile_costs(source_dir, args.kind, task_ids[0])
            for backend in backends:
                probes.append(
                    profile_backend(backend, args.kind, source_dir, task_ids, tasks_dir, arcgen_dir)
                )
    timed = [r for r in runs if not r.get("cprofile")]
    ok = print_results(raw, timed, len(task_ids), extra_raw)
    if args.profile:
        print_profile(raw, timed, probes, costs)
    for r in runs:
        if r.get("cprofile"):
            print(
                f"\n{r['label']}: {r['wall']:.1f} s; the harness's hottest functions by CPU time"
                " (thread_time, all threads; waiting is not counted):"
            )
            print(textwrap.indent(r["cprofile"].strip(), "  "))
    print(f"\n{_load_note()} (at the end)")
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
