"""Issue 17's acceptance check: synthetic answerers of known behaviour, every table as built.

Shared by ``tests/end_to_end/test_analyze_synthetic.py`` (a dozen tasks) and
``bench/analyze_synthetic.py`` (the 400 ARC-AGI-1 training tasks); importable as
``tests.support.synthetic_analysis`` because pytest puts the checkout on ``sys.path`` (the
benchmark puts it there itself). Everything
runs through the ``arcjudge`` command line:

1. the inputs, all of our own and written from the data (``tests/support/oracle_pipeline.py``):
   the tasks and their ARC-GEN files, one lookup-table verifier per task (valid by
   construction), a generator per task in the ARC-GEN layout that draws one of the
   task's ARC-GEN pairs (so valid candidates are generator samples), an H-ARC style
   human-error file, a ``corruptions.jsonl`` (corrupted-verifier pairs, one per task on a
   demonstration input, which the build must drop) and a neighbours file;
2. ``validate``, one ``dimensions build --generator --repeats 6 --configurations 2``
   (``dims/configuration-1``, the plain build, and ``dims/configuration-2``, seed
   77 + 1,000,000), and ``bench/check_build.py --strict`` on each configuration (Editing
   only from the study's three types, no candidate with a demonstration input, valid
   candidates and Inversion instances generator samples);
3. per configuration, from its own instances' keys, answers (the ``dimensions score
   --answers`` JSONL) and Definition programs of six synthetic answerers whose every
   number is known from how they were made (:func:`construct`): ``oracle`` (right
   everywhere), ``always_valid`` and ``always_invalid`` (Classification's trivial
   answerers; ``always_valid`` also answers the other dimensions in fixed, known ways),
   ``one_type_wrong`` (the oracle, but every candidate of one type judged wrong),
   ``two_runs`` (two runs passing all five dimensions on constructed task sets, other
   sets in each configuration, failing Definition by a known class elsewhere) and
   ``six_runs`` (six runs, Section 3.1's repeats, failing dimensions by a seeded draw per
   configuration, task and run);
4. per configuration ``arcjudge score`` of the programs (in the sandbox: they are
   untrusted code) with the configuration's seed (its Definition sees its own generator
   samples), ``dimensions score --answers --definitions --programs`` (configuration 2
   ``--after`` configuration 1's items: a Generation pair accepted there is a copy), then
   one ``dimensions analyze --configuration``;
5. every item of each configuration against its constructed outcome, then every section
   of ``analysis.json`` against numbers computed here from the construction (counts,
   textbook Wilson intervals, products, set sizes, Section 3.1's trials listed one by one
   with exact fractions and scipy's p-values on the vectors so made, Table 6's means and
   sample standard deviations; no arcjudge function): :data:`SECTION_CHECKS` has one check
   function per section, and a section without one fails the run.

Generation is scored with ``--min-distance 0``: a pair is then a copy of a demonstration
exactly when both its grids equal the demonstration's, which this module can tell without
the distance (the build's references are no copies at the default either).

:func:`run_pipeline` returns a :class:`Report`; its failed checks are empty exactly when
every check held.
"""

from __future__ import annotations

import csv
import functools
import itertools
import json
import math
import random
import statistics
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    CANDIDATE_KINDS,
    CONSISTENCY_DIMENSIONS,
    DIMENSIONS,
    FAILURE_CLASSES,
    CandidateKind,
    Dimension,
)
from tests.support.oracle_pipeline import (
    Grid,
    Runner,
    arcgen_pairs,
    compact_json,
    copy_inputs,
    lookup_source,
    oracle_answer,
    read_jsonl,
    write_corruptions,
    write_generators,
    write_human_errors,
    write_jsonl,
    write_neighbours,
    write_verifiers,
)

CHECK_BUILD = Path(__file__).resolve().parents[2] / "bench" / "check_build.py"

ORACLE = "oracle"
ALWAYS_VALID = "always_valid"
ALWAYS_INVALID = "always_invalid"
ONE_TYPE_WRONG = "one_type_wrong"
TWO_RUNS = "two_runs"
SIX_RUNS = "six_runs"
MODELS = (ALWAYS_INVALID, ALWAYS_VALID, ONE_TYPE_WRONG, ORACLE, SIX_RUNS, TWO_RUNS)  # sorted

REPEATS = 6
"""``six_runs``' runs, and the build's ``--repeats`` (Section 3.1 needs at least five)."""

BUDGET = 5
"""Section 3.1's probes per trial: the five dimensions once, or one of them five times."""

CONFIGURATIONS = 2
"""The build's ``--configurations`` (Section 3.2): every answerer answers each one."""

SIX_RUNS_LEVELS = (0.0, 0.2, 0.0, 0.4)
"""``six_runs``' failure probability per dimension and run, by task position ``i % 4``.

Half the tasks without a failure: their differences are zero, so with a dozen tasks the
signed-rank test has six or fewer (below 14 differences with ties, scipy's p-value
enumerates every sign pattern: 2^12 of them take seconds per test)."""

WRONG_KIND = CandidateKind.CORRUPTED_VERIFIER
"""The candidate type ``one_type_wrong`` judges wrong (every other one right)."""

EXCLUDED = ALWAYS_VALID
"""Table 9's ``--exclude-model``."""

POOLED = "(all models)"
"""The analysis' label of rows pooled over every model."""

FULL_TASK = "full_task"
"""The full-task measure's name beside the dimensions."""

TABLES = (
    "table3",
    "denominators",
    "tasks_left_out",
    "generation_control",
    "table1",
    "classification_types_pooled",
    "classification_baselines",
    "table4",
    "table5",
    "table7",
    "table9",
    "matched_budget",
    "matched_budget_dimensions",
    "table6",
)
"""The table files ``dimensions analyze`` writes (each as .csv and .md)."""

MIN_DISTANCE = "0"

# ---------------------------------------------------------------------------- programs

LOOKUP, IDENTITY, SHIFT, STATIC, RUNTIME = "lookup", "identity", "shift", "static", "runtime"

SOURCES = {
    IDENTITY: "def transform(grid):\n    return [list(row) for row in grid]\n",
    SHIFT: "def transform(grid):\n    return [[(c + 1) % 10 for c in row] for row in grid]\n",
    STATIC: "def transform(grid):\n    return [row for row in grid\n",
    RUNTIME: "def transform(grid):\n    raise RuntimeError('a synthetic runtime failure')\n",
}
"""The Definition programs besides the lookup table (which is per task): what each does is
known for every input (:func:`behaviour`)."""

FAILING = (STATIC, RUNTIME, SHIFT)
"""``two_runs``' failing programs, in rotation: one per failure class."""

FAILURE_OF = {STATIC: "static", RUNTIME: "runtime", SHIFT: "rule", IDENTITY: "rule"}
"""The failure class of each program kind when it fails (the lookup table never does)."""


def shifted(grid: Grid) -> Grid:
    """Every cell one color up (mod 10)."""
    return [[(c + 1) % 10 for c in row] for row in grid]


@dataclass(frozen=True)
class TaskData:
    """A task's pairs, read here with plain JSON, and its lookup verifier's table."""

    train: list[list[Grid]]
    test: list[list[Grid]]
    arcgen: list[list[Grid]]
    keys: list[str]  # compact input of each pair of train + test + arcgen, in that order
    table: dict[str, Grid]  # the lookup verifier: compact input -> output
    verdicts: dict[tuple[str, bool], bool] = field(default_factory=dict, compare=False)

    def verifier(self, grid: Grid) -> Grid | None:
        """What the lookup-table verifier returns (``None``: it raises)."""
        return self.table.get(compact_json(grid))

    def valid(self, pair: Sequence[Grid]) -> bool:
        """Whether the verifier maps the pair's input to its output."""
        return self.verifier(pair[0]) == pair[1]

    def right(self, kind: str, everywhere: bool) -> bool:
        """Whether a program of this kind is right on every train and test pair, and with
        ``everywhere`` on every ARC-GEN pair too (remembered)."""
        if (kind, everywhere) not in self.verdicts:
            pairs = [*self.train, *self.test, *(self.arcgen if everywhere else [])]
            if kind == LOOKUP:  # the table's answer for each pair's input
                found = all(
                    self.table[k] == p[1]
                    for k, p in zip(self.keys[: len(pairs)], pairs, strict=True)
                )
            else:
                found = all(behaviour(kind, self, p[0]) == p[1] for p in pairs)
            self.verdicts[(kind, everywhere)] = found
        return self.verdicts[(kind, everywhere)]


def read_task(tasks_dir: Path, arcgen_dir: Path, task_id: str) -> TaskData:
    """A task's pairs and its lookup verifier's table (as ``lookup_source`` builds it)."""
    task = json.loads((tasks_dir / f"{task_id}.json").read_text())
    train = [[p["input"], p["output"]] for p in task["train"]]
    test = [[p["input"], p["output"]] for p in task["test"]]
    arcgen = arcgen_pairs(arcgen_dir, task_id)
    keys = [compact_json(i) for i, _ in [*train, *test, *arcgen]]
    table = {k: p[1] for k, p in zip(keys, [*train, *test, *arcgen], strict=True)}
    return TaskData(train, test, arcgen, keys, table)


def behaviour(kind: str, data: TaskData, grid: Grid) -> Grid | None:
    """What a program of this kind returns for an input (``None``: no grid)."""
    if kind == LOOKUP:
        return data.verifier(grid)
    if kind == IDENTITY:
        return [list(row) for row in grid]
    if kind == SHIFT:
        return shifted(grid)
    return None  # static: never loads; runtime: always raises


def passes(kind: str | None, data: TaskData) -> bool:
    """The Definition verdict: right on train, test and ARC-GEN pairs.

    (The generator samples ``score`` adds are ARC-GEN pairs, by construction.)
    """
    return kind is not None and data.right(kind, everywhere=True)


# ---------------------------------------------------------------------------- construction

Cell = tuple[str, str, str]  # (model, run, task)
ItemKey = tuple[str, str, str, str]  # (model, run, task, dimension)


@dataclass
class Consistency:
    """The expected ``consistency`` of an item: agreement, and whether each answer was right."""

    passes_train_test: bool
    agree: list[bool]  # one per judgment (Classification), else one
    right: list[bool]


@dataclass
class Construction:
    """The synthetic answerers, what they answered, and what each item must come out as."""

    tasks: list[str]
    data: dict[str, TaskData]
    instances: dict[tuple[str, str], dict[str, Any]]
    answers: dict[ItemKey, Any] = field(default_factory=dict)
    programs: dict[Cell, str] = field(default_factory=dict)  # -> program kind
    passed: dict[ItemKey, bool] = field(default_factory=dict)  # every expected item
    wrong_slots: dict[ItemKey, list[int]] = field(default_factory=dict)  # judged items
    exact: dict[ItemKey, bool] = field(default_factory=dict)  # answered generation items
    consistency: dict[ItemKey, Consistency] = field(default_factory=dict)
    sets: dict[str, set[str]] = field(default_factory=dict)  # two_runs: run -> tasks
    full: list[str] = field(default_factory=list)  # tasks with all five instances
    counted: list[str] = field(default_factory=list)  # full task's tasks: every built one
    passable: list[str] = field(default_factory=list)  # where the oracle passes all five
    configuration: int = 1  # of the build's configurations
    earlier: dict[Cell, list[list[Grid]]] = field(default_factory=dict)  # accepted before
    later: list[Construction] = field(default_factory=list)  # configurations 2, 3, ...

    def accepted(self) -> dict[Cell, list[list[Grid]]]:
        """The Generation pairs each (model, run, task) had accepted up to this configuration.

        (What ``dimensions score --after`` reads from the earlier items: the pairs of
        passed Generation items, earlier configurations first.)
        """
        found = {cell: list(pairs) for cell, pairs in self.earlier.items()}
        for key, answer in sorted(self.answers.items()):
            if key[3] == Dimension.GENERATION and self.passed[key]:
                pair = [answer["input"], answer["output"]]
                pairs = found.setdefault(key[:3], [])
                if pair not in pairs:
                    pairs.append(pair)
        return found

    def runs(self, model: str) -> list[str]:
        """The runs of a model, sorted as text."""
        return sorted({r for m, r, _, _ in self.passed if m == model})

    def items(self, model: str | None = None, dim: str | None = None) -> list[ItemKey]:
        """The expected items (of a model, of a dimension), in sorted order."""
        return sorted(
            k for k in self.passed if (model is None or k[0] == model) and (dim in (None, k[3]))
        )

    def count(self, keys: Iterable[ItemKey]) -> tuple[int, int]:
        """``(passed, items)`` of these items."""
        found = [self.passed[k] for k in keys]
        return sum(found), len(found)


def _pair(value: Mapping[str, Any] | None) -> list[Grid] | None:
    return None if value is None else [value["input"], value["output"]]


def unknown_grid(data: TaskData) -> Grid:
    """A grid that is no known input of the task (the lookup verifier raises on it)."""
    for side in range(1, 31):
        grid = [[0] * side]
        if compact_json(grid) not in data.table:
            return grid
    raise ValueError("every 1-row grid of zeros is a known input")  # never for ARC tasks


class _Builder:
    """Writes one model's answers into the construction, with each item's expected outcome."""

    def __init__(self, c: Construction, model: str, run: str) -> None:
        self.c, self.model, self.run = c, model, run

    def key(self, task: str, dim: str) -> ItemKey:
        return (self.model, self.run, task, dim)

    def answer(self, task: str, dim: str, answer: Any, passed: bool) -> None:
        """An answer and whether its item must pass (``answer`` ``None``: no answer line)."""
        key = self.key(task, dim)
        if answer is not None:
            self.c.answers[key] = answer
        self.c.passed[key] = passed and answer is not None

    def output_grid(self, task: str, outputs: list[Grid]) -> None:
        tests = self.c.instances[(task, Dimension.OUTPUT_GRID)]["key"]["test_outputs"]
        self.answer(task, Dimension.OUTPUT_GRID, [[g] for g in outputs], outputs == tests)

    def classification(self, task: str, judged: list[str] | None) -> None:
        labels = self.c.instances[(task, Dimension.CLASSIFICATION)]["key"]["labels"]
        self.answer(task, Dimension.CLASSIFICATION, judged, judged == labels)
        if judged is not None:
            wrong = [
                i for i, (j, label) in enumerate(zip(judged, labels, strict=True)) if j != label
            ]
            self.c.wrong_slots[self.key(task, Dimension.CLASSIFICATION)] = wrong

    def generation(self, task: str, pair: list[Grid] | None) -> None:
        data = self.c.data[task]
        if pair is None:
            self.answer(task, Dimension.GENERATION, None, False)
            return
        copy = pair in data.train  # --min-distance 0: a copy is an equal demonstration
        copy = copy or pair in self.c.earlier.get((self.model, self.run, task), [])
        answer = {"input": pair[0], "output": pair[1]}
        self.answer(task, Dimension.GENERATION, answer, data.valid(pair) and not copy)
        self.c.exact[self.key(task, Dimension.GENERATION)] = pair in data.arcgen

    def editing(self, task: str, pair: list[Grid] | None, repaired: bool) -> None:
        answer = None if pair is None else {"input": pair[0], "output": pair[1]}
        self.answer(task, Dimension.EDITING, answer, repaired)

    def inversion(self, task: str, grid: Grid) -> None:
        shown = self.c.instances[(task, Dimension.INVERSION)]["prompt"]["output"]
        self.answer(task, Dimension.INVERSION, grid, self.c.data[task].verifier(grid) == shown)

    def definition(self, task: str, kind: str | None) -> None:
        if kind is not None:
            self.c.programs[(self.model, self.run, task)] = kind
        self.c.passed[self.key(task, Dimension.DEFINITION)] = passes(kind, self.c.data[task])

    def fail(self, task: str, dim: str, k: int, answer: bool = True) -> None:
        """Fail a dimension on purpose (``k`` picks Definition's failure class).

        Definition: the failing program ``FAILING[k % 3]``; Classification: the first
        judgment flipped (no answer without ``answer``); Generation: the first
        demonstration (a copy); Editing: the shown pair unchanged; Inversion: an input the
        verifier does not know.
        """
        data = self.c.data[task]
        if dim == Dimension.DEFINITION:
            self.definition(task, FAILING[k % 3])
        elif dim == Dimension.CLASSIFICATION:
            labels = list(self.c.instances[(task, dim)]["key"]["labels"])
            labels[0] = "invalid" if labels[0] == "valid" else "valid"
            self.classification(task, labels if answer else None)
        elif dim == Dimension.GENERATION:
            self.generation(task, data.train[0])
        elif dim == Dimension.EDITING:
            self.editing(task, *_unchanged(self.c, task))
        elif dim == Dimension.INVERSION:
            self.inversion(task, unknown_grid(data))
        else:
            raise ValueError(f"no way to fail {dim} on purpose")

    def oracle(self, task: str, dims: Iterable[str]) -> None:
        """The oracle's answers (from the instances' keys) for these dimensions."""
        for dim in dims:
            instance = self.c.instances.get((task, dim))
            if instance is None:
                continue
            if dim == Dimension.OUTPUT_GRID:
                self.output_grid(task, instance["key"]["test_outputs"])
            elif dim == Dimension.CLASSIFICATION:
                self.classification(task, list(instance["key"]["labels"]))
            elif dim == Dimension.GENERATION:
                self.generation(task, _pair(instance["key"]["reference"]))
            elif dim == Dimension.EDITING:
                ref = instance["key"]["reference_edit"]
                self.editing(task, _pair(ref), ref is not None)
            elif dim == Dimension.INVERSION:
                self.inversion(task, oracle_answer(instance, ""))
            elif dim == Dimension.DEFINITION:
                self.definition(task, LOOKUP)


def _unchanged(c: Construction, task: str) -> tuple[list[Grid], bool]:
    """The Editing answer that repairs nothing (the shown pair), and whether it passes.

    (Within the distance limit; valid exactly when the verifier maps its input to its
    output, which it never does for a pair the build confirmed invalid.)
    """
    pair = _pair(c.instances[(task, Dimension.EDITING)]["prompt"])
    assert pair is not None
    return pair, c.data[task].valid(pair)


def in_two_runs_set(configuration: int, run: str, position: int) -> bool:
    """Whether ``two_runs``' run passes all five at this position (of the full tasks).

    Configuration 1: run ``1`` at ``i % 3 != 2``, run ``2`` at ``i % 3 != 0`` (sets A and
    B); configuration 2: run ``1`` at ``i % 2 == 0``, run ``2`` at ``i % 4 != 3``.
    """
    if configuration == 1:
        return position % 3 != (2 if run == "1" else 0)
    return position % 2 == 0 if run == "1" else position % 4 != 3


def six_runs_failures(c: Construction, position: int, task: str, run: str) -> list[str]:
    """The dimensions ``six_runs`` fails in this run on this task (of those it has).

    A seeded draw per (configuration, task, run): each of the five dimensions fails with
    probability :data:`SIX_RUNS_LEVELS` ``[position % 4]``.
    """
    rng = random.Random(f"{SIX_RUNS}/{c.configuration}/{task}/{run}")
    level = SIX_RUNS_LEVELS[position % len(SIX_RUNS_LEVELS)]
    drawn = [str(d) for d in DIMENSIONS if rng.random() < level]
    return [d for d in drawn if (task, d) in c.instances]


def construct(c: Construction) -> Construction:
    """Every synthetic answerer's answers and programs, and what each item must be.

    Each configuration of the build is constructed on its own (from its own instances'
    keys), ``c.earlier`` holding the Generation pairs accepted in the earlier ones (which
    ``dimensions score --after`` makes copies).

    * ``oracle``: every answer from the instance's key, Definition the lookup table.
    * ``always_valid``: Classification all valid; output grid the first demonstration's
      output for every test input; Generation the first test pair (in configuration 2 a
      copy of the pair accepted in configuration 1 wherever it passed there); Editing the
      shown pair unchanged; Inversion the shown output itself; Definition the identity.
    * ``always_invalid``: Classification all invalid, nothing else (no program).
    * ``one_type_wrong``: the oracle, but every :data:`WRONG_KIND` candidate judged the
      other way.
    * ``two_runs``: each run passes all five dimensions on a set of tasks
      (:func:`in_two_runs_set` of the task's position among the tasks with all five
      instances, where the oracle passes all five): sets A and B in configuration 1,
      others in configuration 2. Elsewhere it answers as the oracle, and on the tasks with
      all five instances outside its run's set it fails Definition with a static, runtime
      or rule failure (in rotation, ``(i // 3) % 3``) and one more dimension
      (``(i // 3) % 4``: Classification with the first judgment flipped (run 1) or no
      answer (run 2), Generation with the first demonstration (a copy), Editing with the
      shown pair, Inversion with an unknown grid).
    * ``six_runs``: :data:`REPEATS` runs (Section 3.1's repeats), the oracle but for the
      dimensions :func:`six_runs_failures` draws, failed as ``two_runs`` fails them
      (Definition by the failure class ``(i + run) % 3``, Classification flipped).
    """
    all_dims = [str(d) for d in BUILT_DIMENSIONS]
    for task in c.tasks:
        _Builder(c, ORACLE, "1").oracle(task, all_dims)
    c.full = [t for t in c.tasks if all((t, d) in c.instances for d in DIMENSIONS)]
    # analyze's default (the study's): full task over every built task, a dimension
    # without an instance a failure (Table 6 stays over the complete tasks)
    c.counted = sorted({t for t, _ in c.instances})
    c.passable = [t for t in c.full if all(c.passed[(ORACLE, "1", t, d)] for d in DIMENSIONS)]
    for task in c.tasks:
        data = c.data[task]
        has = {str(d) for d in BUILT_DIMENSIONS if (task, d) in c.instances}
        b = _Builder(c, ALWAYS_VALID, "1")
        if Dimension.OUTPUT_GRID in has:
            b.output_grid(task, [data.train[0][1] for _ in data.test])
        if Dimension.CLASSIFICATION in has:
            b.classification(task, ["valid"] * 5)
            _Builder(c, ALWAYS_INVALID, "1").classification(task, ["invalid"] * 5)
        if Dimension.GENERATION in has:
            b.generation(task, data.test[0])
        if Dimension.EDITING in has:
            b.editing(task, *_unchanged(c, task))
        if Dimension.INVERSION in has:
            b.inversion(task, c.instances[(task, Dimension.INVERSION)]["prompt"]["output"])
        if Dimension.DEFINITION in has:
            b.definition(task, IDENTITY)
            _Builder(c, ALWAYS_INVALID, "1").definition(task, None)  # no program: fails
        w = _Builder(c, ONE_TYPE_WRONG, "1")
        w.oracle(task, [d for d in all_dims if d != Dimension.CLASSIFICATION])
        if Dimension.CLASSIFICATION in has:
            key = c.instances[(task, Dimension.CLASSIFICATION)]["key"]
            flip = {"valid": "invalid", "invalid": "valid"}
            judged = [
                flip[label] if kind == WRONG_KIND else label
                for label, kind in zip(key["labels"], key["kinds"], strict=True)
            ]
            w.classification(task, judged)
    position = {t: i for i, t in enumerate(c.full)}
    passable = set(c.passable)
    c.sets = {
        run: {t for t in c.passable if in_two_runs_set(c.configuration, run, position[t])}
        for run in ("1", "2")
    }
    for run, chosen in c.sets.items():
        b = _Builder(c, TWO_RUNS, run)
        for task in c.tasks:
            if task not in position or task in chosen:
                b.oracle(task, all_dims)
                continue
            k = position[task] // 3
            fail = (
                Dimension.CLASSIFICATION,
                Dimension.GENERATION,
                Dimension.EDITING,
                Dimension.INVERSION,
            )[k % 4]
            b.oracle(task, [d for d in all_dims if d not in (fail, Dimension.DEFINITION)])
            b.fail(task, Dimension.DEFINITION, k)
            b.fail(task, fail, k, answer=run == "1")
    assert all(c.sets[r] <= passable for r in c.sets)
    for run in (str(r) for r in range(1, REPEATS + 1)):
        b = _Builder(c, SIX_RUNS, run)
        for i, task in enumerate(c.tasks):
            failing = six_runs_failures(c, i, task, run)
            b.oracle(task, [d for d in all_dims if d not in failing])
            for dim in failing:
                b.fail(task, dim, i + int(run))
    _expect_consistency(c)
    return c


def _expect_consistency(c: Construction) -> None:
    """Each item's self-consistency, from what its model's program does (:func:`behaviour`)."""
    for key, answer in c.answers.items():
        model, run, task, dim = key
        kind = c.programs.get((model, run, task))
        if kind is None or dim not in CONSISTENCY_DIMENSIONS:
            continue
        data = c.data[task]
        tt = data.right(kind, everywhere=False)  # static, runtime: never
        instance = c.instances[(task, dim)]
        if dim == Dimension.CLASSIFICATION:
            agree, right = [], []
            for pair, judged, label in zip(
                instance["prompt"]["candidates"], answer, instance["key"]["labels"], strict=True
            ):
                maps = behaviour(kind, data, pair["input"]) == pair["output"]
                agree.append((judged == "valid") == maps)
                right.append(judged == label)
            c.consistency[key] = Consistency(tt, agree, right)
        elif dim == Dimension.GENERATION:
            maps = behaviour(kind, data, answer["input"]) == answer["output"]
            c.consistency[key] = Consistency(tt, [maps], [c.passed[key]])
        else:
            maps = behaviour(kind, data, answer) == instance["prompt"]["output"]
            c.consistency[key] = Consistency(tt, [maps], [c.passed[key]])


def answer_records(c: Construction) -> list[dict[str, Any]]:
    """The answers file: one ``{task_id, dimension, model, run, answer}`` per answer."""
    return [
        {"task_id": t, "dimension": d, "model": m, "run": r, "answer": a}
        for (m, r, t, d), a in sorted(c.answers.items())
    ]


def program_records(c: Construction) -> list[dict[str, Any]]:
    """The programs file of ``arcjudge score``: ``{id, task_id, model, run, code}``."""
    tables: dict[str, str] = {}
    records = []
    for (model, run, task), kind in sorted(c.programs.items()):
        if kind == LOOKUP:
            if task not in tables:
                data = c.data[task]
                tables[task] = lookup_source([*data.train, *data.test, *data.arcgen])
            code = tables[task]
        else:
            code = SOURCES[kind]
        records.append(
            {
                "id": f"{model}/{run}/{task}",
                "task_id": task,
                "model": model,
                "run": run,
                "code": code,
            }
        )
    return records


# ---------------------------------------------------------------------------- expectations

Z = statistics.NormalDist().inv_cdf(0.975)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval (95%), from its textbook formula."""
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Near:
    """An expected number, compared within ``tol``."""

    value: float
    tol: float = 2e-6


def share(k: int, n: int) -> dict[str, Any] | None:
    """The expected ``{count, total, rate, ci95}`` of ``k`` out of ``n`` (``None`` if n is 0)."""
    if not n:
        return None
    low, high = wilson(k, n)
    return {"count": k, "total": n, "rate": Near(k / n), "ci95": [Near(low), Near(high)]}


def near(value: float | None) -> Near | None:
    """A number rounded to 6 decimals by the analysis."""
    return None if value is None else Near(value, 1.5e-6)


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where ``got`` (from ``analysis.json``) differs from ``want`` (``Near`` for numbers)."""
    if isinstance(want, Near):
        if isinstance(got, bool) or not isinstance(got, int | float):
            return [f"{path}: {got!r}, expected {want.value!r}"]
        return (
            []
            if abs(got - want.value) <= want.tol
            else [f"{path}: {got!r}, expected {want.value!r}"]
        )
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return [f"{path}: {str(got)[:80]}, expected an object"]
        found = [f"{path}.{k}: missing" for k in want if k not in got]
        found += [f"{path}.{k}: not expected ({str(got[k])[:60]})" for k in got if k not in want]
        for k in want:
            if k in got:
                found += differences(got[k], want[k], f"{path}.{k}")
        return found
    if isinstance(want, list | tuple):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {str(got)[:80]}, expected {len(want)} entries: {str(want)[:80]}"]
        return [
            d
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for d in differences(g, w, f"{path}[{i}]")
        ]
    if got != want or type(got) is not type(want):
        return [f"{path}: {str(got)[:80]}, expected {str(want)[:80]}"]
    return []


@dataclass
class Check:
    """One check: what it checked, whether it held, and the differences when not."""

    section: str
    name: str
    problems: list[str]

    @property
    def held(self) -> bool:
        """Whether the check held (no problem found)."""
        return not self.problems


def check(section: str, name: str, got: Any, want: Any) -> Check:
    """Compare a part of the analysis with its expectation."""
    return Check(section, name, differences(got, want, section))


def _measures(
    c: Construction, model: str, complete_only: bool = False
) -> dict[str, tuple[int, int] | None]:
    """``(passed, items)`` per dimension and full task of a model (``None``: no items)."""
    found: dict[str, tuple[int, int] | None] = {}
    for dim in BUILT_DIMENSIONS:
        keys = c.items(model, dim)
        found[str(dim)] = c.count(keys) if keys else None
    found[FULL_TASK] = _full_task(c, model, c.passed, complete_only)
    return found


def _full_task(
    c: Construction, model: str, passed: Mapping[ItemKey, bool], complete_only: bool = False
) -> tuple[int, int] | None:
    if any(not c.items(model, d) for d in DIMENSIONS):
        return None
    tasks = c.full if complete_only else c.counted
    cells = [(r, t) for r in c.runs(model) for t in tasks]
    ok = sum(all(passed.get((model, r, t, d), False) for d in DIMENSIONS) for r, t in cells)
    return ok, len(cells)


def _baseline(found: Mapping[str, tuple[int, int] | None]) -> float | None:
    rates = [found[str(d)] for d in DIMENSIONS]
    if any(r is None for r in rates):
        return None
    return math.prod(k / n for k, n in rates if n)  # type: ignore[misc]


def _as_share(value: tuple[int, int] | None) -> dict[str, Any] | None:
    return None if value is None else share(*value)


def check_inputs(data: Mapping[str, Any], c: Construction, paths: Mapping[str, str]) -> list[Check]:
    """``inputs``: what was read (counts, models, files).

    Only these fields are compared: ``inputs`` describes the run, and other fields a
    section may add there are that section's to check.
    """
    want = {
        "items": len(c.passed),
        "instances": len(c.instances),
        "definition_results": len(c.programs),
        "models": list(MODELS),
        "exclude_models": [EXCLUDED],
        "repeats": REPEATS,
        **paths,
    }
    got = {k: data[k] for k in want if k in data}
    return [check("inputs", "the files, counts and models read", got, want)]


def check_accuracy(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Table 3: per model, every measure's share, the baseline and the drop."""
    checks = [check("accuracy", "full tasks", data.get("full_tasks"), len(c.counted))]
    for model in MODELS:
        found = _measures(c, model)
        base = _baseline(found)
        grid, full = found[Dimension.OUTPUT_GRID], found["full_task"]
        drop = None
        if grid is not None and full is not None and full[1]:
            drop = grid[0] / grid[1] - full[0] / full[1]
        want = {
            "runs": c.runs(model),
            **{m: _as_share(v) for m, v in found.items()},
            "independence_baseline": near(base),
            "output_grid_drop": near(drop),
        }
        got = data.get("models", {}).get(model)
        checks.append(check("accuracy", f"Table 3 row {model}", got, want))
    got_models = sorted(data.get("models", {}))
    checks.append(check("accuracy", "Table 3's models", got_models, list(MODELS)))
    return checks


def check_denominators(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Full task's n per model (every built task x runs) and the tasks missing a dimension."""
    missing = {
        t: [str(d) for d in DIMENSIONS if (t, d) not in c.instances]
        for t in c.tasks
        if any((t, d) not in c.instances for d in DIMENSIONS)
    }
    models = {
        m: {"runs": len(c.runs(m)), "tasks": len(c.counted), "n": len(c.runs(m)) * len(c.counted)}
        for m in MODELS
    }
    built_but_skipped = sorted(set(data.get("not_built", {})) & set(c.tasks))
    return [
        check("denominators", "reading", data.get("full_task_over"), "every-task"),
        check("denominators", "tasks built", data.get("tasks_built"), len(c.tasks)),
        check("denominators", "complete tasks", data.get("complete_tasks"), len(c.full)),
        check("denominators", "full tasks", data.get("full_tasks"), len(c.counted)),
        check("denominators", "missing dimensions", data.get("missing_dimensions"), missing),
        check("denominators", "n per model", data.get("models"), models),
        check("denominators", "not built is not built", built_but_skipped, []),
    ]


def check_generation_control(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """The Constrained Generation control: passes equal to an ARC-GEN pair fail."""
    checks = []
    for model in MODELS:
        found = _measures(c, model)
        gen = found[Dimension.GENERATION]
        strict_passed = {k: v and not c.exact.get(k, False) for k, v in c.passed.items()}
        exact = None
        strict_gen = None
        if gen is not None:
            keys = c.items(model, Dimension.GENERATION)
            exact = sum(c.passed[k] and c.exact.get(k, False) for k in keys)
            strict_gen = (gen[0] - exact, gen[1])
        task, task_strict = found["full_task"], _full_task(c, model, strict_passed)
        change = None
        if task is not None and task_strict is not None and task[1]:
            change = task_strict[0] / task[1] - task[0] / task[1]
        strict_found = {**found, str(Dimension.GENERATION): strict_gen}
        want = {
            "recorded": True,
            "generation": _as_share(gen),
            "generation_arcgen_excluded": _as_share(strict_gen),
            "arcgen_exact_passes": exact,
            "full_task": _as_share(task),
            "full_task_arcgen_excluded": _as_share(task_strict),
            "full_task_change": near(change),
            "independence_baseline": near(_baseline(found)),
            "independence_baseline_arcgen_excluded": near(_baseline(strict_found)),
        }
        got = data.get("models", {}).get(model)
        checks.append(check("generation_control", f"row {model}", got, want))
    return checks


def _kind_rows(c: Construction, keys: Sequence[ItemKey]) -> dict[str, Any]:
    rows = {}
    for kind in CANDIDATE_KINDS:
        failures = judgments = items = 0
        for key in keys:
            kinds = c.instances[(key[2], Dimension.CLASSIFICATION)]["key"]["kinds"]
            if key not in c.wrong_slots:
                continue
            wrong = set(c.wrong_slots[key])
            slots = [i for i, k in enumerate(kinds) if k == kind]
            failures += sum(i in wrong for i in slots)
            judgments += len(slots)
            items += bool(slots)
        rows[str(kind)] = {"failures": share(failures, judgments), "items": items}
    return rows


def check_classification_types(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Table 1: failure rate per model and candidate type, its median row; the pooled table."""
    every = c.items(dim=Dimension.CLASSIFICATION)
    judged = {
        m: sum(k in c.wrong_slots for k in c.items(m, Dimension.CLASSIFICATION)) for m in MODELS
    }
    unjudged = {m: len(c.items(m, Dimension.CLASSIFICATION)) - judged[m] for m in MODELS}
    checks = [
        check(
            "classification_types", "types", data.get("types"), [str(k) for k in CANDIDATE_KINDS]
        ),
        check("classification_types", "pooled", data.get("pooled"), _kind_rows(c, every)),
        check("classification_types", "judged items", data.get("judged_items"), judged),
        check("classification_types", "unjudged items", data.get("unjudged_items"), unjudged),
    ]
    candidates: dict[str, list[int]] = {str(k): [] for k in CANDIDATE_KINDS}
    for model in MODELS:
        want = _kind_rows(c, c.items(model, Dimension.CLASSIFICATION))
        got = data.get("models", {}).get(model)
        checks.append(check("classification_types", f"Table 1 {model}", got, want))
        if judged[model]:
            for kind, row in want.items():
                candidates[kind].append(row["failures"]["total"] if row["failures"] else 0)
    medians = {k: statistics.median(v) if v else None for k, v in candidates.items()}
    checks.append(
        check("classification_types", "median row", data.get("median_candidates"), medians)
    )
    # What the answerers were made to do, said directly.
    models = data.get("models", {})
    ones = {str(k): Near(1.0) for k in CANDIDATE_KINDS if k != CandidateKind.VALID}
    rates = {
        m: {
            k: (v["failures"] or {}).get("rate")
            for k, v in models.get(m, {}).items()
            if v["failures"]
        }
        for m in (ALWAYS_VALID, ONE_TYPE_WRONG)
    }
    checks.append(
        check(
            "classification_types",
            "always_valid: 0 on valid, 1 on every corruption",
            rates[ALWAYS_VALID],
            {str(CandidateKind.VALID): Near(0.0), **ones},
        )
    )
    want_one = {str(k): Near(float(k == WRONG_KIND)) for k in CANDIDATE_KINDS if _occurs(c, k)}
    checks.append(
        check(
            "classification_types",
            f"one_type_wrong: 1 on {WRONG_KIND}, 0 elsewhere",
            rates[ONE_TYPE_WRONG],
            want_one,
        )
    )
    return checks


def _occurs(c: Construction, kind: str) -> bool:
    return any(
        kind in inst["key"]["kinds"]
        for (_, d), inst in c.instances.items()
        if d == Dimension.CLASSIFICATION
    )


def check_classification_baselines(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """The trivial baselines, from the labels; and the trivial answerers' Table 3 counts."""
    labels = [
        inst["key"]["labels"]
        for (_, d), inst in sorted(c.instances.items())
        if d == Dimension.CLASSIFICATION
    ]
    n = len(labels)
    want: dict[str, Any] = {"instances": n, "judgments": 5 * n}
    for name, said in ((ALWAYS_VALID, "valid"), (ALWAYS_INVALID, "invalid")):
        strict = sum(all(label == said for label in ls) for ls in labels)
        right = sum(label == said for ls in labels for label in ls)
        want[name] = {
            "strict": {
                "passed": strict,
                "instances": n,
                "accuracy": near(strict / n if n else None),
            },
            "per_judgment": {
                "right": right,
                "judgments": 5 * n,
                "accuracy": near(right / (5 * n) if n else None),
            },
        }
    checks = [check("classification_baselines", "both baselines", data, want)]
    for name in (ALWAYS_VALID, ALWAYS_INVALID):
        answered = c.count(c.items(name, Dimension.CLASSIFICATION))
        baseline = data.get(name, {}).get("strict", {})
        checks.append(
            check(
                "classification_baselines",
                f"the {name} answerer's strict accuracy is the baseline's",
                [baseline.get("passed"), baseline.get("instances")],
                list(answered),
            )
        )
    return checks


def _agreement(c: Construction, keys: Iterable[ItemKey], condition: str) -> dict[str, Any]:
    counts = {g: [0, 0] for g in ("right", "wrong", "all")}
    for key in keys:
        info = c.consistency.get(key)
        if info is None or (condition == "definition_correct" and not info.passes_train_test):
            continue
        for agree, right in zip(info.agree, info.right, strict=True):
            for group in ("right" if right else "wrong", "all"):
                counts[group][0] += agree
                counts[group][1] += 1
    return {g: share(a, n) for g, (a, n) in counts.items()}


def check_self_consistency(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Tables 4 and 5: agreement of each model's program with its answers."""
    checks = []
    for condition in ("definition_correct", "unconditional"):
        for name in (*MODELS, POOLED):
            keys = c.items() if name == POOLED else c.items(name)
            if not any(k in c.consistency for k in keys):
                want = None
            else:
                want = {
                    str(d): _agreement(c, [k for k in keys if k[3] == d], condition)
                    for d in CONSISTENCY_DIMENSIONS
                }
            got = data.get(condition, {}).get(name)
            checks.append(check("self_consistency", f"{condition} {name}", got, want))
            if condition == "definition_correct":  # Table 4's headline: the dimensions as one
                every = None if want is None else _agreement(c, keys, condition)
                headline = None if every is None else {g: every[g] for g in ("right", "wrong")}
                got = data.get("definition_correct_over_dimensions", {}).get(name)
                checks.append(check("self_consistency", f"headline {name}", got, headline))
    return checks


def _passing(c: Construction, model: str) -> dict[str, set[str]]:
    return {
        r: {t for t in c.counted if all(c.passed.get((model, r, t, d), False) for d in DIMENSIONS)}
        for r in c.runs(model)
    }


def check_run_agreement(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Table 7: tasks passing all five per run, intersection, union, Jaccard, agreement."""
    checks = []
    for model in MODELS:
        got = data.get("models", {}).get(model)
        if any(not c.items(model, d) for d in DIMENSIONS):
            checks.append(check("run_agreement", f"Table 7 {model}", got, None))
            continue
        passing = _passing(c, model)
        sets = list(passing.values())
        both, either = set.intersection(*sets), set.union(*sets)
        pairs, agreements = [], []
        runs = sorted(passing)
        for i, a in enumerate(runs):
            for b in runs[i + 1 :]:
                same = sum((t in passing[a]) == (t in passing[b]) for t in c.counted)
                union = passing[a] | passing[b]
                agreements.append(same / len(c.counted))
                pairs.append(
                    {
                        "runs": [a, b],
                        "same_outcome": same,
                        "agreement": near(same / len(c.counted)),
                        "jaccard": near(
                            len(passing[a] & passing[b]) / len(union) if union else None
                        ),
                    }
                )
        want = {
            "runs": runs,
            "tasks": len(c.counted),
            "passing": {r: sorted(ts) for r, ts in passing.items()},
            "intersection": sorted(both),
            "union": sorted(either),
            "jaccard": near(len(both) / len(either) if len(sets) > 1 and either else None),
            "agreement": near(sum(agreements) / len(agreements) if agreements else None),
            "pairs": pairs,
        }
        checks.append(check("run_agreement", f"Table 7 {model}", got, want))
    # The two runs' sets, said directly: run 1 passes on A, run 2 on B.
    mine = data.get("models", {}).get(TWO_RUNS) or {}
    a, b = c.sets.get("1", set()), c.sets.get("2", set())
    said = {
        "passing": {r: sorted(s) for r, s in c.sets.items()},
        "intersection": sorted(a & b),
        "union": sorted(a | b),
        "jaccard": near(len(a & b) / len(a | b) if a | b else None),
        "agreement": near((len(c.counted) - len(a ^ b)) / len(c.counted) if c.counted else None),
    }
    got = {k: mine.get(k) for k in said}
    checks.append(
        check("run_agreement", "two_runs: A, B, |A&B|, |A|B|, Jaccard, agreement", got, said)
    )
    return checks


def _failure_group(c: Construction, cells: Sequence[Cell]) -> dict[str, Any]:
    classes = Counter(
        FAILURE_OF[c.programs[cell]]
        for cell in cells
        if not passes(c.programs[cell], c.data[cell[2]])
    )
    failed = sum(classes.values())
    counts = {str(f): classes.get(str(f), 0) for f in FAILURE_CLASSES}
    return {
        "programs": len(cells),
        "passed": len(cells) - failed,
        "pass_rate": share(len(cells) - failed, len(cells)),
        "failures": {**counts, "infra": 0},
        "failed": failed,
        "failure_shares": {f: share(n, failed) for f, n in counts.items()},
        "load_failure_share": share(counts["static"], len(cells)),
    }


def check_definition_failures(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Table 9: failure classes as shares of failures, per model, pooled, excluding one."""
    cells = sorted(c.programs)
    models = sorted({m for m, _, _ in cells})
    want = {
        "given": True,
        "models": {m: _failure_group(c, [x for x in cells if x[0] == m]) for m in models},
        "pooled": _failure_group(c, cells),
        "excluded_models": [EXCLUDED],
        "excluded_models_not_found": [],
        "pooled_excluding": _failure_group(c, [x for x in cells if x[0] != EXCLUDED]),
    }
    return [check("definition_failures", "Table 9, Appendix D", data, want)]


SEED = 77
"""The study's seed: the build's (configuration 1's), and the bootstrap's by default."""

SEED_STRIDE = 1_000_000
"""Configuration ``k`` is built with ``SEED + (k - 1) * SEED_STRIDE`` (docs/study.md)."""

BOOTSTRAP_RESAMPLES = 10_000
"""Section 3.1's bootstrap resamples by default (docs/study.md)."""


def exposure(
    failed: Sequence[Sequence[bool]], rotations: bool = False
) -> tuple[Fraction, list[Fraction]]:
    """One task's Section 3.1 shares, by listing every trial (``failed[run][dimension]``).

    Every subset of five runs is a trial; five dimensions once: in each of the 120 ways to
    give the five dimensions one run each of the subset (``rotations``: each of the five
    cyclic rotations, dimension ``j`` in the subset's run ``(j + rotation) % 5``), exposed
    when a probed dimension fails there; one dimension five times: dimension ``j`` in all
    five runs, exposed when it fails in one.
    """
    subsets = list(itertools.combinations(range(len(failed)), BUDGET))
    if rotations:
        orders = [[(j + r) % BUDGET for j in range(BUDGET)] for r in range(BUDGET)]
    else:
        orders = [list(order) for order in itertools.permutations(range(BUDGET))]
    exposed = sum(
        any(failed[subset[order[j]]][j] for j in range(BUDGET))
        for subset in subsets
        for order in orders
    )
    single = [
        Fraction(sum(any(failed[r][j] for r in subset) for subset in subsets), len(subsets))
        for j in range(BUDGET)
    ]
    return Fraction(exposed, len(orders) * len(subsets)), single


def closed_form(runs: int, failing: int) -> Fraction:
    """One dimension five times, from the number of runs it fails in: 1 - C(R-f,5)/C(R,5)."""
    return 1 - Fraction(math.comb(runs - failing, BUDGET), math.comb(runs, BUDGET))


@dataclass
class BudgetVectors:
    """A model's Section 3.1 per-task shares, over the tasks it passed entirely in a run."""

    runs: list[str]
    tasks: list[str]  # of the tasks with all five instances, those passed on all five once
    missing: int  # (run, task, dimension) without an item: failures
    once: list[Fraction]  # five dimensions once, per task
    single: dict[str, list[Fraction]]  # one dimension five times, per dimension and task
    closed: list[str]  # (task, dimension) where brute force and closed form disagree


def budget_vectors(c: Construction, model: str) -> BudgetVectors:
    """The shares of a model with five or more runs, from its constructed outcomes."""
    runs = c.runs(model)
    once: list[Fraction] = []
    single: dict[str, list[Fraction]] = {str(d): [] for d in DIMENSIONS}
    missing, closed = 0, []
    tasks = [  # the study's: passed on all five dimensions, here in at least one run
        task
        for task in c.counted
        if any(all(c.passed.get((model, run, task, d)) for d in DIMENSIONS) for run in runs)
    ]
    for task in tasks:
        failed = []
        for run in runs:
            row = []
            for dim in DIMENSIONS:
                found = c.passed.get((model, run, task, dim))
                missing += found is None
                row.append(not found)
            failed.append(row)
        a, b = exposure(failed)
        once.append(a)
        for j, dim in enumerate(DIMENSIONS):
            single[str(dim)].append(b[j])
            if b[j] != closed_form(len(runs), sum(row[j] for row in failed)):
                closed.append(f"{task}/{dim}")
    return BudgetVectors(runs, tasks, missing, once, single, closed)


def wilcoxon_statistic(diffs: Sequence[Fraction]) -> float:
    """The two-sided signed-rank statistic: zero differences dropped, ties ranked by their
    mean rank, the smaller of the positive and negative rank sums."""
    nonzero = sorted((abs(d), d > 0) for d in diffs if d != 0)
    plus = minus = Fraction(0)
    i = 0
    while i < len(nonzero):
        j = i
        while j < len(nonzero) and nonzero[j][0] == nonzero[i][0]:
            j += 1
        rank = Fraction(i + 1 + j, 2)  # ranks i+1 .. j share their mean
        for _, positive in nonzero[i:j]:
            if positive:
                plus += rank
            else:
                minus += rank
        i = j
    return float(min(plus, minus))


@functools.cache
def _wilcoxon_p(diffs: tuple[float, ...]) -> float:
    """scipy's two-sided signed-rank p-value of these differences, zeros dropped (before
    the call: below 14 differences with ties scipy enumerates every sign pattern)."""
    return float(stats.wilcoxon([d for d in diffs if d]).pvalue)


def paired(
    a: Sequence[Fraction],
    b: Sequence[Fraction],
    seed: int = SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """The expected comparison of paired shares ``a`` (five dimensions once) and ``b``.

    Means and the mean difference (exactly); the paired t statistic from its formula and
    the Wilcoxon statistic from ranks of the exact differences, both p-values from scipy
    on these vectors as floats (the signed-rank test on the exact differences; ``None``
    without variance, resp. without a non-zero difference); the percentile bootstrap 95%
    interval of the mean difference drawn again: ``numpy.random.default_rng(seed)``, one
    ``integers(0, n, size=(resamples, n))`` draw of task indices, the 2.5th and 97.5th
    percentiles of the resampled means.
    """
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs, Fraction(0)) / n
    floats = [float(x) for x in a], [float(y) for y in b]
    t = t_p = w = w_p = None
    variance = sum(((d - mean) ** 2 for d in diffs), Fraction(0)) / (n - 1) if n > 1 else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if variance > 0:
            t = float(mean) / math.sqrt(variance / n)
            t_p = float(stats.ttest_rel(*floats).pvalue)
        if any(diffs):
            w = wilcoxon_statistic(diffs)
            w_p = _wilcoxon_p(tuple(float(d) for d in diffs))
    picks = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    resampled = np.asarray([float(d) for d in diffs])[picks].mean(axis=1)
    low, high = np.percentile(resampled, [2.5, 97.5])
    return {
        "units": n,
        "five_dimensions_once": near(float(sum(a, Fraction(0)) / n)),
        "one_dimension_five_times": near(float(sum(b, Fraction(0)) / n)),
        "difference": near(float(mean)),
        "bootstrap_ci95": [near(float(low)), near(float(high))],
        "t": near(t),
        "t_p": near(t_p),
        "wilcoxon": near(w),
        "wilcoxon_p": near(w_p),
    }


def mean_over_dimensions(single: Mapping[str, Sequence[Fraction]]) -> list[Fraction]:
    """One dimension five times, per task the mean over the five dimensions."""
    tasks = len(single[str(DIMENSIONS[0])])
    return [sum(single[str(d)][t] for d in DIMENSIONS) / len(DIMENSIONS) for t in range(tasks)]


def _comparisons(a: Sequence[Fraction], single: Mapping[str, Sequence[Fraction]]) -> dict[str, Any]:
    """Five dimensions once against the mean over the dimensions, and against each one."""
    mean = mean_over_dimensions(single)
    return {
        "mean_over_dimensions": paired(a, mean),
        "dimensions": {str(d): paired(a, single[str(d)]) for d in DIMENSIONS},
    }


def check_matched_budget(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Section 3.1: per task the shares by brute force, then means, tests and bootstrap."""
    models: dict[str, Any] = {}
    pooled_a: list[Fraction] = []
    pooled_single: dict[str, list[Fraction]] = {str(d): [] for d in DIMENSIONS}
    counted = []
    closed: list[str] = []
    for model in MODELS:
        runs = c.runs(model)
        if len(runs) < BUDGET:
            why = f"{len(runs)} run(s); at least {BUDGET} needed"
            models[model] = {"computed": False, "runs": runs, "why": why}
            continue
        v = budget_vectors(c, model)
        closed += [f"matched_budget: {model} {where}: not the closed form" for where in v.closed]
        if not v.tasks:
            why = "no task passed on all five dimensions in any run"
            models[model] = {"computed": False, "runs": runs, "why": why}
            continue
        models[model] = {
            "computed": True,
            "runs": runs,
            "tasks": len(v.tasks),
            "tasks_left_out": len(c.counted) - len(v.tasks),
            "subsets": math.comb(len(runs), BUDGET),
            "missing_items": v.missing,
            **_comparisons(v.once, v.single),
            "per_task": {
                task: {
                    "five_dimensions_once": near(float(v.once[t])),
                    "one_dimension_five_times": {
                        str(d): near(float(v.single[str(d)][t])) for d in DIMENSIONS
                    },
                }
                for t, task in enumerate(v.tasks)
            },
        }
        counted.append(model)
        pooled_a += v.once
        for d in DIMENSIONS:
            pooled_single[str(d)] += v.single[str(d)]
    want = {
        "budget": BUDGET,
        "repeats_built": REPEATS,
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": SEED},
        "task_selection": "passed-all-five",
        "assignments": "all",
        "tasks_with_all_five_instances": len(c.full),
        "models": models,
        "pooled": {"models": counted, **_comparisons(pooled_a, pooled_single)} if counted else None,
    }
    checks = [
        check("matched_budget", "every model, every task, the pooled row", data, want),
        Check("matched_budget", "one dimension five times by its closed form", closed),
    ]
    outside = []  # the interval holds the mean difference
    entries = [(m, e) for m, e in (data.get("models") or {}).items() if e.get("computed")]
    entries += [(POOLED, data["pooled"])] if data.get("pooled") else []
    for name, entry in entries:
        for what, comparison in [
            ("mean", entry.get("mean_over_dimensions") or {}),
            *(entry.get("dimensions") or {}).items(),
        ]:
            ci, diff = comparison.get("bootstrap_ci95"), comparison.get("difference")
            if ci is None or diff is None or not ci[0] <= diff <= ci[1]:
                outside.append(f"matched_budget: {name} {what}: {diff} outside {ci}")
    checks.append(Check("matched_budget", "the bootstrap interval holds the difference", outside))
    return checks


def _cumulative(values: Sequence[float]) -> dict[str, Any]:
    n = len(values)
    mean = math.fsum(values) / n if n else None
    sd = None
    if mean is not None and n > 1:
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1))
    return {"n": n, "mean": near(mean), "sd": near(sd)}


def _run_rates(c: Construction, model: str, measure: str) -> list[float]:
    """The model's accuracy of a measure in each of its runs (runs without it left out)."""
    rates = []
    for run in c.runs(model):
        if measure == FULL_TASK:
            if any(not [k for k in c.items(model, d) if k[1] == run] for d in DIMENSIONS):
                continue
            cells = [(run, t) for t in c.full]
            ok = sum(
                all(c.passed.get((model, r, t, d), False) for d in DIMENSIONS) for r, t in cells
            )
            total = len(cells)
        else:
            ok, total = c.count(k for k in c.items(model, measure) if k[1] == run)
        if total:
            rates.append(ok / total)
    return rates


SAMPLED_TASKS = 50
"""Section 3.2's tasks drawn per model, as the study (docs/study.md)."""


def study_tasks(configs: Sequence[Construction], model: str) -> dict[str, Any]:
    """Section 3.2's tasks of a model, as docs/study.md says they are chosen.

    Of the tasks with all five instances in every configuration, those the model passed on
    all five dimensions in some run of configuration 1; ``random.Random(SEED).sample`` of
    50 of them in sorted order (every one when there are fewer); no exclusion list.
    """
    c = configs[0]
    full = sorted(set.intersection(*(set(x.full) for x in configs)))
    passed = [
        t
        for t in full
        if any(all(c.passed.get((model, r, t, d)) for d in DIMENSIONS) for r in c.runs(model))
    ]
    drawn = sorted(random.Random(SEED).sample(passed, min(SAMPLED_TASKS, len(passed))))
    return {"passed_all_five": len(passed), "drawn": drawn, "excluded": [], "tasks": drawn}


def only_tasks(x: Construction, model: str, tasks: Iterable[str]) -> Construction:
    """A configuration with only ``model``'s items of ``tasks``."""
    keep = set(tasks)
    return replace(
        x,
        passed={k: v for k, v in x.passed.items() if k[0] == model and k[2] in keep},
        full=[t for t in x.full if t in keep],
    )


def _sampling_model(everything: Sequence[Construction], model: str) -> dict[str, Any]:
    selection = study_tasks(everything, model)
    configs = [only_tasks(x, model, selection["tasks"]) for x in everything]
    measures = [str(FULL_TASK), *(str(d) for d in DIMENSIONS)]
    found = [_measures(x, model, complete_only=True) for x in configs]
    runs = set.intersection(*(set(x.runs(model)) for x in configs))
    tasks = set.intersection(*(set(x.full) for x in configs))
    cells = [(r, t) for r in sorted(runs) for t in sorted(tasks)]
    alive, defined = set(cells), True
    budgets = []
    for k, x in enumerate(configs, 1):
        defined = defined and all(x.items(model, d) for d in DIMENSIONS)
        alive = {
            (r, t)
            for r, t in alive
            if all(x.passed.get((model, r, t, d), False) for d in DIMENSIONS)
        }
        entry: dict[str, Any] = {"budget": k}
        for m in measures:
            shares = [f[m] for f in found[:k]]
            entry[m] = _cumulative([p / n for p, n in (s for s in shares if s) if n])
            if k == 1:  # the study's sd at k = 1: over the runs of configuration 1
                by_run = _run_rates(configs[0], model, m)
                sd = _cumulative(by_run)["sd"]
                entry[m] |= {"sd": sd, "sd_over": "runs", "sd_runs": len(by_run)}
        entry["hard_full_task"] = share(len(alive), len(cells)) if defined else None
        budgets.append(entry)
    return {
        "per_configuration": [
            {"configuration": n, **{m: _as_share(f[m]) for m in measures}}
            for n, f in enumerate(found, 1)
        ],
        "hard_cells": len(cells),
        "budgets": budgets,
        "selection": selection,
    }


def check_increased_sampling(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Table 6: each configuration's shares, mean and sample sd at budgets 1..K, hard."""
    configs = [c, *c.later]
    want = {
        "configurations": len(configs),
        "computed": True,
        "seeds": [SEED + k * SEED_STRIDE for k in range(len(configs))],
        "same_seed": [],
        "task_selection": "study",
        "sample_size": SAMPLED_TASKS,
        "exclude_tasks": None,
        "models": {m: _sampling_model(configs, m) for m in MODELS},
    }
    checks = [check("increased_sampling", "Table 6, every model and budget", data, want)]
    chosen = {m: set(want["models"][m]["selection"]["tasks"]) for m in MODELS}
    # What the answerers were made to do, said directly.
    models = data.get("models") or {}
    two = models.get(TWO_RUNS) or {}
    per = two.get("per_configuration") or []
    said = {
        "full task per configuration": [
            (per[k].get(FULL_TASK) or {}).get("count") if k < len(per) else None
            for k in range(len(configs))
        ],
        "hard full task at budget K": ((two.get("budgets") or [{}])[-1].get("hard_full_task")
                                       or {}).get("count"),
    }  # fmt: skip
    mine = chosen[TWO_RUNS]  # its Section 3.2 tasks
    want_said = {
        "full task per configuration": [
            sum(len(s & mine) for s in x.sets.values()) for x in configs
        ],
        "hard full task at budget K": sum(
            len(set.intersection(mine, *(x.sets[r] for x in configs))) for r in c.sets
        ),
    }
    checks.append(
        check(
            "increased_sampling",
            "two_runs: |A|+|B| in each configuration, hard the runs' sets in all of them",
            said,
            want_said,
        )
    )
    valid = [
        (f.get(str(Dimension.GENERATION)) or {}).get("count")
        for f in (models.get(ALWAYS_VALID) or {}).get("per_configuration") or []
    ]
    if chosen[ALWAYS_VALID]:
        mine_first = only_tasks(c, ALWAYS_VALID, chosen[ALWAYS_VALID])
        first = _measures(mine_first, ALWAYS_VALID)[str(Dimension.GENERATION)]
        checks.append(
            check(
                "increased_sampling",
                "always_valid: Generation passes only in configuration 1 (then copies of them)",
                valid,
                [None if first is None else first[0], *([0] * len(c.later))],
            )
        )
    return checks


def check_token_usage(data: Mapping[str, Any], c: Construction) -> list[Check]:
    """Appendix F: the answers record no usage or settings, so no model has any."""
    want = {
        "dataset": "tasks",  # the build's task directory, root / "tasks"
        "recorded": False,
        "models": {m: None for m in MODELS},
    }
    return [check("token_usage", "Appendix F: no usage recorded, every model listed", data, want)]


SectionCheck = Callable[[Mapping[str, Any], Construction], list[Check]]

SECTION_CHECKS: dict[str, SectionCheck] = {
    "accuracy": check_accuracy,
    "denominators": check_denominators,
    "generation_control": check_generation_control,
    "classification_types": check_classification_types,
    "classification_baselines": check_classification_baselines,
    "self_consistency": check_self_consistency,
    "run_agreement": check_run_agreement,
    "definition_failures": check_definition_failures,
    "matched_budget": check_matched_budget,
    "increased_sampling": check_increased_sampling,
    "token_usage": check_token_usage,
}
"""One check per section of ``analysis.json`` (its key -> a function of the section's data
and the construction); a section without one fails the run. A new analysis section gets
its entry here."""


def check_analysis(
    analysis: Mapping[str, Any], c: Construction, paths: Mapping[str, str]
) -> list[Check]:
    """Every section of ``analysis.json`` against the construction."""
    checks = check_inputs(analysis.get("inputs", {}), c, paths)
    for key in analysis:
        if key != "inputs" and key not in SECTION_CHECKS:
            checks.append(Check(key, "has a check", [f"{key}: no check in SECTION_CHECKS"]))
    for key, function in SECTION_CHECKS.items():
        if key not in analysis:
            checks.append(Check(key, "is in analysis.json", [f"{key}: missing"]))
            continue
        checks.extend(function(analysis[key], c))
    return checks


def check_items(items: Sequence[Mapping[str, Any]], c: Construction) -> list[Check]:
    """Every item: there, passed as constructed, its wrong slots, ARC-GEN match, consistency.

    (Of configuration 2, 3...: the checks' names say which.)
    """
    found = {(i["model"], i["run"], i["task_id"], i["dimension"]): i for i in items}
    problems = [f"{'/'.join(k)}: no item" for k in sorted(set(c.passed) - set(found))]
    problems += [f"{'/'.join(k)}: not expected" for k in sorted(set(found) - set(c.passed))]
    slots, exact, consistency = [], [], []
    for key in sorted(set(found) & set(c.passed)):
        item, name = found[key], "/".join(key)
        if item["passed"] != c.passed[key]:
            problems.append(
                f"{name}: passed {item['passed']} ({item['reason']}), constructed {c.passed[key]}"
            )
        if key in c.wrong_slots and item["detail"].get("wrong_slots") != c.wrong_slots[key]:
            slots.append(
                f"{name}: wrong slots {item['detail'].get('wrong_slots')}, "
                f"constructed {c.wrong_slots[key]}"
            )
        if key in c.exact and item["detail"].get("arcgen_exact") is not c.exact[key]:
            exact.append(f"{name}: arcgen_exact {item['detail'].get('arcgen_exact')}")
        info, got = c.consistency.get(key), item.get("consistency")
        if info is None:
            if got is not None:
                consistency.append(f"{name}: consistency {got}, none constructed")
            continue
        want: dict[str, Any] = {"definition_passes_train_test": info.passes_train_test}
        if key[3] == Dimension.CLASSIFICATION:
            want.update(agree=info.agree, right=info.right)
        else:
            want["agree"] = info.agree[0]
        if got != want:
            consistency.append(f"{name}: consistency {got}, constructed {want}")
    which = "" if c.configuration == 1 else f"configuration {c.configuration}: "
    return [
        Check("items", f"{which}every item there and passed as constructed", problems),
        Check("items", f"{which}Classification wrong slots as constructed", slots),
        Check("items", f"{which}Generation ARC-GEN matches as constructed", exact),
        Check("items", f"{which}self-consistency as constructed", consistency),
    ]


def check_construction(c: Construction) -> list[Check]:
    """The construction exercises what the checks are about (none of them is vacuous)."""
    kinds = Counter(
        k
        for (_, d), inst in c.instances.items()
        if d == Dimension.CLASSIFICATION
        for k in inst["key"]["kinds"]
    )
    a, b = c.sets.get("1", set()), c.sets.get("2", set())
    classes = Counter(
        FAILURE_OF[k] for cell, k in c.programs.items() if not passes(k, c.data[cell[2]])
    )
    gen = [k for k in c.exact if c.passed[k]]
    wants = {
        "every candidate type occurs": [str(k) for k in CANDIDATE_KINDS if not kinds[k]],
        "A-B, B-A and A&B are non-empty": [
            n for n, s in (("A-B", a - b), ("B-A", b - a), ("A&B", a & b)) if not s
        ],
        "every failure class occurs": [str(f) for f in FAILURE_CLASSES if not classes[str(f)]],
        "passed generations both equal and not equal to ARC-GEN pairs": [
            n
            for n, s in (
                ("equal", [k for k in gen if c.exact[k]]),
                ("not equal", [k for k in gen if not c.exact[k]]),
            )
            if not s
        ],
    }
    six = budget_vectors(c, SIX_RUNS)
    diffs = [a - b for a, b in zip(six.once, mean_over_dimensions(six.single), strict=True)]
    wants["six_runs: paired differences that vary, some non-zero (every test defined)"] = [
        n for n, ok in (("variance", len(set(diffs)) > 1), ("non-zero", any(diffs))) if not ok
    ]
    for x in c.later:
        wants[f"configuration {x.configuration}: two_runs' sets differ from configuration 1's"] = [
            f"run {r}" for r in c.sets if x.sets[r] == c.sets[r]
        ]
    return [
        Check("construction", name, [f"missing: {m}" for m in missing])
        for name, missing in wants.items()
    ]


# ---------------------------------------------------------------------------- the pipeline


@dataclass
class Report:
    """What :func:`run_pipeline` found: the checks, counts and step timings."""

    tasks: int = 0
    counts: dict[str, Any] = field(default_factory=dict)
    check_build: str = ""
    checks: list[Check] = field(default_factory=list)
    steps: list[tuple[str, float, str]] = field(default_factory=list)
    construction: Construction | None = None

    @property
    def failed(self) -> list[Check]:
        """The checks that did not hold."""
        return [c for c in self.checks if not c.held]


def choose_tasks(tasks_dir: Path, arcgen_dir: Path, count: int) -> list[str]:
    """``count`` task ids (sorted) for a small run that still exercises every check.

    A quarter of them the first tasks whose first test pair is an ARC-GEN pair (a passed
    generation equal to one), a quarter the first with an ARC-GEN pair on a demonstration
    input (a corrupted pair the build must drop), then the first of the rest (most first
    test pairs are no ARC-GEN pair).
    """
    ids = sorted(p.stem for p in tasks_dir.glob("*.json"))
    tasks = {t: json.loads((tasks_dir / f"{t}.json").read_text()) for t in ids}
    pairs = {t: arcgen_pairs(arcgen_dir, t) for t in ids}
    in_arcgen = [
        t for t in ids if [tasks[t]["test"][0]["input"], tasks[t]["test"][0]["output"]] in pairs[t]
    ]
    train_input = [
        t for t in ids if any(p[0] == d["input"] for p in pairs[t] for d in tasks[t]["train"])
    ]
    chosen: list[str] = []
    for group in (in_arcgen[: count // 4], train_input[: count // 4], ids):
        for task in group:
            if len(chosen) < count and task not in chosen:
                chosen.append(task)
    return sorted(chosen)


def run_check_build(build: Path, tasks: Path) -> tuple[int, str]:
    """``bench/check_build.py BUILD --tasks TASKS --strict``: its exit status and output."""
    proc = subprocess.run(
        [sys.executable, str(CHECK_BUILD), str(build), "--tasks", str(tasks), "--strict"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def configuration_dir(root: Path, k: int) -> Path:
    """Where the build wrote configuration ``k``."""
    return root / "dims" / f"configuration-{k}"


def scored_dir(root: Path, k: int) -> Path:
    """Where ``dimensions score`` wrote configuration ``k``'s items."""
    return root / ("scored" if k == 1 else f"scored-{k}")


def run_pipeline(
    data_tasks: Path,
    data_arcgen: Path,
    ids: Sequence[str],
    root: Path,
    run: Runner,
    box: Sequence[str] = (),
) -> Report:
    """Every step of the acceptance check in ``root`` (a new or empty directory).

    The build is one ``dimensions build --repeats 6 --configurations 2`` (``dims/
    configuration-1`` is the plain build); each configuration is answered, scored
    (``score --seed`` its own seed; configuration 2's ``dimensions score --after`` the
    items of configuration 1) and checked on its own, and ``analyze`` reads both.

    Args:
        data_tasks: The ARC-AGI-1 training task directory.
        data_arcgen: The ARC-GEN stable-set directory.
        ids: The tasks to use.
        root: The work directory.
        run: Runs one ``arcjudge`` command.
        box: Options for the sandboxed commands (``--backend``, ``--workers``...).
    """
    report = Report(tasks=len(ids))

    def step(name: str, argv: list[str]) -> None:
        start = time.perf_counter()
        printed = run(argv)
        report.steps.append((name, time.perf_counter() - start, printed))

    def timed(name: str, start: float) -> None:
        report.steps.append((name, time.perf_counter() - start, ""))

    start = time.perf_counter()
    copy_inputs(data_tasks, data_arcgen, ids, root)
    tasks, arcgen = root / "tasks", root / "arcgen"
    write_verifiers(tasks, arcgen, root / "tables")
    report.counts["generators"] = write_generators(arcgen, ids, root / "generators")
    report.counts["human errors"] = write_human_errors(tasks, ids, root / "human_errors.csv")
    corruptions = root / "corruptions.jsonl"
    report.counts["corrupted pairs"] = write_corruptions(tasks, arcgen, ids, corruptions)
    write_neighbours(list(ids), root / "neighbours.jsonl")
    timed("write inputs (verifiers, generators, H-ARC file, corruptions)", start)
    common = ["--tasks", str(tasks), "--arcgen", str(arcgen)]
    store = ["--store", str(root / "cache.sqlite")]
    generator = f"arc-gen:{root / 'generators'}"
    step(
        "validate",
        [
            "validate",
            *common,
            "--source",
            f"table=module:{root / 'tables'}",
            "--out",
            str(root / "val"),
            *store,
            *box,
        ],
    )
    build_start = time.time()
    step(
        f"dimensions build (--repeats {REPEATS} --configurations {CONFIGURATIONS})",
        [
            "dimensions",
            "build",
            *common,
            "--manifest",
            str(root / "val"),
            "--generator",
            generator,
            "--human-errors",
            str(root / "human_errors.csv"),
            "--corruptions",
            str(corruptions),
            "--neighbours",
            str(root / "neighbours.jsonl"),
            "--repeats",
            str(REPEATS),
            "--configurations",
            str(CONFIGURATIONS),
            "--out",
            str(root / "dims"),
            *store,
            *box,
        ],
    )
    # Each configuration's share of the build: when its files were written.
    written = [build_start] + [
        (configuration_dir(root, k) / "build.json").stat().st_mtime
        for k in range(1, CONFIGURATIONS + 1)
    ]
    for k in range(1, CONFIGURATIONS + 1):
        report.steps.append((f"  of which configuration {k}", written[k] - written[k - 1], ""))
    listed = json.loads((root / "dims" / "configurations.json").read_text())
    seeds = {e["configuration"]: e["seed"] for e in listed["configurations"]}

    start = time.perf_counter()
    for k in range(1, CONFIGURATIONS + 1):
        status, printed = run_check_build(configuration_dir(root, k), tasks)
        report.check_build += ("" if k == 1 else f"configuration {k}:\n") + printed
        problems = [line for line in printed.splitlines() if line.startswith("FAIL")]
        if status and not problems:
            problems = [f"check_build.py exited {status}: {printed[-500:]}"]
        report.checks.append(
            Check(
                "build",
                f"configuration {k}: check_build.py --strict: Editing from the three types, "
                "no demonstration input, valid candidates generator samples",
                problems,
            )
        )
    timed("check_build.py (each configuration)", start)

    constructions: list[Construction] = []
    for k in range(1, CONFIGURATIONS + 1):
        start = time.perf_counter()
        instances_file = configuration_dir(root, k) / "instances.jsonl"
        records = read_jsonl(instances_file)
        instances = {(r["task_id"], r["dimension"]): r for r in records}
        if k == 1:
            _count_build(report, records)
            data = {t: read_task(tasks, arcgen, t) for t in sorted({r["task_id"] for r in records})}
        else:
            data.update(
                (t, read_task(tasks, arcgen, t))
                for t in {r["task_id"] for r in records} - set(data)
            )
        earlier = constructions[-1].accepted() if constructions else {}
        own = sorted({t for t, _ in instances})
        c = construct(Construction(own, data, instances, configuration=k, earlier=earlier))
        constructions.append(c)
        suffix = "" if k == 1 else f"-{k}"
        answers, programs = root / f"answers{suffix}.jsonl", root / f"programs{suffix}.jsonl"
        report.counts[f"answers{suffix}"] = write_jsonl(answers, answer_records(c))
        report.counts[f"programs{suffix}"] = write_jsonl(programs, program_records(c))
        timed(f"configuration {k}: construct answers and programs", start)
        defs = root / f"defs{suffix}"
        step(
            f"configuration {k}: score (Definition programs, seed {seeds[k]})",
            [
                "score",
                "--programs",
                str(programs),
                *common,
                "--generator",
                generator,
                "--seed",
                str(seeds[k]),
                "--out",
                str(defs),
                *store,
                *box,
            ],
        )
        after = [
            a for j in range(1, k) for a in ("--after", str(scored_dir(root, j) / "items.jsonl"))
        ]
        step(
            f"configuration {k}: dimensions score" + (" --after" if after else ""),
            [
                "dimensions",
                "score",
                "--instances",
                str(instances_file),
                "--answers",
                str(answers),
                "--definitions",
                str(defs),
                "--programs",
                str(programs),
                "--min-distance",
                MIN_DISTANCE,
                *after,
                "--out",
                str(scored_dir(root, k)),
                *store,
                *box,
            ],
        )
    c = constructions[0]
    c.later = constructions[1:]
    report.construction = c
    report.checks.extend(check_construction(c))
    items_file = scored_dir(root, 1) / "items.jsonl"
    instances_file = configuration_dir(root, 1) / "instances.jsonl"
    later = [
        [
            str(scored_dir(root, k) / "items.jsonl"),
            str(configuration_dir(root, k) / "instances.jsonl"),
        ]
        for k in range(2, CONFIGURATIONS + 1)
    ]
    step(
        "dimensions analyze",
        [
            "dimensions",
            "analyze",
            "--items",
            str(items_file),
            "--instances",
            str(instances_file),
            "--definitions",
            str(root / "defs"),
            "--exclude-model",
            EXCLUDED,
            *(a for files in later for a in ("--configuration", *files)),
            "--out",
            str(root / "analysis"),
        ],
    )

    start = time.perf_counter()
    for k, x in enumerate(constructions, 1):
        report.checks.extend(check_items(read_jsonl(scored_dir(root, k) / "items.jsonl"), x))
    analysis = json.loads((root / "analysis" / "analysis.json").read_text())
    paths = {
        "items_file": str(items_file),
        "instances_file": str(instances_file),
        "definitions_file": str(root / "defs"),
        "configuration_files": later,
    }
    report.checks.extend(check_analysis(analysis, c, paths))
    missing = [
        f"tables/{name}{ext}"
        for name in TABLES
        for ext in (".csv", ".md")
        if not (root / "analysis" / "tables" / f"{name}{ext}").is_file()
    ]
    report.checks.append(Check("tables", "every table written as CSV and Markdown", missing))
    report.checks.append(check_table3_csv(root / "analysis" / "tables" / "table3.csv", c))
    timed("checks", start)
    return report


def _count_build(report: Report, records: Sequence[Mapping[str, Any]]) -> None:
    """Configuration 1's counts, for the printed summary."""
    report.counts["instances"] = dict(Counter(r["dimension"] for r in records))
    report.counts["classification slots"] = dict(
        Counter(
            k
            for r in records
            if r["dimension"] == Dimension.CLASSIFICATION
            for k in r["key"]["kinds"]
        )
    )
    report.counts["editing pairs"] = dict(
        Counter(r["key"]["kind"] for r in records if r["dimension"] == Dimension.EDITING)
    )


def check_table3_csv(path: Path, c: Construction) -> Check:
    """``tables/table3.csv``: each model's counts and totals as constructed."""
    if not path.is_file():
        return Check("tables", "table3.csv counts", [f"{path}: missing"])
    rows = {r["model"]: r for r in csv.DictReader(path.open())}
    problems = []
    for model in MODELS:
        row = rows.get(model)
        if row is None:
            problems.append(f"table3.csv: no row {model}")
            continue
        for measure, value in _measures(c, model).items():
            got = (row.get(f"{measure}_count"), row.get(f"{measure}_total"))
            want = ("", "") if value is None else (str(value[0]), str(value[1]))
            if got != want:
                problems.append(f"table3.csv {model} {measure}: {got}, expected {want}")
    return Check("tables", "table3.csv counts as constructed", problems)


def summary_lines(report: Report) -> list[str]:
    """The construction's sizes, for the printed summary."""
    c = report.construction
    if c is None:
        return []
    a, b = c.sets["1"], c.sets["2"]
    lines = [
        f"tasks {len(c.tasks)}, with all five dimensions {len(c.full)}, where the oracle "
        f"passes all five {len(c.passable)}",
        f"two_runs: |A| {len(a)}, |B| {len(b)}, |A&B| {len(a & b)}, |A|B| {len(a | b)}, "
        f"Jaccard {len(a & b) / len(a | b) if a | b else float('nan'):.4f}, agreement "
        f"{(len(c.counted) - len(a ^ b)) / len(c.counted) if c.counted else float('nan'):.4f}",
    ]
    for model in MODELS:
        found = _measures(c, model)
        cells = ", ".join(f"{m} {v[0]}/{v[1]}" for m, v in found.items() if v is not None)
        lines.append(f"{model} ({', '.join(c.runs(model))}): {cells}")
    classes = Counter(
        (cell[0], FAILURE_OF[k]) for cell, k in c.programs.items() if not passes(k, c.data[cell[2]])
    )
    lines.append(
        "Definition failures: " + ", ".join(f"{m} {f} {n}" for (m, f), n in sorted(classes.items()))
    )
    six = budget_vectors(c, SIX_RUNS)
    once, single = six.once, mean_over_dimensions(six.single)
    n = len(once)
    if n:
        lines.append(
            f"six_runs (Section 3.1, {len(six.runs)} runs, {n} tasks): five dimensions once "
            f"{float(sum(once, Fraction(0)) / n):.4f}, one dimension five times "
            f"{float(sum(single, Fraction(0)) / n):.4f}; tasks where once > five times "
            f"{sum(a > b for a, b in zip(once, single, strict=True))}, equal "
            f"{sum(a == b for a, b in zip(once, single, strict=True))}, below "
            f"{sum(a < b for a, b in zip(once, single, strict=True))}"
        )
    for x in c.later:
        k = x.configuration
        found = {m: _measures(x, m) for m in MODELS}
        lines.append(
            f"configuration {k}: tasks {len(x.tasks)}, with all five {len(x.full)}, where the "
            f"oracle passes all five {len(x.passable)}; two_runs |A{k}| {len(x.sets['1'])}, "
            f"|B{k}| {len(x.sets['2'])}, in both configurations run 1 "
            f"{len(c.sets['1'] & x.sets['1'])}, run 2 {len(c.sets['2'] & x.sets['2'])}"
        )
        for model in MODELS:
            cells = ", ".join(f"{m} {v[0]}/{v[1]}" for m, v in found[model].items() if v)
            lines.append(f"  {model}: {cells}")
    return lines


def by_section(checks: Iterable[Check]) -> dict[str, list[Check]]:
    """The checks grouped by section, in order."""
    grouped: dict[str, list[Check]] = defaultdict(list)
    for item in checks:
        grouped[item.section].append(item)
    return dict(grouped)
