"""Table 1: Classification failure rates per model and candidate type; the trivial answerers.

Two sections of :mod:`.study`'s list: ``classification_types`` (Table 1 per model and per
type, with the median number of candidates of each type per model as its last row, as the
study's; and a supplementary table pooling every model) and ``classification_baselines``
(always-valid and always-invalid, counted exactly on the built instances' labels).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.analyze.sections import (
    Section,
    models_of,
    share_json,
)
from arcjudge.harness.analyze.tables import (
    Cell,
    Column,
    Table,
    rounded,
    share_or_none,
)
from arcjudge.harness.dimensions.records import CLASSIFICATION_SIZE, DimensionItem
from arcjudge.vocabulary import (
    CANDIDATE_KINDS,
    CandidateKind,
    Dimension,
    Judgment,
)

# ------------------------------------------------------------------ Table 1


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
            "failures": share_json(share_or_none(counts[kind][0], counts[kind][1])),
            "items": counts[kind][2],
        }
        for kind in order
    }


MEDIAN_ROW = "(median per model)"
"""Table 1's last row: the median number of candidates of each type per model."""


def _median(values: Sequence[int]) -> float | None:
    """The median of ``values`` (``None`` for none)."""
    return statistics.median(values) if values else None


def _failure_word(kind: str) -> str:
    return "rejected (judged invalid)" if kind == CandidateKind.VALID else "accepted (judged valid)"


def classification_types(inputs: AnalysisInputs) -> Section:
    """Table 1: the failure rate per model and candidate type; the pooled table beside it."""
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
    models = models_of(inputs)
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
    pooled_table = Table(
        "classification_types_pooled",
        "Supplementary: Classification failure rate per candidate type (all models pooled)",
        note,
        columns,
        tuple(
            (k, _failure_word(k), pooled[k][2], share_or_none(pooled[k][0], pooled[k][1]))
            for k in order
        ),
    )
    shown = [m for m in models if judged[m]]
    medians = {k: _median([counts[m][k][1] for m in shown]) for k in order}
    data["median_candidates"] = medians
    rows1: list[tuple[Cell, ...]] = [
        (m, judged[m], *(share_or_none(counts[m][k][0], counts[m][k][1]) for k in order))
        for m in shown
    ]
    rows1.append((MEDIAN_ROW, _median([judged[m] for m in shown]), *medians.values()))
    table1 = Table(
        "table1",
        "Table 1: Classification failure rate per model and candidate type",
        note + " Last row: the median over the models of the number of candidates of each "
        "type (judgments of that type) and of judged items.",
        (
            Column("model"),
            Column("items", "int", "Judged items"),
            *(Column(k, "share", f"{k.replace('_', ' ')}: {_failure_word(k)}") for k in order),
        ),
        tuple(rows1),
    )
    return Section("classification_types", data, (table1, pooled_table))


def classification_baselines(inputs: AnalysisInputs) -> Section:
    """The always-valid and always-invalid answerers on the built instances' labels."""
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
