"""``arcjudge dimensions analyze``: every table against an independent computation.

Small synthetic builds, items and Definition results are written
(``tests/support/analysis_records.py``: no sandbox); the numbers are computed again in plain
Python (Wilson intervals from the formula, Jaccard and agreement from the sets, the trivial
baselines from the labels) and compared. A synthetic
answerer graded by ``dimensions score``'s own scorer (Classification only, so no program
runs) checks that the items record the judged-wrong slots by type. The last test runs the
README's loop on the bundled sample and checks the analysis of the two canned models.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import random
import statistics
import sys
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.analyze.inputs import read_inputs
from arcjudge.harness.analyze.study import POOLED, analyze
from arcjudge.harness.analyze.tables import Column, Share, Table
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.grading import DimensionScoreConfig, DimensionScorer
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.vocabulary import BUILT_DIMENSIONS, CANDIDATE_KINDS, DIMENSIONS
from tests.support.analysis_records import (
    full_build,
    inputs_of,
    instance,
    item,
    write_jsonl,
)

SAMPLE = sample_dir()
Z = statistics.NormalDist().inv_cdf(0.975)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval, from its textbook formula."""
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def assert_share(data: dict | None, k: int, n: int) -> None:
    assert data is not None and data["count"] == k and data["total"] == n, (data, k, n)
    assert data["rate"] == pytest.approx(k / n, abs=1e-6)
    low, high = wilson(k, n)
    assert data["ci95"][0] == pytest.approx(low, abs=2e-6)
    assert data["ci95"][1] == pytest.approx(high, abs=2e-6)


def test_the_wilson_check_itself_matches_known_intervals():
    # 0/10 and 8/10 at 95%: the commonly tabulated values
    assert wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert Share(8, 10).ci95 == pytest.approx(wilson(8, 10), abs=1e-6)


# -------------------------------------------------------------------- Table 3

TASKS = [f"t{i}" for i in range(6)]


@pytest.fixture(scope="module")
def random_items() -> tuple[list[dict], list[dict]]:
    """Two models, two runs, six tasks (t5 has no inversion instance); seeded passes."""
    rng = random.Random(5)
    instances = full_build(TASKS, missing={("t5", "inversion")})
    items = []
    for model, bias in (("m1", 0.8), ("m2", 0.4)):
        for run in (1, 2):
            for record in instances:
                items.append(
                    item(model, run, record["task_id"], record["dimension"], rng.random() < bias)
                )
    return instances, items


@pytest.mark.parametrize("over", ["every-task", "complete-tasks"])
def test_table3_is_what_an_independent_count_gives(random_items, over):
    """Default (the study's): t5, without an inversion instance, counts and fails full task;
    ``complete-tasks`` (the old behaviour) leaves it out."""
    instances, items = random_items
    result = analyze(inputs_of(instances, items, full_task_over=over)).to_json()["accuracy"]
    full = TASKS if over == "every-task" else [t for t in TASKS if t != "t5"]
    assert result["full_tasks"] == len(full)
    for model in ("m1", "m2"):
        mine = [i for i in items if i["model"] == model]
        entry = result["models"][model]
        rates = []
        for dim in BUILT_DIMENSIONS:
            these = [i["passed"] for i in mine if i["dimension"] == dim]
            assert_share(entry[dim], sum(these), len(these))
            if dim in DIMENSIONS:
                rates.append(sum(these) / len(these))
        cells = [
            all(
                any(
                    i["passed"]
                    for i in mine
                    if (i["run"], i["task_id"], i["dimension"]) == (run, t, d)
                )
                for d in DIMENSIONS
            )
            for run in ("1", "2")
            for t in full
        ]
        assert len(cells) == 2 * len(full)  # n = tasks x runs
        assert_share(entry["full_task"], sum(cells), len(cells))
        assert entry["independence_baseline"] == pytest.approx(math.prod(rates), abs=1e-6)
        grid = [i["passed"] for i in mine if i["dimension"] == "output_grid"]
        drop = sum(grid) / len(grid) - sum(cells) / len(cells)
        assert entry["output_grid_drop"] == pytest.approx(drop, abs=1e-6)


def test_the_cli_writes_every_table_as_csv_and_markdown_and_same_bytes(tmp_path, random_items):
    instances, items = random_items
    items = [dict(i, model="a|<b>" if i["model"] == "m2" else "m1") for i in items]
    inst = write_jsonl(tmp_path / "instances.jsonl", instances)
    its = write_jsonl(tmp_path / "items.jsonl", items)
    outs = []
    for name in ("one", "two"):
        args = ["dimensions", "analyze", "--items", str(its), "--instances", str(inst)]
        assert cli.main([*args, "--out", str(tmp_path / name)]) == 0
        outs.append(tmp_path / name)
    names = sorted(p.name for p in (outs[0] / "tables").iterdir())
    stems = [
        "appendix_f",
        "classification_baselines",
        "generation_control",
        "matched_budget",
        "matched_budget_dimensions",
        "classification_types_pooled",
        "denominators",
        "table1",
        "table3",
        "table4",
        "table5",
        "table6",
        "table7",
        "table9",
        "tasks_left_out",
    ]
    assert names == sorted(f"{s}.{e}" for s in stems for e in ("csv", "md"))
    for rel in [f"tables/{n}" for n in names] + ["analysis.json", "report.html"]:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
    # The CSV holds the JSON's numbers; Markdown and HTML keep a hostile name inert.
    data = json.loads((outs[0] / "analysis.json").read_text())
    rows = list(csv.DictReader(io.StringIO((outs[0] / "tables" / "table3.csv").read_text())))
    assert [r["model"] for r in rows] == ["a|<b>", "m1"]
    for row in rows:
        entry = data["accuracy"]["models"][row["model"]]
        for dim in (*BUILT_DIMENSIONS, "full_task"):
            assert int(row[f"{dim}_count"]) == entry[dim]["count"]
            assert float(row[f"{dim}_ci_low"]) == pytest.approx(entry[dim]["ci95"][0], abs=1e-6)
    markdown = (outs[0] / "tables" / "table3.md").read_text()
    assert "| a\\|<b> |" in markdown
    report = (outs[0] / "report.html").read_text()
    assert "<b>" not in report and "a|&lt;b&gt;" in report
    # Figure 3 only: no item here records its judgments, so no per-type chart
    assert report.count("<svg") == 1 and 'aria-label="Figure 3' in report


def test_items_of_another_build_are_refused(tmp_path, random_items):
    instances, items = random_items
    with pytest.raises(InputError, match="no such instance"):
        inputs_of(instances, [*items, item("m1", 1, "elsewhere", "editing", True)])
    inst = write_jsonl(tmp_path / "i.jsonl", instances)
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"model": "m"}\n')
    code = cli.main(
        [
            "dimensions",
            "analyze",
            "--items",
            str(bad),
            "--instances",
            str(inst),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2 and not (tmp_path / "o").exists()


def test_a_table_renders_shares_missing_values_and_refuses_ragged_rows():
    table = Table(
        "t",
        "T",
        "note",
        (Column("name"), Column("x", "share"), Column("y", "number")),
        (("a", Share(1, 4), 0.5), ("b", None, None)),
    )
    assert table.csv().splitlines() == [
        "name,x_count,x_total,x_rate,x_ci_low,x_ci_high,y",
        "a,1,4,0.250000,{:.6f},{:.6f},0.500000".format(*wilson(1, 4)),
        "b,,,,,,",
    ]
    assert "| b | n/a | n/a |" in table.markdown()
    with pytest.raises(ValueError, match="a row of 2 cells"):
        Table("t", "T", "", (Column("a"),), (("x", "y"),))


# ------------------------------------------------------- generation control


def test_the_arcgen_control_fails_exact_matches_and_recomputes_full_task():
    tasks = ["g0", "g1", "g2", "g3"]
    instances = full_build(tasks)
    items = []
    exact = {"g0": True, "g1": False, "g2": True, "g3": False}
    for t in tasks:
        for d in BUILT_DIMENSIONS:
            detail = {"arcgen_exact": exact[t]} if d == "generation" else {}
            items.append(item("m", 1, t, d, t != "g3" or d != "editing", detail))
        # a second model whose items predate arcgen_exact
        items.extend(item("old", 1, t, d, True) for d in BUILT_DIMENSIONS)
    data = analyze(inputs_of(instances, items)).to_json()["generation_control"]["models"]
    m = data["m"]
    assert m["recorded"] is True and m["arcgen_exact_passes"] == 2
    assert_share(m["generation"], 4, 4)
    assert_share(m["generation_arcgen_excluded"], 2, 4)  # g1, g3
    assert_share(m["full_task"], 3, 4)  # g3 fails editing
    assert_share(m["full_task_arcgen_excluded"], 1, 4)  # only g1 left
    assert m["full_task_change"] == pytest.approx(1 / 4 - 3 / 4)
    assert m["independence_baseline_arcgen_excluded"] == pytest.approx(0.5 * 0.75)
    old = data["old"]
    assert old["recorded"] is False and old["generation_arcgen_excluded"] is None
    assert old["full_task_arcgen_excluded"] is None and old["arcgen_exact_passes"] is None


# -------------------------------------------------------------------- Table 1


def _kinds_for(task_index: int) -> list[str]:
    """Five slots cycling through all six candidate types (every type appears)."""
    return [CANDIDATE_KINDS[(task_index + s) % len(CANDIDATE_KINDS)] for s in range(5)]


class _NoSandbox:
    """Grading Classification runs no program: any use of the sandbox but its size fails."""

    size = 1

    def __getattr__(self, name):
        raise AssertionError(f"the sandbox was used ({name})")


@pytest.mark.parametrize("wrong_on", list(CANDIDATE_KINDS))
def test_a_model_wrong_on_exactly_one_type_fails_only_there(tmp_path, wrong_on):
    tasks = [f"c{i}" for i in range(6)]
    instances = [instance(t, "classification", _kinds_for(i)) for i, t in enumerate(tasks)]
    answers = []
    for record in instances:
        for run in (1, 2):
            judged = [
                (label == "valid") != (kind == wrong_on)
                for label, kind in zip(record["key"]["labels"], record["key"]["kinds"], strict=True)
            ]
            answers.append(
                {
                    "task_id": record["task_id"],
                    "dimension": "classification",
                    "model": "one_type",
                    "run": run,
                    "answer": judged,
                }
            )
            answers.append(
                {
                    "task_id": record["task_id"],
                    "dimension": "classification",
                    "model": "oracle",
                    "run": run,
                    "answer": [lb == "valid" for lb in record["key"]["labels"]],
                }
            )
    config = DimensionScoreConfig(
        instances_file=write_jsonl(tmp_path / "instances.jsonl", instances),
        answers_file=write_jsonl(tmp_path / "answers.jsonl", answers),
    )
    scorer = DimensionScorer(config)
    store = ResultStore(tmp_path / "cache.sqlite")
    try:
        scorer.run(_NoSandbox(), store)  # type: ignore[arg-type]
    finally:
        store.close()
    graded = [json.loads(line) for line in scorer.item_lines()]
    for record in graded:  # the items say which slots were wrong, and their types
        kinds = next(i["key"]["kinds"] for i in instances if i["task_id"] == record["task_id"])
        assert record["detail"]["kinds"] == kinds
        want = [s for s, k in enumerate(kinds) if k == wrong_on and record["model"] == "one_type"]
        assert record["detail"]["wrong_slots"] == want
    data = analyze(inputs_of(instances, graded)).to_json()["classification_types"]
    for kind in CANDIDATE_KINDS:
        slots = sum(k == kind for i in instances for k in i["key"]["kinds"]) * 2  # two runs
        with_kind = sum(kind in i["key"]["kinds"] for i in instances) * 2
        one = data["models"]["one_type"][kind]
        assert one["items"] == with_kind
        assert_share(one["failures"], slots if kind == wrong_on else 0, slots)
        assert_share(data["models"]["oracle"][kind]["failures"], 0, slots)
        assert_share(data["pooled"][kind]["failures"], slots if kind == wrong_on else 0, 2 * slots)
    assert data["unjudged_items"] == {"one_type": 0, "oracle": 0}


def test_items_without_judgments_are_counted_apart_and_kinds_must_match():
    instances = [instance("c0", "classification"), instance("c1", "classification")]
    kinds = instances[0]["key"]["kinds"]
    items = [
        item("m", 1, "c0", "classification", False, {"wrong_slots": [1], "kinds": kinds}),
        item("m", 1, "c1", "classification", False),  # no answer: nothing judged
    ]
    data = analyze(inputs_of(instances, items)).to_json()["classification_types"]
    assert data["unjudged_items"] == {"m": 1} and data["judged_items"] == {"m": 1}
    assert_share(data["models"]["m"]["color_flip"]["failures"], 1, 1)
    assert_share(data["models"]["m"]["valid"]["failures"], 0, 2)
    assert data["models"]["m"]["human_error"]["failures"] is None
    other = [
        item(
            "m",
            1,
            "c0",
            "classification",
            True,
            {"wrong_slots": [], "kinds": list(reversed(kinds))},
        )
    ]
    with pytest.raises(InputError, match="kinds differ"):
        analyze(inputs_of(instances, other))


def test_table1_is_per_model_and_type_with_the_median_candidates_row():
    """The study's Table 1: a row per model, a column per type, the median count last."""
    rng = random.Random(11)
    tasks = [f"c{i}" for i in range(7)]
    instances = [instance(t, "classification", _kinds_for(i)) for i, t in enumerate(tasks)]
    items = []
    answered = {"a": tasks, "b": tasks[:4], "c": tasks[2:]}  # unequal numbers of candidates
    for model, mine in answered.items():
        for record in instances:
            if record["task_id"] not in mine:
                continue
            kinds = record["key"]["kinds"]
            wrong = [s for s in range(5) if rng.random() < 0.3]
            detail = {"wrong_slots": wrong, "kinds": kinds}
            items.append(item(model, 1, record["task_id"], "classification", not wrong, detail))
    result = analyze(inputs_of(instances, items))
    table = next(t for t in result.tables() if t.name == "table1")
    rows = list(csv.DictReader(io.StringIO(table.csv())))
    assert [r["model"] for r in rows] == ["a", "b", "c", "(median per model)"]
    counts: dict[str, dict[str, list[int]]] = {}
    for model, mine in answered.items():
        counts[model] = {str(k): [0, 0] for k in CANDIDATE_KINDS}
        for i in items:
            if i["model"] != model:
                continue
            for slot, kind in enumerate(i["detail"]["kinds"]):
                counts[model][kind][0] += slot in i["detail"]["wrong_slots"]
                counts[model][kind][1] += 1
        row = rows[list(answered).index(model)]
        assert int(row["items"]) == len(mine)
        for kind, (failed, judged) in counts[model].items():
            if not judged:
                assert row[f"{kind}_count"] == ""
                continue
            assert (int(row[f"{kind}_count"]), int(row[f"{kind}_total"])) == (failed, judged)
    median = rows[-1]
    assert float(median["items"]) == statistics.median(len(m) for m in answered.values())
    for kind in CANDIDATE_KINDS:
        want = statistics.median(counts[m][kind][1] for m in answered)
        assert float(median[f"{kind}_count"]) == want and median[f"{kind}_total"] == ""
    assert "| (median per model) |" in table.markdown()
    data = result.to_json()["classification_types"]
    assert data["median_candidates"] == {
        str(k): statistics.median(counts[m][k][1] for m in answered) for k in CANDIDATE_KINDS
    }
    pooled = next(t for t in result.tables() if t.name == "classification_types_pooled")
    assert pooled.title.startswith("Supplementary") and "table8" not in [
        t.name for t in result.tables()
    ]


def test_the_trivial_baselines_are_counted_exactly_from_the_labels():
    rng = random.Random(3)
    instances = [
        instance(f"b{i}", "classification", [rng.choice(["valid", "color_flip"]) for _ in range(5)])
        for i in range(40)
    ]
    instances.append(instance("all_valid", "classification", ["valid"] * 5))
    instances.append(instance("all_invalid", "classification", ["retrieval"] * 5))
    items = [item("m", 1, "b0", "classification", False)]
    data = analyze(inputs_of(instances, items)).to_json()["classification_baselines"]
    labels = [i["key"]["labels"] for i in instances]
    for name, word in (("always_valid", "valid"), ("always_invalid", "invalid")):
        passed = sum(all(label == word for label in ls) for ls in labels)
        right = sum(label == word for ls in labels for label in ls)
        assert data[name]["strict"] == {
            "passed": passed,
            "instances": len(labels),
            "accuracy": round(passed / len(labels), 6),
        }
        assert data[name]["per_judgment"] == {
            "right": right,
            "judgments": 5 * len(labels),
            "accuracy": round(right / (5 * len(labels)), 6),
        }
        assert passed >= 1


# ------------------------------------------------------- Tables 4 and 5


def test_self_consistency_tables_split_by_definition_and_answer():
    rng = random.Random(9)
    tasks = [f"s{i}" for i in range(8)]
    instances = full_build(tasks)
    items = []
    for model in ("m1", "m2"):
        for t in tasks:
            good = rng.random() < 0.5
            for dim in ("classification", "generation", "inversion"):
                if dim == "classification":
                    agree = [rng.random() < 0.7 for _ in range(5)]
                    right = [rng.random() < 0.6 for _ in range(5)]
                    info = {"definition_passes_train_test": good, "agree": agree, "right": right}
                    items.append(item(model, 1, t, dim, all(right), {}, info))
                else:
                    passed = rng.random() < 0.5
                    info = {"definition_passes_train_test": good, "agree": rng.random() < 0.6}
                    items.append(item(model, 1, t, dim, passed, {}, info))
    data = analyze(inputs_of(instances, items)).to_json()["self_consistency"]

    def pairs(chosen, dim):
        for i in chosen:
            if i["dimension"] != dim:
                continue
            c = i["consistency"]
            if dim == "classification":
                yield from zip(c["agree"], c["right"], strict=True)
            else:
                yield c["agree"], i["passed"]

    for name in ("m1", "m2", POOLED):
        mine = [i for i in items if name == POOLED or i["model"] == name]
        good = [i for i in mine if i["consistency"]["definition_passes_train_test"]]
        for key, chosen in (("definition_correct", good), ("unconditional", mine)):
            for dim in ("classification", "generation", "inversion"):
                found = list(pairs(chosen, dim))
                for group, keep in (("right", True), ("wrong", False)):
                    these = [a for a, r in found if r == keep]
                    got = data[key][name][dim][group]
                    if these:
                        assert_share(got, sum(these), len(these))
                    else:
                        assert got is None
                assert_share(data[key][name][dim]["all"], sum(a for a, _ in found), len(found))
        # Table 4's headline: every answer of the three dimensions together.
        every = [
            p for dim in ("classification", "generation", "inversion") for p in pairs(good, dim)
        ]
        for group, keep in (("right", True), ("wrong", False)):
            these = [a for a, r in every if r == keep]
            got = data["definition_correct_over_dimensions"][name][group]
            assert_share(got, sum(these), len(these))
    table4 = next(t for t in analyze(inputs_of(instances, items)).tables() if t.name == "table4")
    assert [c.name for c in table4.columns[1:3]] == ["all_dimensions_right", "all_dimensions_wrong"]
    assert [r[0] for r in table4.rows] == ["m1", "m2", POOLED]


# ------------------------------------------------------------------ Table 7


def _run_items(model: str, passing: dict[int, set[str]], tasks: list[str]) -> list[dict]:
    """Items passing all five dimensions exactly on each run's tasks (editing fails else)."""
    items = []
    for run, good in passing.items():
        for t in tasks:
            for d in BUILT_DIMENSIONS:
                items.append(item(model, run, t, d, t in good or d != "editing"))
    return items


def test_two_runs_that_disagree_on_known_tasks_give_the_known_jaccard_and_agreement():
    tasks = [f"r{i}" for i in range(10)]
    instances = full_build(tasks)
    a, b = set(tasks[:6]), set(tasks[3:8])  # differ on r0 r1 r2 (a only), r6 r7 (b only)
    c = set(tasks[::2])
    items = [
        *_run_items("two", {1: a, 2: b}, tasks),
        *_run_items("three", {1: a, 2: b, 3: c}, tasks),
        *_run_items("single", {1: a}, tasks),
        *_run_items("none", {1: set(), 2: set()}, tasks),
    ]
    data = analyze(inputs_of(instances, items)).to_json()["run_agreement"]["models"]
    two = data["two"]
    assert two["passing"] == {"1": sorted(a), "2": sorted(b)}
    assert two["intersection"] == sorted(a & b) and two["union"] == sorted(a | b)
    assert two["jaccard"] == pytest.approx(3 / 8)  # {r3 r4 r5} of {r0..r7}
    assert two["agreement"] == pytest.approx(5 / 10)  # r3 r4 r5 pass, r8 r9 fail in both
    three = data["three"]
    sets = [a, b, c]
    assert three["jaccard"] == pytest.approx(len(a & b & c) / len(a | b | c))
    pairwise = [
        sum((t in x) == (t in y) for t in tasks) / 10 for x, y in itertools.combinations(sets, 2)
    ]
    assert three["agreement"] == pytest.approx(sum(pairwise) / 3)
    assert [p["runs"] for p in three["pairs"]] == [["1", "2"], ["1", "3"], ["2", "3"]]
    assert [p["agreement"] for p in three["pairs"]] == pytest.approx(pairwise)
    assert data["single"]["jaccard"] is None and data["single"]["agreement"] is None
    assert data["single"]["intersection"] == data["single"]["union"] == sorted(a)
    assert data["none"]["jaccard"] is None and data["none"]["agreement"] == 1.0


def test_a_model_without_a_dimension_has_no_run_agreement():
    tasks = ["x0", "x1"]
    items = [item("m", 1, t, d, True) for t in tasks for d in BUILT_DIMENSIONS if d != "editing"]
    data = analyze(inputs_of(full_build(tasks), items)).to_json()
    assert data["run_agreement"]["models"]["m"] is None
    assert data["accuracy"]["models"]["m"]["full_task"] is None


def test_a_task_missing_a_dimension_fails_table7_by_default_and_is_left_out_with_the_option():
    tasks = [f"r{i}" for i in range(4)]
    instances = full_build(tasks, missing={("r3", "generation")})
    items = [
        item("m", run, i["task_id"], i["dimension"], True) for run in (1, 2) for i in instances
    ]
    default = analyze(inputs_of(instances, items)).to_json()["run_agreement"]["models"]["m"]
    assert default["tasks"] == 4 and default["intersection"] == tasks[:3]
    assert default["agreement"] == 1.0  # r3 fails in both runs: the same outcome
    old = analyze(inputs_of(instances, items, full_task_over="complete-tasks")).to_json()
    assert old["run_agreement"]["models"]["m"]["tasks"] == 3
    assert old["accuracy"]["models"]["m"]["full_task"]["total"] == 6
    new = analyze(inputs_of(instances, items)).to_json()["accuracy"]["models"]["m"]
    assert (new["full_task"]["count"], new["full_task"]["total"]) == (6, 8)


@pytest.mark.parametrize("over", ["every-task", "complete-tasks"])
def test_every_table_of_full_task_states_its_n_and_the_tasks_left_out_with_why(over):
    tasks = [f"d{i}" for i in range(5)]
    instances = full_build(tasks, missing={("d1", "editing"), ("d4", "inversion")})
    items = [
        item(m, run, i["task_id"], i["dimension"], True)
        for m, runs in (("a", (1, 2)), ("b", (1, 2, 3)))
        for run in runs
        for i in instances
    ]
    skipped = {"z9": "no valid verifier (all 2 failed)"}
    result = analyze(inputs_of(instances, items, full_task_over=over, skipped=skipped))
    data = result.to_json()["denominators"]
    counted = 5 if over == "every-task" else 3
    assert data["full_task_over"] == over and data["full_tasks"] == counted
    assert data["tasks_built"] == 5 and data["complete_tasks"] == 3
    assert data["missing_dimensions"] == {"d1": ["editing"], "d4": ["inversion"]}
    assert data["not_built"] == skipped
    assert data["models"] == {
        "a": {"runs": 2, "tasks": counted, "n": 2 * counted},
        "b": {"runs": 3, "tasks": counted, "n": 3 * counted},
    }
    accuracy = result.to_json()["accuracy"]["models"]
    for model in ("a", "b"):  # the n of Table 3's full task is the same
        assert accuracy[model]["full_task"]["total"] == data["models"][model]["n"]
    tables = {t.name: t for t in result.tables()}
    left = list(csv.DictReader(io.StringIO(tables["tasks_left_out"].csv())))
    assert [(r["task"], r["why"]) for r in left] == [
        ("d1", "no instance of editing"),
        ("d4", "no instance of inversion"),
        ("z9", "no valid verifier (all 2 failed)"),
    ]
    assert left[-1]["effect"] == "in no table (not built)"
    assert ("as a failure" in left[0]["effect"]) == (over == "every-task")
    for name in ("table3", "generation_control", "table7", "denominators"):
        note = tables[name].note
        assert "d1, d4" in note and "z9" in note, name
        assert ("counts as a failure" in note) == (over == "every-task"), name


# ------------------------------------------------------------------ Table 9


def _result(n: int, model: str | None, failure: str | None) -> dict:
    record = {
        "id": n,
        "task_id": f"t{n}",
        "code_sha256": "0" * 64,
        "verdict": "pass" if failure is None else "fail",
        "failure": failure,
    }
    if model is not None:
        record["model"] = model
    if failure == "static":
        record.update(status="load_error", error="SyntaxError")
    else:
        record.update(splits={"train": [1, 1]}, statuses={"train": {"ok": 1}}, first_failure={})
    return record


def test_definition_failures_are_shares_of_failures_per_model_pooled_and_excluding(tmp_path):
    plan = {
        "a": [None, None, "static", "static", "static", "rule"],
        "b": [None, "runtime", "rule", "rule", "infra"],
        "c": ["static", "runtime", "runtime"],
        None: ["rule"],
    }
    records = [
        _result(n, m, f) for n, (m, f) in enumerate((m, f) for m, fs in plan.items() for f in fs)
    ]
    write_jsonl(tmp_path / "results.jsonl", records)
    instances = full_build(["t"])
    items = [item("a", 1, "t", "editing", True)]
    read = read_inputs(
        write_jsonl(tmp_path / "items.jsonl", items),
        write_jsonl(tmp_path / "inst.jsonl", instances),
        tmp_path,
        ("c", "nobody"),
    )
    assert len(read.definitions or ()) == len(records)  # the directory's results.jsonl
    data = analyze(read).to_json()["definition_failures"]

    def check(group: dict, failures: list[str | None]) -> None:
        failed = [f for f in failures if f in ("static", "runtime", "rule")]
        assert group["programs"] == len(failures) and group["failed"] == len(failed)
        assert group["passed"] == failures.count(None)
        assert group["failures"]["infra"] == failures.count("infra")
        for cls in ("static", "runtime", "rule"):
            if failed:
                assert_share(group["failure_shares"][cls], failed.count(cls), len(failed))
        assert_share(group["load_failure_share"], failures.count("static"), len(failures))

    for model in ("a", "b", "c"):
        check(data["models"][model], plan[model])
    check(data["models"]["(no model)"], plan[None])
    check(data["pooled"], [f for fs in plan.values() for f in fs])
    check(data["pooled_excluding"], [f for m, fs in plan.items() if m != "c" for f in fs])
    assert data["excluded_models"] == ["c", "nobody"]
    assert data["excluded_models_not_found"] == ["nobody"]
    rows = list(
        csv.DictReader(
            io.StringIO(next(t for t in analyze(read).tables() if t.name == "table9").csv())
        )
    )
    assert [r["group"] for r in rows][-2:] == [POOLED, "(all models but c, nobody)"]


def test_without_definition_results_table9_is_empty_and_says_why():
    tables = analyze(inputs_of(full_build(["t"]), [item("a", 1, "t", "editing", True)])).tables()
    table9 = next(t for t in tables if t.name == "table9")
    assert table9.rows == () and "no Definition results" in table9.note


# ------------------------------------------------------ the sample, end to end


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


@pytest.fixture(scope="module")
def sample_analysis(tmp_path_factory) -> tuple[Path, dict]:
    """The README's loop on the sample with its shipped replies, then analyze."""
    out = tmp_path_factory.mktemp("analyze_loop")
    s = SAMPLE
    run_cli("validate", "--sample", "--out", str(out / "val"))
    run_cli(
        "mutate",
        "--tasks",
        str(s / "tasks"),
        "--manifest",
        str(out / "val"),
        "--source",
        f"re-arc=re-arc:{s / 're-arc'}",
        "--source",
        f"golf=golf:{s / 'golf'}",
        "--source",
        f"module=module:{s / 'module'}",
        "--out",
        str(out / "mut"),
    )
    run_cli(
        "dimensions",
        "build",
        "--tasks",
        str(s / "tasks"),
        "--manifest",
        str(out / "val"),
        "--corruptions",
        str(out / "mut" / "corruptions.jsonl"),
        "--out",
        str(out / "built"),
    )
    instances = out / "built" / "instances.jsonl"
    run_cli(
        "dimensions",
        "score",
        "--instances",
        str(instances),
        "--replies",
        str(s / "replies.jsonl"),
        "--out",
        str(out / "scored"),
    )
    code = cli.main(
        [
            "dimensions",
            "analyze",
            "--items",
            str(out / "scored" / "items.jsonl"),
            "--instances",
            str(instances),
            "--definitions",
            str(out / "scored" / "definitions.jsonl"),
            "--exclude-model",
            "hasty",
            "--out",
            str(out / "analysis"),
        ]
    )
    assert code == 0
    return out, json.loads((out / "analysis" / "analysis.json").read_text())


def test_the_sample_analysis_is_what_the_canned_models_were_made_to_do(sample_analysis):
    sys.path.insert(0, str(Path(__file__).parents[2] / "fixtures"))
    import sample_replies

    out, data = sample_analysis
    instances = [json.loads(line) for line in (out / "built" / "instances.jsonl").open()]
    summary = json.loads((out / "scored" / "summary.json").read_text())
    # Table 3 is dimensions score's summary.
    for model in ("careful", "hasty"):
        entry, stats = data["accuracy"]["models"][model], summary["models"][model]
        for dim in BUILT_DIMENSIONS:
            assert entry[dim]["count"] == stats["dimensions"][dim]["passed"]
            assert entry[dim]["ci95"] == stats["dimensions"][dim]["ci95"]
        assert entry["full_task"]["count"] == (8 if model == "careful" else 0)
        assert entry["independence_baseline"] == stats["independence_baseline"]
    # careful's generated pairs are the build's references: generator samples (the valid
    # pairs come from the manifest's generator), none an ARC-GEN pair: the control keeps them.
    generation = {i["task_id"]: i for i in instances if i["dimension"] == "generation"}
    exact = 0
    for record in generation.values():
        ref = record["key"]["reference"]
        text = json.dumps([ref["input"], ref["output"]], separators=(",", ":"))
        exact += hashlib.sha256(text.encode()).hexdigest()[:16] in record["key"]["arcgen_digests"]
    control = data["generation_control"]["models"]["careful"]
    assert len(generation) == 10 and exact == control["arcgen_exact_passes"] == 0
    assert control["full_task_arcgen_excluded"]["count"] == 8
    # Table 1: hasty calls everything valid, careful flips slot 0 of one task.
    classification = [i for i in instances if i["dimension"] == "classification"]
    types = data["classification_types"]["models"]
    ((task, _),) = [m for m in sample_replies.CAREFUL_MISTAKES if m[1] == "classification"]
    flipped = next(i["key"]["kinds"][0] for i in classification if i["task_id"] == task)
    for kind in CANDIDATE_KINDS:
        slots = sum(k == kind for i in classification for k in i["key"]["kinds"])
        if not slots:
            assert types["hasty"][kind]["failures"] is None
            continue
        assert_share(types["hasty"][kind]["failures"], 0 if kind == "valid" else slots, slots)
        assert_share(types["careful"][kind]["failures"], int(kind == flipped), slots)
    # The trivial baselines, from the labels.
    labels = [i["key"]["labels"] for i in classification]
    base = data["classification_baselines"]
    assert base["always_valid"]["strict"]["passed"] == sum(set(ls) == {"valid"} for ls in labels)
    assert base["always_invalid"]["per_judgment"]["right"] == sum(
        ls.count("invalid") for ls in labels
    )
    # Table 7: one run: the passing tasks, nothing to compare.
    careful = data["run_agreement"]["models"]["careful"]
    assert len(careful["intersection"]) == 8 and careful["jaccard"] is None
    # Table 9: careful's two wrong programs and hasty's identity functions are rule failures.
    failures = data["definition_failures"]
    assert failures["models"]["careful"]["failures"]["rule"] == 10 - len(
        [t for t in generation if t in sample_replies.PROGRAMS]
    )
    assert failures["pooled"]["failure_shares"]["rule"]["rate"] == 1.0
    assert failures["pooled_excluding"]["programs"] == 10
    # Tables 4 and 5 pool the items' own consistency records.
    items = [json.loads(line) for line in (out / "scored" / "items.jsonl").open()]
    agreed = [
        a
        for i in items
        if i["model"] == "careful" and i["dimension"] == "classification" and i.get("consistency")
        for a in i["consistency"]["agree"]
    ]
    assert_share(
        data["self_consistency"]["unconditional"]["careful"]["classification"]["all"],
        sum(agreed),
        len(agreed),
    )
    assert (out / "analysis" / "tables" / "table3.md").read_text().count("| careful |") == 1
