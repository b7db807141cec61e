"""The study's tables from scored items: what ``arcjudge dimensions analyze`` computes.

Each *section* is a function of the :class:`AnalysisInputs` that returns its numbers (a JSON
object, one key of ``analysis.json``) and its tables (:class:`Table`). :data:`SECTIONS`
lists them in output order:

* ``accuracy`` -> Table 3: per model, accuracy on the output grid, the five dimensions and
  the full task (Wilson 95% intervals, pooled over runs), the independence baseline and
  the drop from output grid to full task (:func:`model_statistics` of ``dimensions score``).
* ``denominators``: per model full task's n (tasks x runs), and the tasks left out or
  missing a dimension, with why (:mod:`.denominators`).
* ``generation_control`` -> the stricter Constrained Generation control: a generated pair
  equal to one of the task's ARC-GEN pairs (``detail.arcgen_exact`` of the item) fails,
  and full-task accuracy and the baseline are computed again with that.
* ``classification_types`` -> Table 1 (per model and candidate type, the median number
  of candidates of each type per model as its last row) and a supplementary table pooling
  every model: Classification failure rate per candidate type: for ``valid`` candidates,
  judging them invalid; for each corruption type, judging it valid.
* ``classification_baselines``: the always-valid and always-invalid answerers' strict and
  per-judgment accuracy, counted exactly on the built instances' labels.
* ``self_consistency`` -> Tables 4 (Definition right on train and test; first the study's
  headline, the three dimensions pooled) and 5 (all items; and the model's mistakes only):
  agreement of the model's own Definition program with its answers, split by whether the
  answer was right.
* ``run_agreement`` -> Table 7: per model, the tasks passing all five dimensions in each
  run, their intersection and union, Jaccard index and task agreement.
* ``definition_failures`` -> Table 9 (and Appendix D): static, runtime and rule failures
  as shares of the failed programs, per model and pooled (also without the models named
  by ``exclude_models``), and the load-failure (static) share of all programs.

* ``matched_budget`` -> Section 3.1: over a model's runs as repeats of the same
  instances, the share of trials exposing a failure when the five dimensions are probed
  once each against one dimension probed five times, with paired tests
  (:mod:`.budget`).
* ``token_usage`` -> Appendix F: per model, the replies' input, output and reasoning
  tokens (totals and means) and generation settings (:mod:`.usage`).

A new table is one more section function appended to :data:`SECTIONS`, with no change to
the others.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from arcjudge.harness.analyze.agreement import run_agreement, self_consistency
from arcjudge.harness.analyze.budget import matched_budget
from arcjudge.harness.analyze.classification import classification_baselines, classification_types
from arcjudge.harness.analyze.denominators import denominators, scope_note
from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.analyze.sampling import increased_sampling
from arcjudge.harness.analyze.sections import (
    FULL_TASK,
    LABELS,
    MEASURES,
    POOLED,
    Section,
    from_proportion,
    full_tasks,
    models_of,
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
from arcjudge.harness.analyze.usage import token_usage_section
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.harness.dimensions.statistics import model_statistics
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    FAILURE_CLASSES,
    SCORE_FAILURES,
    Dimension,
    FailureClass,
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


# --------------------------------------------------------------------- Table 3


def _accuracy(inputs: AnalysisInputs) -> Section:
    stats = model_statistics(inputs.items, full_tasks(inputs))
    models: dict[str, Any] = {}
    rows: list[tuple[Cell, ...]] = []
    for model, entry in stats.items():
        shares: dict[str, Share | None] = {
            str(d): from_proportion(entry["dimensions"][d]) for d in BUILT_DIMENSIONS
        }
        shares[FULL_TASK] = from_proportion(entry["full_task"])
        baseline, drop = entry["independence_baseline"], entry["output_grid_drop"]
        models[model] = {
            "runs": entry["runs"],
            **{m: share_json(shares[m]) for m in MEASURES},
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
        "share of (run, task) passing all five PotARCin dimensions. "
        + scope_note(inputs)
        + " Independence baseline: the product of the five dimensions' accuracies "
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
        gen = from_proportion(default[model]["dimensions"][Dimension.GENERATION])
        gen_strict = from_proportion(strict[model]["dimensions"][Dimension.GENERATION])
        task, task_strict = (from_proportion(s[model]["full_task"]) for s in (default, strict))
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
            "generation": share_json(gen),
            "generation_arcgen_excluded": share_json(gen_strict),
            "arcgen_exact_passes": exact,
            "full_task": share_json(task),
            "full_task_arcgen_excluded": share_json(task_strict),
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
        "Full-task change: strict minus default accuracy. " + scope_note(inputs)
    )
    if unrecorded:
        note += (" n/a: items scored before items recorded arcgen_exact (score them again): "
                 + ", ".join(sorted(unrecorded)) + ".")  # fmt: skip
    table = Table("generation_control", "Constrained Generation: ARC-GEN exact matches "
                  "excluded", note, columns, tuple(rows))  # fmt: skip
    return Section("generation_control", {"models": models}, (table,))


# ------------------------------------------------------------------ Table 9


def _failure_group(results: Sequence[ScoreResult]) -> dict[str, Any]:
    counts = {str(f): sum(r.failure == f for r in results) for f in SCORE_FAILURES}
    failed = sum(counts[str(c)] for c in FAILURE_CLASSES)
    return {
        "programs": len(results),
        "passed": sum(r.passed for r in results),
        "pass_rate": share_json(share_or_none(sum(r.passed for r in results), len(results))),
        "failures": counts,
        "failed": failed,
        "failure_shares": {
            str(c): share_json(share_or_none(counts[str(c)], failed)) for c in FAILURE_CLASSES
        },
        "load_failure_share": share_json(share_or_none(counts[FailureClass.STATIC],
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
    denominators,
    _generation_control,
    classification_types,
    classification_baselines,
    self_consistency,
    run_agreement,
    _definition_failures,
    _matched_budget,
    increased_sampling,
    token_usage_section,
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
        models=models_of(inputs),
        exclude_models=sorted(set(inputs.exclude_models)),
        repeats=inputs.repeats,
    )
    return Analysis(record, tuple(section(inputs) for section in SECTIONS))
