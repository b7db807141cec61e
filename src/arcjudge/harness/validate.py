"""``arcjudge validate``: which verifier sources are right on every instance of each task.

A verifier is *valid* for a task when it returns the expected output on every
demonstration (train and test pairs with outputs), every ARC-GEN stable pair, and every
fresh sample drawn from the task's generator. Work is split into (program, chunk of
inputs) items spread over the sandbox pool; tasks are read one at a time as items are
needed, so memory stays bounded; every finished item is committed to the result store, so
an interrupted run resumes where it stopped and writes byte-identical outputs.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from arcjudge.grids import Grid
from arcjudge.harness.store import (
    ResultStore,
    StoredResult,
    module_fingerprint,
    program_key,
)
from arcjudge.sandbox.base import Job, PooledSandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    VERIFIER_LIMITS,
    GeneratorCall,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    Status,
)
from arcjudge.tasks import Pair, Task, load_arcgen_pairs, load_task, task_files
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource

SPLIT_ORDER = ("train", "test", "arc-gen", "generator")
VERDICTS = ("valid", "invalid", "missing", "load_error", "policy_rejected", "infra")
DEFAULT_CHUNK = 128
GENERATOR_LIMITS = Limits(wall_seconds=10.0, total_seconds=600.0)


@dataclass(frozen=True)
class ValidateConfig:
    """Everything ``validate`` needs besides the sandbox and the store."""

    tasks_dir: Path
    sources: tuple[VerifierSource, ...]
    arcgen_dir: Path | None = None
    generator: GeneratorSource | None = None
    samples: int = 0
    seed: int = 0
    chunk: int = DEFAULT_CHUNK
    limits: Limits = VERIFIER_LIMITS
    policy: PolicyMode = PolicyMode.WARN


@dataclass
class _Input:
    split: str
    index: int
    grid: Grid
    expected: Grid
    seed: int | None = None


@dataclass
class _Item:
    task_id: str
    source: int
    positions: list[int]  # indexes into the task's input list
    prog_key: str
    keys: list[str]


@dataclass
class _TaskState:
    task_id: str
    inputs: list[_Input]
    programs: list[tuple[Program | None, dict[str, str], str]]  # program, provenance, key
    results: list[list[StoredResult | None]] = field(default_factory=list)
    failure: list[tuple[ProgramStatus, str | None] | None] = field(default_factory=list)
    findings: list[tuple[str, ...]] = field(default_factory=list)
    pending: int = 0
    sealed: bool = False  # all of the task's items have been handed out


def _fingerprints(config: ValidateConfig) -> dict[int, str]:
    return {i: module_fingerprint(s.module_dirs) for i, s in enumerate(config.sources)}


def _arcgen_pairs(config: ValidateConfig, task: Task) -> tuple[Pair, ...]:
    if config.arcgen_dir is not None:
        path = config.arcgen_dir / f"{task.task_id}.json"
        if path.is_file():
            return load_arcgen_pairs(path)
    return task.arc_gen


class Validator:
    """Runs one validation; see ``run``."""

    def __init__(
        self,
        config: ValidateConfig,
        sandbox: PooledSandbox,
        store: ResultStore,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox
        self.store = store
        self.progress = progress
        self.task_paths = task_files(config.tasks_dir)
        self.fingerprints = _fingerprints(config)
        self.samples: dict[str, list[_Input]] = {}
        self.generator_report: dict[str, dict] = {}
        self.records: dict[str, list[dict]] = {}

    # ---------------------------------------------------------------- generator samples

    def draw_samples(self) -> None:
        """Phase 1: draw ``samples`` generator samples per task, in the sandbox."""
        gen = self.config.generator
        if gen is None or self.config.samples <= 0:
            return
        fingerprint = module_fingerprint(gen.module_dirs)
        calls = [
            GeneratorCall(self.config.seed + i, gen.kwargs) for i in range(self.config.samples)
        ]
        jobs: list[tuple[str, Program, str, dict]] = []
        for path in self.task_paths:
            task_id = path.stem
            tp = gen.program_for(task_id)
            if tp.program is None:
                self.generator_report[task_id] = {"missing": True}
                continue
            key = program_key(tp.program, fingerprint, "generate", GENERATOR_LIMITS)
            jobs.append((task_id, tp.program, key, tp.provenance))

        def finish(task_id: str, key: str, results: list[StoredResult]) -> None:
            samples = []
            statuses: Counter[str] = Counter()
            first_error = None
            for i, r in enumerate(results):
                statuses[r.status.value] += 1
                if r.status is Status.OK and r.grid is not None and r.output is not None:
                    samples.append(_Input("generator", i, r.grid, r.output, calls[i].seed))
                elif first_error is None:
                    first_error = f"seed {calls[i].seed}: {r.status.value}: {_last(r.error)}"
            self.samples[task_id] = samples
            self.generator_report[task_id] = {
                "requested": len(calls),
                "ok": len(samples),
                "statuses": dict(sorted(statuses.items())),
                "first_error": first_error,
            }

        to_run = []
        for task_id, program, key, _prov in jobs:
            failed = self.store.get_program(key)
            if failed is not None:
                self.generator_report[task_id] = {"failed": failed[0].value, "error": failed[1]}
                continue
            keys = [self.store.input_key(key, c) for c in calls]
            cached = self.store.get_many(keys)
            if len(cached) == len(keys):
                finish(task_id, key, [cached[k] for k in keys])
            else:
                to_run.append((task_id, program, key, keys))
        job_list = [
            Job(program, calls, GENERATOR_LIMITS, self.config.policy) for _, program, _, _ in to_run
        ]
        for index, result in self.sandbox.map(job_list, mode="generate"):
            task_id, _program, key, keys = to_run[index]
            if result.status is not ProgramStatus.LOADED:
                self.generator_report[task_id] = {
                    "failed": result.status.value,
                    "error": _last(result.error),
                }
                if result.status is not ProgramStatus.INFRA:
                    self.store.put_program(key, result.status, result.error)
                continue
            stored = [StoredResult(r.status, r.grid, r.output, r.error) for r in result.results]
            self.store.put_many((k, s) for k, s in zip(keys, stored, strict=True) if _cacheable(s))
            finish(task_id, key, stored)
            if self.progress:
                self.progress(f"generator {task_id}")

    # ---------------------------------------------------------------- verifiers

    def _task_state(self, task: Task) -> _TaskState:
        inputs = [
            _Input(split, i, p.input, p.output)
            for split, pairs in (("train", task.train), ("test", task.test))
            for i, p in enumerate(pairs)
            if p.output is not None
        ]
        inputs += [
            _Input("arc-gen", i, p.input, p.output)
            for i, p in enumerate(_arcgen_pairs(self.config, task))
            if p.output is not None
        ]
        inputs += self.samples.get(task.task_id, [])
        programs = []
        for i, source in enumerate(self.config.sources):
            tp = source.program_for(task.task_id)
            key = ""
            if tp.program is not None:
                key = program_key(tp.program, self.fingerprints[i], "transform", self.config.limits)
            programs.append((tp.program, tp.provenance, key))
        state = _TaskState(task.task_id, inputs, programs)
        state.results = [[None] * len(inputs) for _ in programs]
        state.failure = [None] * len(programs)
        state.findings = [()] * len(programs)
        return state

    def _items(self, states: dict[str, _TaskState]) -> Iterator[tuple[_Item, Job]]:
        """Yield the work items still to run, task by task, filling in cached results."""
        for path in self.task_paths:
            task = load_task(path)
            state = self._task_state(task)
            states[task.task_id] = state
            for s, (program, _prov, key) in enumerate(state.programs):
                if program is None:
                    continue
                failed = self.store.get_program(key)
                if failed is not None:
                    state.failure[s] = failed
                    continue
                for start in range(0, len(state.inputs), self.config.chunk):
                    positions = list(
                        range(start, min(start + self.config.chunk, len(state.inputs)))
                    )
                    keys = [self.store.input_key(key, state.inputs[p].grid) for p in positions]
                    cached = self.store.get_many(keys)
                    for p, k in zip(positions, keys, strict=True):
                        state.results[s][p] = cached.get(k)
                    missing = [
                        (p, k) for p, k in zip(positions, keys, strict=True) if k not in cached
                    ]
                    if not missing:
                        continue
                    item = _Item(
                        task.task_id, s, [p for p, _ in missing], key, [k for _, k in missing]
                    )
                    job = Job(
                        program,
                        [state.inputs[p].grid for p in item.positions],
                        self.config.limits,
                        self.config.policy,
                    )
                    state.pending += 1
                    yield item, job
            state.sealed = True
            if state.pending == 0:
                self._finish(states.pop(task.task_id))

    def _absorb(self, item: _Item, result: ProgramResult, states: dict[str, _TaskState]) -> None:
        state = states[item.task_id]
        state.pending -= 1
        if result.findings:
            state.findings[item.source] = result.findings
        if result.status is not ProgramStatus.LOADED:
            state.failure[item.source] = (result.status, result.error)
            if result.status is not ProgramStatus.INFRA:
                self.store.put_program(item.prog_key, result.status, result.error)
        else:
            stored = [StoredResult(r.status, r.grid, None, r.error) for r in result.results]
            for p, s in zip(item.positions, stored, strict=True):
                state.results[item.source][p] = s
            self.store.put_many(
                (k, s) for k, s in zip(item.keys, stored, strict=True) if _cacheable(s)
            )
        if state.sealed and state.pending == 0:
            self._finish(states.pop(item.task_id))

    def _finish(self, state: _TaskState) -> None:
        records = []
        for s, (program, provenance, _key) in enumerate(state.programs):
            records.append(self._record(state, s, program, provenance))
        self.records[state.task_id] = records
        if self.progress:
            self.progress(state.task_id)

    def _record(
        self, state: _TaskState, s: int, program: Program | None, provenance: dict[str, str]
    ) -> dict:
        record: dict = {
            "task_id": state.task_id,
            "source": self.config.sources[s].name,
            "provenance": provenance,
        }
        if program is None:
            return {**record, "verdict": "missing"}
        failure = state.failure[s]
        if failure is not None:
            status, error = failure
            verdict = {
                ProgramStatus.LOAD_ERROR: "load_error",
                ProgramStatus.POLICY_REJECTED: "policy_rejected",
            }.get(status, "infra")
            return {**record, "verdict": verdict, "error": _trim(error)}
        splits: dict[str, list[int]] = {}
        statuses: dict[str, Counter[str]] = {}
        first: dict[str, dict] = {}
        for inp, res in zip(state.inputs, state.results[s], strict=True):
            counts = splits.setdefault(inp.split, [0, 0])
            counts[1] += 1
            status = res.status.value if res is not None else "infra"
            statuses.setdefault(inp.split, Counter())[status] += 1
            right = res is not None and res.status is Status.OK and res.grid == inp.expected
            counts[0] += right
            if not right and inp.split not in first:
                failure_record = {
                    "index": inp.index,
                    "status": status,
                    "input": _lists(inp.grid),
                    "expected": _lists(inp.expected),
                    "produced": _lists(res.grid) if res is not None and res.grid else None,
                    "error": _trim(res.error if res is not None else "no result"),
                }
                if inp.seed is not None:
                    failure_record["seed"] = inp.seed
                first[inp.split] = failure_record
        if any(v == "infra" for c in statuses.values() for v in c):
            verdict = "infra"
        else:
            verdict = "valid" if all(c == t for c, t in splits.values()) else "invalid"
        record.update(
            verdict=verdict,
            splits={k: splits[k] for k in SPLIT_ORDER if k in splits},
            statuses={k: dict(sorted(statuses[k].items())) for k in SPLIT_ORDER if k in statuses},
            first_failure={k: first[k] for k in SPLIT_ORDER if k in first},
        )
        if state.findings[s]:
            record["findings"] = list(state.findings[s])
        return record

    def run(self) -> None:
        """Run both phases; records end up in ``self.records``."""
        self.draw_samples()
        states: dict[str, _TaskState] = {}
        pending: dict[int, _Item] = {}

        def jobs() -> Iterator[Job]:
            for n, (item, job) in enumerate(self._items(states)):
                pending[n] = item
                yield job

        for index, result in self.sandbox.map(jobs()):
            self._absorb(pending.pop(index), result, states)

    # ---------------------------------------------------------------- outputs

    def manifest(self) -> dict:
        """The manifest: chosen and valid sources per task, coverage, per-source counts."""
        names = [s.name for s in self.config.sources]
        tasks = {}
        per_source = {n: dict.fromkeys(VERDICTS, 0) for n in names}
        for task_id in sorted(self.records):
            valid = [r["source"] for r in self.records[task_id] if r["verdict"] == "valid"]
            for r in self.records[task_id]:
                per_source[r["source"]][r["verdict"]] += 1
            entry: dict = {"chosen": valid[0] if valid else None, "valid": valid}
            if task_id in self.generator_report:
                entry["generator"] = self.generator_report[task_id]
            tasks[task_id] = entry
        covered = sum(1 for t in tasks.values() if t["chosen"])
        return {
            "sources": [
                {"name": s.name, "kind": s.kind, "path": str(s.path)} for s in self.config.sources
            ],
            "generator": (
                {"kind": self.config.generator.kind, "path": str(self.config.generator.path)}
                if self.config.generator
                else None
            ),
            "seed": self.config.seed,
            "samples": self.config.samples,
            "limits": {"wall_seconds": self.config.limits.wall_seconds},
            "coverage": {
                "tasks": len(tasks),
                "covered": covered,
                "fraction": round(covered / len(tasks), 6) if tasks else 0.0,
            },
            "per_source": per_source,
            "tasks": tasks,
        }

    def verdict_lines(self) -> Iterator[str]:
        """The lines of ``verdicts.jsonl``, in task then source order."""
        for task_id in sorted(self.records):
            for record in self.records[task_id]:
                yield json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"


def _cacheable(result: StoredResult) -> bool:
    return result.status is not Status.INFRA


def _lists(grid: Grid | None) -> list[list[int]] | None:
    return None if grid is None else [list(r) for r in grid]


def _trim(text: str | None, limit: int = 2000) -> str | None:
    return None if text is None else text[-limit:]


def _last(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def write_outputs(validator: Validator, out_dir: Path) -> dict:
    """Write ``verdicts.jsonl``, ``manifest.json`` and ``report.html`` atomically.

    Each file is written to a temporary name and renamed into place, so an interrupted
    run never leaves a half-written output.

    Returns:
        The manifest.
    """
    from arcjudge.harness.report import render_validate_report

    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = validator.manifest()
    verdicts = "".join(validator.verdict_lines())
    records = [r for task_id in sorted(validator.records) for r in validator.records[task_id]]
    outputs = {
        "verdicts.jsonl": verdicts,
        "manifest.json": json.dumps(manifest, sort_keys=True, indent=1) + "\n",
        "report.html": render_validate_report(manifest_for_report(manifest), records),
    }
    for name, text in outputs.items():
        tmp = out_dir / f".{name}.tmp-{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out_dir / name)
    return manifest


def manifest_for_report(manifest: dict) -> dict:
    """The manifest in the shape the report expects (source names as a list)."""
    return {**manifest, "sources": [s["name"] for s in manifest["sources"]]}


def summary_lines(manifest: dict) -> list[str]:
    """The printed summary: coverage and per-source counts."""
    cov = manifest["coverage"]
    lines = [f"tasks with >= 1 valid verifier: {cov['covered']}/{cov['tasks']}"]
    for name, counts in manifest["per_source"].items():
        parts = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        lines.append(f"  {name}: {parts or 'nothing'}")
    return lines


def print_summary(manifest: dict) -> None:
    """Print the summary to stdout."""
    for line in summary_lines(manifest):
        print(line)
    sys.stdout.flush()
