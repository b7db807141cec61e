"""Issue 17's acceptance check on a dozen training tasks (``bench/analyze_synthetic.py``: 400).

The pipeline (``tests/support/synthetic_analysis.py``): our own lookup verifiers and generators,
``validate``, one ``dimensions build --generator --repeats 6 --configurations 2`` checked by
``bench/check_build.py``, six synthetic answerers of known behaviour (answers and sandboxed
Definition programs, per configuration; one of them with six runs), ``score``,
``dimensions score`` (configuration 2 ``--after`` configuration 1), ``dimensions analyze
--configuration``; every item and every section of ``analysis.json`` (Section 3.1's matched
budget and Table 6 too) against what the construction says. The tasks include ones whose
first test pair is an ARC-GEN pair and ones with an ARC-GEN pair on a demonstration input.
Needs the shared data (skipped without it).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest

from arcjudge import cli
from tests.support.synthetic_analysis import (
    ALWAYS_VALID,
    ONE_TYPE_WRONG,
    ORACLE,
    SECTION_CHECKS,
    SIX_RUNS,
    TWO_RUNS,
    Report,
    by_section,
    check_analysis,
    choose_tasks,
    run_pipeline,
)

TASKS = 12
FIRST = object()  # in a path below: the first task with all five instances


def run_cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv)
    assert code == 0, (argv, out.getvalue()[-2000:])
    return out.getvalue()


@pytest.fixture(scope="module")
def world(shared_data, tmp_path_factory) -> tuple[Report, dict]:
    tasks, arcgen = shared_data / "arc-agi-1" / "training", shared_data / "arc-gen-100k"
    chosen = choose_tasks(tasks, arcgen, TASKS)
    root = tmp_path_factory.mktemp("synthetic")
    box = ["--backend", "process", "--workers", "2", "--no-progress"]
    report = run_pipeline(tasks, arcgen, chosen, root, run_cli, box)
    analysis = json.loads((root / "analysis" / "analysis.json").read_text())
    return report, analysis


def test_every_check_holds(world):
    report, _ = world
    failed = [f"{c.section}: {c.name}: {p}" for c in report.failed for p in c.problems[:5]]
    assert report.checks and not failed, "\n".join(failed[:40])


def test_every_section_and_the_build_were_checked(world):
    report, analysis = world
    sections = by_section(report.checks)
    for key in [*SECTION_CHECKS, "inputs", "items", "build", "construction", "tables"]:
        assert sections.get(key), key
    assert set(analysis) - {"inputs"} == set(SECTION_CHECKS)


def test_the_build_has_every_candidate_type_and_the_three_editing_types_only(world):
    report, _ = world
    assert set(report.counts["editing pairs"]) <= {
        "human_error",
        "corrupted_verifier",
        "color_flip",
    }
    assert len(report.counts["classification slots"]) == 6
    assert "all checks passed" in report.check_build


# ---------------------------------------------------------------------------- the checks fail


def _failures(analysis: dict, report: Report) -> list[str]:
    c = report.construction
    assert c is not None
    inputs = analysis["inputs"]
    named = ("items_file", "instances_file", "definitions_file", "configuration_files")
    paths = {k: inputs[k] for k in named}
    return [p for check in check_analysis(analysis, c, paths) for p in check.problems]


def test_the_checks_hold_on_the_analysis_as_written(world):
    report, analysis = world
    assert _failures(analysis, report) == []


@pytest.mark.parametrize(
    "where",
    [
        ("accuracy", "models", ONE_TYPE_WRONG, "classification", "count"),
        ("accuracy", "models", ALWAYS_VALID, "independence_baseline"),
        (
            "classification_types",
            "models",
            ONE_TYPE_WRONG,
            "corrupted_verifier",
            "failures",
            "rate",
        ),
        ("classification_baselines", "always_valid", "strict", "passed"),
        (
            "self_consistency",
            "definition_correct",
            ONE_TYPE_WRONG,
            "classification",
            "wrong",
            "count",
        ),
        ("run_agreement", "models", TWO_RUNS, "jaccard"),
        ("definition_failures", "models", TWO_RUNS, "failures", "runtime"),
        ("generation_control", "models", ALWAYS_VALID, "arcgen_exact_passes"),
        ("matched_budget", "models", SIX_RUNS, "mean_over_dimensions", "wilcoxon_p"),
        ("matched_budget", "models", SIX_RUNS, "dimensions", "editing", "bootstrap_ci95", 0),
        ("matched_budget", "models", SIX_RUNS, "per_task", FIRST, "five_dimensions_once"),
        ("matched_budget", "models", ORACLE, "runs", 0),
        ("matched_budget", "pooled", "mean_over_dimensions", "t"),
        ("increased_sampling", "models", TWO_RUNS, "budgets", 1, "full_task", "sd"),
        ("increased_sampling", "models", TWO_RUNS, "budgets", 1, "hard_full_task", "count"),
        ("increased_sampling", "models", TWO_RUNS, "per_configuration", 1, "generation", "count"),
        ("increased_sampling", "models", SIX_RUNS, "selection", "passed_all_five"),
        ("matched_budget", "models", SIX_RUNS, "tasks_left_out"),
        ("increased_sampling", "models", SIX_RUNS, "budgets", 0, "definition", "mean"),
    ],
)
def test_a_changed_number_is_caught(world, where):
    report, analysis = world
    changed = copy.deepcopy(analysis)
    target = changed
    for key in where[:-1]:
        target = target[key if key != FIRST else report.construction.full[0]]
    last = where[-1] if where[-1] != FIRST else report.construction.full[0]
    value = target[last]
    target[last] = value + 1 if isinstance(value, int | float) else 1
    found = _failures(changed, report)
    assert found and all(where[0] in p for p in found), found


def test_a_section_without_a_check_is_caught(world):
    report, analysis = world
    found = _failures({**analysis, "a_new_section": {}}, report)
    assert found == ["a_new_section: no check in SECTION_CHECKS"]


def test_a_missing_section_is_caught(world):
    report, analysis = world
    for key in ("matched_budget", "increased_sampling"):
        found = _failures({k: v for k, v in analysis.items() if k != key}, report)
        assert found == [f"{key}: missing"], key
