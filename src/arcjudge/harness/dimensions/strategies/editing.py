"""Editing: repair an invalid pair with a small edit.

Build: one confirmed invalid pair of the editing kinds, preferring kinds and pairs that a
known valid pair repairs within :data:`EDIT_MAX_DISTANCE` (that repair is the key's
reference edit). Prompt: the pair. Reply: a labelled input and output grid. Rule:
:func:`..rules.editing_verdict`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, cast

from arcjudge.grids import Grid
from arcjudge.harness.dimensions.corruptions import CandidatePair
from arcjudge.harness.dimensions.gridtext import pair_text, read_pairs
from arcjudge.harness.dimensions.mixture import draw as draw_kind
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan, pair_json
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import parse_pair
from arcjudge.harness.dimensions.rules import (
    RuleVerdict,
    distance,
    editing_verdict,
    pair_answer,
    pair_input,
)
from arcjudge.harness.dimensions.strategies.strategy import ConsistencyCheck, RuleCase, whole_reply
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]
__all__ += ["EDIT_MAX_DISTANCE", "best_repair"]

DIMENSION = Dimension.EDITING

PLACEHOLDERS = frozenset({"pair"})

EDIT_MAX_DISTANCE = 0.70
"""An edit may move each grid at most this padded normalized Hamming distance."""


def best_repair(
    plan: TaskPlan, cand: CandidatePair, verified: Grid | None
) -> tuple[Grid, Grid] | None:
    """The nearest known valid pair within the editing limit on both grids, if any.

    Known valid pairs: the candidate's input with its true output (from the verifier,
    or known when the candidate was made), and the valid pair it was made from.
    """
    known: list[tuple[Grid, Grid]] = []
    for output in (verified, cand.correct_output):
        if output is not None:
            known.append((cand.input, output))
    source = plan.sources.get(id(cand))
    if source is not None and source.output is not None:
        known.append((source.input, source.output))
    limit = Fraction(str(EDIT_MAX_DISTANCE))
    best, best_cost = None, None
    for grid_in, grid_out in known:
        cost = max(distance(grid_in, cand.input), distance(grid_out, cand.output))
        if cost <= limit and (best_cost is None or cost < best_cost):
            best, best_cost = (grid_in, grid_out), cost
    return best


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload | None:
    """One invalid pair, preferring types and pairs that can be repaired in the limit."""
    repairs: dict[str, list[tuple[Grid, Grid] | None]] = {
        kind: [best_repair(plan, cand, out) for cand, out in plan.confirmed[kind]]
        for kind in settings.editing_kinds
        if plan.confirmed.get(kind)
    }
    if not repairs:
        return None
    repairable = [k for k, rs in repairs.items() if any(r is not None for r in rs)]
    kinds = repairable or list(repairs)
    weights: dict[str, float] = {k: settings.mixture.weight(k) for k in kinds}
    weights = {k: w for k, w in weights.items() if w > 0} or dict.fromkeys(kinds, 1.0)
    kind = draw_kind(weights, rng)
    options = plan.confirmed[kind]
    fixable = [i for i, r in enumerate(repairs[kind]) if r is not None]
    index = rng.choice(fixable or list(range(len(options))))
    cand, _ = options[index]
    best = repairs[kind][index]
    key: dict[str, Any] = {
        "kind": kind,
        "provenance": dict(cand.detail),
        "weights": weights,
        "reference_edit": None if best is None else pair_json(*best),
    }
    return Payload(pair_json(cand.input, cand.output), key)


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``pair``: the pair to repair."""
    return {"pair": pair_json(*instance.shown_pair())}


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """``$pair``: ``Input:`` / grid / ``Output:`` / grid."""
    return {"pair": pair_text(read_pairs([visible["pair"]])[0], grid_format)}


read_reply = whole_reply(parse_pair)

verifier_input = pair_input


def parse_answer(answer: object) -> tuple[tuple[Grid, Grid] | None, str | None]:
    """The edited pair: ``{"input": grid, "output": grid}``."""
    return pair_answer(answer, DIMENSION)


def rule(case: RuleCase) -> RuleVerdict:
    """:func:`..rules.editing_verdict` against the pair shown."""
    edited = cast(tuple[Grid, Grid], case.answer)
    return editing_verdict(
        case.instance.shown_pair(), edited, case.verifier, case.settings.edit_max_distance
    )


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck | None:
    """None: no self-consistency check for this dimension."""
    return None
