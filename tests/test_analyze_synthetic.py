"""Issue 17's acceptance check on a dozen training tasks (``bench/analyze_synthetic.py``: 400).

The pipeline (``tests/synthetic_analysis.py``): our own lookup verifiers and generators,
``validate``, ``dimensions build --generator`` checked by ``bench/check_build.py``, five
synthetic answerers of known behaviour (answers and sandboxed Definition programs),
``score``, ``dimensions score``, ``dimensions analyze``; every item and every section of
``analysis.json`` against what the construction says. The tasks include ones whose first
test pair is an ARC-GEN pair and ones with an ARC-GEN pair on a demonstration input.
Needs the shared data (skipped without it).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest

from arcjudge import cli
from synthetic_analysis import (
    ALWAYS_VALID,
    ONE_TYPE_WRONG,
    SECTION_CHECKS,
    TWO_RUNS,
    Report,
    by_section,
    check_analysis,
    choose_tasks,
    run_pipeline,
)

TASKS = 12


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
    paths = {k: inputs[k] for k in ("items_file", "instances_file", "definitions_file")}
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
    ],
)
def test_a_changed_number_is_caught(world, where):
    report, analysis = world
    changed = copy.deepcopy(analysis)
    target = changed
    for key in where[:-1]:
        target = target[key]
    value = target[where[-1]]
    target[where[-1]] = value + 1 if isinstance(value, int | float) else 1
    found = _failures(changed, report)
    assert found and all(where[0] in p for p in found), found


def test_a_section_without_a_check_is_caught(world):
    report, analysis = world
    found = _failures({**analysis, "matched_budget": {}}, report)
    assert found == ["matched_budget: no check in SECTION_CHECKS"]
