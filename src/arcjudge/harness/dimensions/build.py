"""``arcjudge dimensions build``: evaluation instances for the five dimensions.

For every task with a validated verifier (``--manifest``: a ``validate`` output directory)
the builder takes the task's valid pairs (fresh generator samples with the verifier's
outputs when a generator is given, else its ARC-GEN pairs, else its test pairs), proposes
candidate invalid pairs of each kind (:mod:`.corruptions`, plus the ``corrupted_verifier``
pairs of a ``mutate`` run), drops every candidate that shows a demonstration's input, runs
the task's verifier on every candidate input in the sandbox, keeps only the candidates the
verifier confirms invalid, and draws one instance per dimension. The sandbox calls
(generator samples, verifier calls) go through the result store like every other
command's, so a rerun after Ctrl-C or a kill redoes only the calls that are missing.
Randomness comes from ``random.Random`` objects seeded with strings made of the seed, the
task id and a purpose, so one task's instances do not depend on which other tasks are
built, and the same inputs and seed give the same ``instances.jsonl`` byte for byte. The
record schema is documented in ``docs/dimensions.md`` (and in the README).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from arcjudge.errors import InputError
from arcjudge.grids import Grid, to_lists
from arcjudge.harness.core.calls import Call, call_key, outputs_of, run_calls
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.engine import Engine
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES, DEFAULT_SEED, arcgen_pairs, draw_samples
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.core.keys import module_fingerprint
from arcjudge.harness.core.manifest import read_manifest
from arcjudge.harness.core.results import CandidateOutcome
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.corruptions import (
    CandidatePair,
    color_flip,
    human_error,
    instance_mismatch,
    load_neighbours,
    retrieval,
)
from arcjudge.harness.dimensions.embeddings import (
    BASELINE_FEATURES,
    DEFAULT_NEIGHBOURS,
    baseline_embeddings,
    nearest_neighbours,
    read_embeddings,
)
from arcjudge.harness.dimensions.human_errors import load_human_errors
from arcjudge.harness.dimensions.mixture import PRESETS, Mixture, draw
from arcjudge.harness.dimensions.records import (
    CLASSIFICATION_SIZE,
    BuildInfo,
    BuildInputs,
    DimensionInstance,
    VerifierSpec,
)
from arcjudge.harness.dimensions.rules import distance, is_copy
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import VERIFIER_LIMITS, Limits, Program, Status
from arcjudge.tasks import Pair, Task, TaskFormatError, load_task, task_files
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    EDITING_KINDS,
    INVALID_KINDS,
    CandidateKind,
    Dimension,
    Split,
)

__all__ = [
    "CLASSIFICATION_SIZE",
    "DEFAULT_MIN_DISTANCE",
    "DEFAULT_SAMPLES",
    "DEFAULT_SEED",
    "EDIT_MAX_DISTANCE",
    "BuildConfig",
    "Builder",
    "pair_digest",
]


EDIT_MAX_DISTANCE = 0.70
"""An edit may move each grid at most this padded normalized Hamming distance."""

DEFAULT_MIN_DISTANCE = 0.05
"""Constrained Generation: a pair within this distance of a demonstration on both its input
and its output is a copy. At 0.05 every ARC-AGI-1 training task has ARC-GEN pairs that
pass; at 0.10 one (ae3edfdc) has none among its first 120 (see docs/dimensions.md)."""

_WINDOW = 32  # tasks planned, confirmed and drawn together (bounds memory)
_CHUNK = 128  # candidate inputs per verifier call
DEFAULT_PER_KIND = 6


def pair_digest(grid_in: Grid, grid_out: Grid) -> str:
    """A short stable digest of a pair (16 hex digits of SHA-256 over compact JSON)."""
    text = json.dumps([to_lists(grid_in), to_lists(grid_out)], separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _pair_json(grid_in: Grid, grid_out: Grid) -> dict[str, Any]:
    return {"input": to_lists(grid_in), "output": to_lists(grid_out)}


@dataclass(frozen=True)
class _Valid:
    """A valid pair of the task and where it comes from (``seed``: generator samples)."""

    pair: Pair
    split: str
    index: int
    seed: int | None = None

    def provenance(self) -> dict[str, Any]:
        """``{split, index}``, and ``seed`` for a generator sample."""
        found: dict[str, Any] = {"split": self.split, "index": self.index}
        if self.seed is not None:
            found["seed"] = self.seed
        return found


class _Payload(NamedTuple):
    """A drawn instance's JSON ``prompt`` and ``key`` (fields per dimension: docs/dimensions.md)."""

    prompt: dict[str, Any]
    key: dict[str, Any]


@dataclass(frozen=True)
class BuildConfig:
    """Everything ``dimensions build`` needs besides the sandbox.

    Attributes:
        tasks_dir: Task JSON files (ARC or Kaggle format).
        manifest_dir: A ``validate`` output directory; each task's ``chosen`` verifier is
            the one used. Tasks without one are skipped (and listed in ``build.json``).
        arcgen_dir: ARC-GEN stable set (one JSON list per task), if not inside the tasks.
        corruptions_file: ``corruptions.jsonl`` from ``arcjudge mutate``.
        human_errors_file: H-ARC's ``incorrect_submissions.csv``, or a
            ``human_errors.json`` (:mod:`.human_errors`).
        neighbours_file: JSONL of ``{task_id, neighbour_task_ids}``.
        embeddings_file: Task embeddings (:func:`.embeddings.read_embeddings`): the
            neighbours are each task's ``neighbours`` nearest by cosine similarity.
        baseline_retrieval: Without either file, neighbours by the baseline embedding of
            the demonstrations (:mod:`.embeddings`); ``False``: no retrieval candidates.
        neighbours: Neighbours per task from embeddings.
        mixture: Candidate type weights for Classification.
        seed: The seed of every draw (and of the generator samples: ``seed + i``).
        per_kind: Candidates proposed per invalid kind and task (before confirmation).
        min_distance: Generation threshold used to find a reference pair (hidden key).
        limits: Limits of the verifier calls.
        generator: Where valid pairs come from when given: ``samples`` fresh samples per
            task, each input paired with the task's verifier's output (ARC-GEN pairs only
            for tasks the generator gives no usable sample for).
        samples: Generator samples drawn per task.
        editing_kinds: The invalid types an Editing pair is drawn from.
        repeats: How many times a model is to answer each instance (the same instances:
            its runs are the repeats; recorded in ``build.json`` for ``dimensions
            analyze``'s matched-budget comparison). Nothing else depends on it.
        configuration: The configuration this build is (``build --configurations``;
            ``None``: a plain build). Recorded in ``build.json``; configuration ``k > 1``
            also takes the ``corrupted_verifier`` candidates from position
            ``(k - 1) * per_kind`` of the task's list on (wrapping around), so it gets
            other corruptions when ``mutate`` made more than ``per_kind``.
        task_set: The task set ``--tasks`` named, when not an ARC JSON directory
            (recorded in ``build.json``).
    """

    tasks_dir: Path
    manifest_dir: Path
    arcgen_dir: Path | None = None
    corruptions_file: Path | None = None
    human_errors_file: Path | None = None
    neighbours_file: Path | None = None
    embeddings_file: Path | None = None
    baseline_retrieval: bool = True
    neighbours: int = DEFAULT_NEIGHBOURS
    mixture: Mixture = field(default_factory=lambda: Mixture("arc-agi-1", PRESETS["arc-agi-1"]))
    seed: int = DEFAULT_SEED
    per_kind: int = DEFAULT_PER_KIND
    min_distance: float = DEFAULT_MIN_DISTANCE
    limits: Limits = VERIFIER_LIMITS
    generator: GeneratorSource | None = None
    samples: int = DEFAULT_SAMPLES
    editing_kinds: tuple[CandidateKind, ...] = EDITING_KINDS
    repeats: int = 1
    configuration: int | None = None
    task_set: dict[str, Any] | None = None


@dataclass
class _TaskPlan:
    """One task's material before and after the verifier runs."""

    task: Task
    verifier: VerifierSpec
    program: Program
    valid: list[_Valid]  # generator samples, else ARC-GEN pairs, else test pairs (shuffled)
    proposed: dict[str, list[CandidatePair]]
    confirmed: dict[str, list[tuple[CandidatePair, Grid | None]]] = field(default_factory=dict)
    verifier_failures: Counter[str] = field(default_factory=Counter)
    sources: dict[int, Pair] = field(default_factory=dict)  # id(candidate) -> valid pair
    arcgen_digests: list[str] = field(default_factory=list)
    arcgen_count: int = 0  # ARC-GEN pairs with an output that are no demonstration
    shown_dropped: Counter[str] = field(default_factory=Counter)  # per kind


def _rng(seed: int, task_id: str, purpose: str) -> random.Random:
    return random.Random(f"arcjudge-dimensions:{seed}:{task_id}:{purpose}")


def _read_corruptions(path: Path) -> dict[str, list[CandidatePair]]:
    """Read ``corruptions.jsonl`` of ``arcjudge mutate`` (file order kept per task).

    Raises:
        InputError: The file is unreadable or a line is not a corruption record
            (``FILE:LINE: not a corruption record (field ...)``).
    """
    result: dict[str, list[CandidatePair]] = {}
    for _, c in read_records(path, CorruptionRecord.from_json, "a corruption record"):
        detail = {"mutant_id": c.mutant_id, "split": c.split.value, "index": c.index}
        result.setdefault(c.task_id, []).append(
            CandidatePair(c.task_id, c.KIND, c.input, c.output, c.correct_output, detail)
        )
    return result


T = TypeVar("T")


def _as_input_error(read: Callable[[Path], T], path: Path) -> T:
    """``read(path)``, a ``ValueError`` or ``OSError`` of a bad file an ``InputError``.

    The readers of human errors and neighbours raise those (their message names the
    file); the command line shows an ``InputError`` as one line, never a traceback.
    """
    try:
        return read(path)
    except InputError:
        raise
    except (ValueError, OSError) as exc:
        raise InputError(str(exc)) from None


class Builder:
    """Builds the instances; ``records`` and ``summary()`` hold the result."""

    def __init__(self, config: BuildConfig, progress: Callable[[int], None] | None = None) -> None:
        self.config = config
        self.progress = progress
        self.manifest = read_manifest(config.manifest_dir)
        self.chosen = self.manifest.chosen
        self.task_paths = {p.stem: p for p in task_files(config.tasks_dir)}
        self.human = (
            _as_input_error(load_human_errors, config.human_errors_file)
            if config.human_errors_file
            else None
        )
        self.neighbours, self.retrieval = self._neighbours()
        self.corrupted = (
            _read_corruptions(config.corruptions_file) if config.corruptions_file else {}
        )
        self.skipped: dict[str, str] = {}
        self.generator_report: dict[str, dict[str, Any]] = {}
        self.records: list[DimensionInstance] = []
        self.per_task: dict[str, dict[str, Any]] = {}
        self._programs: dict[str, VerifierSource] = {}
        self._fingerprints: dict[str, str] = {}

    # ----------------------------------------------------------------- inputs

    def _task(self, task_id: str) -> Task | None:
        """Load a task (not kept: ARC-GEN pairs are large; the caller keeps what it needs)."""
        path = self.task_paths.get(task_id)
        if path is None:
            return None
        try:
            return load_task(path)
        except TaskFormatError as exc:
            self.skipped[task_id] = f"unreadable task: {exc}"
            return None

    def _source(self, name: str) -> VerifierSource:
        """The manifest's source ``name`` (built once: RE-ARC files are sliced on load)."""
        if name not in self._programs:
            self._programs[name] = self.manifest.verifier_source(name)
        return self._programs[name]

    def _verifier(self, task_id: str) -> tuple[VerifierSpec, Program] | None:
        name = self.chosen.get(task_id)
        if not name:
            self.skipped[task_id] = "no valid verifier in the manifest"
            return None
        tp = self._source(name).program_for(task_id)
        program = tp.program
        if program is None:
            why = "has no program for the task" if tp.refused is None else f"refused {tp.refused}"
            self.skipped[task_id] = f"source {name!r} {why}"
            return None
        spec = self.manifest.sources[name]
        return VerifierSpec(name, str(spec["kind"]), str(spec["path"])), program

    def module_dirs(self) -> tuple[str, ...]:
        """Directories the chosen verifier sources and the generator import from."""
        dirs: list[str] = []
        for name in sorted(set(self.chosen.values())):
            dirs.extend(d for d in self._source(name).module_dirs if d not in dirs)
        if self.config.generator is not None:
            dirs.extend(d for d in self.config.generator.module_dirs if d not in dirs)
        return tuple(dirs)

    def _neighbours(self) -> tuple[dict[str, list[str]], dict[str, Any]]:
        """Each task's neighbours for retrieval, and where they came from (``build.json``).

        Raises:
            InputError: The neighbours or embeddings file cannot be read.
        """
        c = self.config
        if c.neighbours_file is not None and c.embeddings_file is not None:
            raise ValueError("give a neighbours file or an embeddings file, not both")
        if c.neighbours_file is not None:
            return _as_input_error(load_neighbours, c.neighbours_file), {
                "source": "neighbours", "file": str(c.neighbours_file),
            }  # fmt: skip
        if c.embeddings_file is None and not c.baseline_retrieval:
            return {}, {"source": "none"}
        ids = sorted(self.task_paths)
        if c.embeddings_file is not None:
            given = read_embeddings(c.embeddings_file, ids)
            vectors = {t: v for t, v in given.items() if t in self.task_paths}
            info: dict[str, Any] = {"source": "embeddings", "file": str(c.embeddings_file),
                                    "embedded": len(given)}  # fmt: skip
        else:
            demos = {}
            for task_id in ids:
                task = self._task(task_id)
                if task is not None:
                    demos[task_id] = task.train
            vectors = baseline_embeddings(demos)
            info = {"source": "baseline embedding", "features": list(BASELINE_FEATURES)}
        info.update(k=c.neighbours, tasks=len(vectors))
        return nearest_neighbours(vectors, c.neighbours), info

    def _demos_by_task(self) -> dict[str, tuple[Pair, ...]]:
        wanted = {n for ns in self.neighbours.values() for n in ns}
        demos = {}
        for task_id in sorted(wanted):
            task = self._task(task_id)
            if task is not None:
                demos[task_id] = task.train
        return demos

    # --------------------------------------------------------------- proposing

    def _plan(
        self,
        task_id: str,
        demos_by_task: dict[str, tuple[Pair, ...]],
        samples: list[_Valid] | None = None,
    ) -> _TaskPlan | None:
        """Propose a task's candidates; ``samples``: its verified generator samples."""
        task = self._task(task_id)
        if task is None:
            self.skipped.setdefault(task_id, "no task file")
            return None
        found = self._verifier(task_id)
        if found is None:
            return None
        verifier, program = found
        seed, per_kind = self.config.seed, self.config.per_kind
        known = {(p.input, p.output) for p in (*task.train, *task.test)}
        shown = {p.input for p in task.train}  # no candidate may show a demonstration input
        dropped: Counter[str] = Counter()

        def unshown(kind: str, candidates: list[CandidatePair]) -> list[CandidatePair]:
            kept = [c for c in candidates if c.input not in shown]
            dropped[kind] += len(candidates) - len(kept)
            return kept

        all_arcgen = arcgen_pairs(task, self.config.arcgen_dir)
        arcgen = [
            _Valid(p, Split.ARC_GEN, i)
            for i, p in enumerate(all_arcgen)
            if p.output is not None and (p.input, p.output) not in known and p.input not in shown
        ]
        tests = [_Valid(p, Split.TEST, i) for i, p in enumerate(task.test) if p.output is not None]
        if samples is not None:
            samples = self._usable_samples(task, samples)
        valid = list(samples or arcgen or tests)
        if not valid:
            self.skipped[task_id] = "no valid pair (no ARC-GEN pair and no test output)"
            return None
        order = list(range(len(valid)))
        _rng(seed, task_id, "valid").shuffle(order)
        pool_pairs = [v.pair for v in (samples or arcgen)]  # unshuffled: outputs to mismatch
        valid = [valid[i] for i in order]
        # valid[0] is the Inversion instance: kept out of every other pool when possible.
        valid_pairs = [v.pair for v in (valid[1:] or valid)]
        proposed: dict[str, list[CandidatePair]] = {}
        flips = color_flip(task_id, valid_pairs, _rng(seed, task_id, "color_flip"), count=per_kind)
        proposed["color_flip"] = unshown("color_flip", flips)
        rng = _rng(seed, task_id, "instance_mismatch")
        pool = [*pool_pairs, *task.train]
        mismatches = [
            instance_mismatch(task_id, target, pool, rng) for target in valid_pairs[:per_kind]
        ]
        proposed["instance_mismatch"] = unshown(
            "instance_mismatch", _distinct(c for c in mismatches if c is not None)
        )
        answered = self.human.tests.get(task_id, {}) if self.human else {}
        kind = self.human.task_types.get(task_id) if self.human else None
        wrong: list[CandidatePair | None] = []
        for test in sorted(answered):  # errors answering each test input with a known output
            if test >= len(task.test) or task.test[test].output is None:
                continue
            rng = _rng(seed, task_id, "human_error" if test == 0 else f"human_error:{test}")
            wrong.extend(
                human_error(task_id, task.test[test], answered[test], rng, task_type=kind,
                            test_index=test or None)
                for _ in range(4 * per_kind)
            )  # fmt: skip
        if wrong:
            proposed["human_error"] = unshown(
                "human_error", _distinct(c for c in wrong if c is not None)
            )[:per_kind]
        if task_id in self.neighbours:
            rng = _rng(seed, task_id, "retrieval")
            drawn = [
                retrieval(task_id, self.neighbours, demos_by_task, rng) for _ in range(4 * per_kind)
            ]
            proposed["retrieval"] = unshown(
                "retrieval", _distinct(c for c in drawn if c is not None)
            )[:per_kind]
        if task_id in self.corrupted:
            corrupted = unshown("corrupted_verifier", _distinct(self.corrupted[task_id]))
            start = ((self.config.configuration or 1) - 1) * per_kind % max(len(corrupted), 1)
            proposed["corrupted_verifier"] = [*corrupted[start:], *corrupted[:start]][:per_kind]
        if len(valid) > 1:  # never show the Inversion instance's input elsewhere
            hidden = valid[0].pair.input
            proposed = {k: [c for c in cs if c.input != hidden] for k, cs in proposed.items()}
        # The valid pair each color flip / mismatch was made from: an edit back to it is a
        # repair (used to pick Editing pairs that can be repaired within the limit).
        sources: dict[int, Pair] = {}
        for cand in proposed.get("color_flip", []):
            sources[id(cand)] = valid_pairs[cand.detail["source_index"]]
        for cand in proposed.get("instance_mismatch", []):
            sources[id(cand)] = pool[cand.detail["source_index"]]
        digests = sorted(
            {pair_digest(p.input, p.output) for p in all_arcgen if p.output is not None}
        )
        return _TaskPlan(task, verifier, program, valid, proposed, sources=sources,
                         arcgen_digests=digests, arcgen_count=len(arcgen),
                         shown_dropped=dropped)  # fmt: skip

    # ---------------------------------------------------------------- generator

    def _generator_samples(
        self, sandbox: Sandbox, store: ResultStore, engine: Engine, task_ids: list[str]
    ) -> dict[str, list[_Valid]]:
        """Fresh valid pairs per task: generator samples, outputs from the task's verifier.

        Sample i is the generator's return value right after ``random.seed(seed + i)``,
        drawn in the sandbox and cached in the store (as ``validate`` and ``score`` draw
        them); its input then goes to the task's validated verifier (through the engine),
        whose output is the pair's output. Samples the verifier gives no grid for are left
        out; what happened goes to the per-task report (``build.json``).
        """
        generator = self.config.generator
        assert generator is not None
        wanted = [t for t in task_ids if self.chosen.get(t) and t in self.task_paths]
        drawn, report = draw_samples(
            sandbox, store, generator, wanted, self.config.samples, self.config.seed,
            PolicyMode.WARN,
        )  # fmt: skip
        self.generator_report.update(report)
        calls: list[Call] = []
        owners: list[str] = []
        for task_id in wanted:
            found = self._verifier(task_id) if drawn.get(task_id) else None
            if found is None:
                continue
            _, program = found
            fingerprint = self._fingerprint(self.chosen[task_id])
            inputs = list(dict.fromkeys(s.grid for s in drawn[task_id]))
            calls.append(Call(program, call_key(engine, program, fingerprint), inputs))
            owners.append(task_id)
        result: dict[str, list[_Valid]] = {t: [] for t in wanted}
        for task_id, call, outcome in zip(owners, calls, run_calls(engine, calls), strict=True):
            outputs = outputs_of(call, outcome)
            counts: Counter[str] = Counter()
            for sample in drawn[task_id]:
                status, grid = outputs.get(sample.grid, (Status.INFRA, None))
                if status is not Status.OK or grid is None:
                    counts["no_verifier_output"] += 1
                    continue
                if grid != sample.expected:
                    counts["verifier_disagrees"] += 1  # kept: the verifier's output is used
                pair = Pair(sample.grid, grid)
                result[task_id].append(_Valid(pair, Split.GENERATOR, sample.index, sample.seed))
            self.generator_report[task_id].update(sorted(counts.items()))
        return result

    def _usable_samples(self, task: Task, samples: list[_Valid]) -> list[_Valid]:
        """Samples whose input is no demonstration's or test pair's, each input once."""
        demos = {p.input for p in task.train}
        tests = {p.input for p in task.test}
        kept: list[_Valid] = []
        seen: set[Grid] = set()
        counts: Counter[str] = Counter()
        for sample in samples:
            grid = sample.pair.input
            if grid in demos:
                counts["demonstration_input"] += 1
            elif grid in tests:
                counts["test_input"] += 1
            elif grid in seen:
                counts["repeated_input"] += 1
            else:
                seen.add(grid)
                kept.append(sample)
        report = self.generator_report.setdefault(task.task_id, {})
        report.update(sorted(counts.items()))
        report["valid"] = len(kept)
        return kept

    # ------------------------------------------------------------- confirming

    def _fingerprint(self, name: str) -> str:
        """``module_fingerprint`` of source ``name``'s module directories (computed once)."""
        if name not in self._fingerprints:
            self._fingerprints[name] = module_fingerprint(self._source(name).module_dirs)
        return self._fingerprints[name]

    def _confirm(self, engine: Engine, plans: list[_TaskPlan]) -> None:
        """Run each task's verifier on its candidate inputs; keep confirmed invalid pairs."""
        calls = []
        for plan in plans:
            inputs = list(dict.fromkeys(c.input for cs in plan.proposed.values() for c in cs))
            fingerprint = self._fingerprint(plan.verifier.source)
            calls.append(Call(plan.program, call_key(engine, plan.program, fingerprint), inputs))

        def done(index: int, outcome: CandidateOutcome) -> None:
            plan = plans[index]
            outputs = outputs_of(calls[index], outcome)
            if outcome.failure is not None:
                plan.verifier_failures[outcome.failure[0].value] += len(calls[index].inputs)
            for kind, candidates in plan.proposed.items():
                kept: list[tuple[CandidatePair, Grid | None]] = []
                for cand in candidates:
                    status, grid = outputs.get(cand.input, (Status.INFRA, None))
                    if status is Status.OK and grid is not None and grid != cand.output:
                        kept.append((cand, grid))
                    elif status in (Status.ERROR, Status.INVALID_OUTPUT):
                        kept.append((cand, None))  # the verifier maps the input to no grid
                    elif status is not Status.OK:
                        plan.verifier_failures[status.value] += 1
                plan.confirmed[kind] = kept
            if self.progress:
                self.progress(1)

        run_calls(engine, calls, done)

    # ----------------------------------------------------------------- drawing

    def _classification(self, plan: _TaskPlan, rng: random.Random) -> _Payload | None:
        available = [k for k in INVALID_KINDS if plan.confirmed.get(k)]
        weights, moved = self.config.mixture.for_available(available)
        if not weights:
            return None
        used: dict[str, set[int]] = {}
        candidates, labels, kinds, provenance = [], [], [], []
        for _ in range(CLASSIFICATION_SIZE):
            kind = draw(weights, rng)
            if kind == "valid":  # valid[0] is the Inversion instance (see _plan)
                indices = list(range(1, len(plan.valid))) or [0]
            else:
                indices = list(range(len(plan.confirmed[kind])))
            taken = used.setdefault(kind, set())
            fresh = [i for i in indices if i not in taken]
            index = rng.choice(fresh or indices)
            taken.add(index)
            if kind == "valid":
                valid = plan.valid[index]
                assert valid.pair.output is not None
                candidates.append(_pair_json(valid.pair.input, valid.pair.output))
                provenance.append({**valid.provenance(), "reused": not fresh})
            else:
                cand, _ = plan.confirmed[kind][index]
                candidates.append(_pair_json(cand.input, cand.output))
                provenance.append({**cand.detail, "reused": not fresh})
            labels.append("valid" if kind == "valid" else "invalid")
            kinds.append(kind)
        key = {
            "labels": labels,
            "kinds": kinds,
            "provenance": provenance,
            "weights": weights,
            "redistributed": moved,
        }
        return _Payload({"candidates": candidates}, key)

    def _editing(self, plan: _TaskPlan, rng: random.Random) -> _Payload | None:
        """One invalid pair, preferring types and pairs that can be repaired in the limit."""
        repairs: dict[str, list[tuple[Grid, Grid] | None]] = {
            kind: [self._best_repair(plan, cand, out) for cand, out in plan.confirmed[kind]]
            for kind in self.config.editing_kinds
            if plan.confirmed.get(kind)
        }
        if not repairs:
            return None
        repairable = [k for k, rs in repairs.items() if any(r is not None for r in rs)]
        kinds = repairable or list(repairs)
        weights: dict[str, float] = {k: self.config.mixture.weight(k) for k in kinds}
        weights = {k: w for k, w in weights.items() if w > 0} or dict.fromkeys(kinds, 1.0)
        kind = draw(weights, rng)
        options = plan.confirmed[kind]
        fixable = [i for i, r in enumerate(repairs[kind]) if r is not None]
        index = rng.choice(fixable or list(range(len(options))))
        cand, _ = options[index]
        best = repairs[kind][index]
        key: dict[str, Any] = {
            "kind": kind,
            "provenance": dict(cand.detail),
            "weights": weights,
            "reference_edit": None if best is None else _pair_json(*best),
        }
        return _Payload(_pair_json(cand.input, cand.output), key)

    def _best_repair(
        self, plan: _TaskPlan, cand: CandidatePair, verified: Grid | None
    ) -> tuple[Grid, Grid] | None:
        """The nearest known valid pair within the editing limit on both grids, if any.

        Known valid pairs: the candidate's input with its true output (from the verifier,
        or known when the candidate was made), and the valid pair it was made from.
        """
        known: list[tuple[Grid, Grid]] = []
        for output in (verified, cand.correct_output):
            if output is not None:
                known.append((cand.input, output))
        source = plan.sources.get(id(cand))
        if source is not None and source.output is not None:
            known.append((source.input, source.output))
        limit = Fraction(str(EDIT_MAX_DISTANCE))
        best, best_cost = None, None
        for grid_in, grid_out in known:
            cost = max(distance(grid_in, cand.input), distance(grid_out, cand.output))
            if cost <= limit and (best_cost is None or cost < best_cost):
                best, best_cost = (grid_in, grid_out), cost
        return best

    def _generation(self, plan: _TaskPlan) -> _Payload:
        demos = [(d.input, d.output) for d in plan.task.train if d.output is not None]
        reference = None
        for valid in plan.valid:
            pair = valid.pair
            assert pair.output is not None
            if not any(
                is_copy((pair.input, pair.output), demo, self.config.min_distance)[0]
                for demo in demos
            ):
                reference = {**_pair_json(pair.input, pair.output), **valid.provenance()}
                break
        return _Payload(
            {"avoid": [_pair_json(*demo) for demo in demos]},
            {"arcgen_digests": plan.arcgen_digests, "reference": reference},
        )

    def _inversion(self, plan: _TaskPlan) -> _Payload:
        valid = plan.valid[0]
        assert valid.pair.output is not None
        return _Payload(
            {"output": to_lists(valid.pair.output)},
            {"input": to_lists(valid.pair.input), **valid.provenance()},
        )

    def _output_grid(self, plan: _TaskPlan) -> _Payload | None:
        """The standard ARC test: the test inputs shown, their outputs hidden (all known)."""
        tests = plan.task.test
        if not tests or any(p.output is None for p in tests):
            return None
        return _Payload(
            {"test_inputs": [to_lists(p.input) for p in tests]},
            {"test_outputs": [to_lists(p.output) for p in tests if p.output is not None]},
        )

    def _definition(self, plan: _TaskPlan) -> _Payload:
        prompt = {
            "score": "arcjudge score results for this task's programs",
            "train": len(plan.task.train),
            "test": len(plan.task.test),
            "arc-gen": plan.arcgen_count,
        }
        return _Payload(prompt, {})

    def _instances(self, plan: _TaskPlan) -> list[DimensionInstance]:
        task_id = plan.task.task_id
        rng = _rng(self.config.seed, task_id, "draw")
        made: dict[Dimension, _Payload | None] = {  # drawn in this order (rng is shared)
            Dimension.OUTPUT_GRID: self._output_grid(plan),
            Dimension.DEFINITION: self._definition(plan),
            Dimension.CLASSIFICATION: self._classification(plan, rng),
            Dimension.GENERATION: self._generation(plan),
            Dimension.EDITING: self._editing(plan, rng),
            Dimension.INVERSION: self._inversion(plan),
        }
        records = []
        for dimension in BUILT_DIMENSIONS:
            body = made[dimension]
            if body is None:
                continue
            records.append(DimensionInstance(task_id, dimension, self.config.seed,
                                             plan.verifier, body.prompt, body.key))  # fmt: skip
        proposed = {k: len(v) for k, v in sorted(plan.proposed.items())}
        confirmed = {k: len(v) for k, v in sorted(plan.confirmed.items())}
        missing = [d for d in BUILT_DIMENSIONS if made[d] is None]
        classification = made[Dimension.CLASSIFICATION]
        self.per_task[task_id] = {
            "verifier": plan.verifier.source,
            "proposed": proposed,
            "confirmed": confirmed,
            "valid_pool": len(plan.valid),
            "valid_source": plan.valid[0].split,
            "demonstration_inputs_dropped": {
                k: n for k, n in sorted(plan.shown_dropped.items()) if n
            },
            "redistributed": classification.key["redistributed"] if classification else [],
            "verifier_failures": dict(sorted(plan.verifier_failures.items())),
            "missing_dimensions": missing,
        }
        if self.config.generator is not None:
            self.per_task[task_id]["generator"] = self.generator_report.get(task_id, {})
        return records

    # -------------------------------------------------------------------- run

    def run(self, sandbox: Sandbox, store: ResultStore) -> None:
        """Sample, propose, confirm (sandbox calls cached in ``store``), draw; window by window.

        Fills ``records`` (task order, then dimension order). Results already in the store
        (generator samples, verifier outputs) are not computed again, so a rerun after an
        interruption resumes.
        """
        engine = Engine(sandbox, store, self.config.limits, PolicyMode.OFF, chunk=_CHUNK)
        demos_by_task = self._demos_by_task()
        task_ids = sorted(self.task_paths)
        for start in range(0, len(task_ids), _WINDOW):
            window = task_ids[start : start + _WINDOW]
            samples: dict[str, list[_Valid]] = {}
            if self.config.generator is not None and self.config.samples > 0:
                samples = self._generator_samples(sandbox, store, engine, window)
            plans = []
            for task_id in window:
                plan = self._plan(task_id, demos_by_task, samples.get(task_id))
                if plan is not None:
                    plans.append(plan)
            self._finish(engine, plans)

    def _finish(self, engine: Engine, plans: list[_TaskPlan]) -> None:
        """Confirm and draw a window of tasks (then their ARC-GEN pairs can be freed)."""
        self._confirm(engine, plans)
        for plan in plans:
            self.records.extend(self._instances(plan))

    def lines(self) -> Iterator[str]:
        """Lines of ``instances.jsonl``."""
        for record in self.records:
            yield json_dumps(record.to_json(), sort_keys=True, separators=(",", ":")) + "\n"

    def summary(self) -> dict[str, Any]:
        """``build.json``'s object (a :class:`BuildInfo`): configuration, inputs, counts."""
        c = self.config
        counts = Counter(r.dimension for r in self.records)
        kinds: Counter[str] = Counter()
        for record in self.records:
            if record.dimension is Dimension.CLASSIFICATION:
                kinds.update(record.kinds())
        dropped: Counter[str] = Counter()
        for info in self.per_task.values():
            dropped.update(info["demonstration_inputs_dropped"])
        generator = c.generator
        inputs = BuildInputs(
            tasks=str(c.tasks_dir),
            manifest=str(c.manifest_dir),
            arcgen=str(c.arcgen_dir) if c.arcgen_dir else None,
            generator={"kind": generator.kind, "path": str(generator.path)} if generator else None,
            corruptions=str(c.corruptions_file) if c.corruptions_file else None,
            human_errors=str(c.human_errors_file) if c.human_errors_file else None,
            neighbours=str(c.neighbours_file) if c.neighbours_file else None,
            embeddings=str(c.embeddings_file) if c.embeddings_file else None,
        )
        build = BuildInfo(
            configuration=c.configuration,
            task_set=c.task_set,
            seed=c.seed,
            repeats=c.repeats,
            mixture=c.mixture.to_json(),
            per_kind=c.per_kind,
            min_distance=c.min_distance,
            edit_max_distance=EDIT_MAX_DISTANCE,
            editing_kinds=tuple(c.editing_kinds),
            generator_samples=c.samples if generator is not None else 0,
            inputs=inputs,
            retrieval=self.retrieval,
            instances={d: counts.get(d, 0) for d in BUILT_DIMENSIONS},
            classification_kinds={k: kinds.get(k, 0) for k in ("valid", *INVALID_KINDS)},
            valid_sources=dict(
                sorted(Counter(t["valid_source"] for t in self.per_task.values()).items())
            ),
            demonstration_inputs_dropped={
                k: dropped.get(k, 0) for k in INVALID_KINDS if dropped.get(k)
            },
            human_error_rows_skipped=tuple(self.human.skipped) if self.human else (),
            tasks={t: self.per_task[t] for t in sorted(self.per_task)},
            skipped={t: self.skipped[t] for t in sorted(self.skipped)},
        )
        return build.to_json()


def _distinct(candidates: Iterable[CandidatePair]) -> list[CandidatePair]:
    """Candidates in order, each (input, output) pair kept once."""
    seen: set[tuple[Grid, Grid]] = set()
    result = []
    for cand in candidates:
        if (cand.input, cand.output) not in seen:
            seen.add((cand.input, cand.output))
            result.append(cand)
    return result


def summary_text(summary: Mapping[str, Any]) -> str:
    """The printed summary of a build."""
    n = summary["instances"]
    lines = [
        "instances: " + ", ".join(f"{d} {n.get(d, 0)}" for d in BUILT_DIMENSIONS),
        "classification candidates by type: "
        + ", ".join(f"{k} {v}" for k, v in summary["classification_kinds"].items()),
    ]
    sources = summary.get("valid_sources") or {}
    if sources:
        lines.append(
            "valid pairs from (tasks): " + ", ".join(f"{k} {v}" for k, v in sources.items())
        )
    dropped = summary.get("demonstration_inputs_dropped") or {}
    if dropped:
        lines.append(
            "candidates dropped for showing a demonstration input: "
            + ", ".join(f"{k} {v}" for k, v in dropped.items())
        )
    moved = Counter(k for t in summary["tasks"].values() for k in t["redistributed"])
    if moved:
        lines.append(
            "weight redistributed (tasks without the type): "
            + ", ".join(f"{k} {v}" for k, v in sorted(moved.items()))
        )
    if summary["skipped"]:
        lines.append(f"skipped tasks: {len(summary['skipped'])} (reasons in build.json)")
    retrieval = summary.get("retrieval") or {}
    if retrieval.get("source") in ("baseline embedding", "embeddings"):
        lines.append(
            f"retrieval neighbours: {retrieval['source']} (k={retrieval['k']}, "
            f"{retrieval['tasks']} tasks)"
        )
    repeats = summary.get("repeats", 1)
    if repeats > 1:
        lines.append(
            f"repeats: answer every instance {repeats} times (runs 1..{repeats}: the same "
            "instances, for the matched-budget comparison of dimensions analyze)"
        )
    return "\n".join(lines)
