"""``arcjudge mutate``: corrupted verifiers and the near-miss pairs they produce.

For each task, each valid verifier is mutated by the libcst engine (``arcjudge.mutation``);
every mutant runs in the sandbox (mutants are untrusted code too: in batches of mutants of
one verifier per sandboxed process, ``schemata.py``, or with ``one_program_per_mutant``
each as a program of its own through the engine) on N valid inputs of the
task (a seeded choice among its test and ARC-GEN pairs; never a demonstration's input, so
no corrupted pair shows a demonstration input with a wrong output) and is classed:
``killed`` (some output is a valid grid that differs from the true output),
``equivalent_on_evidence`` (the true output on all N), ``crashes`` (no output at all:
errors, timeouts or a load failure on every input) or ``invalid_output`` (anything else:
non-grids, some inputs failing, none wrong). Each wrong grid of a killed mutant is a
*corrupted pair*, kept only when the original verifier, run on the same input, returns the
true output, so the pair is confirmed invalid. ``--max-per-task`` keeps the nearest misses
(same shape first, then smallest Hamming distance), ties broken by a seeded hash.
``--target-pairs K`` reports per task only the mutants, in a seeded order, up to the one
that brings the confirmed pairs to K (and runs little more than those).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.grids import same_shape, wire_distance
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.engine import Candidate, Engine
from arcjudge.harness.core.inputs import DEFAULT_SEED, task_inputs
from arcjudge.harness.core.keys import module_fingerprint, program_key
from arcjudge.harness.core.manifest import read_manifest
from arcjudge.harness.core.results import CandidateOutcome, TaskInput, is_right
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.mutate.records import (
    MutantRecord,
    MutateSummary,
    MutationProblem,
    OperatorYield,
)
from arcjudge.harness.mutate.schemata import BATCH, BatchRunner, confirmed_indexes, target_prefix
from arcjudge.mutation import (
    Mutant,
    MutantSet,
    Operator,
    default_operators,
    enumerate_mutants,
    study_operators,
)
from arcjudge.safetext import json_dumps, terminal_safe
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    VERIFIER_LIMITS,
    Limits,
    Program,
    Status,
    WireGrid,
    grid_of,
    wire_of,
)
from arcjudge.tasks import Task, load_task, task_files
from arcjudge.verifiers.sources import VerifierSource
from arcjudge.vocabulary import RUNTIME_STATUSES, MutantStatus, Split


@dataclass(frozen=True)
class MutateConfig:
    """Everything ``mutate`` needs besides the sandbox and the store.

    Attributes:
        operators: The operators for every source (``--operators a,b``); ``None`` (the
            default): as ``study_operators`` says.
        study_operators: Without ``operators``: the reference study's pair per source
            kind (``True``, the default; ``--operators paper``:
            :func:`arcjudge.mutation.study_operators`), or every registered operator
            (``False``; ``--operators all``).
        demonstration_inputs: Also run mutants on the demonstrations (train pairs), as
            ``mutate`` once did: their corrupted pairs show a demonstration input with a
            wrong output (``dimensions build`` drops those).
        target_pairs: Stop a task once its mutants, taken in a seeded order, have this
            many confirmed corrupted pairs (``None``: every mutant runs).
        one_program_per_mutant: Run each mutant as a program of its own through the
            engine (the path before batches; for comparison and as a fallback).
        batch: Mutants per batched sandbox job.
    """

    tasks_dir: Path
    sources: tuple[VerifierSource, ...]
    arcgen_dir: Path | None = None
    manifest_dir: Path | None = None
    operators: tuple[Operator, ...] | None = None
    max_per_task: int | None = 10
    inputs: int = 20
    seed: int = DEFAULT_SEED
    study_operators: bool = True
    demonstration_inputs: bool = False
    limits: Limits = VERIFIER_LIMITS
    policy: PolicyMode = PolicyMode.OFF
    chunk: int = 64
    target_pairs: int | None = None
    one_program_per_mutant: bool = False
    batch: int = BATCH


@dataclass
class _Meta:
    source: int  # index into the config's sources
    mutant: Mutant | None  # None for the original verifier


def classify(outcome: CandidateOutcome, instances: list[TaskInput]) -> MutantStatus:
    """The mutant's class on its inputs (see the module docstring)."""
    if outcome.failure is not None:
        return MutantStatus.CRASHES
    oks = [r for r in outcome.results if r is not None and r.status is Status.OK]
    if any(r is not None and r.status is Status.OK and not is_right(r, i)
           for i, r in zip(instances, outcome.results, strict=True)):  # fmt: skip
        return MutantStatus.KILLED
    if len(oks) == len(instances):
        return MutantStatus.EQUIVALENT_ON_EVIDENCE
    if not oks and all(r is not None and r.status in RUNTIME_STATUSES for r in outcome.results):
        return MutantStatus.CRASHES
    return MutantStatus.INVALID_OUTPUT


def _tiebreak(seed: int, *parts: object) -> str:
    return hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).hexdigest()


class Mutator:
    """Runs one ``mutate``; outputs end up in ``mutants``, ``corruptions``, ``summary()``."""

    def __init__(
        self,
        config: MutateConfig,
        sandbox: Sandbox,
        store: ResultStore,
        progress: Callable[[int], object] | None = None,
    ) -> None:
        self.config = config
        self.progress = progress
        self.sandbox = sandbox
        self.store = store
        self.task_paths = task_files(config.tasks_dir)
        self.fingerprints = [module_fingerprint(s.module_dirs) for s in config.sources]
        self.valid = None
        if config.manifest_dir is not None:
            self.valid = read_manifest(config.manifest_dir).manifest.valid
        self.mutants: dict[str, list[MutantRecord]] = {}
        self.corruptions: dict[str, list[CorruptionRecord]] = {}
        self.problems: dict[str, list[MutationProblem]] = defaultdict(list)
        self.with_valid: set[str] = set()
        self.runtime: dict[str, str] = {}  # the sandbox's runtime (set by ``run``)
        self.runtime_key = ""  # its fingerprint, part of every program key

    def _inputs(self, task: Task) -> list[TaskInput]:
        """The inputs mutants run on: a seeded choice of ``--inputs`` of the task's pairs.

        Demonstration inputs (train pairs, and any ARC-GEN pair with a train pair's input)
        are left out unless ``demonstration_inputs`` is set.
        """
        task_id = task.task_id
        instances = task_inputs(task, self.config.arcgen_dir)
        if not self.config.demonstration_inputs:
            shown = {p.input for p in task.train}
            instances = [i for i in instances if i.split != Split.TRAIN and i.grid not in shown]
        if len(instances) <= self.config.inputs:
            return instances
        rng = random.Random(f"{self.config.seed}:{task_id}")
        chosen = sorted(rng.sample(range(len(instances)), self.config.inputs))
        return [instances[i] for i in chosen]

    def _tasks(self) -> Iterator[tuple[str, list[TaskInput], list[Candidate[_Meta]]]]:
        if not self.runtime_key:
            self.runtime_key = self.sandbox.runtime_fingerprint()
        for path in self.task_paths:
            task = load_task(path)
            instances = self._inputs(task)
            candidates: list[Candidate[_Meta]] = []
            for s, source in enumerate(self.config.sources):
                if self.valid is not None and source.name not in self.valid.get(task.task_id, ()):
                    continue
                tp = source.program_for(task.task_id)
                if tp.refused is not None:
                    self.problems[task.task_id].append(
                        MutationProblem(source.name, f"refused: {tp.refused}")
                    )
                if tp.program is None:
                    continue
                self.with_valid.add(task.task_id)
                original = tp.program
                function = original.entry_points[0] if source.kind == "re-arc" else None
                operators = self.config.operators
                if operators is None and self.config.study_operators:
                    operators = tuple(study_operators(source.kind == "re-arc"))
                try:  # a verifier is untrusted: whatever it does to the engine is its task's
                    mutants = enumerate_mutants(
                        original.source,
                        task_id=task.task_id,
                        source_name=source.name,
                        operators=operators,
                        function=function,
                    )
                    programs = [
                        Program(
                            mutant.source.encode("utf-8"),
                            original.entry_points,
                            original.module_dirs,
                            original.input_format,
                            mutant.id,
                        )
                        for mutant in mutants
                    ]
                except (RecursionError, MemoryError) as exc:
                    mutants = MutantSet(task.task_id, source.name, function)
                    mutants.error = f"{type(exc).__name__}: nested too deeply or too large"
                    programs = []
                if mutants.error is not None:
                    self.problems[task.task_id].append(MutationProblem(source.name, mutants.error))
                    continue
                fingerprint = self.fingerprints[s]
                candidates.append(self._candidate(original, fingerprint, _Meta(s, None)))
                for mutant, program in zip(mutants, programs, strict=True):
                    candidates.append(self._candidate(program, fingerprint, _Meta(s, mutant)))
            yield task.task_id, instances, candidates

    def _candidate(self, program: Program, fingerprint: str, meta: _Meta) -> Candidate[_Meta]:
        key = program_key(
            program,
            fingerprint,
            "transform",
            self.config.limits,
            self.runtime_key,
            policy=self.config.policy,
        )
        return Candidate(program, key, meta)

    def _task_done(
        self,
        task_id: str,
        instances: list[TaskInput],
        candidates: list[Candidate[_Meta]],
        outcomes: list[CandidateOutcome],
    ) -> None:
        if self.progress is not None:
            self.progress(1)
        originals = {
            c.meta.source: o
            for c, o in zip(candidates, outcomes, strict=True)
            if c.meta.mutant is None
        }
        records: list[MutantRecord] = []
        seed = self.config.seed
        expected = [i.expected_wire or wire_of(i.expected) for i in instances]
        found: list[tuple[tuple[bool, float, str], str, int, WireGrid]] = []
        for cand, outcome in zip(candidates, outcomes, strict=True):
            mutant = cand.meta.mutant
            if mutant is None:
                continue
            status = classify(outcome, instances)
            counts = Counter(
                "wrong" if r is not None and r.status is Status.OK and not is_right(r, i)
                else "right" if r is not None and r.status is Status.OK
                else (r.status.value if r is not None else "not_run")
                for i, r in zip(instances, outcome.results, strict=True)
            )  # fmt: skip
            if outcome.failure is not None:
                counts = Counter({outcome.failure[0].value: len(instances)})
            records.append(MutantRecord(
                id=mutant.id, task_id=task_id, source=mutant.source_name,
                operator=mutant.operator, anchor=mutant.anchor, variant=mutant.variant,
                diff=mutant.diff, status=status, counts=dict(sorted(counts.items())),
            ))  # fmt: skip
            if status is not MutantStatus.KILLED:
                continue
            original = originals.get(cand.meta.source)
            for index in confirmed_indexes(outcome, original, instances):
                inst, res = instances[index], outcome.results[index]
                assert res is not None and res.wire is not None  # a confirmed wrong grid
                shape = same_shape(res.wire, expected[index])
                hamming = round(wire_distance(res.wire, expected[index]), 6)
                tie = _tiebreak(seed, mutant.id, Split(inst.split), inst.index)
                found.append(((not shape, hamming, tie), mutant.id, index, res.wire))
        found.sort(key=lambda f: f[0])  # nearest misses first: same shape, then distance
        if self.config.max_per_task is not None:
            found = found[: self.config.max_per_task]
        pairs = []
        for (not_same, hamming, _), mutant_id, index, wire in found:
            inst = instances[index]
            pairs.append(CorruptionRecord(
                task_id=task_id, mutant_id=mutant_id, split=Split(inst.split),
                index=inst.index, input=inst.grid, output=grid_of(wire),
                correct_output=inst.expected, hamming=hamming, same_shape=not not_same,
            ))  # fmt: skip
        self.mutants[task_id] = records
        self.corruptions[task_id] = pairs

    def run(self) -> None:
        """Mutate, run and classify, task by task."""
        self.runtime = self.sandbox.runtime()
        self.runtime_key = self.sandbox.runtime_fingerprint()
        config = self.config
        if not config.one_program_per_mutant:
            runner = BatchRunner(self.sandbox, self.store, config.limits, config.policy,
                                 config.seed, config.target_pairs, config.batch)  # fmt: skip
            runner.run(self._tasks(), self._task_done)
            return
        engine = Engine(self.sandbox, self.store, config.limits, config.policy, config.chunk)
        engine.run(self._tasks(), self._whole_task_done)

    def _whole_task_done(
        self,
        task_id: str,
        instances: list[TaskInput],
        candidates: list[Candidate[_Meta]],
        outcomes: list[CandidateOutcome],
    ) -> None:
        """A task the engine ran in full, cut to ``--target-pairs`` as a batched run is."""
        target = self.config.target_pairs
        if target is not None:
            candidates, outcomes = target_prefix(
                self.config.seed, task_id, instances, candidates, outcomes, target
            )
        self._task_done(task_id, instances, candidates, outcomes)

    def mutant_lines(self) -> Iterator[str]:
        """Lines of ``mutants.jsonl`` (task order, then enumeration order)."""
        for task_id in sorted(self.mutants):
            for record in self.mutants[task_id]:
                yield json_dumps(record.to_json(), sort_keys=True, separators=(",", ":")) + "\n"

    def corruption_lines(self) -> Iterator[str]:
        """Lines of ``corruptions.jsonl`` (task order, nearest misses first)."""
        for task_id in sorted(self.corruptions):
            for record in self.corruptions[task_id]:
                yield json_dumps(record.to_json(), sort_keys=True, separators=(",", ":")) + "\n"

    def summary(self, task_set: Mapping[str, Any] | None = None) -> MutateSummary:
        """Yield per operator, and tasks with at least one corrupted pair.

        Args:
            task_set: The record of the task set ``--tasks`` named (``None``, or empty:
                ``summary.json`` has no ``task_set``).
        """
        per_operator: dict[str, list[MutantStatus]] = defaultdict(list)
        for records in self.mutants.values():
            for r in records:
                per_operator[r.operator].append(r.status)
        covered = sorted(t for t, pairs in self.corruptions.items() if pairs)
        operator_set = "given"
        if self.config.operators is None:
            operator_set = "paper" if self.config.study_operators else "all"
        return MutateSummary(
            target_pairs=self.config.target_pairs,
            seed=self.config.seed,
            inputs=self.config.inputs,
            demonstration_inputs=self.config.demonstration_inputs,
            operator_set=operator_set,
            max_per_task=self.config.max_per_task,
            operators={
                name: OperatorYield.of(statuses) for name, statuses in sorted(per_operator.items())
            },
            tasks_with_valid_verifier=len(self.with_valid),
            tasks_with_corrupted_pairs=len(covered),
            corrupted_pairs=sum(len(p) for p in self.corruptions.values()),
            problems={t: tuple(self.problems[t]) for t in sorted(self.problems)},
            task_set=task_set or None,
        )


def summary_text(summary: MutateSummary) -> str:
    """The printed yield table."""
    lines = [f"{'operator':<28} {'tried':>6} {'killed':>7}"]
    for name, counts in summary.operators.items():
        lines.append(f"{name:<28} {counts.tried:>6} {counts.killed:>7}")
    lines.append(
        f"tasks with >= 1 corrupted pair: {summary.tasks_with_corrupted_pairs}"
        f"/{summary.tasks_with_valid_verifier} tasks with a valid verifier; "
        f"{summary.corrupted_pairs} pairs"
    )
    for task_id, problems in summary.problems.items():
        for p in problems:
            lines.append(f"  {task_id} {p.source}: cannot mutate: {p.error}")
    return "\n".join(terminal_safe(line) for line in lines)


def default_operator_names() -> list[str]:
    """Names of the default operators (for help texts)."""
    return [op.name for op in default_operators()]
