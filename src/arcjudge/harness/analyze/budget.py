"""Section 3.1 of the study: five dimensions once against one dimension five times.

A model answers the same instances ``R`` times (its runs are the *repeats*; ``dimensions
build --repeats R`` records how many the build asks for). With a budget of five probes
of a task, is a model's failure on the task exposed more often by probing the five
dimensions once each, or one dimension five times?

Which tasks (:class:`BudgetTasks`): by default, as the study, per model the tasks it
passed on all five dimensions (in at least one of its runs; the tasks it never passed
entirely have nothing left to expose), of those with an instance of all five dimensions;
``every`` takes every task with all five instances (arcjudge's rule before). For each
such task and model with ``R >= 5`` runs, every subset ``S`` of five of the ``R`` runs is
a trial, ``C(R, 5)`` of them:

* *five dimensions once*: the five dimensions are assigned to the five runs of ``S``, one
  each (:class:`Assignments`): by default in all ``5! = 120`` ways (exact: free of any
  choice of order); ``rotations``: in the five cyclic rotations of the dimensions' order
  over the runs in run order (the study's choice), so each dimension is probed in each
  position of ``S`` equally often. An assignment exposes a failure when at least one
  dimension fails in the run it is probed in. The task's share is over the (subset,
  assignment) trials.
* *one dimension five times*: dimension ``d`` is probed in all five runs of ``S``; it
  exposes a failure when ``d`` fails in at least one of them. The task's share per
  dimension is over the ``C(R, 5)`` subsets; "one dimension" is the mean over the five
  dimensions (the repeated dimension picked at random).

A missing item (no answer, no Definition result) counts as a failure. The per-task shares
(exact fractions: their differences are exact, so a zero difference is dropped and equal
ones tie) are paired vectors over the tasks: their means, the mean difference (five
dimensions minus one dimension) with a percentile bootstrap 95% interval (tasks resampled
with replacement: ``numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))``,
the 2.5th and 97.5th percentiles of the resampled means), the paired t-test
(``scipy.stats.ttest_rel``) and the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``,
zero differences dropped), for the mean over dimensions and for each dimension. A pooled
row pools the (model, task) pairs of every model with enough runs.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arcjudge.harness.analyze.inputs import (
    BOOTSTRAP_RESAMPLES,
    AnalysisInputs,
    Assignments,
    BudgetTasks,
)
from arcjudge.harness.analyze.sections import POOLED
from arcjudge.harness.analyze.selection import passed_all_five
from arcjudge.harness.analyze.tables import Cell, Column, Table, rounded
from arcjudge.vocabulary import DIMENSIONS, Dimension

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BUDGET",
    "Assignments",
    "BudgetTasks",
    "Comparison",
    "compare",
    "exposure_fractions",
    "exposure_shares",
    "matched_budget",
]

BUDGET = len(DIMENSIONS)
"""Probes per trial: one per dimension, or one dimension this many times."""


def _assignments(kind: Assignments) -> NDArray[np.intp]:
    """Shape ``(A, 5)``: in assignment ``a``, dimension ``j`` is probed in position ``[a, j]``."""
    if kind is Assignments.ROTATIONS:
        rows = [[(j + r) % BUDGET for j in range(BUDGET)] for r in range(BUDGET)]
    else:
        rows = [list(p) for p in itertools.permutations(range(BUDGET))]
    return np.array(rows, dtype=np.intp)


def exposure_fractions(
    failed: NDArray[np.bool_], assignments: Assignments = Assignments.ALL
) -> tuple[Fraction, tuple[Fraction, ...]]:
    """One task's shares of trials exposing a failure, exactly (counts over trials).

    Args:
        failed: Shape ``(R, 5)``: whether dimension ``j`` (in ``DIMENSIONS`` order) failed
            in run ``i``; ``R >= 5``.
        assignments: Which dimension-to-run assignments *five dimensions once* averages.

    Returns:
        ``(five dimensions once, (one dimension five times, per dimension))``.

    Raises:
        ValueError: Fewer than five runs, or not five dimensions.
    """
    runs, dims = failed.shape
    if dims != BUDGET or runs < BUDGET:
        raise ValueError(f"need shape (R >= {BUDGET}, {BUDGET}), got {failed.shape}")
    subsets = np.array(list(itertools.combinations(range(runs), BUDGET)), dtype=np.intp)
    # one dimension five times: d fails in a run of the subset
    single = failed[subsets, :].any(axis=1).sum(axis=0)  # (C, 5, 5) -> (5,)
    # five dimensions once, assignment a: dimension j probed in the subset's run a[j]
    exposed = 0
    table = _assignments(assignments)
    for positions in table:
        probed = failed[subsets[:, positions], np.arange(BUDGET)]  # (C, 5)
        exposed += int(probed.any(axis=1).sum())
    count = len(subsets)
    return Fraction(exposed, len(table) * count), tuple(Fraction(int(s), count) for s in single)


def exposure_shares(
    failed: NDArray[np.bool_], assignments: Assignments = Assignments.ALL
) -> tuple[float, tuple[float, ...]]:
    """:func:`exposure_fractions` as floats.

    Raises:
        ValueError: Fewer than five runs, or not five dimensions.
    """
    multi, single = exposure_fractions(failed, assignments)
    return float(multi), tuple(float(s) for s in single)


@dataclass(frozen=True)
class Comparison:
    """Paired per-task shares: five dimensions once (``a``) against one dimension (``b``).

    Attributes:
        units: How many paired values (tasks, or (model, task) pooled).
        mean_a: Mean of ``a``.
        mean_b: Mean of ``b``.
        difference: Mean of ``a - b``.
        bootstrap_ci95: Percentile bootstrap 95% interval of the mean difference.
        t: The paired t statistic (``None``: fewer than two units, or no variance).
        t_p: Its two-sided p-value.
        wilcoxon: The Wilcoxon signed-rank statistic (``None``: no non-zero difference).
        wilcoxon_p: Its two-sided p-value.
    """

    units: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    bootstrap_ci95: tuple[float, float] | None
    t: float | None
    t_p: float | None
    wilcoxon: float | None
    wilcoxon_p: float | None

    def to_json(self) -> dict[str, Any]:
        """The numbers, rounded to 6 decimals."""
        ci = self.bootstrap_ci95
        return {
            "units": self.units,
            "five_dimensions_once": rounded(self.mean_a),
            "one_dimension_five_times": rounded(self.mean_b),
            "difference": rounded(self.difference),
            "bootstrap_ci95": None if ci is None else [rounded(ci[0]), rounded(ci[1])],
            "t": rounded(self.t),
            "t_p": rounded(self.t_p),
            "wilcoxon": rounded(self.wilcoxon),
            "wilcoxon_p": rounded(self.wilcoxon_p),
        }


def _finite(value: object) -> float | None:
    number = float(value)  # type: ignore[arg-type]
    return number if math.isfinite(number) else None


def compare(
    a: Sequence[float | Fraction], b: Sequence[float | Fraction], seed: int, resamples: int
) -> Comparison:
    """Compare paired shares ``a`` and ``b`` (see the module docstring).

    The differences are taken exactly (give :class:`~fractions.Fraction` shares): a
    difference that is zero, or equal to another, is so for the tests too, where floats
    would leave ``1e-16`` (a zero kept, a tie split, a variance from rounding alone).

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    if len(a) != len(b):
        raise ValueError("paired vectors of different lengths")
    n = len(a)
    if n == 0:
        return Comparison(0, None, None, None, None, None, None, None, None)
    x, y = np.asarray([float(v) for v in a]), np.asarray([float(v) for v in b])
    exact = [Fraction(p) - Fraction(q) for p, q in zip(a, b, strict=True)]
    diff = np.asarray([float(d) for d in exact])
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    t = t_p = w = w_p = None
    # imported here, not at the top: scipy.stats costs every `arcjudge` command ~0.6 s to
    # import, and the command line imports every workflow to build its parser
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input; we report n/a
        if n >= 2 and len(set(exact)) > 1:
            paired = stats.ttest_rel(diff, np.zeros(n))  # = ttest_rel(x, y), exact x - y
            t, t_p = _finite(paired.statistic), _finite(paired.pvalue)
        if any(exact):
            # = wilcoxon(x, y, zero_method="wilcox"), the zeros dropped here instead: with
            # them, below 14 differences and ties, scipy enumerates 2^n signs (seconds)
            signed = stats.wilcoxon(np.asarray([float(d) for d in exact if d]))
            w, w_p = _finite(signed.statistic), _finite(signed.pvalue)
    return Comparison(
        n,
        float(x.mean()),
        float(y.mean()),
        float(sum(exact, Fraction(0)) / n),
        (float(low), float(high)),
        t,
        t_p,
        w,
        w_p,
    )


def _failures(inputs: AnalysisInputs, model: str, runs: Sequence[str], tasks: Sequence[str]
              ) -> tuple[NDArray[np.bool_], int]:  # fmt: skip
    """Shape ``(tasks, runs, 5)`` failures of a model, and how many items were missing."""
    passed: dict[tuple[str, str, Dimension], bool] = {}
    for item in inputs.items:
        if item.model == model and item.dimension in DIMENSIONS:
            passed[(item.run, item.task_id, item.dimension)] = item.passed
    failed = np.ones((len(tasks), len(runs), BUDGET), dtype=bool)
    missing = 0
    for t, task in enumerate(tasks):
        for r, run in enumerate(runs):
            for d, dim in enumerate(DIMENSIONS):
                found = passed.get((run, task, dim))
                if found is None:
                    missing += 1
                else:
                    failed[t, r, d] = not found
    return failed, missing


def _model_tasks(inputs: AnalysisInputs, model: str, full_tasks: Sequence[str]) -> list[str]:
    if inputs.budget_tasks is BudgetTasks.EVERY:
        return list(full_tasks)
    return passed_all_five(inputs.items, model, full_tasks)


def matched_budget(
    inputs: AnalysisInputs, full_tasks: Sequence[str]
) -> tuple[dict[str, Any], tuple[Table, ...]]:
    """The matched-budget comparison: its numbers (JSON) and its two tables.

    Args:
        inputs: What was read (``inputs.repeats``: what the build asked for, if recorded;
            ``inputs.budget_tasks`` and ``inputs.budget_assignments``: which tasks and
            which assignments).
        full_tasks: Tasks with an instance of each of the five dimensions.
    """
    runs_of: dict[str, set[str]] = defaultdict(set)
    dims_of: dict[str, set[Dimension]] = defaultdict(set)
    for item in inputs.items:
        runs_of[item.model].add(item.run)
        dims_of[item.model].add(item.dimension)
    models: dict[str, Any] = {}
    pooled_a: list[Fraction] = []
    pooled_b: list[Fraction] = []
    pooled_dims: dict[Dimension, list[Fraction]] = defaultdict(list)
    counted: list[str] = []
    for model in sorted(runs_of):
        runs = sorted(runs_of[model])
        absent = [str(d) for d in DIMENSIONS if d not in dims_of[model]]
        tasks = _model_tasks(inputs, model, full_tasks)
        if len(runs) < BUDGET or absent or not tasks:
            why = (f"{len(runs)} run(s); at least {BUDGET} needed" if len(runs) < BUDGET
                   else f"no items of {', '.join(absent)}" if absent
                   else "no task has all five instances" if not full_tasks
                   else "no task passed on all five dimensions in any run")  # fmt: skip
            models[model] = {"computed": False, "runs": runs, "why": why}
            continue
        failed, missing = _failures(inputs, model, runs, tasks)
        shares = [exposure_fractions(failed[t], inputs.budget_assignments)
                  for t in range(len(tasks))]  # fmt: skip
        a = [s[0] for s in shares]
        per_dim = {d: [s[1][j] for s in shares] for j, d in enumerate(DIMENSIONS)}
        b = [sum(s[1], Fraction(0)) / BUDGET for s in shares]
        seed, resamples = inputs.seed, inputs.bootstrap_resamples
        models[model] = {
            "computed": True,
            "runs": runs,
            "tasks": len(tasks),
            "tasks_left_out": len(full_tasks) - len(tasks),
            "subsets": math.comb(len(runs), BUDGET),
            "missing_items": missing,
            "mean_over_dimensions": compare(a, b, seed, resamples).to_json(),
            "dimensions": {
                str(d): compare(a, per_dim[d], seed, resamples).to_json() for d in DIMENSIONS
            },
            "per_task": {
                task: {"five_dimensions_once": rounded(float(a[t])),
                       "one_dimension_five_times": {str(d): rounded(float(per_dim[d][t]))
                                                    for d in DIMENSIONS}}
                for t, task in enumerate(tasks)
            },
        }  # fmt: skip
        counted.append(model)
        pooled_a.extend(a)
        pooled_b.extend(b)
        for d in DIMENSIONS:
            pooled_dims[d].extend(per_dim[d])
    pooled: dict[str, Any] | None = None
    if counted:
        seed, resamples = inputs.seed, inputs.bootstrap_resamples
        pooled = {
            "models": counted,
            "mean_over_dimensions": compare(pooled_a, pooled_b, seed, resamples).to_json(),
            "dimensions": {
                str(d): compare(pooled_a, pooled_dims[d], seed, resamples).to_json()
                for d in DIMENSIONS
            },
        }
    data: dict[str, Any] = {
        "budget": BUDGET,
        "repeats_built": inputs.repeats,
        "bootstrap": {"resamples": inputs.bootstrap_resamples, "seed": inputs.seed},
        "task_selection": str(inputs.budget_tasks),
        "assignments": str(inputs.budget_assignments),
        "tasks_with_all_five_instances": len(full_tasks),
        "models": models,
        "pooled": pooled,
    }
    return data, _tables(data)


def _stats_cells(entry: Mapping[str, Any] | None) -> list[Cell]:
    if entry is None:
        return [None] * 9
    ci = entry["bootstrap_ci95"] or [None, None]
    return [
        entry["five_dimensions_once"], entry["one_dimension_five_times"], entry["difference"],
        ci[0], ci[1], entry["t"], entry["t_p"], entry["wilcoxon"], entry["wilcoxon_p"],
    ]  # fmt: skip


_STAT_COLUMNS = (
    Column("five_dimensions_once", "number", "Five dimensions once"),
    Column("one_dimension_five_times", "number", "One dimension five times"),
    Column("difference", "number", "Difference"),
    Column("ci_low", "number", "Bootstrap 95% low"),
    Column("ci_high", "number", "Bootstrap 95% high"),
    Column("t", "number", "Paired t"),
    Column("t_p", "number", "p (t)"),
    Column("wilcoxon", "number", "Wilcoxon W"),
    Column("wilcoxon_p", "number", "p (Wilcoxon)"),
)


def _tables(data: Mapping[str, Any]) -> tuple[Table, ...]:
    rows: list[tuple[Cell, ...]] = []
    rows_dims: list[tuple[Cell, ...]] = []
    named: list[tuple[str, Mapping[str, Any]]] = list(data["models"].items())
    if data["pooled"] is not None:
        named.append((POOLED, {"computed": True, **data["pooled"]}))
    for name, entry in named:
        if not entry["computed"]:
            rows.append((name, len(entry["runs"]), None, None, None, *_stats_cells(None)))
            continue
        runs = len(entry["runs"]) if "runs" in entry else None
        units = entry["mean_over_dimensions"]["units"]
        subsets = entry.get("subsets")
        left = entry.get("tasks_left_out")
        stats = _stats_cells(entry["mean_over_dimensions"])
        rows.append((name, runs, units, left, subsets, *stats))
        for dim in DIMENSIONS:
            rows_dims.append((name, str(dim), *_stats_cells(entry["dimensions"][str(dim)])))
    skipped = [f"{m} ({e['why']})" for m, e in data["models"].items() if not e["computed"]]
    built = data["repeats_built"]
    every = data["task_selection"] == str(BudgetTasks.EVERY)
    tasks = (
        f"every task with all five instances ({data['tasks_with_all_five_instances']}; "
        "--budget-tasks every)"
        if every
        else "the tasks the model passed on all five dimensions in at least one run, of the "
        f"{data['tasks_with_all_five_instances']} with all five instances (as the study; "
        "Tasks: n per model)"
    )
    assignment = (
        f"the {BUDGET} cyclic rotations of the assignment, the study's choice "
        "(--budget-assignments rotations)"
        if data["assignments"] == str(Assignments.ROTATIONS)
        else f"all {math.factorial(BUDGET)} assignments of the dimensions to the runs, exact"
    )
    note = (
        f"Over {tasks}. "
        f"Per task, the share of trials exposing a failure with a budget of {BUDGET} probes: "
        f"every subset of {BUDGET} of the model's runs (its repeats of the same instances) "
        f"is a trial; five dimensions once: each dimension probed in one run of the subset "
        f"({assignment}), exposed when one fails; one "
        f"dimension five times: the dimension probed in all {BUDGET} runs, exposed when it "
        "fails in one (here the mean over the five dimensions; per dimension in "
        "matched_budget_dimensions). Means over tasks; difference: five dimensions minus one "
        f"dimension, percentile bootstrap 95% interval ({data['bootstrap']['resamples']} "
        f"resamples of the tasks, seed {data['bootstrap']['seed']}), paired t-test and "
        "Wilcoxon signed-rank test (zero differences dropped) over the tasks; n/a when there "
        "is no variance or no non-zero difference. A missing item counts as a failure."
    )
    if built is not None:
        note += f" The build asked for {built} repeat(s) (dimensions build --repeats)."
    if skipped:
        note += " Not computed: " + "; ".join(skipped) + "."
    table = Table(
        "matched_budget",
        "Section 3.1: matched budget, five dimensions once vs one dimension five times",
        note,
        (
            Column("model"),
            Column("runs", "int", "Runs"),
            Column("tasks", "int", "Tasks"),
            Column("tasks_left_out", "int", "Tasks left out"),
            Column("subsets", "int", f"Subsets C(R, {BUDGET})"),
            *_STAT_COLUMNS,
        ),
        tuple(rows),
    )
    table_dims = Table(
        "matched_budget_dimensions",
        "Section 3.1: matched budget per repeated dimension",
        "As matched_budget, with one dimension five times for each dimension on its own.",
        (Column("model"), Column("dimension"), *_STAT_COLUMNS),
        tuple(rows_dims),
    )
    return table, table_dims
