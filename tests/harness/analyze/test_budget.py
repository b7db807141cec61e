"""Section 3.1, the matched-budget comparison, against an independent computation.

The exposure shares are counted again by brute force over every subset and rotation in
plain Python (and the one-dimension share against its closed form); the paired t statistic
from its textbook formula, the Wilcoxon statistic from ranks, and both p-values from
scipy on the same vectors; the bootstrap interval by resampling again.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import statistics
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from arcjudge import cli
from arcjudge.harness.analyze.budget import BUDGET, compare, exposure_fractions, exposure_shares
from arcjudge.harness.analyze.inputs import Assignments, BudgetTasks
from arcjudge.harness.analyze.study import analyze
from arcjudge.vocabulary import DIMENSIONS
from tests.support.analysis_records import full_build, inputs_of, item, write_jsonl


def brute_force(failed: list[list[bool]], rotations: bool = False) -> tuple[float, list[float]]:
    """Five dimensions once and one dimension five times, by listing every trial.

    Five dimensions once: every one-to-one assignment of the dimensions to the subset's
    runs (120), or with ``rotations`` the five cyclic shifts of the dimensions over them.
    """
    runs = range(len(failed))
    dims = list(range(len(DIMENSIONS)))
    multi_hits = multi_trials = 0
    single = [0.0] * len(dims)
    subsets = list(itertools.combinations(runs, 5))
    if rotations:
        orders = [[(d + shift) % 5 for d in dims] for shift in range(5)]
    else:
        orders = [list(p) for p in itertools.permutations(dims)]
    for subset in subsets:
        for order in orders:
            multi_trials += 1
            multi_hits += any(failed[subset[order[d]]][d] for d in dims)
        for d in dims:
            single[d] += any(failed[r][d] for r in subset)
    return multi_hits / multi_trials, [s / len(subsets) for s in single]


@pytest.mark.parametrize("rotations", [False, True])
@pytest.mark.parametrize("runs", [5, 6, 8])
def test_exposure_shares_are_what_listing_every_trial_gives(runs, rotations):
    rng = random.Random(runs)
    kind = Assignments.ROTATIONS if rotations else Assignments.ALL
    for _ in range(25):
        failed = [[rng.random() < 0.3 for _ in DIMENSIONS] for _ in range(runs)]
        multi, single = exposure_shares(np.array(failed), kind)
        want_multi, want_single = brute_force(failed, rotations)
        assert multi == pytest.approx(want_multi)
        assert list(single) == pytest.approx(want_single)
        for d in range(len(DIMENSIONS)):  # the closed form of "one dimension five times"
            fails = sum(row[d] for row in failed)
            closed = 1 - math.comb(runs - fails, 5) / math.comb(runs, 5)
            assert single[d] == pytest.approx(closed)


def test_all_assignments_are_the_default_and_differ_from_the_rotations():
    # runs 1 and 2 fail Definition and Classification, the other runs pass. Rotation r
    # probes Definition in run r + 1 and Classification in run r + 2 (mod 5): exposed for
    # r = 0, 1 and 4, 3/5. Of the 120 assignments, those with both in runs 3..5 expose
    # nothing: 1 - (3 * 2 * 3!) / 120 = 7/10.
    failed = np.zeros((5, 5), dtype=bool)
    definition, classification = DIMENSIONS.index("definition"), DIMENSIONS.index("classification")
    failed[[0, 1], definition] = failed[[0, 1], classification] = True
    default, _ = exposure_fractions(failed)
    assert default == exposure_fractions(failed, Assignments.ALL)[0] == Fraction(7, 10)
    rotated, _ = exposure_fractions(failed, Assignments.ROTATIONS)
    assert rotated == Fraction(3, 5)
    assert rotated != default


def test_exposure_shares_refuse_too_few_runs():
    with pytest.raises(ValueError, match="R >= 5"):
        exposure_shares(np.zeros((4, 5), dtype=bool))


def hand_wilcoxon(diff: list[float]) -> float:
    """min(W+, W-) over the non-zero differences, ties given their average rank."""
    nonzero = sorted((abs(d), d) for d in diff if d != 0)
    ranks: list[float] = []
    i = 0
    while i < len(nonzero):
        j = i
        while j < len(nonzero) and nonzero[j][0] == nonzero[i][0]:
            j += 1
        ranks.extend([(i + j + 1) / 2] * (j - i))  # ranks i+1..j averaged
        i = j
    plus = sum(r for r, (_, d) in zip(ranks, nonzero, strict=True) if d > 0)
    minus = sum(r for r, (_, d) in zip(ranks, nonzero, strict=True) if d < 0)
    return min(plus, minus)


def test_compare_matches_the_textbook_t_test_ranks_and_a_resampled_interval():
    rng = random.Random(3)
    a = [rng.random() for _ in range(30)]
    b = [x - 0.1 + rng.random() * 0.15 for x in a]
    found = compare(a, b, seed=77, resamples=4000)
    diff = [x - y for x, y in zip(a, b, strict=True)]
    n = len(diff)
    t = statistics.mean(diff) / (statistics.stdev(diff) / math.sqrt(n))
    assert found.t == pytest.approx(t)
    assert found.t_p == pytest.approx(2 * stats.t.sf(abs(t), n - 1))
    assert found.wilcoxon == pytest.approx(hand_wilcoxon(diff))
    assert found.wilcoxon_p == pytest.approx(stats.wilcoxon(a, b).pvalue)
    assert found.difference == pytest.approx(statistics.mean(diff))
    assert found.mean_a == pytest.approx(statistics.mean(a))
    # the interval: 4000 means of tasks resampled with replacement, seeded
    picks = np.random.default_rng(77).integers(0, n, size=(4000, n))
    means = np.asarray(diff)[picks].mean(axis=1)
    assert found.bootstrap_ci95 == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    low, high = found.bootstrap_ci95
    assert low < statistics.mean(diff) < high
    assert compare(a, b, seed=78, resamples=4000).bootstrap_ci95 != found.bootstrap_ci95


def test_compare_says_n_a_without_variance_or_difference():
    same = compare([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], seed=1, resamples=100)
    assert same.t is None and same.wilcoxon is None and same.difference == 0
    assert same.bootstrap_ci95 == (0.0, 0.0)
    shifted = compare([0.6, 0.6, 0.6], [0.5, 0.5, 0.5], seed=1, resamples=100)
    assert shifted.t is None  # constant difference: no variance
    assert shifted.wilcoxon == 0.0  # every difference positive: W- = 0
    assert compare([], [], seed=1, resamples=10).units == 0
    with pytest.raises(ValueError):
        compare([1.0], [], seed=1, resamples=10)


# ------------------------------------------------------------ the section


def items_of(model: str, fails: dict[tuple[int, str, str], bool], runs: int, tasks: list[str]):
    """Every five-dimension item of a model; ``fails[(run, task, dim)]`` marks failures."""
    return [
        item(model, run, task, dim, not fails.get((run, task, dim), False))
        for run in range(1, runs + 1)
        for task in tasks
        for dim in DIMENSIONS
    ]


def with_options(inputs, tasks: BudgetTasks, assignments: Assignments):
    return dataclasses.replace(inputs, budget_tasks=tasks, budget_assignments=assignments)


@pytest.mark.parametrize("old", [False, True], ids=["study", "every-task-rotations"])
def test_the_section_is_what_counting_trials_gives(tmp_path, old):
    tasks = ["a", "b", "c", "d"]
    instances = full_build(tasks)
    # steady: fails Definition in every run of task a: five dimensions once always probe
    # it (exposure 1), one dimension five times only when the dimension is Definition.
    steady = {(r, "a", "definition"): True for r in range(1, 7)}
    # flaky: random failures in 6 runs
    rng = random.Random(11)
    flaky = {
        (r, t, str(d)): rng.random() < 0.15 for r in range(1, 7) for t in tasks for d in DIMENSIONS
    }
    items = [
        *items_of("steady", steady, 6, tasks),
        *items_of("flaky", flaky, 6, tasks),
        *items_of("short", {}, 4, tasks),
    ]
    inputs = inputs_of(instances, items)
    if old:  # the options give the old behaviour: every task, the five rotations
        inputs = with_options(inputs, BudgetTasks.EVERY, Assignments.ROTATIONS)
    data = analyze(inputs).to_json()["matched_budget"]
    assert data["budget"] == BUDGET == 5
    assert data["task_selection"] == ("every" if old else "passed-all-five")
    assert data["assignments"] == ("rotations" if old else "all")
    assert data["models"]["short"]["computed"] is False
    assert "4 run(s)" in data["models"]["short"]["why"]
    pooled_a, pooled_b = [], []
    for name, fails in (("steady", steady), ("flaky", flaky)):
        entry = data["models"][name]

        def failures(task, fails=fails):
            return [[fails.get((r, task, str(d)), False) for d in DIMENSIONS] for r in range(1, 7)]

        # the study's tasks: passed on all five dimensions in at least one of the six runs
        chosen = tasks if old else [t for t in tasks if not all(any(r) for r in failures(t))]
        assert entry["computed"] and entry["subsets"] == math.comb(6, 5)
        assert entry["tasks"] == len(chosen) and entry["tasks_left_out"] == 4 - len(chosen)
        assert sorted(entry["per_task"]) == chosen
        a, b = [], []
        for task in chosen:
            multi, single = brute_force(failures(task), rotations=old)
            got = entry["per_task"][task]
            assert got["five_dimensions_once"] == pytest.approx(multi, abs=1e-6)
            for d, share in zip(DIMENSIONS, single, strict=True):
                assert got["one_dimension_five_times"][str(d)] == pytest.approx(share, abs=1e-6)
            a.append(multi)
            b.append(statistics.mean(single))
        mean = entry["mean_over_dimensions"]
        assert mean["five_dimensions_once"] == pytest.approx(statistics.mean(a), abs=1e-6)
        assert mean["one_dimension_five_times"] == pytest.approx(statistics.mean(b), abs=1e-6)
        if len(set(x - y for x, y in zip(a, b, strict=True))) > 1:
            assert mean["t_p"] == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=1e-6)
        pooled_a += a
        pooled_b += b
    steady = data["models"]["steady"]["per_task"]
    if old:
        assert steady["a"]["five_dimensions_once"] == 1.0
        assert steady["a"]["one_dimension_five_times"] == {
            str(d): (1.0 if d == "definition" else 0.0) for d in DIMENSIONS
        }
    else:  # it failed Definition of task a in every run: left out
        assert "a" not in steady and len(steady) == 3
    pooled = data["pooled"]
    assert pooled["models"] == ["flaky", "steady"]
    assert pooled["mean_over_dimensions"]["units"] == len(pooled_a)
    assert pooled["mean_over_dimensions"]["difference"] == pytest.approx(
        statistics.mean(pooled_a) - statistics.mean(pooled_b), abs=1e-6
    )


def test_an_exact_zero_difference_is_dropped():
    # On task "zero" five dimensions once and the mean over dimensions are both 11/15, but
    # the mean of the five per-dimension floats is 0.7333333333333334 against
    # 11/15 = 0.7333333333333333: with floats the difference was -1.1e-16, kept by the
    # Wilcoxon test (ranked below every other), and its statistic and p-value were off.
    zero = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [1, 0, 1, 0, 0], [0, 0, 0, 1, 1], [0, 0, 0, 1, 1],
            [0, 0, 0, 0, 1]]  # fmt: skip
    multi, single = brute_force(zero)
    assert multi - statistics.mean(single) != 0  # the floats' difference is no zero
    tasks = ["zero", "down", "two", "three"]
    fails = {(r + 1, "zero", str(d)): bool(zero[r][j]) for r in range(6)
             for j, d in enumerate(DIMENSIONS)}  # fmt: skip
    for r in range(1, 7):
        fails[(r, "down", "inversion")] = True
        fails[(r, "down", "editing")] = r % 2 == 0
        fails[(r, "three", "generation")] = r < 4
    fails[(1, "two", "definition")] = fails[(2, "two", "definition")] = True
    inputs = inputs_of(full_build(tasks), items_of("m", fails, 6, tasks))
    data = analyze(with_options(inputs, BudgetTasks.EVERY, Assignments.ROTATIONS)).to_json()
    mean = data["matched_budget"]["models"]["m"]["mean_over_dimensions"]
    diffs = []
    for task in tasks:
        failed = [[fails.get((r, task, str(d)), False) for d in DIMENSIONS] for r in range(1, 7)]
        once, each = brute_force(failed, rotations=True)  # k / 30 and k / 6, made exact
        exact = [Fraction(round(x * 6), 6) for x in each]
        diffs.append(Fraction(round(once * 30), 30) - sum(exact) / 5)
    assert diffs[0] == 0 and all(diffs[1:])
    nonzero = [float(d) for d in diffs if d != 0]
    assert mean["wilcoxon"] == pytest.approx(hand_wilcoxon(nonzero))
    assert mean["wilcoxon_p"] == pytest.approx(stats.wilcoxon(nonzero).pvalue, abs=1e-6)
    assert mean["difference"] == pytest.approx(float(sum(diffs) / len(diffs)), abs=1e-6)


def test_a_missing_item_counts_as_a_failure_and_is_counted():
    tasks = ["a", "b"]
    items = [
        i
        for i in items_of("m", {}, 5, tasks)
        if not (i["run"] == "3" and i["task_id"] == "b" and i["dimension"] == "editing")
    ]
    data = analyze(inputs_of(full_build(tasks), items)).to_json()["matched_budget"]
    entry = data["models"]["m"]
    assert entry["missing_items"] == 1
    # one subset (all five runs); Editing is probed in run 3 in one rotation of five
    assert entry["per_task"]["b"]["five_dimensions_once"] == pytest.approx(0.2)
    assert entry["per_task"]["b"]["one_dimension_five_times"]["editing"] == 1.0
    assert entry["per_task"]["a"]["five_dimensions_once"] == 0.0


def test_the_cli_writes_the_tables_and_reads_the_builds_repeats(tmp_path):
    tasks = ["a", "b", "c"]
    built = tmp_path / "built"
    built.mkdir()
    write_jsonl(built / "instances.jsonl", full_build(tasks))
    (built / "build.json").write_text(json.dumps({"seed": 77, "repeats": 5}))
    rng = random.Random(2)
    fails = {
        (r, t, str(d)): rng.random() < 0.2 for r in range(1, 6) for t in tasks for d in DIMENSIONS
    }
    fails.update({(r, "c", "editing"): True for r in range(1, 6)})  # c never passed entirely
    chosen = [
        t for t in tasks if any(not any(fails[(r, t, str(d))] for d in DIMENSIONS)
                                for r in range(1, 6))
    ]  # fmt: skip
    assert "c" not in chosen
    items_file = write_jsonl(tmp_path / "items.jsonl", items_of("m", fails, 5, tasks))
    out = tmp_path / "analysis"
    args = [
        "dimensions",
        "analyze",
        "--items",
        str(items_file),
        "--instances",
        str(built / "instances.jsonl"),
        "--bootstrap-resamples",
        "500",
        "--out",
        str(out),
    ]
    assert cli.main(args) == 0
    data = json.loads((out / "analysis.json").read_text())
    assert data["inputs"]["repeats"] == 5
    assert data["matched_budget"]["repeats_built"] == 5
    assert data["matched_budget"]["bootstrap"] == {"resamples": 500, "seed": 77}
    table = (out / "tables" / "matched_budget.md").read_text()
    assert "asked for 5 repeat(s)" in table
    assert f"| m | 5 | {len(chosen)} | {3 - len(chosen)} | 1 |" in table
    assert "passed on all five dimensions in at least one run" in table
    assert data["matched_budget"]["assignments"] == "all"
    old = [*args[:-2], "--budget-tasks", "every", "--budget-assignments", "rotations"]
    assert cli.main([*old, "--out", str(tmp_path / "old")]) == 0
    table = (tmp_path / "old" / "tables" / "matched_budget.md").read_text()
    assert "| m | 5 | 3 | 0 | 1 |" in table and "--budget-tasks every" in table
    assert "(--budget-assignments rotations)" in table
    dims = (out / "tables" / "matched_budget_dimensions.csv").read_text().splitlines()
    assert len(dims) == 1 + 2 * len(DIMENSIONS)  # the model, then the pooled row
    assert cli.main([*args[:-2], "--seed", "5", "--out", str(tmp_path / "b")]) == 0
    again = json.loads((tmp_path / "b" / "analysis.json").read_text())["matched_budget"]
    assert again["bootstrap"]["seed"] == 5
    # a bad build.json repeats is refused with the file named
    (built / "build.json").write_text(json.dumps({"repeats": 0}))
    assert cli.main(args) == 2


def test_bootstrap_resamples_must_be_positive(tmp_path, capsys):
    built = tmp_path / "i.jsonl"
    write_jsonl(built, full_build(["a"]))
    items_file = write_jsonl(tmp_path / "items.jsonl", items_of("m", {}, 1, ["a"]))
    code = cli.main(
        [
            "dimensions",
            "analyze",
            "--items",
            str(items_file),
            "--instances",
            str(built),
            "--bootstrap-resamples",
            "0",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2 and "--bootstrap-resamples" in capsys.readouterr().err


def test_read_build_repeats_takes_the_build_json_beside_the_instances(tmp_path):
    from arcjudge.errors import InputError
    from arcjudge.harness.dimensions.records import read_build_repeats

    instances = tmp_path / "instances.jsonl"
    assert read_build_repeats(instances) is None
    (tmp_path / "build.json").write_text('{"seed": 77}')
    assert read_build_repeats(instances) is None
    (tmp_path / "build.json").write_text('{"repeats": 7}')
    assert read_build_repeats(instances) == 7
    for bad in ('{"repeats": "7"}', '{"repeats": true}', "not json"):
        (tmp_path / "build.json").write_text(bad)
        with pytest.raises(InputError, match=r"build\.json"):
            read_build_repeats(instances)
