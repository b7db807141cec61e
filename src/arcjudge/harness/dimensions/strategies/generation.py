"""Constrained Generation: make a new valid pair that copies no shown pair.

Build: the pairs to avoid (the demonstrations) and, hidden, the task's ARC-GEN digests and
a reference pair (the first valid pair that copies no demonstration). Prompt: the pairs to
avoid; those beyond the demonstrations (pairs the model had accepted in earlier
configurations, ``dimensions prompts --after``) are shown as further demonstrations, as
the study adds each accepted pair to the demonstrations of the next attempt, or, when the
prompt says ``"earlier_shown": "avoid"`` (``prompts --after-shown-as avoid``), in a note
listing pairs not to copy. Reply: a labelled input and output grid. Rule:
:func:`..rules.generation_verdict`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from arcjudge.grids import Grid, to_lists
from arcjudge.harness.dimensions.gridtext import pairs_text, read_pairs
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan, pair_digest, pair_json
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import parse_pair
from arcjudge.harness.dimensions.rules import (
    RuleVerdict,
    generation_verdict,
    is_copy,
    pair_answer,
    pair_input,
)
from arcjudge.harness.dimensions.strategies.strategy import ConsistencyCheck, RuleCase, whole_reply
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]
__all__ += ["DEFAULT_MIN_DISTANCE", "EARLIER_SHOWN_AS_AVOID", "EARLIER_SHOWN_FIELD"]

DIMENSION = Dimension.GENERATION

PLACEHOLDERS = frozenset({"avoid", "avoid_count", "avoid_note"})

EARLIER_SHOWN_FIELD = "earlier_shown"
"""A Generation prompt field: how the pairs beyond the demonstrations are shown."""

EARLIER_SHOWN_AS_AVOID = "avoid"
"""Its value for a note of pairs not to copy (absent: shown as further demonstrations)."""

DEFAULT_MIN_DISTANCE = 0.05
"""Constrained Generation: a pair within this distance of a demonstration on both its input
and its output is a copy. At 0.05 every ARC-AGI-1 training task has ARC-GEN pairs that
pass; at 0.10 one (ae3edfdc) has none among its first 120 (see docs/dimensions.md)."""


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload:
    """The demonstrations to avoid; the key: ARC-GEN digests and a reference pair."""
    demos = [(d.input, d.output) for d in plan.task.train if d.output is not None]
    reference = None
    for valid in plan.valid:
        pair = valid.pair
        assert pair.output is not None
        if not any(
            is_copy((pair.input, pair.output), demo, settings.min_distance)[0] for demo in demos
        ):
            reference = {**pair_json(pair.input, pair.output), **valid.provenance()}
            break
    return Payload(
        {"avoid": [pair_json(*demo) for demo in demos]},
        {"arcgen_digests": plan.arcgen_digests, "reference": reference},
    )


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``avoid``: the pairs a generated pair must not copy (and how the extra ones show)."""
    shown: dict[str, Any] = {"avoid": [pair_json(*p) for p in instance.avoid()]}
    if instance.prompt.get(EARLIER_SHOWN_FIELD) == EARLIER_SHOWN_AS_AVOID:
        shown[EARLIER_SHOWN_FIELD] = EARLIER_SHOWN_AS_AVOID
    return shown


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """``$avoid`` (``Pair N`` blocks), ``$avoid_count`` and ``$avoid_note``.

    Pairs beyond the demonstrations (accepted in earlier configurations) extend
    ``$demonstrations`` and ``$demonstration_count`` (the study's protocol), or with
    ``"earlier_shown": "avoid"`` are listed in ``$avoid_note`` as pairs not to copy.
    """
    avoid = read_pairs(visible["avoid"])
    shown = len(demonstrations)
    extra = avoid[shown:] if avoid[:shown] == list(demonstrations) else avoid
    values = {
        "avoid": pairs_text(avoid, "Pair", grid_format),
        "avoid_count": str(len(avoid)),
        "avoid_note": "",
    }
    if not extra:
        return values
    listed = visible.get(EARLIER_SHOWN_FIELD) == EARLIER_SHOWN_AS_AVOID
    if listed or avoid[:shown] != list(demonstrations):  # (not after the demonstrations)
        values["avoid_note"] = (
            "\n\nIt must not be a copy or a near copy of any of these pairs either:\n\n"
            + pairs_text(extra, "Pair", grid_format)
        )
        return values
    extended = [*demonstrations, *extra]
    values["demonstrations"] = pairs_text(extended, "Example", grid_format)
    values["demonstration_count"] = str(len(extended))
    return values


read_reply = whole_reply(parse_pair)

verifier_input = pair_input


def parse_answer(answer: object) -> tuple[tuple[Grid, Grid] | None, str | None]:
    """The generated pair: ``{"input": grid, "output": grid}``."""
    return pair_answer(answer, DIMENSION)


def rule(case: RuleCase) -> RuleVerdict:
    """:func:`..rules.generation_verdict`, with ``arcgen_exact`` and the pair itself."""
    pair = cast(tuple[Grid, Grid], case.answer)
    instance, settings = case.instance, case.settings
    digest = pair_digest(*pair)
    digests = set(instance.arcgen_digests()) if settings.exclude_arcgen else None
    verdict = generation_verdict(
        pair,
        case.verifier,
        instance.avoid(),
        settings.min_distance,
        digests,
        digest if digests is not None else None,
        strict=settings.strict_generation,
        earlier=case.earlier,
    )
    # whether the pair equals an ARC-GEN pair, for the stricter control (analyze),
    # and the pair itself (a later configuration's prompt lists it when accepted)
    exact = digest in instance.arcgen_digests()
    shown = {"input": to_lists(pair[0]), "output": to_lists(pair[1])}
    return replace(verdict, detail={**verdict.detail, "arcgen_exact": exact, "pair": shown})


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck:
    """The generated pair."""
    return ConsistencyCheck((cast(tuple[Grid, Grid], answer),))
