"""Tables 4, 5 and 7: a model agreeing with itself.

Two sections of :mod:`.study`'s list: ``self_consistency`` (the model's own Definition
program against its answers, split by whether the answer was right) and ``run_agreement``
(per model, the tasks passing all five dimensions in each run, and how the runs agree).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from arcjudge.harness.analyze.denominators import scope_note
from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.analyze.sections import (
    LABELS,
    POOLED,
    Section,
    full_tasks,
    share_json,
)
from arcjudge.harness.analyze.tables import (
    Cell,
    Column,
    Share,
    Table,
    rounded,
    share_or_none,
)
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.vocabulary import (
    CONSISTENCY_DIMENSIONS,
    DIMENSIONS,
    Dimension,
)

# ------------------------------------------------------- Tables 4 and 5


def _agreement_shares(groups: Mapping[str, Any]) -> dict[str, Share | None]:
    """``statistics``' ``{right, wrong, all}`` agreement counts as shares."""
    return {g: share_or_none(groups[g]["agree"], groups[g]["total"]) for g in groups}


def _over_dimensions(
    by_dim: Mapping[str, Mapping[str, Share | None]], groups: Sequence[str]
) -> dict[str, Share | None]:
    """Per group, the dimensions' agreement counts summed (Table 4's headline)."""
    summed: dict[str, Share | None] = {}
    for group in groups:
        found = [by_dim[d][group] for d in CONSISTENCY_DIMENSIONS]
        agreed = sum(s.count for s in found if s is not None)
        summed[group] = share_or_none(agreed, sum(s.total for s in found if s is not None))
    return summed


def self_consistency(inputs: AnalysisInputs) -> Section:
    """Tables 4 and 5: the Definition program against the answers, per model and pooled."""
    full = full_tasks(inputs)
    per_model = {m: s["self_consistency"] for m, s in model_statistics(inputs.items, full).items()}
    pooled_items = [replace(i, model=POOLED) for i in inputs.items]
    pooled = (
        model_statistics(pooled_items, full)[POOLED]["self_consistency"] if pooled_items else None
    )
    rows_by: dict[str, Any] = {**per_model, POOLED: pooled}
    conditions = {"definition_correct": "definition_passes_train_test", "unconditional": "all"}
    data: dict[str, Any] = {}
    shares: dict[str, dict[str, dict[str, dict[str, Share | None]] | None]] = {}
    for key, condition in conditions.items():
        shares[key] = {}
        data[key] = {}
        for name, info in rows_by.items():
            if info is None:
                shares[key][name] = None
                data[key][name] = None
                continue
            by_dim = {str(d): _agreement_shares(info[condition][d]) for d in CONSISTENCY_DIMENSIONS}
            shares[key][name] = by_dim
            data[key][name] = {
                d: {g: share_json(s) for g, s in groups.items()} for d, groups in by_dim.items()
            }

    headline = {
        name: None if by_dim is None else _over_dimensions(by_dim, ("right", "wrong"))
        for name, by_dim in shares["definition_correct"].items()
    }
    data["definition_correct_over_dimensions"] = {
        name: None if pair is None else {g: share_json(s) for g, s in pair.items()}
        for name, pair in headline.items()
    }

    def rows(
        key: str, groups: tuple[str, ...], pooled_first: bool = False
    ) -> tuple[tuple[Cell, ...], ...]:
        found: list[tuple[Cell, ...]] = []
        for name, by_dim in shares[key].items():
            cells: list[Cell] = [name]
            if pooled_first:
                pair = headline[name]
                cells.extend(None if pair is None else pair[g] for g in groups)
            for dim in CONSISTENCY_DIMENSIONS:
                cells.extend(None if by_dim is None else by_dim[dim][g] for g in groups)
            found.append(tuple(cells))
        return tuple(found)

    def columns(groups: Mapping[str, str], pooled_first: bool = False) -> tuple[Column, ...]:
        over = (
            [Column(f"all_dimensions_{g}", "share", f"All dimensions: {title}")
             for g, title in groups.items()]
            if pooled_first else []
        )  # fmt: skip
        return (Column("model"), *over, *(
            Column(f"{d}_{g}", "share", f"{LABELS[d]}: {title}")
            for d in CONSISTENCY_DIMENSIONS for g, title in groups.items()
        ))  # fmt: skip

    how = (
        "Agreement of the model's own Definition program with its answers (Classification: "
        "per judgment, the program maps the candidate input to its output exactly when the "
        "model said valid; Generation: it maps the generated input to the generated output; "
        "Inversion: the proposed input to the given output), agreed/answers with Wilson "
        f"95% intervals, pooled over runs; the {POOLED} row pools every model's answers."
    )
    table4 = Table(
        "table4",
        "Table 4: self-consistency given a correct Definition",
        how + " Only answers whose Definition program loads and is right on every train "
        "and test pair; split by whether the answer was right. All dimensions: the study's "
        "headline, the three dimensions' counts summed (agreed/answers over every judgment, "
        "generated pair and inverted input).",
        columns({"right": "answer right", "wrong": "answer wrong"}, pooled_first=True),
        rows("definition_correct", ("right", "wrong"), pooled_first=True),
    )
    table5 = Table(
        "table5",
        "Table 5: self-consistency, unconditional and over mistakes",
        how + " Every answer the program was run on (whatever the Definition's verdict), "
        "and the wrong answers only.",
        columns({"all": "all answers", "wrong": "mistakes only"}),
        rows("unconditional", ("all", "wrong")),
    )
    return Section("self_consistency", data, (table4, table5))


# ------------------------------------------------------------------ Table 7


def _pass_all_five(
    items: Iterable[DimensionItem], full: Sequence[str]
) -> dict[str, dict[str, set[str]] | None]:
    """Model -> run -> tasks passing all five dimensions (``None``: a dimension missing)."""
    complete = set(full)
    cells: dict[str, dict[tuple[str, str], dict[Dimension, bool]]] = defaultdict(dict)
    dims: dict[str, set[Dimension]] = defaultdict(set)
    runs: dict[str, set[str]] = defaultdict(set)
    for item in items:
        runs[item.model].add(item.run)
        dims[item.model].add(item.dimension)
        if item.task_id in complete:
            cells[item.model].setdefault((item.run, item.task_id), {})[item.dimension] = item.passed
    result: dict[str, dict[str, set[str]] | None] = {}
    for model in sorted(runs):
        if not all(d in dims[model] for d in DIMENSIONS):
            result[model] = None
            continue
        passing: dict[str, set[str]] = {run: set() for run in sorted(runs[model])}
        for (run, task), found in cells[model].items():
            if all(found.get(d, False) for d in DIMENSIONS):
                passing[run].add(task)
        result[model] = passing
    return result


def run_agreement(inputs: AnalysisInputs) -> Section:
    """Table 7: the tasks passing all five in each run, and how the runs agree."""
    full = full_tasks(inputs)
    models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model, passing in _pass_all_five(inputs.items, full).items():
        if passing is None:
            models[model] = None
            rows.append((model, None, len(full), None, None, None, None, None))
            continue
        sets = list(passing.values())
        both, either = set.intersection(*sets), set.union(*sets)
        pairs: list[dict[str, Any]] = []
        agreements: list[float] = []
        for a, b in itertools.combinations(passing, 2):
            same = sum((t in passing[a]) == (t in passing[b]) for t in full)
            if full:
                agreements.append(same / len(full))
            union = passing[a] | passing[b]
            pairs.append({
                "runs": [a, b],
                "same_outcome": same,
                "agreement": rounded(same / len(full)) if full else None,
                "jaccard": rounded(len(passing[a] & passing[b]) / len(union)) if union else None,
            })  # fmt: skip
        jaccard = rounded(len(both) / len(either)) if len(sets) > 1 and either else None
        agreement = rounded(sum(agreements) / len(agreements)) if agreements else None
        models[model] = {
            "runs": list(passing),
            "tasks": len(full),
            "passing": {run: sorted(tasks) for run, tasks in passing.items()},
            "intersection": sorted(both),
            "union": sorted(either),
            "jaccard": jaccard,
            "agreement": agreement,
            "pairs": pairs,
        }
        per_run = ", ".join(f"{run}: {len(tasks)}" for run, tasks in passing.items())
        rows.append((model, len(sets), len(full), per_run, len(both), len(either), jaccard,
                     agreement))  # fmt: skip
    table = Table(
        "table7",
        "Table 7: tasks passing all five dimensions, run against run",
        scope_note(inputs) + " Per model: how many tasks pass all five "
        "dimensions in each run, in every run (intersection) and in at least one (union). "
        "Jaccard: intersection / union over all runs. Task agreement: the share of tasks "
        "whose all-five outcome (pass or not) is the same in two runs; with more than two "
        "runs, the mean over every pair of runs (each pair in analysis.json). n/a with one "
        "run, or when no task passes in any run (Jaccard).",
        (
            Column("model"),
            Column("runs", "int", "Runs"),
            Column("tasks", "int", "Tasks"),
            Column("passing_per_run", "text", "Passing all five, per run"),
            Column("intersection", "int", "Intersection"),
            Column("union", "int", "Union"),
            Column("jaccard", "number", "Jaccard"),
            Column("agreement", "number", "Task agreement"),
        ),
        tuple(rows),
    )
    return Section("run_agreement", {"models": models}, (table,))
