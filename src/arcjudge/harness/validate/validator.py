"""``arcjudge validate``: which verifier sources are right on every instance of each task.

A verifier is *valid* for a task when it returns the expected output on every
demonstration (train and test pairs with outputs), every ARC-GEN stable pair, and every
one of the fresh samples asked from the task's generator. A sample whose call fails is
redrawn with the next seeds (up to ``DRAW_LIMIT`` times the samples asked); a task still
short of the asked samples (its generator missing or failed, too many calls failed) makes
a verifier right on every input it had ``valid_unsampled``, not valid: not chosen, counted
apart (``allow_missing_samples``: the old rule, no redraw, such a verifier is valid).

Work is split into (program, chunk of inputs) items spread over the sandbox pool; tasks
are read one at a time as items are needed, so memory stays bounded; every finished item
is committed to the result store, so an interrupted run resumes where it stopped and
writes byte-identical outputs.

A task's generator samples are drawn in jobs of ``sample_chunk`` in the same pool (the
engine's ``Deferred`` tasks): its verifiers start once its own samples are in, while other
tasks' samples are still being drawn, so no phase waits for the whole run's samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from arcjudge.harness.core.engine import Candidate, Deferred, Engine, TaskSpec
from arcjudge.harness.core.inputs import (
    DEFAULT_SEED,
    DRAW_LIMIT,
    SAMPLE_CHUNK,
    SamplePlan,
    TaskSamples,
    task_inputs,
)
from arcjudge.harness.core.keys import module_fingerprint, program_key
from arcjudge.harness.core.manifest import (
    Manifest,
    ManifestCoverage,
    ManifestDifferential,
    ManifestGenerator,
    ManifestSource,
    ManifestTask,
)
from arcjudge.harness.core.outputs import runtime_json, write_atomic
from arcjudge.harness.core.results import CandidateOutcome, TaskInput
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.differential import TaskAnalysis, analyze, only_suspect_failures
from arcjudge.harness.validate.records import DifferentialRecord, VerdictRecord
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import VERIFIER_LIMITS, Limits, ProgramStatus
from arcjudge.tasks import Task, load_task, task_files
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from arcjudge.vocabulary import Split, Verdict

DEFAULT_CHUNK = 512
ERROR_TAIL = 2000
"""Characters kept from the end of a program's load error."""

Provenance = dict[str, str]
"""What a verifier candidate carries back: its source's provenance of the program."""

_FAILURE_VERDICTS = {
    ProgramStatus.LOAD_ERROR: Verdict.LOAD_ERROR,
    ProgramStatus.POLICY_REJECTED: Verdict.POLICY_REJECTED,
}


@dataclass(frozen=True)
class ValidateConfig:
    """Everything ``validate`` needs besides the sandbox and the store."""

    tasks_dir: Path
    sources: tuple[VerifierSource, ...]
    arcgen_dir: Path | None = None
    generator: GeneratorSource | None = None
    samples: int = 0
    seed: int = DEFAULT_SEED
    chunk: int = DEFAULT_CHUNK
    limits: Limits = VERIFIER_LIMITS
    policy: PolicyMode = PolicyMode.WARN
    quarantine_suspects: bool = False
    probe_samples: int = 0
    task_set: dict[str, Any] | None = None
    """The task set ``--tasks`` named, when not an ARC JSON directory (in the manifest)."""
    sample_chunk: int = SAMPLE_CHUNK
    """Generator samples per sandbox job (the samples are the same for any value)."""
    allow_missing_samples: bool = False
    """The rule before samples were required: a failed sample is dropped, not redrawn, and a
    verifier right on the inputs its task had is ``valid`` however many samples it lacked."""


def _graded(
    outcome: CandidateOutcome, instances: list[TaskInput]
) -> tuple[CandidateOutcome, list[TaskInput]]:
    """The outcome and instances without the probe samples (they never grade a verifier)."""
    keep = [k for k, inst in enumerate(instances) if inst.split != Split.PROBE]
    if len(keep) == len(instances):
        return outcome, instances
    sub = CandidateOutcome(outcome.failure, [outcome.results[k] for k in keep], outcome.findings)
    return sub, [instances[k] for k in keep]


class Validator:
    """Runs one validation; see ``run``. Verdict records end up in ``records``."""

    def __init__(
        self,
        config: ValidateConfig,
        sandbox: Sandbox,
        store: ResultStore,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox
        self.store = store
        self.progress = progress
        self.task_paths = task_files(config.tasks_dir)
        self.fingerprints = [module_fingerprint(s.module_dirs) for s in config.sources]
        self.samples: dict[str, list[TaskInput]] = {}
        self.generator_report: dict[str, dict[str, Any]] = {}
        self.records: dict[str, list[VerdictRecord]] = {}
        self.analyses: dict[str, TaskAnalysis] = {}
        self.splits: dict[str, dict[str, int]] = {}  # inputs per split of each task
        self.unsampled: set[str] = set()  # tasks checked on fewer samples than asked
        self.runtime: dict[str, str] = {}  # the sandbox's runtime (set by ``run``)
        self.runtime_key = ""  # its fingerprint, part of every program key

    def _tasks(
        self, plan: SamplePlan | None
    ) -> Iterator[TaskSpec[Provenance] | Deferred[Provenance]]:
        """Each task, with its candidates; with a generator, deferred until its samples are in."""
        runtime = self.runtime_key or self.sandbox.runtime_fingerprint()
        for path in self.task_paths:
            task = load_task(path)
            candidates: list[Candidate[Provenance]] = []
            for source, fingerprint in zip(self.config.sources, self.fingerprints, strict=True):
                tp = source.program_for(task.task_id)
                key = ""
                if tp.program is not None:
                    key = program_key(
                        tp.program,
                        fingerprint,
                        "transform",
                        self.config.limits,
                        runtime,
                        policy=self.config.policy,
                    )
                provenance = tp.provenance
                if tp.refused is not None:  # the file was not read: the reason, per task
                    provenance = provenance | {"refused": tp.refused}
                candidates.append(Candidate(tp.program, key, provenance))
            if plan is None:
                yield task.task_id, task_inputs(task, self.config.arcgen_dir), candidates
                continue
            draw = plan.task(path.stem)
            task_spec = partial(self._sampled, task, draw, candidates)
            yield Deferred(draw.jobs, draw.absorb, task_spec, draw.more)

    def _sampled(
        self, task: Task, draw: TaskSamples, candidates: list[Candidate[Provenance]]
    ) -> TaskSpec[Provenance]:
        """The task once its samples are drawn (the first ``samples`` grade, the rest probe)."""
        samples, self.generator_report[draw.task_id] = draw.finish()
        for position, sample in enumerate(samples or ()):
            if position >= self.config.samples:
                sample.split = Split.PROBE
        if samples is not None:
            self.samples[draw.task_id] = samples
        if len(samples or ()) < self.config.samples:
            self.unsampled.add(task.task_id)
        instances = task_inputs(task, self.config.arcgen_dir, samples or ())
        return task.task_id, instances, candidates

    def _task_done(
        self,
        task_id: str,
        instances: list[TaskInput],
        candidates: list[Candidate[Provenance]],
        outcomes: list[CandidateOutcome],
    ) -> None:
        names = [source.name for source in self.config.sources]
        analysis = analyze(
            task_id,
            names,
            [
                o if c.program is not None else None
                for c, o in zip(candidates, outcomes, strict=True)
            ],
            instances,
        )
        records = []
        for name, cand, outcome in zip(names, candidates, outcomes, strict=True):
            graded, graded_instances = _graded(outcome, instances)
            record = self._record(task_id, name, cand, graded, graded_instances)
            if record.verdict is Verdict.INVALID and only_suspect_failures(
                outcome, instances, analysis.suspect_positions
            ):
                analysis.quarantinable.append(name)
                if self.config.quarantine_suspects:
                    record = replace(record, verdict=Verdict.VALID_QUARANTINED)
            if record.verdict is Verdict.VALID and task_id in self.unsampled:
                if not self.config.allow_missing_samples:
                    record = replace(record, verdict=Verdict.VALID_UNSAMPLED)
            records.append(record)
        self.records[task_id] = records
        self.analyses[task_id] = analysis
        counts = Counter(str(i.split) for i in instances)
        self.splits[task_id] = {split: counts[split] for split in sorted(counts)}
        if self.progress:
            self.progress(task_id)

    @staticmethod
    def _record(
        task_id: str,
        name: str,
        cand: Candidate[Provenance],
        outcome: CandidateOutcome,
        instances: list[TaskInput],
    ) -> VerdictRecord:
        if cand.program is None:
            refused = cand.meta.get("refused")
            if refused is not None:  # its file was refused: it could not be loaded
                why = f"refused: {refused}"
                return VerdictRecord(task_id, name, cand.meta, Verdict.LOAD_ERROR, error=why)
            return VerdictRecord(task_id, name, cand.meta, Verdict.MISSING)
        if outcome.failure is not None:
            status, error = outcome.failure
            verdict = _FAILURE_VERDICTS.get(status, Verdict.INFRA)
            tail = None if error is None else error[-ERROR_TAIL:]
            return VerdictRecord(task_id, name, cand.meta, verdict, error=tail)
        if outcome.has_infra():
            verdict = Verdict.INFRA
        else:
            verdict = Verdict.VALID if outcome.all_correct(instances) else Verdict.INVALID
        return VerdictRecord(
            task_id, name, cand.meta, verdict, outcome.tally(instances), findings=outcome.findings
        )

    def run(self) -> None:
        """Check every source on every task, each task's generator samples drawn first.

        The samples are drawn in chunks in the engine's pool (``Deferred`` tasks), so a
        task's verifiers run as soon as its own samples are in, while other tasks' samples
        are still being drawn.
        """
        self.runtime = self.sandbox.runtime()
        self.runtime_key = self.sandbox.runtime_fingerprint()
        drawn = self.config.samples + self.config.probe_samples
        plan = None
        if self.config.generator is not None and drawn > 0:
            plan = SamplePlan(
                self.sandbox,
                self.store,
                self.config.generator,
                drawn,
                self.config.seed,
                self.config.policy,
                self.config.sample_chunk,
                1 if self.config.allow_missing_samples else DRAW_LIMIT,
            )
        engine = Engine(
            self.sandbox, self.store, self.config.limits, self.config.policy, self.config.chunk
        )
        engine.run(self._tasks(plan), self._task_done)

    # ---------------------------------------------------------------- outputs

    def manifest_record(self) -> Manifest:
        """The manifest: chosen and valid sources per task, coverage, per-source counts."""
        names = [s.name for s in self.config.sources]
        several = len(self.config.sources) > 1
        quarantine = self.config.quarantine_suspects
        tasks: dict[str, ManifestTask] = {}
        per_source = {n: dict.fromkeys(Verdict, 0) for n in names}
        for task_id in sorted(self.records):
            records = self.records[task_id]
            valid = [r.source for r in records if r.verdict is Verdict.VALID]
            unsampled = [r.source for r in records if r.verdict is Verdict.VALID_UNSAMPLED]
            for r in records:
                per_source[r.source][r.verdict] += 1
            loose = [
                r.source for r in records if r.verdict in (Verdict.VALID, Verdict.VALID_QUARANTINED)
            ]
            analysis = self.analyses.get(task_id) if several else None  # counted with several
            tasks[task_id] = ManifestTask(
                chosen=valid[0] if valid else None,
                valid=tuple(valid),
                splits=self.splits.get(task_id, {}),  # which inputs the task had
                valid_quarantined=tuple(r for r in loose if r not in valid) if quarantine else None,
                chosen_quarantined=loose[0] if quarantine and loose else None,
                suspects=None if analysis is None else len(analysis.suspects),
                disputes=None if analysis is None else len(analysis.disputes),
                ambiguous=None if analysis is None else analysis.ambiguous is not None,
                generator=self.generator_report.get(task_id),
                valid_unsampled=tuple(unsampled),
            )
        entries = tasks.values()
        covered = sum(1 for t in entries if t.chosen)
        short = [tasks[t] for t in sorted(self.unsampled) if t in tasks]
        differential = ManifestDifferential(
            tasks_with_suspects=sum(1 for t in entries if t.suspects),
            tasks_only_suspect_failures=sum(
                1 for t_id, t in tasks.items()
                if not t.chosen and self.analyses[t_id].quarantinable
            ),
            tasks_with_disputes=sum(1 for t in entries if t.disputes),
            tasks_ambiguous=sum(1 for t in entries if t.ambiguous),
            covered_quarantined=(
                sum(1 for t in entries if t.chosen_quarantined) if quarantine else None
            ),
        )  # fmt: skip
        generator = self.config.generator
        return Manifest(
            sources=tuple(ManifestSource(s.name, s.kind, str(s.path)) for s in self.config.sources),
            generator=(
                ManifestGenerator(generator.kind, str(generator.path)) if generator else None
            ),
            seed=self.config.seed,
            samples=self.config.samples,
            probe_samples=self.config.probe_samples,
            quarantine_suspects=quarantine,
            allow_missing_samples=self.config.allow_missing_samples,
            wall_seconds=self.config.limits.wall_seconds,
            coverage=ManifestCoverage(
                tasks=len(tasks),
                covered=covered,
                fraction=round(covered / len(tasks), 6) if tasks else 0.0,
                unsampled=len(short),
                covered_unsampled=sum(1 for t in short if t.chosen or t.valid_unsampled),
            ),
            differential=differential,
            per_source=per_source,
            tasks=tasks,
            task_set=self.config.task_set,
        )

    def manifest(self) -> dict[str, Any]:
        """The manifest's JSON object (``manifest.json``: :meth:`manifest_record`)."""
        return self.manifest_record().to_json()

    def differential_records(self) -> Iterator[DifferentialRecord]:
        """Suspects, disputes and ambiguity flags, in task order (``suspects.jsonl``)."""
        for task_id in sorted(self.analyses):
            a = self.analyses[task_id]
            yield from a.suspects
            yield from a.disputes
            if a.ambiguous is not None:
                yield a.ambiguous

    def verdict_records(self) -> Iterator[VerdictRecord]:
        """Every verdict, in task then source order (``verdicts.jsonl``)."""
        for task_id in sorted(self.records):
            yield from self.records[task_id]

    def suspect_lines(self) -> Iterator[str]:
        """The lines of ``suspects.jsonl``."""
        for record in self.differential_records():
            yield _line(record.to_json())

    def verdict_lines(self) -> Iterator[str]:
        """The lines of ``verdicts.jsonl``."""
        for record in self.verdict_records():
            yield _line(record.to_json())


def _line(data: dict[str, Any]) -> str:
    return json_dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def output_files(validator: Validator) -> tuple[Manifest, dict[str, str]]:
    """The manifest and the text of every output file of a finished run.

    The files: ``verdicts.jsonl``, ``suspects.jsonl``, ``manifest.json``, ``runtime.json``
    (the sandbox's runtime, kept apart from the manifest, which is byte-identical across
    backends and executors) and ``report.html``.
    """
    from arcjudge.harness.validate.report import render_validate_report

    manifest = validator.manifest_record()
    verdicts = [r.to_json() for r in validator.verdict_records()]
    suspects = [r.to_json() for r in validator.differential_records()]
    outputs = {
        "verdicts.jsonl": "".join(map(_line, verdicts)),
        "suspects.jsonl": "".join(map(_line, suspects)),
        "manifest.json": json_dumps(manifest.to_json(), sort_keys=True, indent=1) + "\n",
        "runtime.json": runtime_json(validator.runtime),
        "report.html": render_validate_report(manifest, verdicts, suspects),
    }
    return manifest, outputs


def write_outputs(validator: Validator, out_dir: Path) -> Manifest:
    """Write :func:`output_files` into ``out_dir``, each file atomically.

    Each file is written to a temporary name and renamed into place, so an interrupted
    run never leaves a half-written output.

    Returns:
        The manifest.
    """
    manifest, outputs = output_files(validator)
    write_atomic(out_dir, outputs)
    return manifest


def summary_lines(manifest: Manifest) -> list[str]:
    """The printed summary: coverage and per-source counts."""
    cov, diff = manifest.coverage, manifest.differential
    lines = [f"tasks with >= 1 valid verifier: {cov.covered}/{cov.tasks}"]
    for name, counts in manifest.per_source.items():
        parts = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        lines.append(f"  {name}: {parts or 'nothing'}")
    unsampled = cov.unsampled or 0
    if unsampled or manifest.allow_missing_samples:
        counted = (
            "counted as covered (--allow-missing-samples)"
            if manifest.allow_missing_samples
            else "valid_unsampled, not covered"
        )
        lines.append(
            f"tasks with fewer than {manifest.samples} generator samples: {unsampled}; "
            f"with a verifier right on the inputs they had: {cov.covered_unsampled or 0}, "
            f"{counted}"
        )
    if len(manifest.sources) > 1:
        quarantined = diff.covered_quarantined
        lines.append(
            f"covered strictly {cov.covered}, with quarantine "
            f"{quarantined if quarantined is not None else '(not asked: --quarantine-suspects)'}; "
            f"tasks failing only on suspect samples {diff.tasks_only_suspect_failures}, "
            f"with disputes {diff.tasks_with_disputes}, "
            f"ambiguous {diff.tasks_ambiguous}"
        )
    return lines
