"""``arcjudge score``: safe scoring of model-written Definition programs.

A Definition program passes when it returns the expected output on every demonstration,
the test pair, every ARC-GEN stable pair and every fresh generator sample of its task. It
runs in the sandbox with Definition limits and never sees an expected output. Failed
programs are classed as in the reference study: ``static`` (does not load), ``runtime``
(loads; every failure is an exception, timeout, memory kill or crash) or ``rule`` (returns
at least one wrong grid). ``infra`` marks a sandbox failure, which is never the model's.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.calls import Call, call_key, run_calls
from arcjudge.harness.core.engine import Candidate, Engine, FinishedTask
from arcjudge.harness.core.inputs import DEFAULT_SEED, SamplePlan, task_inputs
from arcjudge.harness.core.keys import module_fingerprint, program_key
from arcjudge.harness.core.manifest import read_manifest
from arcjudge.harness.core.programs import ProgramRecord, read_programs
from arcjudge.harness.core.results import CandidateOutcome, TaskInput, is_right
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.core.tally import Tally
from arcjudge.harness.score.records import (
    ExtractionRecord,
    GroupSummary,
    ScoreResult,
    ScoreSummary,
    TimingLine,
)
from arcjudge.safetext import json_dumps, terminal_safe
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.tasks import load_task, task_files
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS, FAILURE_CLASSES, ScoreFailure

_WRITTEN = frozenset(
    {"code", "response", "id", "task_id", "code_sha256", "verdict", "failure", "entry_points"}
)
"""Program record fields a result never carries over (dropped, or written by the result)."""


@dataclass(frozen=True)
class ScoreConfig:
    """Everything ``score`` needs besides the sandbox and the store."""

    programs_file: Path
    tasks_dir: Path
    arcgen_dir: Path | None = None
    generator: GeneratorSource | None = None
    samples: int = 0
    seed: int = DEFAULT_SEED
    verifiers_dir: Path | None = None
    entry_points: tuple[str, ...] = DEFINITION_ENTRY_POINTS
    limits: Limits = DEFINITION_LIMITS
    policy: PolicyMode = PolicyMode.WARN
    chunk: int = 512
    stop_at_first_failure: bool = False


def failure_class(outcome: CandidateOutcome, instances: list[TaskInput]) -> ScoreFailure | None:
    """``None`` for a pass, else ``static``, ``runtime``, ``rule`` or ``infra``."""
    if outcome.failure is not None:
        infra = outcome.failure[0] is ProgramStatus.INFRA
        return ScoreFailure.INFRA if infra else ScoreFailure.STATIC
    wrong = False
    bad = False
    for inst, res in zip(instances, outcome.results, strict=True):
        if res is None:
            continue
        if res.status is Status.OK:
            wrong = wrong or not is_right(res, inst)
        elif res.status is Status.INVALID_OUTPUT:
            wrong = True
        elif res.status is Status.INFRA:
            return ScoreFailure.INFRA
        else:
            bad = True
    if wrong:
        return ScoreFailure.RULE
    if bad:
        return ScoreFailure.RUNTIME
    if outcome.skipped or any(r is None for r in outcome.results):
        return ScoreFailure.INFRA
    return None


class Scorer:
    """Runs one scoring; results end up in ``results`` (in input order)."""

    def __init__(
        self,
        config: ScoreConfig,
        sandbox: Sandbox,
        store: ResultStore,
        progress: Callable[[int], object] | None = None,
        records: list[ProgramRecord] | None = None,
    ) -> None:
        """Read the programs (``records`` when given, else ``config.programs_file``).

        Raises:
            InputError: On a bad programs file, or task ids missing from the tasks.
        """
        self.config = config
        self.sandbox = sandbox
        self.store = store
        self.progress = progress
        self.records = (
            records
            if records is not None
            else read_programs(config.programs_file, config.entry_points)
        )
        paths = {p.stem: p for p in task_files(config.tasks_dir)}
        unknown = sorted({str(r.fields["task_id"]) for r in self.records} - paths.keys())
        if unknown:
            raise InputError(
                f"{config.programs_file}: task ids not in {config.tasks_dir}: "
                + ", ".join(unknown[:5])
                + (" ..." if len(unknown) > 5 else "")
            )
        self.task_paths = {
            t: paths[t] for t in sorted({str(r.fields["task_id"]) for r in self.records})
        }
        self.results: dict[int, ScoreResult] = {}
        self.timings: dict[int, float] = {}
        self.generator_report: dict[str, dict[str, Any]] = {}
        self._drawer: SamplePlan | None = None  # set by ``run`` when samples are asked for
        self._verifier: _SampleVerifier | None = None  # likewise, with ``--verifiers``
        self.runtime: dict[str, str] = {}  # the sandbox's runtime (set by ``run``)
        self.runtime_key = ""  # its fingerprint, part of every program key

    def _program(self, record: ProgramRecord) -> Program:
        return Program(
            record.code.encode("utf-8"),
            self.config.entry_points,
            (),
            "list",
            str(record.fields["id"]),
        )

    def _tasks(self) -> Iterator[tuple[str, list[TaskInput], list[Candidate[list[int]]]]]:
        runtime = self.runtime_key or self.sandbox.runtime_fingerprint()
        by_task: dict[str, list[int]] = defaultdict(list)
        for i, record in enumerate(self.records):
            by_task[str(record.fields["task_id"])].append(i)
        for task_id, path in self.task_paths.items():
            task = load_task(path)
            instances = task_inputs(task, self.config.arcgen_dir, self._samples(task_id))
            unique: dict[str, Candidate[list[int]]] = {}
            for i in by_task[task_id]:
                record = self.records[i]
                if not record.code.strip():
                    self.results[i] = self._static(record, "no code found in the response")
                    continue
                program = self._program(record)
                key = program_key(
                    program, "", "transform", self.config.limits, runtime, policy=self.config.policy
                )
                unique.setdefault(key, Candidate(program, key, []))
                unique[key].meta.append(i)
            yield task_id, instances, list(unique.values())

    def _static(self, record: ProgramRecord, reason: str) -> ScoreResult:
        return self._result(record, ScoreFailure.STATIC, error=reason)

    def _result(
        self,
        record: ProgramRecord,
        failure: ScoreFailure | None,
        *,
        tally: Tally | None = None,
        status: ProgramStatus | None = None,
        error: str | None = None,
        findings: tuple[str, ...] = (),
    ) -> ScoreResult:
        """The result of a program record (its fields but the code and reply carried over)."""
        extraction = record.extraction
        return ScoreResult(
            id=record.fields["id"],
            task_id=record.fields["task_id"],
            code_sha256=hashlib.sha256(record.code.encode("utf-8")).hexdigest(),
            failure=failure,
            tally=tally,
            status=status,
            error=error,
            findings=findings,
            extraction=None if extraction is None else ExtractionRecord.from_json(extraction),
            fields={k: v for k, v in record.fields.items() if k not in _WRITTEN},
            entry_points=self.config.entry_points,
        )

    def _task_done(self, task: FinishedTask[list[int]]) -> None:
        """Record a finished task's outcome for each program record its candidates stand for."""
        instances = task.instances
        for cand, outcome in zip(task.candidates, task.outcomes, strict=True):
            failure = failure_class(outcome, instances)
            tally = outcome.tally(instances) if outcome.failure is None else None
            for i in cand.meta:
                if outcome.failure is not None:
                    status, error = outcome.failure
                    result = self._result(
                        self.records[i],
                        failure,
                        status=status,
                        error=(error or "")[-2000:],
                        findings=outcome.findings,
                    )
                else:
                    result = self._result(
                        self.records[i], failure, tally=tally, findings=outcome.findings
                    )
                self.results[i] = result
                self.timings[i] = round(outcome.seconds, 6)
        if self.progress:
            self.progress(sum(len(c.meta) for c in task.candidates))

    def _samples(self, task_id: str) -> list[TaskInput]:
        """The task's generator samples, drawn (and verified) as the engine pulls the task.

        So only the samples of the tasks in flight are held, however many a task has.
        """
        if self._drawer is None:
            return []
        samples, self.generator_report[task_id] = self._drawer.draw(task_id)
        if self._verifier is not None:
            samples = self._verifier.verify(task_id, samples, self.generator_report[task_id])
        return samples

    def run(self) -> None:
        """Run every program on its task's instances, drawing each task's samples in turn.

        The scorer feeds the engine task by task and records each task as the engine hands
        it back finished: the engine never calls back into the scorer.
        """
        self.runtime = self.sandbox.runtime()
        self.runtime_key = self.sandbox.runtime_fingerprint()
        if self.config.generator is not None and self.config.samples > 0:
            self._drawer = SamplePlan(
                self.sandbox,
                self.store,
                self.config.generator,
                self.config.samples,
                self.config.seed,
                self.config.policy,
                self.config.chunk,
            )
            if self.config.verifiers_dir is not None:
                engine = Engine(self.sandbox, self.store, self.config.limits, self.config.policy,
                                self.config.chunk)  # fmt: skip
                self._verifier = _SampleVerifier(self.config.verifiers_dir, engine)
        engine = Engine(
            self.sandbox,
            self.store,
            self.config.limits,
            self.config.policy,
            self.config.chunk,
            self.config.stop_at_first_failure,
        )
        with engine.feed() as feed:
            for task in self._tasks():
                for finished in feed.add(task):
                    self._task_done(finished)
            for finished in feed.finish():
                self._task_done(finished)

    def scored(self) -> list[ScoreResult]:
        """The results, in the programs file's order (after :meth:`run`)."""
        return [self.results[i] for i in range(len(self.records))]

    def result_lines(self) -> Iterator[str]:
        """Lines of ``results.jsonl`` in the programs file's order (no timings: see below)."""
        for result in self.scored():
            yield json_dumps(result.to_json(), sort_keys=True, separators=(",", ":")) + "\n"

    def timings_of(self) -> list[TimingLine]:
        """Sandbox seconds per program (0 when cached), in the programs file's order."""
        return [
            TimingLine(record.fields["id"], self.timings.get(i, 0.0))
            for i, record in enumerate(self.records)
        ]

    def timing_lines(self) -> Iterator[str]:
        """Lines of ``timings.jsonl``: sandbox seconds per program (0 when cached)."""
        for line in self.timings_of():
            yield json_dumps(line.to_json(), sort_keys=True) + "\n"

    def summary(self, task_set: Mapping[str, Any] | None = None) -> ScoreSummary:
        """Per model (when the field exists) and overall statistics.

        Args:
            task_set: The record of the task set ``--tasks`` named (``None``: an ARC JSON
                directory; then, as when empty, ``summary.json`` has no ``task_set``).
        """
        groups: dict[str, list[ScoreResult]] = defaultdict(list)
        for result in self.scored():
            groups["(all)"].append(result)
            if result.model is not None:
                groups[result.model].append(result)
        return ScoreSummary(
            programs=len(self.records),
            programs_file=str(self.config.programs_file.resolve()),
            seed=self.config.seed,
            samples=self.config.samples,
            wall_seconds=self.config.limits.wall_seconds,
            groups={
                name: GroupSummary.of(groups[name])
                for name in sorted(groups, key=lambda n: (n != "(all)", n))
            },
            generator={t: self.generator_report[t] for t in sorted(self.generator_report)},
            task_set=task_set or None,
        )


class _SampleVerifier:
    """``--verifiers``: replaces sample outputs by the validated verifier's outputs.

    Through the engine and the store, so a rerun answers them from the cache.
    """

    def __init__(self, verifiers_dir: Path, engine: Engine) -> None:
        self.manifest = read_manifest(verifiers_dir).manifest
        self.engine = engine
        self.built: dict[str, tuple[VerifierSource, str]] = {}  # name -> (source, fingerprint)

    def verify(
        self, task_id: str, samples: list[TaskInput], report: dict[str, Any]
    ) -> list[TaskInput]:
        """The samples the task's chosen verifier answers, with its outputs.

        Records ``verified`` (how many are kept) in ``report`` when the verifier ran.
        """
        name = self.manifest.chosen.get(task_id)
        if not name:
            return []
        if not samples:
            return samples
        if name not in self.built:
            source = self.manifest.verifier_source(name)
            self.built[name] = (source, module_fingerprint(source.module_dirs))
        source, fingerprint = self.built[name]
        tp = source.program_for(task_id)
        if tp.program is None:
            return []
        key = call_key(self.engine, tp.program, fingerprint)
        (outcome,) = run_calls(self.engine, [Call(tp.program, key, [s.grid for s in samples])])
        kept: list[TaskInput] = []
        if outcome.failure is None:
            for sample, r in zip(samples, outcome.results, strict=True):
                if r is not None and r.status is Status.OK and r.grid is not None:
                    kept.append(
                        TaskInput(sample.split, sample.index, sample.grid, r.grid, sample.seed)
                    )
        report["verified"] = len(kept)
        return kept


def summary_table(summary: ScoreSummary) -> str:
    """A plain-text table of the summary."""
    head = ("group", "programs", "pass", "rate", "95% CI", "static", "runtime", "rule")
    rows: list[tuple[str, ...]] = [head]
    for name, group in summary.groups.items():
        g = group.to_json()
        low, high = g["pass_rate_ci95"]
        rows.append((
            terminal_safe(str(name)), str(g["programs"]), str(g["passed"]), f"{g['pass_rate']:.3f}",
            f"[{low:.3f}, {high:.3f}]", *(f"{g['failure_shares'][c]:.3f}" for c in FAILURE_CLASSES),
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
