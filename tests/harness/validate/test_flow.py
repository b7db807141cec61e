"""`validate` draws generator samples in chunks that flow into its engine: no phase barrier.

The real process sandbox, wrapped to record when each job starts and ends (and, for the
barrier test, to hold one task's generator jobs until a verifier has started): event
order, not timing, shows that a task's verifiers start while another task's samples are
still being drawn, and the outputs equal those of one job per task drawn up front.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arcjudge.harness.core.inputs import draw_samples
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import ValidateConfig, Validator
from arcjudge.sandbox import Job
from arcjudge.sandbox.types import GeneratorCall, Limits, Program, ProgramResult, ProgramStatus
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from tests.support.validate_world import FLIP, RECOLOR, make_world

HOLD_SECONDS = 60.0  # only a safety net: a barrier would hold the gated jobs this long


class Recording:
    """A sandbox that logs ``(event, kind, task)`` of every job around the real one.

    Args:
        inner: The real sandbox.
        hold: A task id whose first generator job waits until a verifier job has started.
        infra: ``(task id, nth generator job)`` answered ``infra`` without running.
    """

    def __init__(
        self, inner: Any, hold: str | None = None, infra: tuple[str, int] | None = None
    ) -> None:
        self.inner = inner
        self.hold = hold
        self.infra = infra
        self.events: list[tuple[str, str, str]] = []
        self.gate = threading.Event()
        self.held_by_timeout = False
        self._lock = threading.Lock()
        self._generated: dict[str, int] = {}

    @property
    def size(self) -> int:
        return int(self.inner.size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _log(self, event: str, kind: str, program: Program) -> None:
        with self._lock:
            self.events.append((event, kind, program.name.rpartition(":")[2]))

    def run(self, program: Program, inputs: Sequence[Any], *args: Any, **kw: Any) -> ProgramResult:
        self._log("start", "verify", program)
        self.gate.set()
        try:
            return self.inner.run(program, inputs, *args, **kw)  # type: ignore[no-any-return]
        finally:
            self._log("end", "verify", program)

    def generate(
        self, program: Program, calls: Sequence[GeneratorCall], *args: Any, **kw: Any
    ) -> ProgramResult:
        task = program.name.rpartition(":")[2]
        with self._lock:
            nth = self._generated[task] = self._generated.get(task, -1) + 1
        if (task, nth) == (self.hold, 0) and not self.gate.wait(HOLD_SECONDS):
            self.held_by_timeout = True
        self._log("start", "generate", program)
        try:
            if self.infra == (task, nth):
                return ProgramResult(ProgramStatus.INFRA, error="worker lost (test)")
            return self.inner.generate(program, calls, *args, **kw)  # type: ignore[no-any-return]
        finally:
            self._log("end", "generate", program)

    def map(self, jobs: Iterable[Job], *, mode: str = "transform") -> Iterator[tuple[int, Any]]:
        call = self.generate if mode == "generate" else self.run
        for index, job in enumerate(jobs):  # one at a time: the order the caller asks for
            yield index, call(job.program, job.inputs, job.limits, policy=job.policy)


def config_for(world: Path, samples: int = 8, **kw: Any) -> ValidateConfig:
    sources = (
        VerifierSource("rearc", "re-arc", world / "rearc"),
        VerifierSource("seven", "module", world / "seven"),
    )
    return ValidateConfig(
        tasks_dir=world / "tasks",
        sources=sources,
        arcgen_dir=world / "arcgen",
        generator=GeneratorSource("arc-gen", world / "gen"),
        samples=samples,
        seed=0,
        chunk=3,
        limits=Limits(wall_seconds=2.0, total_seconds=30.0),
        **kw,
    )


def validate(config: ValidateConfig, sandbox: Any, store_path: Path) -> Validator:
    store = ResultStore(store_path)
    try:
        validator = Validator(config, sandbox, store)
        validator.run()
    finally:
        store.close()
    return validator


def outputs(v: Validator) -> tuple[str, str, dict[str, Any]]:
    return "".join(v.verdict_lines()), "".join(v.suspect_lines()), v.manifest()


@pytest.fixture
def world(tmp_path: Path) -> Path:
    return make_world(tmp_path)


def test_a_tasks_verifiers_start_before_another_tasks_samples_are_drawn(world, sandbox, tmp_path):
    rec = Recording(sandbox, hold=RECOLOR)  # RECOLOR's first samples wait for a verifier
    validator = validate(config_for(world, sample_chunk=3), rec, tmp_path / "a.sqlite")
    assert not rec.held_by_timeout
    events = rec.events
    first_verify = events.index(("start", "verify", FLIP))
    last_recolor_sample = max(i for i, e in enumerate(events) if e == ("end", "generate", RECOLOR))
    assert first_verify < last_recolor_sample  # FLIP verified while RECOLOR still sampling
    # every task's own verifiers still wait for all of its own samples
    for task in (FLIP, RECOLOR):
        last_own = max(i for i, e in enumerate(events) if e == ("end", "generate", task))
        assert events.index(("start", "verify", task)) > last_own
    assert sum(e == ("start", "generate", FLIP) for e in events) == 3  # 8 samples, 3 per job
    # the outputs are those of a run with every task's samples in one job
    whole = validate(config_for(world, sample_chunk=1000), sandbox, tmp_path / "b.sqlite")
    assert outputs(validator) == outputs(whole)
    assert validator.manifest()["tasks"][RECOLOR]["generator"]["ok"] == 8


def test_samples_equal_those_drawn_up_front(world, sandbox, tmp_path):
    config = config_for(world, samples=7, sample_chunk=2)
    flowing = validate(config, sandbox, tmp_path / "a.sqlite")
    store = ResultStore(tmp_path / "b.sqlite")
    try:  # all tasks' samples first, one job per task: the old phase
        up_front, report = draw_samples(sandbox, store, config.generator, [FLIP, RECOLOR], 7, 0)  # type: ignore[arg-type]
    finally:
        store.close()
    for task in (FLIP, RECOLOR):
        assert [(s.index, s.seed, s.grid, s.expected) for s in flowing.samples[task]] == [
            (s.index, s.seed, s.grid, s.expected) for s in up_front[task]
        ]
        assert flowing.generator_report[task] == report[task]


def test_progress_counts_each_task_once_when_done(world, sandbox, tmp_path):
    seen: list[str] = []
    store = ResultStore(tmp_path / "a.sqlite")
    try:
        validator = Validator(config_for(world, sample_chunk=3), sandbox, store, seen.append)
        validator.run()
    finally:
        store.close()
    assert sorted(seen) == sorted([FLIP, RECOLOR])
    assert set(validator.records) == set(seen)


def test_infra_on_one_chunk_fails_the_task_generator_and_a_rerun_draws_it(world, sandbox, tmp_path):
    store_path = tmp_path / "a.sqlite"
    rec = Recording(sandbox, infra=(RECOLOR, 1))  # the second of RECOLOR's three jobs
    broken = validate(config_for(world, sample_chunk=3), rec, store_path)
    report = broken.manifest()["tasks"][RECOLOR]["generator"]
    assert report == {"failed": "infra", "error": "worker lost (test)"}
    assert RECOLOR not in broken.samples
    assert broken.manifest()["tasks"][FLIP]["generator"]["ok"] == 8
    # the infra failure is not cached: a rerun draws only the missing chunk, and equals a
    # fresh run
    rec2 = Recording(sandbox)
    again = validate(config_for(world, sample_chunk=3), rec2, store_path)
    assert [e for e in rec2.events if e[:2] == ("start", "generate")] == [
        ("start", "generate", RECOLOR)
    ]
    fresh = validate(config_for(world, sample_chunk=3), sandbox, tmp_path / "b.sqlite")
    assert outputs(again) == outputs(fresh)


def test_a_generator_that_does_not_load_is_reported_once_per_task(world, sandbox, tmp_path):
    (world / "gen" / "tasks" / f"task_{FLIP}.py").write_text("def generate(:\n")
    config = config_for(world, sample_chunk=3)
    first = validate(config, sandbox, tmp_path / "a.sqlite")
    entry = first.manifest()["tasks"][FLIP]["generator"]
    assert entry["failed"] == "load_error" and "SyntaxError" in entry["error"]
    whole = validate(replace(config, sample_chunk=1000), sandbox, tmp_path / "b.sqlite")
    assert outputs(first) == outputs(whole)
    rec = Recording(sandbox)  # the failure is cached: nothing is drawn again
    assert outputs(validate(config, rec, tmp_path / "a.sqlite")) == outputs(first)
    assert not [e for e in rec.events if e[1] == "generate"]
