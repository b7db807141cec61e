"""Synthetic verifier sources for ``validate_full.py`` (our own code, never RE-ARC's).

``bench/synthetic/dsl.py`` is a tiny grid DSL (tuple-of-tuples grids, frozenset cell
sets). A source is one seeded random straight-line chain of DSL calls per task:

* ``re-arc``: ``dsl.py`` (copied byte for byte) and ``verifiers.py`` (``from dsl import
  *``, one ``verify_<task_id>(I)`` per task);
* ``golf``: one ``taskNNN.py`` per task (NNN = 1-based index of the task id among the
  sorted training ids), the lambda forms of the DSL functions it uses and ``p``.

The repeat counts of the smoothing steps are ``floor(scale * r + u)`` with ``r`` and
``u`` drawn with the plan, so one ``scale`` sets the mean cost and the calibration can
re-render the same plans at another scale.
"""

from __future__ import annotations

import ast
import math
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DSL = Path(__file__).resolve().parents[1] / "synthetic" / "dsl.py"

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
    tree = ast.parse(DSL.read_bytes())
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
        (directory / "dsl.py").write_bytes(DSL.read_bytes())
        (directory / "verifiers.py").write_text(render_rearc(plans, scale))
        return
    info = dsl_info()
    numbers = golf_numbers()
    for plan in plans:
        (directory / f"task{numbers[plan.task_id]:03d}.py").write_text(
            render_golf(plan, scale, info)
        )
