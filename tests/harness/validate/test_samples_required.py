"""A verifier is valid only on every generator sample asked: failed samples are redrawn.

The world of ``tests/support/validate_world.py`` with the fixture generator
``tests/fixtures/generator_flaky`` (its README): FLIP's generator fails on seeds
``s % 4 == 1``, RECOLOR has none. By default a failed sample is redrawn with the next seeds
(at most ``DRAW_LIMIT`` times the samples asked, every failed and redrawn seed in the
generator's report), and a task still short of samples makes a verifier right on what it
had ``valid_unsampled``: not chosen, counted apart. ``allow_missing_samples`` is the old
rule: failed samples dropped, such a verifier valid.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arcjudge.harness.core.inputs import DRAW_LIMIT
from arcjudge.harness.core.manifest import Manifest
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import (
    ValidateConfig,
    Validator,
    output_files,
    summary_lines,
)
from arcjudge.sandbox.types import GeneratorCall, Limits, Program, ProgramResult
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from arcjudge.vocabulary import Split, Verdict
from tests.support.validate_world import FLIP, RECOLOR, make_world

FLAKY = Path(__file__).resolve().parents[2] / "fixtures" / "generator_flaky"
SAMPLES = 8  # seeds 0..7 asked; 1 and 5 fail, their redraws 8 and 9, 9 fails, then 10


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "world").mkdir()
    root = make_world(tmp_path / "world")
    shutil.copytree(FLAKY, root / "flaky")
    return root


def config_for(world: Path, **changes: Any) -> ValidateConfig:
    config = ValidateConfig(
        tasks_dir=world / "tasks",
        sources=(
            VerifierSource("rearc", "re-arc", world / "rearc"),
            VerifierSource("golf", "golf", world / "golf"),
            VerifierSource("seven", "module", world / "seven"),
        ),
        arcgen_dir=world / "arcgen",
        generator=GeneratorSource("arc-gen", world / "flaky"),
        samples=SAMPLES,
        seed=0,
        chunk=4,
        limits=Limits(wall_seconds=2.0, total_seconds=60.0),
        sample_chunk=3,
    )
    return replace(config, **changes)


class CountingSandbox:
    """The real sandbox, counting the generator calls it is asked to draw."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.drawn: list[int] = []  # every seed drawn, in the order jobs were run

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate(
        self, program: Program, calls: Sequence[GeneratorCall], limits: Limits, **kw: Any
    ) -> ProgramResult:
        self.drawn += [c.seed for c in calls]
        return self.inner.generate(program, calls, limits, **kw)


def validate(config: ValidateConfig, sandbox: Any, store_path: Path) -> Validator:
    store = ResultStore(store_path)
    try:
        validator = Validator(config, sandbox, store)
        validator.run()
    finally:
        store.close()
    return validator


def verdicts(validator: Validator) -> dict[tuple[str, str], Verdict]:
    return {(r.task_id, r.source): r.verdict for r in validator.verdict_records()}


def outputs(validator: Validator) -> tuple[str, str, dict[str, Any]]:
    lines = "".join(validator.verdict_lines()), "".join(validator.suspect_lines())
    return (*lines, validator.manifest())


def test_a_task_without_generator_samples_makes_no_verifier_valid(world, sandbox, tmp_path):
    validator = validate(config_for(world), sandbox, tmp_path / "a.sqlite")
    v = verdicts(validator)
    # RECOLOR has no generator: right on demonstrations and ARC-GEN is not enough
    assert v[(RECOLOR, "rearc")] is Verdict.VALID_UNSAMPLED
    assert v[(RECOLOR, "seven")] is Verdict.VALID_UNSAMPLED  # wrong on samples it never saw
    assert v[(RECOLOR, "golf")] is Verdict.MISSING
    assert v[(FLIP, "rearc")] is Verdict.VALID  # all 8 samples, thanks to the redraws
    manifest = validator.manifest_record()
    entry = manifest.tasks[RECOLOR]
    assert (entry.chosen, entry.valid) == (None, ())
    assert entry.valid_unsampled == ("rearc", "seven")
    assert entry.generator == {"missing": True}
    assert "generator" not in entry.splits
    assert (manifest.coverage.covered, manifest.coverage.tasks) == (1, 2)
    assert (manifest.coverage.unsampled, manifest.coverage.covered_unsampled) == (1, 1)
    assert manifest.per_source["rearc"][Verdict.VALID_UNSAMPLED] == 1
    assert manifest.allow_missing_samples is False
    # what mutate, score --verifiers and dimensions build read: RECOLOR has no verifier
    read = Manifest.from_json(manifest.to_json())
    assert read.chosen == {FLIP: "rearc"}
    assert read.valid[RECOLOR] == set()
    assert read.to_json() == manifest.to_json()


def test_failed_samples_are_redrawn_with_the_next_seeds_and_recorded(world, sandbox, tmp_path):
    counting = CountingSandbox(sandbox)
    validator = validate(config_for(world), counting, tmp_path / "a.sqlite")
    report = validator.generator_report[FLIP]
    assert report["first_error"].startswith("seed 1: error: ")
    assert "this seed fails on purpose" in report["first_error"]
    assert {k: v for k, v in report.items() if k != "first_error"} == {
        "requested": 8,
        "ok": 8,
        "statuses": {"error": 3, "ok": 8},
        "failed_seeds": [1, 5, 9],
        "redrawn": [8, 9, 10],
    }
    samples = validator.samples[FLIP]
    assert [s.seed for s in samples] == [0, 2, 3, 4, 6, 7, 8, 10]
    assert all(s.index == s.seed and s.split == Split.GENERATOR for s in samples)
    assert sorted(counting.drawn) == list(range(11))  # each seed drawn once
    assert validator.splits[FLIP]["generator"] == 8
    assert FLIP not in validator.unsampled
    flip = next(r for r in validator.verdict_records() if (r.task_id, r.source) == (FLIP, "rearc"))
    assert flip.to_json()["splits"]["generator"] == [8, 8]


def test_the_draw_limit_ends_the_redraws_of_a_generator_that_always_fails(world, sandbox, tmp_path):
    (world / "flaky" / "tasks" / f"task_{FLIP}.py").write_text(
        "def generate():\n    raise ValueError('never')\n"
    )
    counting = CountingSandbox(sandbox)
    validator = validate(config_for(world), counting, tmp_path / "a.sqlite")
    limit = DRAW_LIMIT * SAMPLES
    report = validator.generator_report[FLIP]
    assert report["statuses"] == {"error": limit}
    assert report["failed_seeds"] == list(range(limit))
    assert report["redrawn"] == list(range(SAMPLES, limit))
    assert sorted(counting.drawn) == list(range(limit))
    assert verdicts(validator)[(FLIP, "rearc")] is Verdict.VALID_UNSAMPLED
    assert validator.manifest_record().coverage.covered == 0


def test_redrawn_samples_do_not_depend_on_the_chunks_or_the_cache(world, sandbox, tmp_path):
    config = config_for(world, probe_samples=2)
    first = validate(config, sandbox, tmp_path / "a.sqlite")
    whole = validate(replace(config, sample_chunk=1000), sandbox, tmp_path / "b.sqlite")
    assert outputs(first) == outputs(whole)
    counting = CountingSandbox(sandbox)  # every seed is in the store: nothing is drawn
    again = validate(config, counting, tmp_path / "a.sqlite")
    assert counting.drawn == []
    assert outputs(again) == outputs(first)
    # 10 asked (8 graded, 2 probes): 1, 5 and 9 fail, 10..12 are drawn; the first 8 grade
    samples = first.samples[FLIP]
    graded = [s.seed for s in samples if s.split == Split.GENERATOR]
    assert graded == [0, 2, 3, 4, 6, 7, 8, 10]
    assert [s.seed for s in samples if s.split == Split.PROBE] == [11, 12]
    assert first.generator_report[FLIP]["redrawn"] == [10, 11, 12]


def test_allow_missing_samples_gives_the_old_behaviour(world, sandbox, tmp_path):
    config = config_for(world, allow_missing_samples=True)
    counting = CountingSandbox(sandbox)
    validator = validate(config, counting, tmp_path / "a.sqlite")
    v = verdicts(validator)
    assert v[(RECOLOR, "rearc")] is Verdict.VALID
    assert v[(FLIP, "rearc")] is Verdict.VALID
    report = validator.generator_report[FLIP]  # dropped, not redrawn: the old report
    assert sorted(report) == ["first_error", "ok", "requested", "statuses"]
    assert (report["ok"], report["statuses"]) == (6, {"error": 2, "ok": 6})
    assert [s.seed for s in validator.samples[FLIP]] == [0, 2, 3, 4, 6, 7]
    assert sorted(counting.drawn) == list(range(SAMPLES))
    manifest = validator.manifest_record()
    assert manifest.chosen == {FLIP: "rearc", RECOLOR: "rearc"}
    assert manifest.tasks[RECOLOR].valid_unsampled == ()
    assert manifest.allow_missing_samples is True
    assert (manifest.coverage.covered, manifest.coverage.unsampled) == (2, 2)
    assert manifest.coverage.covered_unsampled == 2
    assert manifest.per_source["rearc"][Verdict.VALID_UNSAMPLED] == 0
    lines = summary_lines(manifest)
    assert any("fewer than 8 generator samples: 2" in line for line in lines)
    assert any("counted as covered (--allow-missing-samples)" in line for line in lines)


def test_the_summary_and_the_report_count_unsampled_tasks_apart(world, sandbox, tmp_path):
    validator = validate(config_for(world), sandbox, tmp_path / "a.sqlite")
    manifest, files = output_files(validator)
    lines = summary_lines(manifest)
    assert lines[0] == "tasks with >= 1 valid verifier: 1/2"
    assert "  rearc: valid 1, valid_unsampled 1" in lines
    assert (
        "tasks with fewer than 8 generator samples: 1; with a verifier right on the inputs "
        "they had: 1, valid_unsampled, not covered"
    ) in lines
    report = files["report.html"]
    assert '<p class="unsampled"><b>1</b> tasks had fewer than 8 generator samples' in report
    assert '<td class="v v-valid_unsampled">valid_unsampled</td>' in report
    assert "<th>valid_unsampled</th>" in report
    assert '"allow_missing_samples": false' in files["manifest.json"]


def test_a_run_with_every_sample_prints_and_reports_nothing_more(world, sandbox, tmp_path):
    config = config_for(world, generator=GeneratorSource("arc-gen", world / "gen"))
    validator = validate(config, sandbox, tmp_path / "a.sqlite")
    manifest, files = output_files(validator)
    assert not validator.unsampled
    assert all("generator samples" not in line for line in summary_lines(manifest))
    assert 'class="unsampled"' not in files["report.html"]
    assert sorted(manifest.tasks[FLIP].generator or {}) == [
        "first_error", "ok", "requested", "statuses"
    ]  # fmt: skip


def test_an_older_manifest_reads_as_made_under_the_old_rule(world, sandbox, tmp_path):
    validator = validate(config_for(world), sandbox, tmp_path / "a.sqlite")
    data = validator.manifest()
    assert data["allow_missing_samples"] is False
    older = {k: v for k, v in data.items() if k != "allow_missing_samples"}
    older["coverage"] = {k: data["coverage"][k] for k in ("tasks", "covered", "fraction")}
    older["tasks"] = {
        t: {k: v for k, v in e.items() if k != "valid_unsampled"} for t, e in data["tasks"].items()
    }
    read = Manifest.from_json(older)
    assert read.allow_missing_samples is True  # what every version before the rule did
    assert (read.coverage.unsampled, read.coverage.covered_unsampled) == (None, None)
    assert read.tasks[RECOLOR].valid_unsampled == ()
    assert read.to_json() == {**older, "allow_missing_samples": True}
