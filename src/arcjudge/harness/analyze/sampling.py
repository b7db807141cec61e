"""Section 3.2 of the study, increased sampling: Table 6 and the numbers of Figure 4.

The inputs are K configurations of one build (``dimensions build --configurations K``),
each scored on its own: configuration 1 is the analysis' ``items`` and ``instances``,
configurations 2..K are :attr:`AnalysisInputs.configurations`, in order. Per model:

* each configuration's accuracy of the five dimensions and of the full task, pooled over
  runs, computed exactly as Table 3 does (:func:`model_statistics` of the configuration's
  items, full task over the configuration's tasks with all five instances);
* at each budget ``k = 1..K``: the mean and the sample standard deviation (``n - 1`` in
  the denominator; none for one value; at ``k = 1`` over the runs of configuration 1, as
  the study: :mod:`.run_spread`) of those accuracies over configurations ``1..k``
  (configurations where the model has no item of the measure are left out; ``n`` says
  how many were used), and the *hard* full-task accuracy: the share of ``(run, task)``
  passing all five dimensions in every configuration ``1..k``, with its Wilson 95%
  interval. Hard accuracy is counted over fixed cells, so it never rises with ``k``: the
  runs the model has items of in every configuration, times the tasks with all five
  instances in every configuration (a missing item is a failure, as for Table 3; from
  the first configuration where the model has no item of some dimension, there is no
  full task and hard accuracy is ``None``).

Which tasks (:class:`SamplingTasks`): by default, as the study, per model a seeded random
draw of ``sampling_size`` (50) of the tasks it passed on all five dimensions in
configuration 1 (of those with all five instances in every configuration), minus the
exclusion list (:mod:`.selection`); every number above is then over those tasks only.
``every`` takes every task for every model (arcjudge's rule before).

The output grid is left out: it is the task's own test, the same in every configuration.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from arcjudge.harness.analyze.inputs import AnalysisInputs, Configuration, SamplingTasks
from arcjudge.harness.analyze.run_spread import run_sd
from arcjudge.harness.analyze.sections import FULL_TASK, LABELS, Section
from arcjudge.harness.analyze.selection import sampling_selection
from arcjudge.harness.analyze.tables import Cell, Column, Share, Table, rounded, share_or_none
from arcjudge.harness.dimensions.records import DimensionInstance, DimensionItem
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.vocabulary import DIMENSIONS, Dimension

__all__ = ["SAMPLING_MEASURES", "cumulative", "hard_full_task", "increased_sampling"]

SAMPLING_MEASURES: tuple[str, ...] = (FULL_TASK, *DIMENSIONS)
"""Table 6's measures, in column order: full task, then the five dimensions."""

NOTE = (
    "Increased sampling over K independent configurations of the build (dimensions build "
    "--configurations K; configuration 1 is --items/--instances, then each --configuration "
    "in order). Per model and budget k: the mean and sample standard deviation (n-1) over "
    "configurations 1..k of each configuration's accuracy (at k = 1, as the study, the sd "
    "is over the runs of configuration 1, each run's accuracy on its own; n/a with one "
    "run), pooled over "
    "runs and computed as Table 3 does (full task: the share of (run, task) passing all "
    "five dimensions, over the configuration's tasks with all five instances). Hard full "
    "task: the share of (run, task) passing all five dimensions in every configuration "
    "1..k, with a Wilson 95% interval, over the runs the model has items of in every "
    "configuration and the tasks with all five instances in every configuration (fixed "
    "for all k; a missing item fails; n/a from the first configuration where the model "
    "answered some dimension not at all). The output grid is the same in every configuration "
    "and left out."
)


def _full_tasks(instances: Mapping[tuple[str, Dimension], DimensionInstance]) -> list[str]:
    tasks = sorted({task for task, _ in instances})
    return [t for t in tasks if all((t, d) in instances for d in DIMENSIONS)]


def _rates(configuration: Configuration) -> dict[str, dict[str, tuple[int, int] | None]]:
    """Model -> measure -> (passed, total) of one configuration (Table 3's numbers)."""
    items, instances = configuration
    found: dict[str, dict[str, tuple[int, int] | None]] = {}
    for model, entry in model_statistics(items, _full_tasks(instances)).items():
        counts: dict[str, tuple[int, int] | None] = {}
        for measure in SAMPLING_MEASURES:
            share = entry["full_task"] if measure == FULL_TASK else entry["dimensions"][measure]
            counts[measure] = None if share is None else (share["passed"], share["total"])
        found[model] = counts
    return found


def cumulative(values: Sequence[float]) -> dict[str, Any]:
    """``{"n", "mean", "sd"}`` of ``values``: mean, sample sd (``None`` below two values).

    Rounded to 6 decimals; ``mean`` is ``None`` for no value.
    """
    return {
        "n": len(values),
        "mean": rounded(statistics.fmean(values)) if values else None,
        "sd": rounded(statistics.stdev(values)) if len(values) > 1 else None,
    }


def _passes(items: Sequence[DimensionItem], model: str) -> dict[tuple[str, str], bool]:
    """``(run, task)`` -> whether the model passed all five dimensions there."""
    cells: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for item in items:
        if item.model == model:
            cells[(item.run, item.task_id)][item.dimension] = item.passed
    return {cell: all(dims.get(d, False) for d in DIMENSIONS) for cell, dims in cells.items()}


def hard_full_task(
    configurations: Sequence[Configuration], model: str
) -> tuple[list[tuple[str, str]], list[Share | None]]:
    """The cells hard accuracy is counted over, and its share at each budget ``1..K``.

    Returns:
        The ``(run, task)`` cells (runs with items of ``model`` in every configuration,
        tasks with all five instances in every one), and per budget ``k`` the share of
        them passing all five dimensions in each of configurations ``1..k`` (``None``
        when there is no cell, and from the first configuration on where the model has
        no item of some dimension: no full task there, as in Table 3).
    """
    runs = set.intersection(
        *({i.run for i in items if i.model == model} for items, _ in configurations)
    )
    tasks = set.intersection(*(set(_full_tasks(instances)) for _, instances in configurations))
    cells = [(run, task) for run in sorted(runs) for task in sorted(tasks)]
    alive = set(cells)
    shares: list[Share | None] = []
    defined = True
    for items, _ in configurations:
        defined = defined and set(DIMENSIONS) <= {i.dimension for i in items if i.model == model}
        passes = _passes(items, model)
        alive = {cell for cell in alive if passes.get(cell, False)}
        shares.append(share_or_none(len(alive), len(cells)) if defined else None)
    return cells, shares


def _share_json(counts: tuple[int, int] | None) -> dict[str, Any] | None:
    return None if counts is None else Share(*counts).to_json()


def _seed(instances: Mapping[tuple[str, Dimension], DimensionInstance]) -> int | None:
    seeds = {i.seed for i in instances.values()}
    return seeds.pop() if len(seeds) == 1 else None


def _restricted(configuration: Configuration, model: str, tasks: frozenset[str]) -> Configuration:
    """The configuration with only ``model``'s items and only ``tasks``."""
    items, instances = configuration
    return (
        tuple(i for i in items if i.model == model and i.task_id in tasks),
        {key: value for key, value in instances.items() if key[0] in tasks},
    )


def _selection_note(inputs: AnalysisInputs) -> str:
    if inputs.sampling_tasks is SamplingTasks.EVERY:
        return " Over every task (--sampling-tasks every)."
    excluded, path = inputs.exclude_tasks
    listed = (
        f", minus the {len(excluded)} task(s) of --exclude-tasks {path}"
        if path is not None
        else " (no --exclude-tasks list)"
    )
    return (
        f" Per model, over a seeded random {inputs.sampling_size} (seed {inputs.seed}) of the "
        "tasks it passed on all five dimensions in configuration 1 (in some run; tasks with "
        f"all five instances in every configuration){listed}, as the study; n per model in "
        "analysis.json (selection)."
    )


def increased_sampling(inputs: AnalysisInputs) -> Section:
    """Table 6: cumulative accuracy and hard full-task accuracy per model and budget."""
    first: Configuration = (inputs.items, inputs.instances)
    everything = [first, *inputs.configurations]
    columns = (
        Column("model"),
        Column("budget", "int", "Budget (configurations)"),
        *(
            Column(f"{m}_{part}", "number", f"{LABELS[m]} {title}")
            for m in SAMPLING_MEASURES
            for part, title in (("mean", "mean"), ("sd", "sd"))
        ),
        Column("hard_full_task", "share", "Hard full task (every configuration)"),
    )
    title = "Table 6: increased sampling (Section 3.2)"
    count = len(everything)
    if count == 1:
        table = Table("table6", title, NOTE + " Not computed: one configuration.", columns, ())
        return Section("increased_sampling", {"configurations": 1, "computed": False}, (table,))
    seeds = [_seed(instances) for _, instances in everything]
    same = [
        [a + 1, b + 1]
        for a in range(count)
        for b in range(a + 1, count)
        if seeds[a] is not None and seeds[a] == seeds[b]
    ]
    models = sorted({i.model for items, _ in everything for i in items})
    full = sorted(set.intersection(*(set(_full_tasks(instances)) for _, instances in everything)))
    every = inputs.sampling_tasks is SamplingTasks.EVERY
    data_models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model in models:
        selection = sampling_selection(
            inputs.items, model, full, inputs.sampling_size, inputs.seed, inputs.exclude_tasks[0]
        )
        configurations = (
            everything
            if every
            else [_restricted(c, model, frozenset(selection.tasks)) for c in everything]
        )
        counts = [_rates(c).get(model, {}) for c in configurations]
        cells, hard = hard_full_task(configurations, model)
        # the sd at k = 1 over configuration 1's runs, on the same tasks as the rest
        first_items, first_instances = configurations[0]
        spread = run_sd(first_items, _full_tasks(first_instances), model, SAMPLING_MEASURES)
        budgets = []
        for k in range(1, count + 1):
            entry: dict[str, Any] = {"budget": k}
            for measure in SAMPLING_MEASURES:
                found = [c.get(measure) for c in counts[:k]]
                entry[measure] = cumulative([p / t for p, t in (f for f in found if f) if t])
                if k == 1:  # the study's sd at k = 1: over the runs of configuration 1
                    entry[measure] |= {"sd": spread[measure]["sd"], "sd_over": "runs",
                                       "sd_runs": spread[measure]["runs"]}  # fmt: skip
            share = hard[k - 1]
            entry["hard_full_task"] = None if share is None else share.to_json()
            budgets.append(entry)
            means = [entry[m][part] for m in SAMPLING_MEASURES for part in ("mean", "sd")]
            rows.append((model, k, *means, share))
        data_models[model] = {
            "per_configuration": [
                {"configuration": n, **{m: _share_json(c.get(m)) for m in SAMPLING_MEASURES}}
                for n, c in enumerate(counts, 1)
            ],
            "hard_cells": len(cells),
            "budgets": budgets,
        }
        if not every:
            data_models[model]["selection"] = selection.to_json()
    excluded, path = inputs.exclude_tasks
    data = {
        "configurations": count,
        "computed": True,
        "seeds": seeds,
        "same_seed": same,
        "task_selection": str(inputs.sampling_tasks),
        "sample_size": None if every else inputs.sampling_size,
        "exclude_tasks": None if every or path is None else {"file": str(path),
                                                             "tasks": sorted(excluded)},
        "models": data_models,
    }  # fmt: skip
    table = Table("table6", title, NOTE + _selection_note(inputs), columns, tuple(rows))
    return Section("increased_sampling", data, (table,))
