"""Hand-checked cases for the dimension rules, answer shapes, mixture and statistics."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest

from arcjudge.errors import InputError
from arcjudge.harness.core.stats import wilson_interval
from arcjudge.harness.dimensions.mixture import PRESETS, Mixture, draw, load_mixture
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.harness.dimensions.rules import (
    classification_verdict,
    distance,
    editing_verdict,
    generation_verdict,
    inversion_verdict,
    normalize_dimension,
    output_grid_verdict,
)
from arcjudge.harness.dimensions.statistics import model_statistics, proportion
from arcjudge.harness.dimensions.strategies import parse_answer
from arcjudge.sandbox.types import Status


def row(cells: list[int]) -> tuple[tuple[int, ...], ...]:
    return (tuple(cells),)


ZEROS10 = row([0] * 10)
ZEROS100 = row([0] * 100)


def differing(n: int, width: int) -> tuple[tuple[int, ...], ...]:
    """A 1 x width grid whose first n cells are 1 (distance n/width from all zeros)."""
    return row([1] * n + [0] * (width - n))


# ------------------------------------------------------------------ classification


@pytest.mark.parametrize(
    ("labels", "judgments", "passed", "right"),
    [
        (
            ["valid", "invalid", "invalid", "valid", "invalid"],
            [True, False, False, True, False],
            True,
            5,
        ),
        (
            ["valid", "invalid", "invalid", "valid", "invalid"],
            [True, False, False, True, True],
            False,
            4,
        ),
        (["invalid"] * 5, [True] * 5, False, 0),
        (["valid"] * 5, [True] * 5, True, 5),
    ],
)
def test_classification_passes_only_with_all_five_right(labels, judgments, passed, right):
    verdict = classification_verdict(labels, judgments)
    assert verdict.passed is passed
    assert verdict.detail["right"] == right
    assert (verdict.reason is None) is passed


# ------------------------------------------------------------------------ distance


def test_distance_is_exact_and_padded():
    assert distance(differing(7, 10), ZEROS10) == Fraction(7, 10)
    assert distance(((1,),), ((1, 2),)) == Fraction(1, 2)
    assert distance(((1, 1), (1, 1)), ((1, 1),)) == Fraction(1, 2)


# ------------------------------------------------------------------------- editing

OK = Status.OK


@pytest.mark.parametrize(
    ("moved_in", "moved_out", "passed"),
    [(0, 0, True), (70, 0, True), (0, 70, True), (70, 70, True), (71, 0, False), (0, 71, False)],
)
def test_editing_distance_limit_is_inclusive_at_exactly_0_70(moved_in, moved_out, passed):
    edited = (differing(moved_in, 100), differing(moved_out, 100))
    verdict = editing_verdict((ZEROS100, ZEROS100), edited, (OK, edited[1]), 0.70)
    assert verdict.passed is passed, verdict.reason
    if not passed:
        assert "> 0.7" in verdict.reason


def test_editing_needs_the_verifier_to_agree():
    edited = (differing(3, 10), differing(4, 10))
    wrong = editing_verdict((ZEROS10, ZEROS10), edited, (OK, ZEROS10), 0.70)
    assert not wrong.passed and "different output" in wrong.reason
    crashed = editing_verdict((ZEROS10, ZEROS10), edited, (Status.ERROR, None), 0.70)
    assert not crashed.passed and "error" in crashed.reason


# ---------------------------------------------------------------------- generation

DEMO = (ZEROS10, ZEROS10)


@pytest.mark.parametrize(
    ("moved_in", "moved_out", "passed", "strict_passed"),
    [
        (1, 1, False, False),  # both exactly at the threshold 0.1: a copy
        (2, 2, True, True),  # above on both sides
        (2, 1, True, False),  # only the output near: a copy only when strict
        (1, 2, True, False),  # only the input near: a copy only when strict
        (0, 10, True, False),  # same input, other output
        (0, 0, False, False),  # verbatim copy
        (10, 10, True, True),
    ],
)
def test_generation_threshold_edges(moved_in, moved_out, passed, strict_passed):
    pair = (differing(moved_in, 10), differing(moved_out, 10))
    verdict = generation_verdict(pair, (OK, pair[1]), [DEMO], 0.10)
    assert verdict.passed is passed, verdict.reason
    strict = generation_verdict(pair, (OK, pair[1]), [DEMO], 0.10, strict=True)
    assert strict.passed is strict_passed, strict.reason
    for v in (verdict, strict):
        if not v.passed:
            assert "copy of demonstration 0" in v.reason


def test_generation_checks_every_demonstration_and_the_verifier():
    far = (differing(5, 10), differing(5, 10))
    demos = [DEMO, (differing(5, 10), differing(4, 10))]  # second demo: 0 and 0.1 away
    assert "demonstration 1" in generation_verdict(far, (OK, far[1]), demos, 0.1).reason
    assert generation_verdict(far, (OK, far[1]), demos, 0.09).passed
    wrong = generation_verdict(far, (OK, ZEROS10), [DEMO], 0.1)
    assert not wrong.passed and "different output" in wrong.reason
    assert generation_verdict(far, (OK, far[1]), [DEMO], 0.1).passed


def test_generation_fails_a_copy_of_an_earlier_accepted_pair():
    far = (differing(5, 10), differing(5, 10))
    earlier = [(differing(9, 10), differing(9, 10)), (differing(5, 10), differing(4, 10))]
    verdict = generation_verdict(far, (OK, far[1]), [DEMO], 0.1, earlier=earlier)
    assert not verdict.passed and verdict.reason.startswith("copy of earlier accepted pair 1")
    assert verdict.detail["earlier_pair"] == 1 and "demonstration" not in verdict.detail
    # demonstrations first; the nearest distance counts the earlier pairs too
    assert "copy of demonstration 0" in generation_verdict(DEMO, (OK, DEMO[1]), [DEMO], 0.1,
                                                           earlier=earlier).reason  # fmt: skip
    passed = generation_verdict(far, (OK, far[1]), [DEMO], 0.09, earlier=earlier)
    assert passed.passed and passed.detail["nearest_distance"] == pytest.approx(0.1)


def test_generation_can_exclude_arcgen_pairs():
    pair = (differing(5, 10), differing(5, 10))
    digests = {"abc"}
    assert generation_verdict(pair, (OK, pair[1]), [DEMO], 0.1, digests, "zzz").passed
    verdict = generation_verdict(pair, (OK, pair[1]), [DEMO], 0.1, digests, "abc")
    assert not verdict.passed and "ARC-GEN" in verdict.reason


# ----------------------------------------------------------------------- inversion


def test_inversion():
    assert inversion_verdict(ZEROS10, (OK, ZEROS10)).passed
    assert not inversion_verdict(ZEROS10, (OK, differing(1, 10))).passed
    timeout = inversion_verdict(ZEROS10, (Status.TIMEOUT, None))
    assert not timeout.passed and "timeout" in timeout.reason


# ------------------------------------------------------------------ answer shapes

GRID = [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    ("dimension", "answer", "problem"),
    [
        ("classification", ["valid", "INVALID", True, False, " valid "], None),
        ("classification", {"judgments": [True] * 5}, None),
        ("classification", ["valid"] * 4, "got 4"),
        ("classification", "valid", "list of 5"),
        ("classification", ["valid", "maybe", "valid", "valid", "valid"], "judgment 1"),
        ("classification", ["Correct", "incorrect", "TRUE", "false", "valid"], None),
        ("classification", ["valid", "valid", "valid", "valid", "yes"], "judgment 4"),
        ("classification", [1, 0, 1, 0, 1], "judgment 0"),
        ("generation", {"input": GRID, "output": GRID}, None),
        ("generation", {"input": GRID}, "'input' and 'output'"),
        ("generation", [GRID, GRID], "'input' and 'output'"),
        ("generation", {"input": GRID, "output": [[1, 2], [3]]}, "output is not a grid"),
        ("editing", {"input": [[10]], "output": GRID}, "input is not a grid"),
        ("editing", {"input": [], "output": GRID}, "input is not a grid"),
        ("inversion", GRID, None),
        ("inversion", {"input": GRID}, None),
        ("inversion", {"grid": GRID}, "'input'"),
        ("inversion", "[[1]]", "not a grid"),
        ("inversion", None, "not a grid"),
        ("inversion", [[0.5]], "not a grid"),
        ("output_grid", [GRID], None),
        ("output_grid", GRID, None),  # a bare grid: one test input
        ("output_grid", [GRID, [[5]]], None),
        ("output_grid", [[GRID, [[5]]], GRID], None),  # two attempts, then one
        ("output_grid", {"outputs": [GRID]}, None),
        ("output_grid", [], "one grid (or attempts) per test input"),
        ("output_grid", "[[1]]", "one grid (or attempts) per test input"),
        ("output_grid", [GRID, [[10]]], "output 1 is not a grid"),
        ("output_grid", [[GRID, [[1], [2, 3]]]], "output 0, attempt 1 is not a grid"),
        ("output_grid", [GRID, []], "output 1 is not a grid"),
    ],
)
def test_parse_answer_shapes(dimension, answer, problem):
    parsed, reason = parse_answer(dimension, answer)
    if problem is None:
        assert reason is None and parsed is not None
    else:
        assert parsed is None and problem in reason


def test_parsed_values():
    assert parse_answer("classification", ["valid", "invalid", True, False, "Valid"])[0] == (
        True,
        False,
        True,
        False,
        True,
    )
    assert parse_answer("inversion", {"input": GRID})[0] == ((1, 2), (3, 4))
    assert parse_answer("editing", {"input": GRID, "output": [[5]]})[0] == (
        ((1, 2), (3, 4)),
        ((5,),),
    )


def test_parsed_output_grid_values():
    assert parse_answer("output_grid", GRID)[0] == ((((1, 2), (3, 4)),),)
    assert parse_answer("output_grid", [[GRID, [[5]]], [[6]]])[0] == (
        (((1, 2), (3, 4)), ((5,),)),
        (((6,),),),
    )


A, B, C = ((1, 2), (3, 4)), ((5,),), ((0, 0),)


@pytest.mark.parametrize(
    ("expected", "answers", "attempts", "passed", "reason"),
    [
        ((A,), ((A,),), 1, True, None),
        ((A, B), ((A,), (B,)), 1, True, None),
        ((A, B), ((A,), (C,)), 1, False, "wrong output for test input(s) [1]"),
        ((A, B), ((B,), (A,)), 1, False, "wrong output for test input(s) [0, 1]"),
        ((A,), ((C, A),), 1, False, "[0]"),  # the second attempt does not count at pass@1
        ((A,), ((C, A),), 2, True, None),  # ... it does at pass@2
        ((A,), ((C, B, A),), 2, False, "[0]"),  # a third never counts at pass@2
        ((A, B), ((A,),), 1, False, "1 output(s) for 2 test input(s)"),
        ((A,), ((A,), (B,)), 2, False, "2 output(s) for 1 test input(s)"),
    ],
)
def test_output_grid_every_test_output_exact(expected, answers, attempts, passed, reason):
    verdict = output_grid_verdict(expected, answers, attempts)
    assert verdict.passed is passed
    assert verdict.reason == reason if reason is None else reason in verdict.reason
    if len(answers) == len(expected):
        want = sum(e in a[:attempts] for e, a in zip(expected, answers, strict=True))
        assert verdict.detail["right"] == want


def test_output_grid_attempts_must_be_positive():
    with pytest.raises(ValueError):
        output_grid_verdict((A,), ((A,),), 0)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("output-grid", "output_grid"),
        ("Classification", "classification"),
        ("constrained_generation", "generation"),
        ("editing", "editing"),
        ("definition", "definition"),
        ("vibes", None),
        (3, None),
    ],
)
def test_dimension_names(name, canonical):
    assert normalize_dimension(name) == canonical


# ------------------------------------------------------------------------ mixture


def test_presets_sum_to_one_and_match_the_study():
    arc = load_mixture("arc-agi-1")
    assert arc.weight("valid") == 0.25 and arc.weight("human_error") == 0.235
    assert load_mixture("p-arc").weight("corrupted_verifier") == 0.160
    for name in PRESETS:
        assert sum(load_mixture(name).weights.values()) == pytest.approx(1.0)


def test_redistribution_is_proportional_over_invalid_types():
    arc = load_mixture("arc-agi-1")
    weights, moved = arc.for_available(["instance_mismatch", "color_flip"])
    assert moved == ["human_error", "corrupted_verifier", "retrieval"]
    assert weights["valid"] == 0.25
    # 0.75 of invalid weight over 0.215 : 0.067
    assert weights["instance_mismatch"] == pytest.approx(0.75 * 0.215 / 0.282)
    assert weights["color_flip"] == pytest.approx(0.75 * 0.067 / 0.282)
    assert sum(weights.values()) == pytest.approx(1.0)
    everything, none_moved = arc.for_available(
        ["human_error", "instance_mismatch", "corrupted_verifier", "retrieval", "color_flip"]
    )
    assert none_moved == [] and everything == {k: v for k, v in arc.weights.items() if v}
    assert arc.for_available([]) == (
        {},
        ["human_error", "instance_mismatch", "corrupted_verifier", "retrieval", "color_flip"],
    )


def test_draw_frequencies_follow_the_weights():
    weights, _ = load_mixture("arc-agi-1").for_available(["instance_mismatch", "color_flip"])
    rng = random.Random(5)
    n = 40_000
    counts = {k: 0 for k in weights}
    for _ in range(n):
        counts[draw(weights, rng)] += 1
    for kind, weight in weights.items():
        sd = (weight * (1 - weight) / n) ** 0.5
        assert abs(counts[kind] / n - weight) < 5 * sd, (kind, counts[kind] / n, weight)


@pytest.mark.parametrize(
    ("weights", "problem"),
    [
        ({"valid": 0.5, "color_flip": 0.4}, "sum to 1"),
        ({"valid": 0.5, "magic": 0.5}, "unknown"),
        ({"valid": 1.0}, "invalid type"),
        ({"valid": 1.5, "color_flip": -0.5}, ">= 0"),
        ({"valid": "half", "color_flip": 0.5}, "number"),
    ],
)
def test_bad_mixtures_are_rejected(tmp_path, weights, problem):
    with pytest.raises(ValueError, match=problem):
        Mixture("x", weights)
    path = tmp_path / "mix.json"
    path.write_text(json.dumps(weights))
    with pytest.raises(InputError, match=problem):
        load_mixture(path)


def test_mixture_file_and_unknown_name(tmp_path):
    path = tmp_path / "mix.json"
    path.write_text(json.dumps({"valid": 0.5, "color_flip": 0.5}))
    assert load_mixture(path).weight("color_flip") == 0.5
    with pytest.raises(InputError, match="neither a mixture preset"):
        load_mixture("arc-agi-3")


# --------------------------------------------------------------------- statistics


def test_wilson_interval_known_value():
    # 8 of 10: the Wilson 95% interval is [0.4902, 0.9433] (e.g. Agresti & Coull 1998).
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert proportion(8, 10)["ci95"] == [round(low, 6), round(high, 6)]


def _item(model, run, task, dim, passed, detail=None, consistency=None):
    data = {"model": model, "run": run, "task_id": task, "dimension": dim, "passed": passed,
            "reason": None if passed else "fail", "detail": detail or {}}  # fmt: skip
    if consistency is not None:
        data["consistency"] = consistency
    return DimensionItem.from_json(data)


def test_statistics_match_a_hand_computed_table():
    # Model m, 2 runs x 2 tasks. Pass table (D, C, G, E, I):
    #   run 1 t1: 1 1 1 1 1   run 1 t2: 1 0 1 0 1
    #   run 2 t1: 1 1 0 1 1   run 2 t2: 0 0 1 1 1
    table = {
        ("1", "t1"): (1, 1, 1, 1, 1),
        ("1", "t2"): (1, 0, 1, 0, 1),
        ("2", "t1"): (1, 1, 0, 1, 1),
        ("2", "t2"): (0, 0, 1, 1, 1),
    }
    dims = ("definition", "classification", "generation", "editing", "inversion")
    items = []
    for (run, task), passes in table.items():
        for dim, ok in zip(dims, passes, strict=True):
            detail = {"right": 5 if ok else 3} if dim == "classification" else {}
            items.append(_item("m", run, task, dim, bool(ok), detail=detail))
    stats = model_statistics(items, ["t1", "t2"])["m"]
    got = {d: (stats["dimensions"][d]["passed"], stats["dimensions"][d]["total"]) for d in dims}
    assert got == {
        "definition": (3, 4),
        "classification": (2, 4),
        "generation": (3, 4),
        "editing": (3, 4),
        "inversion": (4, 4),
    }
    assert stats["full_task"]["passed"] == 1 and stats["full_task"]["total"] == 4
    assert stats["independence_baseline"] == pytest.approx(0.75 * 0.5 * 0.75 * 0.75 * 1.0, abs=1e-6)
    assert stats["classification_judgments"] == {"right": 16, "total": 20, "accuracy": 0.8}
    assert stats["runs"] == ["1", "2"]
    low, high = wilson_interval(3, 4)
    assert stats["dimensions"]["definition"]["ci95"] == [round(low, 6), round(high, 6)]
    # Tasks outside the full-task set do not count there.
    assert model_statistics(items, ["t1"])["m"]["full_task"]["total"] == 2


def test_full_task_needs_every_dimension():
    items = [_item("m", "1", "t", "classification", True, detail={"right": 5})]
    stats = model_statistics(items, ["t"])["m"]
    assert stats["full_task"] is None and stats["independence_baseline"] is None
    assert stats["dimensions"]["generation"] is None


def test_self_consistency_split_by_right_and_wrong():
    items = [
        _item(
            "m",
            "1",
            "t",
            "generation",
            True,
            consistency={"agree": True, "definition_passes_train_test": True},
        ),
        _item(
            "m",
            "1",
            "u",
            "generation",
            False,
            consistency={"agree": True, "definition_passes_train_test": False},
        ),
        _item(
            "m",
            "1",
            "t",
            "classification",
            False,
            detail={"right": 4},
            consistency={
                "agree": [True, True, False, True, False],
                "right": [True, True, True, True, False],
                "definition_passes_train_test": True,
            },
        ),
    ]
    info = model_statistics(items, [])["m"]["self_consistency"]
    assert info["all"]["generation"]["right"] == {"agree": 1, "total": 1, "rate": 1.0}
    assert info["all"]["generation"]["wrong"] == {"agree": 1, "total": 1, "rate": 1.0}
    assert info["definition_passes_train_test"]["generation"]["wrong"]["total"] == 0
    cls = info["all"]["classification"]
    assert cls["right"] == {"agree": 3, "total": 4, "rate": 0.75}
    assert cls["wrong"] == {"agree": 0, "total": 1, "rate": 0.0}
    assert info["all"]["inversion"]["all"]["total"] == 0
