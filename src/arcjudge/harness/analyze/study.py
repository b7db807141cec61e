"""The study's tables from scored items: what ``arcjudge dimensions analyze`` computes.

Each *section* is a function of the :class:`AnalysisInputs` that returns its numbers (a JSON
object, one key of ``analysis.json``) and its tables (:class:`Table`). :data:`SECTIONS`
lists them in output order:

* ``accuracy`` -> Table 3: per model, accuracy on the output grid, the five dimensions and
  the full task (Wilson 95% intervals, pooled over runs), the independence baseline and
  the drop from output grid to full task (:func:`model_statistics` of ``dimensions score``).
* ``generation_control`` -> the stricter Constrained Generation control: a generated pair
  equal to one of the task's ARC-GEN pairs (``detail.arcgen_exact`` of the item) fails,
  and full-task accuracy and the baseline are computed again with that.
* ``classification_types`` -> Tables 1 (all models pooled) and 8 (per model):
  Classification failure rate per candidate type: for ``valid`` candidates, judging them
  invalid; for each corruption type, judging it valid.
* ``classification_baselines``: the always-valid and always-invalid answerers' strict and
  per-judgment accuracy, counted exactly on the built instances' labels.
* ``self_consistency`` -> Tables 4 (Definition right on train and test) and 5 (all items;
  and the model's mistakes only): agreement of the model's own Definition program with its
  answers, split by whether the answer was right.
* ``run_agreement`` -> Table 7: per model, the tasks passing all five dimensions in each
  run, their intersection and union, Jaccard index and task agreement.
* ``definition_failures`` -> Table 9 (and Appendix D): static, runtime and rule failures
  as shares of the failed programs, per model and pooled (also without the models named
  by ``exclude_models``), and the load-failure (static) share of all programs.

* ``matched_budget`` -> Section 3.1: over a model's runs as repeats of the same
  instances, the share of trials exposing a failure when the five dimensions are probed
  once each against one dimension probed five times, with paired tests
  (:mod:`.budget`).

A new table is one more section function appended to :data:`SECTIONS`, with no change to
the others.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.analyze.budget import matched_budget
from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.analyze.sampling import increased_sampling
from arcjudge.harness.analyze.sections import FULL_TASK, LABELS, MEASURES, POOLED, Section
from arcjudge.harness.analyze.tables import (
    Cell,
    Column,
    Share,
    Table,
    rounded,
    share_or_none,
)
from arcjudge.harness.dimensions.records import CLASSIFICATION_SIZE, DimensionItem
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    CANDIDATE_KINDS,
    CONSISTENCY_DIMENSIONS,
    DIMENSIONS,
    FAILURE_CLASSES,
    SCORE_FAILURES,
    CandidateKind,
    Dimension,
    FailureClass,
    Judgment,
    ScoreFailure,
)

__all__ = [
    "FULL_TASK",
    "POOLED",
    "SECTIONS",
    "Analysis",
    "Section",
    "analyze",
    "full_tasks",
]

NO_MODEL = "(no model)"
"""The group of Definition results without a ``model`` field."""


@dataclass(frozen=True)
class Analysis:
    """The whole analysis: the sections in order."""

    inputs: Mapping[str, Any]
    sections: tuple[Section, ...]

    def to_json(self) -> dict[str, Any]:
        """``analysis.json``: what was read, then every section's numbers by key."""
        return {"inputs": dict(self.inputs), **{s.key: dict(s.data) for s in self.sections}}

    def tables(self) -> list[Table]:
        """Every table, in section order."""
        return [t for s in self.sections for t in s.tables]


def _share_json(share: Share | None) -> dict[str, Any] | None:
    return None if share is None else share.to_json()


def _from_proportion(entry: Mapping[str, Any] | None) -> Share | None:
    """A :class:`Share` of a ``statistics.proportion`` object (``None`` stays ``None``)."""
    if entry is None:
        return None
    return Share(int(entry["passed"]), int(entry["total"]))


def full_tasks(inputs: AnalysisInputs) -> list[str]:
    """Tasks with an instance of each of the five dimensions (full task is over these)."""
    tasks = sorted({task for task, _ in inputs.instances})
    return [t for t in tasks if all((t, d) in inputs.instances for d in DIMENSIONS)]


def _models(inputs: AnalysisInputs) -> list[str]:
    return sorted({i.model for i in inputs.items})


# --------------------------------------------------------------------- Table 3


def _accuracy(inputs: AnalysisInputs) -> Section:
    stats = model_statistics(inputs.items, full_tasks(inputs))
    models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model, entry in stats.items():
        shares: dict[str, Share | None] = {
            str(d): _from_proportion(entry["dimensions"][d]) for d in BUILT_DIMENSIONS
        }
        shares[FULL_TASK] = _from_proportion(entry["full_task"])
        baseline, drop = entry["independence_baseline"], entry["output_grid_drop"]
        models[model] = {
            "runs": entry["runs"],
            **{m: _share_json(shares[m]) for m in MEASURES},
            "independence_baseline": baseline,
            "output_grid_drop": drop,
        }
        rows.append((model, len(entry["runs"]), *(shares[m] for m in MEASURES), baseline, drop))
    columns = (
        Column("model", "text"),
        Column("runs", "int"),
        *(Column(m, "share", LABELS[m]) for m in MEASURES),
        Column("independence_baseline", "number", "Independence baseline"),
        Column("output_grid_drop", "number", "Drop (output grid - full task)"),
    )
    table = Table(
        "table3",
        "Table 3: accuracy per model",
        "Accuracy pooled over runs with Wilson 95% intervals (passed/items). Full task: the "
        "share of (run, task) passing all five PotARCin dimensions, over tasks with all five "
        "instances. Independence baseline: the product of the five dimensions' accuracies "
        "(a product, not a proportion: no interval). Drop: output-grid accuracy minus "
        "full-task accuracy.",
        columns,
        tuple(rows),
    )
    return Section("accuracy", {"full_tasks": len(full_tasks(inputs)), "models": models},
                   (table,))  # fmt: skip


# ------------------------------------------------------- generation control


def _arcgen_excluded(items: Iterable[DimensionItem]) -> tuple[list[DimensionItem], set[str]]:
    """Items with passed Generation items equal to an ARC-GEN pair failed.

    Returns:
        The items, and the models with a passed Generation item that does not record
        whether it equals an ARC-GEN pair (items scored before ``arcgen_exact`` existed).
    """
    result: list[DimensionItem] = []
    unrecorded: set[str] = set()
    for item in items:
        if item.dimension is Dimension.GENERATION and item.passed:
            exact = item.detail.get("arcgen_exact")
            if not isinstance(exact, bool):
                unrecorded.add(item.model)
            elif exact:
                item = replace(item, passed=False, reason="the pair is an ARC-GEN stable pair")
        result.append(item)
    return result, unrecorded


def _generation_control(inputs: AnalysisInputs) -> Section:
    full = full_tasks(inputs)
    default = model_statistics(inputs.items, full)
    strict_items, unrecorded = _arcgen_excluded(inputs.items)
    strict = model_statistics(strict_items, full)
    models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model in default:
        known = model not in unrecorded
        gen = _from_proportion(default[model]["dimensions"][Dimension.GENERATION])
        gen_strict = _from_proportion(strict[model]["dimensions"][Dimension.GENERATION])
        task, task_strict = (_from_proportion(s[model]["full_task"]) for s in (default, strict))
        base, base_strict = (s[model]["independence_baseline"] for s in (default, strict))
        if not known:
            gen_strict = task_strict = None
            base_strict = None
        exact = None if gen is None or gen_strict is None else gen.count - gen_strict.count
        change = None
        if task is not None and task_strict is not None and task.total:
            change = rounded(task_strict.count / task.total - task.count / task.total)
        models[model] = {
            "recorded": known,
            "generation": _share_json(gen),
            "generation_arcgen_excluded": _share_json(gen_strict),
            "arcgen_exact_passes": exact,
            "full_task": _share_json(task),
            "full_task_arcgen_excluded": _share_json(task_strict),
            "full_task_change": change,
            "independence_baseline": base,
            "independence_baseline_arcgen_excluded": base_strict,
        }
        rows.append((model, gen, gen_strict, exact, task, task_strict, change, base, base_strict))
    columns = (
        Column("model"),
        Column("generation", "share", "Generation"),
        Column("generation_arcgen_excluded", "share", "Generation, ARC-GEN excluded"),
        Column("arcgen_exact_passes", "int", "Passes equal to an ARC-GEN pair"),
        Column("full_task", "share", "Full task"),
        Column("full_task_arcgen_excluded", "share", "Full task, ARC-GEN excluded"),
        Column("full_task_change", "number", "Full-task change"),
        Column("independence_baseline", "number", "Independence baseline"),
        Column("independence_baseline_arcgen_excluded", "number", "Baseline, ARC-GEN excluded"),
    )
    note = (
        "The stricter Constrained Generation control: a generated pair equal to one of the "
        "task's ARC-GEN stable pairs fails (the item's detail.arcgen_exact), beside the "
        "default rule; full task and the independence baseline recomputed with it. "
        "Full-task change: strict minus default accuracy."
    )
    if unrecorded:
        note += (" n/a: items scored before items recorded arcgen_exact (score them again): "
                 + ", ".join(sorted(unrecorded)) + ".")  # fmt: skip
    table = Table("generation_control", "Constrained Generation: ARC-GEN exact matches "
                  "excluded", note, columns, tuple(rows))  # fmt: skip
    return Section("generation_control", {"models": models}, (table,))


# ------------------------------------------------------- Tables 1 and 8


def _kind_order(kinds: Iterable[str]) -> list[str]:
    """The candidate kinds in the study's order, any unknown ones after them, sorted."""
    seen = set(kinds)
    known = [str(k) for k in CANDIDATE_KINDS]
    return known + sorted(seen - set(known))


def _slot_record(item: DimensionItem, inputs: AnalysisInputs) -> tuple[list[str], set[int]] | None:
    """``(kinds per slot, wrong slots)`` of a Classification item, ``None`` if not judged.

    Raises:
        InputError: The item's kinds differ from its instance's, or its wrong slots are
            not positions.
    """
    wrong = item.detail.get("wrong_slots")
    if not isinstance(wrong, list):
        return None
    kinds = list(inputs.instances[(item.task_id, item.dimension)].kinds())
    recorded = item.detail.get("kinds")
    where = f"item {item.model} run {item.run} {item.task_id} classification"
    if recorded is not None and list(recorded) != kinds:
        raise InputError(f"{where}: candidate kinds differ from the instance's")
    if not all(isinstance(s, int) and 0 <= s < len(kinds) for s in wrong):
        raise InputError(f"{where}: wrong_slots {wrong!r} are not candidate positions")
    return kinds, set(wrong)


def _type_rows(counts: Mapping[str, list[int]], order: Sequence[str]) -> dict[str, Any]:
    return {
        kind: {
            "failures": _share_json(share_or_none(counts[kind][0], counts[kind][1])),
            "items": counts[kind][2],
        }
        for kind in order
    }


def _failure_word(kind: str) -> str:
    return "rejected (judged invalid)" if kind == CandidateKind.VALID else "accepted (judged valid)"


def _classification_types(inputs: AnalysisInputs) -> Section:
    # model -> kind -> [failures, judgments, items with the kind]
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    unjudged: dict[str, int] = defaultdict(int)
    judged: dict[str, int] = defaultdict(int)
    for item in inputs.items:
        if item.dimension is not Dimension.CLASSIFICATION:
            continue
        record = _slot_record(item, inputs)
        if record is None:
            unjudged[item.model] += 1
            continue
        judged[item.model] += 1
        kinds, wrong = record
        for target in (counts[item.model], pooled):
            for slot, kind in enumerate(kinds):
                target[kind][0] += slot in wrong
                target[kind][1] += 1
            for kind in set(kinds):
                target[kind][2] += 1
    models = _models(inputs)
    order = _kind_order([*pooled, *(k for m in counts.values() for k in m)])
    data = {
        "types": order,
        "pooled": _type_rows(pooled, order),
        "models": {m: _type_rows(counts[m], order) for m in models if judged[m]},
        "judged_items": {m: judged[m] for m in models if judged[m] or unjudged[m]},
        "unjudged_items": {m: unjudged[m] for m in models if judged[m] or unjudged[m]},
    }
    note = (
        "Failure rate per candidate type: a valid candidate fails when judged invalid, an "
        "invalid one (each corruption type) when judged valid; failures/judgments of that "
        "type with Wilson 95% intervals, pooled over runs; items: Classification items with "
        "at least one candidate of the type. Items without judgments (no answer, "
        "unparsable) are left out: "
        + (", ".join(f"{m} {n}" for m, n in sorted(unjudged.items()) if n) or "none")
        + "."
    )
    columns = (
        Column("candidate_type", "text", "Candidate type"),
        Column("failure", "text", "Failure"),
        Column("items", "int", "Items"),
        Column("failure_rate", "share", "Failure rate (failures/judgments)"),
    )
    table1 = Table(
        "table1",
        "Table 1: Classification failure rate per candidate type (all models pooled)",
        note,
        columns,
        tuple(
            (k, _failure_word(k), pooled[k][2], share_or_none(pooled[k][0], pooled[k][1]))
            for k in order
        ),
    )
    rows8: list[tuple[Cell, ...]] = []
    for model in models:
        if not judged[model]:
            continue
        mine = counts[model]
        rows8.extend(
            (model, k, _failure_word(k), mine[k][2], share_or_none(mine[k][0], mine[k][1]))
            for k in order
        )
    table8 = Table(
        "table8",
        "Table 8: Classification failure rate per candidate type, per model",
        note,
        (Column("model"), *columns),
        tuple(rows8),
    )
    return Section("classification_types", data, (table1, table8))


def _classification_baselines(inputs: AnalysisInputs) -> Section:
    labels = [
        inst.labels()
        for (_, dim), inst in sorted(inputs.instances.items())
        if dim is Dimension.CLASSIFICATION
    ]
    instances, judgments = len(labels), CLASSIFICATION_SIZE * len(labels)
    data: dict[str, Any] = {"instances": instances, "judgments": judgments}
    rows: list[tuple[Cell, ...]] = []
    for name, said in (("always_valid", Judgment.VALID), ("always_invalid", Judgment.INVALID)):
        strict = sum(all(label == said for label in ls) for ls in labels)
        right = sum(label == said for ls in labels for label in ls)
        data[name] = {
            "strict": {"passed": strict, "instances": instances,
                       "accuracy": rounded(strict / instances) if instances else None},
            "per_judgment": {"right": right, "judgments": judgments,
                             "accuracy": rounded(right / judgments) if judgments else None},
        }  # fmt: skip
        rows.append((
            name.replace("_", " "), strict, instances, data[name]["strict"]["accuracy"],
            right, judgments, data[name]["per_judgment"]["accuracy"],
        ))  # fmt: skip
    table = Table(
        "classification_baselines",
        "Trivial baselines of strict Classification",
        "An answerer that calls every candidate valid (or every one invalid), scored exactly "
        "on the built instances' hidden labels: strict accuracy is the share of "
        "Classification instances whose 5 labels all agree with it, per-judgment accuracy "
        "the share of candidates it gets right. Counted, not simulated.",
        (
            Column("answerer"),
            Column("instances_passed", "int", "Instances passed"),
            Column("instances", "int", "Instances"),
            Column("strict_accuracy", "number", "Strict accuracy"),
            Column("judgments_right", "int", "Judgments right"),
            Column("judgments", "int", "Judgments"),
            Column("per_judgment_accuracy", "number", "Per-judgment accuracy"),
        ),
        tuple(rows),
    )
    return Section("classification_baselines", data, (table,))


# ------------------------------------------------------- Tables 4 and 5


def _agreement_shares(groups: Mapping[str, Any]) -> dict[str, Share | None]:
    """``statistics``' ``{right, wrong, all}`` agreement counts as shares."""
    return {g: share_or_none(groups[g]["agree"], groups[g]["total"]) for g in groups}


def _self_consistency(inputs: AnalysisInputs) -> Section:
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
                d: {g: _share_json(s) for g, s in groups.items()} for d, groups in by_dim.items()
            }

    def rows(key: str, groups: tuple[str, ...]) -> tuple[tuple[Cell, ...], ...]:
        found: list[tuple[Cell, ...]] = []
        for name, by_dim in shares[key].items():
            cells: list[Cell] = [name]
            for dim in CONSISTENCY_DIMENSIONS:
                cells.extend(None if by_dim is None else by_dim[dim][g] for g in groups)
            found.append(tuple(cells))
        return tuple(found)

    def columns(groups: Mapping[str, str]) -> tuple[Column, ...]:
        return (Column("model"), *(
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
        "and test pair; split by whether the answer was right.",
        columns({"right": "answer right", "wrong": "answer wrong"}),
        rows("definition_correct", ("right", "wrong")),
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


def _run_agreement(inputs: AnalysisInputs) -> Section:
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
        "Per model, over the tasks with all five instances: how many pass all five "
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


# ------------------------------------------------------------------ Table 9


def _failure_group(results: Sequence[ScoreResult]) -> dict[str, Any]:
    counts = {str(f): sum(r.failure == f for r in results) for f in SCORE_FAILURES}
    failed = sum(counts[str(c)] for c in FAILURE_CLASSES)
    return {
        "programs": len(results),
        "passed": sum(r.passed for r in results),
        "pass_rate": _share_json(share_or_none(sum(r.passed for r in results), len(results))),
        "failures": counts,
        "failed": failed,
        "failure_shares": {
            str(c): _share_json(share_or_none(counts[str(c)], failed)) for c in FAILURE_CLASSES
        },
        "load_failure_share": _share_json(share_or_none(counts[FailureClass.STATIC],
                                                        len(results))),
    }  # fmt: skip


def _share_of(data: Mapping[str, Any] | None) -> Share | None:
    return None if data is None else Share(int(data["count"]), int(data["total"]))


def _definition_failures(inputs: AnalysisInputs) -> Section:
    columns = (
        Column("group", "text", "Model"),
        Column("programs", "int", "Programs"),
        Column("passed", "int", "Passed"),
        Column("failed", "int", "Failed (static+runtime+rule)"),
        *(Column(str(c), "share", f"{str(c).capitalize()} (of failures)") for c in FAILURE_CLASSES),
        Column("infra", "int", "Infra (not counted)"),
        Column("load_failure_share", "share", "Load failures (of programs)"),
    )
    note = (
        "Definition programs' failures by class (static: does not load; runtime: loads, "
        "every failure an exception, timeout, memory or output kill or crash; rule: at "
        "least one wrong or non-grid answer) as shares of the failed programs (the study's "
        "convention; arcjudge score's summary divides by all programs), with Wilson 95% "
        "intervals; infra failures (the sandbox's, not the model's) are left out. Load "
        "failures: static failures over all programs."
    )
    if inputs.definitions is None:
        table = Table("table9", "Table 9: Definition failure classes", note + " Not computed: "
                      "no Definition results were given.", columns, ())  # fmt: skip
        return Section("definition_failures", {"given": False}, (table,))
    by_model: dict[str, list[ScoreResult]] = defaultdict(list)
    for result in inputs.definitions:
        by_model[result.model if result.model is not None else NO_MODEL].append(result)
    groups: dict[str, dict[str, Any]] = {m: _failure_group(by_model[m]) for m in sorted(by_model)}
    pooled = _failure_group(list(inputs.definitions))
    excluded = sorted(set(inputs.exclude_models))
    rest: dict[str, Any] | None = None
    labelled = [*groups.items(), (POOLED, pooled)]
    if excluded:
        rest = _failure_group([r for m, rs in sorted(by_model.items()) if m not in excluded
                               for r in rs])  # fmt: skip
        labelled.append((f"(all models but {', '.join(excluded)})", rest))
    data = {
        "given": True,
        "models": groups,
        "pooled": pooled,
        "excluded_models": excluded,
        "excluded_models_not_found": [m for m in excluded if m not in by_model],
        "pooled_excluding": rest,
    }
    rows = tuple(
        (
            name, group["programs"], group["passed"], group["failed"],
            *(_share_of(group["failure_shares"][str(c)]) for c in FAILURE_CLASSES),
            group["failures"][ScoreFailure.INFRA], _share_of(group["load_failure_share"]),
        )
        for name, group in labelled
    )  # fmt: skip
    table = Table("table9", "Table 9: Definition failure classes (Appendix D)", note, columns, rows)
    return Section("definition_failures", data, (table,))


# ------------------------------------------------------------- Section 3.1


def _matched_budget(inputs: AnalysisInputs) -> Section:
    data, tables = matched_budget(inputs, full_tasks(inputs))
    return Section("matched_budget", data, tables)


SectionFunction = Callable[[AnalysisInputs], Section]

SECTIONS: tuple[SectionFunction, ...] = (
    _accuracy,
    _generation_control,
    _classification_types,
    _classification_baselines,
    _self_consistency,
    _run_agreement,
    _definition_failures,
    _matched_budget,
    increased_sampling,
)
"""Every section, in output order (append one to add a table; see the module docstring)."""


def analyze(inputs: AnalysisInputs, described: Mapping[str, Any] | None = None) -> Analysis:
    """Every section of the analysis.

    Args:
        inputs: What was read.
        described: What to record under ``inputs`` in ``analysis.json`` (file names...);
            counts of what was read are added.
    """
    record = dict(described or {})
    record.update(
        items=len(inputs.items),
        instances=len(inputs.instances),
        definition_results=None if inputs.definitions is None else len(inputs.definitions),
        models=_models(inputs),
        exclude_models=sorted(set(inputs.exclude_models)),
        repeats=inputs.repeats,
    )
    return Analysis(record, tuple(section(inputs) for section in SECTIONS))
