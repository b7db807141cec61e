"""The Classification draw rules (``dimensions build --mixture-rule``) and the default mixture.

The default rule draws without replacement within an instance (a used-up type's weight
goes to the remaining types, ``valid`` included), ``renormalized`` also gives a missing
type's weight to ``valid``, and ``fixed-valid`` is arcjudge's draw before, reproduced here
by a copy of that function (``_old_draw``) so the option can be checked slot by slot.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from arcjudge.grids import to_grid
from arcjudge.harness.dimensions.corruptions import CandidatePair
from arcjudge.harness.dimensions.mixture import (
    default_mixture,
    draw,
    for_all_available,
    load_mixture,
    unused_weights,
)
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan, ValidPair, pair_json
from arcjudge.harness.dimensions.strategies import classification
from arcjudge.tasks import Pair
from arcjudge.vocabulary import EDITING_KINDS, INVALID_KINDS, MixtureRule

ARC = load_mixture("arc-agi-1")


def _plan(pools: dict[str, int], valid: int) -> TaskPlan:
    """A plan with ``pools[kind]`` confirmed candidates per kind and ``valid`` valid pairs."""

    def grid(*cells: int) -> Any:
        return to_grid([[c // 10**d % 10 for c in cells] for d in range(3)])

    pairs = [ValidPair(Pair(grid(i), grid(i, i)), "arc-gen", i) for i in range(valid)]
    confirmed: dict[str, list[tuple[CandidatePair, Any]]] = {}
    for n, (kind, count) in enumerate(pools.items()):
        confirmed[kind] = [
            (CandidatePair("t", kind, grid(n, i), grid(9), None, {"i": i}), None)
            for i in range(count)
        ]
    proposed = {k: [c for c, _ in v] for k, v in confirmed.items()}
    plan = TaskPlan(None, None, None, pairs, proposed)  # draw reads the pools only
    plan.confirmed.update(confirmed)
    return plan


def _settings(rule: MixtureRule) -> DrawSettings:
    return DrawSettings(ARC, EDITING_KINDS, 0.1, rule)


def _old_draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload | None:
    """``classification.draw`` as it was before the rules (main at 7153d95), for comparison."""
    available = [k for k in INVALID_KINDS if plan.confirmed.get(k)]
    weights, moved = settings.mixture.for_available(available)
    if not weights:
        return None
    used: dict[str, set[int]] = {}
    candidates, labels, kinds, provenance = [], [], [], []
    for _ in range(5):
        kind = draw(weights, rng)
        if kind == "valid":
            indices = list(range(1, len(plan.valid))) or [0]
        else:
            indices = list(range(len(plan.confirmed[kind])))
        taken = used.setdefault(kind, set())
        fresh = [i for i in indices if i not in taken]
        index = rng.choice(fresh or indices)
        taken.add(index)
        if kind == "valid":
            valid = plan.valid[index]
            assert valid.pair.output is not None
            candidates.append(pair_json(valid.pair.input, valid.pair.output))
            provenance.append({**valid.provenance(), "reused": not fresh})
        else:
            cand, _ = plan.confirmed[kind][index]
            candidates.append(pair_json(cand.input, cand.output))
            provenance.append({**cand.detail, "reused": not fresh})
        labels.append("valid" if kind == "valid" else "invalid")
        kinds.append(kind)
    key = {
        "labels": labels,
        "kinds": kinds,
        "provenance": provenance,
        "weights": weights,
        "redistributed": moved,
    }
    return Payload({"candidates": candidates}, key)


PLANS = {
    "small pools": ({"human_error": 1, "instance_mismatch": 2, "corrupted_verifier": 1}, 3),
    "one human error": ({"human_error": 1}, 50),
    "everything": ({k: 6 for k in INVALID_KINDS}, 200),
    "too few for five": ({"color_flip": 1}, 2),
}


@pytest.mark.parametrize("name", PLANS)
def test_the_default_never_repeats_a_candidate_while_an_unused_one_remains(name):
    pools, valid = PLANS[name]
    plan = _plan(pools, valid)
    total = sum(pools.values()) + max(valid - 1, 1)
    for seed in range(300):
        payload = classification.draw(
            plan, _settings(MixtureRule.WITHOUT_REPLACEMENT), random.Random(seed)
        )
        assert payload is not None
        shown = [str(c) for c in payload.prompt["candidates"]]
        reused = [p["reused"] for p in payload.key["provenance"]]
        # a repeat only once every candidate of every type is shown
        assert len(set(shown)) == min(5, total), (seed, payload.key["kinds"])
        assert reused == [i >= total for i in range(5)]
        assert Counter(payload.key["kinds"])["human_error"] <= pools.get("human_error", 0)


def test_the_old_draw_repeats_where_the_default_does_not():
    """The case the default rule changes: the one human error drawn twice."""
    plan = _plan(*PLANS["one human error"])
    old = [_old_draw(plan, _settings(MixtureRule.FIXED_VALID), random.Random(s)) for s in range(50)]
    assert any(Counter(p.key["kinds"])["human_error"] > 1 for p in old if p is not None)


def test_a_used_up_types_weight_goes_to_the_others_valid_included():
    weights, _ = ARC.for_available(INVALID_KINDS)
    left = unused_weights(weights, ["valid", "instance_mismatch"])
    assert left == {"valid": 0.25, "instance_mismatch": 0.215}
    assert unused_weights(weights, []) == weights  # all shown: a candidate must repeat
    # drawn: valid in proportion 0.25 : 0.215 (5 standard deviations)
    rng = random.Random(3)
    share = sum(draw(left, rng) == "valid" for _ in range(20_000)) / 20_000
    expected = 0.25 / 0.465
    assert abs(share - expected) < 5 * (expected * (1 - expected) / 20_000) ** 0.5


def test_renormalized_gives_an_unavailable_types_weight_to_every_available_type():
    weights, moved = for_all_available(ARC, ["instance_mismatch", "color_flip"])
    assert moved == ["human_error", "corrupted_verifier", "retrieval"]
    total = 0.25 + 0.215 + 0.067
    assert weights == pytest.approx(
        {"valid": 0.25 / total, "instance_mismatch": 0.215 / total, "color_flip": 0.067 / total}
    )
    assert for_all_available(ARC, INVALID_KINDS)[0] == ARC.for_available(INVALID_KINDS)[0]
    assert for_all_available(ARC, []) == ({}, list(INVALID_KINDS))
    # the build's draw under the rule: the key records those weights, and valid's share
    # of the slots is above the fixed 0.25 (a task with only instance mismatches)
    plan = _plan({"instance_mismatch": 6}, 200)
    keys = [
        classification.draw(plan, _settings(MixtureRule.RENORMALIZED), random.Random(s))
        for s in range(400)
    ]
    assert all(k is not None and k.key["weights"]["valid"] == pytest.approx(0.25 / 0.465)
               for k in keys)  # fmt: skip
    labels = [label for k in keys if k is not None for label in k.key["labels"]]
    assert labels.count("valid") / len(labels) > 0.45  # 0.54 expected; 0.25 before


@pytest.mark.parametrize("name", PLANS)
def test_fixed_valid_reproduces_the_old_draw_exactly(name):
    plan = _plan(*PLANS[name])
    settings = _settings(MixtureRule.FIXED_VALID)
    changed = 0
    for seed in range(200):
        old = _old_draw(plan, settings, random.Random(seed))
        assert classification.draw(plan, settings, random.Random(seed)) == old
        default = classification.draw(
            plan, _settings(MixtureRule.WITHOUT_REPLACEMENT), random.Random(seed)
        )
        changed += default != old
    if name != "everything":  # with 6 of each type nothing is used up in 5 slots
        assert changed > 0


@pytest.mark.parametrize(
    ("task_set", "preset"),
    [
        (None, "arc-agi-1"),
        ({"format": "p-arc-csv"}, "p-arc"),
        ({"format": "p-arc-parquet"}, "p-arc"),
        ({"format": "task-folders"}, "arc-agi-1"),
    ],
)
def test_a_p_arc_export_defaults_to_the_p_arc_mixture(task_set, preset):
    assert default_mixture(task_set) == preset
