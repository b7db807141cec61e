"""``arcjudge dimensions build``: evaluation instances for the five dimensions.

For every task with a validated verifier (``--manifest``: a ``validate`` output directory)
the builder takes the task's valid pairs (fresh generator samples with the verifier's
outputs when a generator is given, else its ARC-GEN pairs, else its test pairs), proposes
candidate invalid pairs of each kind (:mod:`.corruptions`, plus the ``corrupted_verifier``
pairs of a ``mutate`` run), drops every candidate that shows a demonstration's input, runs
the task's verifier on every candidate input in the sandbox, keeps only the candidates the
verifier confirms invalid, and draws one instance per dimension. A short pipeline: the
inputs are read once (:mod:`.build_sources`), each task's material is gathered in a plan
(:mod:`.plan`), and each dimension's strategy draws its instance from the plan, in the
order of the table (:mod:`.strategies`). The sandbox calls (generator samples, verifier
calls) go through the result store like every other command's, so a rerun after Ctrl-C
or a kill redoes only the calls that are missing.
Randomness comes from ``random.Random`` objects seeded with strings made of the seed, the
task id and a purpose, so one task's instances do not depend on which other tasks are
built, and the same inputs and seed give the same ``instances.jsonl`` byte for byte. The
record schema is documented in ``docs/dimensions.md`` (and in the README).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.grids import Grid
from arcjudge.harness.core.calls import Call, call_key, outputs_of, run_calls
from arcjudge.harness.core.engine import Engine
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES, DEFAULT_SEED, arcgen_pairs, draw_samples
from arcjudge.harness.core.results import CandidateOutcome
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.build_sources import BuildSources, read_corruptions
from arcjudge.harness.dimensions.corruptions import (
    CandidatePair,
    color_flip,
    human_error,
    instance_mismatch,
    retrieval,
)
from arcjudge.harness.dimensions.embeddings import (
    DEFAULT_NEIGHBOURS,
)
from arcjudge.harness.dimensions.mixture import PRESETS, Mixture
from arcjudge.harness.dimensions.plan import (
    DrawSettings,
    TaskPlan,
    ValidPair,
    distinct,
    pair_digest,
    task_rng,
)
from arcjudge.harness.dimensions.records import (
    CLASSIFICATION_SIZE,
    BuildInfo,
    BuildInputs,
    DimensionInstance,
)
from arcjudge.harness.dimensions.strategies import STRATEGIES
from arcjudge.harness.dimensions.strategies.editing import EDIT_MAX_DISTANCE
from arcjudge.harness.dimensions.strategies.generation import DEFAULT_MIN_DISTANCE
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import VERIFIER_LIMITS, Limits, Status
from arcjudge.tasks import Pair, Task
from arcjudge.verifiers.sources import GeneratorSource, SourceError
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    EDITING_KINDS,
    INVALID_KINDS,
    CandidateKind,
    Dimension,
    MismatchPool,
    MixtureRule,
    Split,
    ValidPairs,
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


_WINDOW = 32  # tasks planned, confirmed and drawn together (bounds memory)
_CHUNK = 128  # candidate inputs per verifier call
DEFAULT_PER_KIND = 6


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
        mixture_rule: How Classification draws its five candidate types from them.
        seed: The seed of every draw (and of the generator samples: ``seed + i``).
        per_kind: Candidates proposed per invalid kind and task (before confirmation).
        min_distance: Generation threshold used to find a reference pair (hidden key).
        limits: Limits of the verifier calls.
        generator: The generator valid pairs are sampled from: ``samples`` fresh samples
            per task, each input paired with the task's verifier's output (ARC-GEN pairs
            only for tasks the generator gives no usable sample for). ``None``: the one the
            manifest names, if any (``valid_pairs`` ``generator``).
        samples: Generator samples drawn per task (``None``: ``DEFAULT_SAMPLES``; given,
            a generator must be known).
        valid_pairs: ``generator`` (the default, the study's): valid pairs are generator
            samples whenever a generator is given or named by the manifest; ``arc-gen``:
            the ARC-GEN pairs (arcjudge's default before; no ``generator`` then).
        mismatch_pool: ``arc-gen`` (the default, the study's): instance mismatches take
            outputs from the task's ARC-GEN pairs and demonstrations whatever the valid
            pairs are; ``valid``: from the valid pairs and demonstrations (before).
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
    mixture_rule: MixtureRule = MixtureRule.WITHOUT_REPLACEMENT
    valid_pairs: ValidPairs = ValidPairs.GENERATOR
    mismatch_pool: MismatchPool = MismatchPool.ARC_GEN
    seed: int = DEFAULT_SEED
    per_kind: int = DEFAULT_PER_KIND
    min_distance: float = DEFAULT_MIN_DISTANCE
    limits: Limits = VERIFIER_LIMITS
    generator: GeneratorSource | None = None
    samples: int | None = None
    editing_kinds: tuple[CandidateKind, ...] = EDITING_KINDS
    repeats: int = 1
    configuration: int | None = None
    task_set: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        """Check the choices agree: ARC-GEN valid pairs take no generator."""
        if self.valid_pairs is ValidPairs.ARC_GEN and (
            self.generator is not None or self.samples is not None
        ):
            raise ValueError("valid_pairs arc-gen takes no generator and no samples")
        if self.samples is not None and self.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.samples}")


class Builder:
    """Builds the instances; ``records`` and ``summary()`` hold the result."""

    def __init__(self, config: BuildConfig, progress: Callable[[int], None] | None = None) -> None:
        self.config = config
        self.progress = progress
        self.sources = BuildSources(config.tasks_dir, config.manifest_dir, config.human_errors_file)
        self.human = self.sources.human
        self.neighbours, self.retrieval = self.sources.neighbours(
            config.neighbours_file, config.embeddings_file, config.baseline_retrieval,
            config.neighbours,
        )  # fmt: skip
        self.corrupted = (
            read_corruptions(config.corruptions_file) if config.corruptions_file else {}
        )
        self.skipped = self.sources.skipped
        self.generator_report: dict[str, dict[str, Any]] = {}
        self.records: list[DimensionInstance] = []
        self.per_task: dict[str, dict[str, Any]] = {}
        self._settings = DrawSettings(
            config.mixture, config.editing_kinds, config.min_distance, config.mixture_rule
        )
        self.generator = self._generator()
        self.samples = DEFAULT_SAMPLES if config.samples is None else config.samples

    def _generator(self) -> GeneratorSource | None:
        """The generator valid pairs are sampled from: given, else the manifest's.

        Raises:
            InputError: ``samples`` was given but no generator is known.
        """
        config = self.config
        generator = config.generator
        named = self.sources.manifest.generator
        if generator is None and config.valid_pairs is ValidPairs.GENERATOR and named:
            try:
                generator = GeneratorSource(named.kind, named.path)
            except SourceError as exc:
                where = config.manifest_dir / "manifest.json"
                raise InputError(f"{where}: the generator it names: {exc}") from None
        if generator is None and config.samples is not None:
            raise InputError(
                "generator samples asked, but no generator to draw them from (give one, or "
                "the manifest of a validate run that drew from one)"
            )
        return generator

    def module_dirs(self) -> tuple[str, ...]:
        """Directories the chosen verifier sources and the generator import from."""
        return self.sources.module_dirs(self.generator)

    # --------------------------------------------------------------- proposing

    def _plan(
        self,
        task_id: str,
        demos_by_task: dict[str, tuple[Pair, ...]],
        samples: list[ValidPair] | None = None,
    ) -> TaskPlan | None:
        """Propose a task's candidates; ``samples``: its verified generator samples."""
        task = self.sources.task(task_id)
        if task is None:
            self.skipped.setdefault(task_id, "no task file")
            return None
        found = self.sources.verifier(task_id)
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
            ValidPair(p, Split.ARC_GEN, i)
            for i, p in enumerate(all_arcgen)
            if p.output is not None and (p.input, p.output) not in known and p.input not in shown
        ]
        tests = [
            ValidPair(p, Split.TEST, i) for i, p in enumerate(task.test) if p.output is not None
        ]
        if samples is not None:
            samples = self._usable_samples(task, samples)
        valid = list(samples or arcgen or tests)
        if not valid:
            self.skipped[task_id] = "no valid pair (no ARC-GEN pair and no test output)"
            return None
        order = list(range(len(valid)))
        task_rng(seed, task_id, "valid").shuffle(order)
        # unshuffled: the pairs whose outputs instance mismatches take (the study's pool:
        # ARC-GEN and the demonstrations, whatever the valid pairs are)
        if self.config.mismatch_pool is MismatchPool.VALID:
            pool_pairs = [v.pair for v in (samples or arcgen)]
        else:
            pool_pairs = [v.pair for v in (arcgen or samples or [])]
        valid = [valid[i] for i in order]
        # valid[0] is the Inversion instance: kept out of every other pool when possible.
        valid_pairs = [v.pair for v in (valid[1:] or valid)]
        proposed: dict[str, list[CandidatePair]] = {}
        flips = color_flip(
            task_id, valid_pairs, task_rng(seed, task_id, "color_flip"), count=per_kind
        )
        proposed["color_flip"] = unshown("color_flip", flips)
        rng = task_rng(seed, task_id, "instance_mismatch")
        pool = [*pool_pairs, *task.train]
        mismatches = [
            instance_mismatch(task_id, target, pool, rng) for target in valid_pairs[:per_kind]
        ]
        proposed["instance_mismatch"] = unshown(
            "instance_mismatch", distinct(c for c in mismatches if c is not None)
        )
        answered = self.human.tests.get(task_id, {}) if self.human else {}
        kind = self.human.task_types.get(task_id) if self.human else None
        wrong: list[CandidatePair | None] = []
        for test in sorted(answered):  # errors answering each test input with a known output
            if test >= len(task.test) or task.test[test].output is None:
                continue
            rng = task_rng(seed, task_id, "human_error" if test == 0 else f"human_error:{test}")
            wrong.extend(
                human_error(task_id, task.test[test], answered[test], rng, task_type=kind,
                            test_index=test or None)
                for _ in range(4 * per_kind)
            )  # fmt: skip
        if wrong:
            proposed["human_error"] = unshown(
                "human_error", distinct(c for c in wrong if c is not None)
            )[:per_kind]
        if task_id in self.neighbours:
            rng = task_rng(seed, task_id, "retrieval")
            drawn = [
                retrieval(task_id, self.neighbours, demos_by_task, rng) for _ in range(4 * per_kind)
            ]
            proposed["retrieval"] = unshown(
                "retrieval", distinct(c for c in drawn if c is not None)
            )[:per_kind]
        if task_id in self.corrupted:
            corrupted = unshown("corrupted_verifier", distinct(self.corrupted[task_id]))
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
        return TaskPlan(task, verifier, program, valid, proposed, sources=sources,
                         arcgen_digests=digests, arcgen_count=len(arcgen),
                         shown_dropped=dropped)  # fmt: skip

    # ---------------------------------------------------------------- generator

    def _generator_samples(
        self, sandbox: Sandbox, store: ResultStore, engine: Engine, task_ids: list[str]
    ) -> dict[str, list[ValidPair]]:
        """Fresh valid pairs per task: generator samples, outputs from the task's verifier.

        Sample i is the generator's return value right after ``random.seed(seed + i)``,
        drawn in the sandbox and cached in the store (as ``validate`` and ``score`` draw
        them); its input then goes to the task's validated verifier (through the engine),
        whose output is the pair's output. Samples the verifier gives no grid for are left
        out; what happened goes to the per-task report (``build.json``).
        """
        generator = self.generator
        assert generator is not None
        chosen, paths = self.sources.chosen, self.sources.task_paths
        wanted = [t for t in task_ids if chosen.get(t) and t in paths]
        drawn, report = draw_samples(
            sandbox, store, generator, wanted, self.samples, self.config.seed,
            PolicyMode.WARN,
        )  # fmt: skip
        self.generator_report.update(report)
        calls: list[Call] = []
        owners: list[str] = []
        for task_id in wanted:
            found = self.sources.verifier(task_id) if drawn.get(task_id) else None
            if found is None:
                continue
            _, program = found
            fingerprint = self.sources.fingerprint(self.sources.chosen[task_id])
            inputs = list(dict.fromkeys(s.grid for s in drawn[task_id]))
            calls.append(Call(program, call_key(engine, program, fingerprint), inputs))
            owners.append(task_id)
        result: dict[str, list[ValidPair]] = {t: [] for t in wanted}
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
                result[task_id].append(ValidPair(pair, Split.GENERATOR, sample.index, sample.seed))
            self.generator_report[task_id].update(sorted(counts.items()))
        return result

    def _usable_samples(self, task: Task, samples: list[ValidPair]) -> list[ValidPair]:
        """Samples whose input is no demonstration's or test pair's, each input once."""
        demos = {p.input for p in task.train}
        tests = {p.input for p in task.test}
        kept: list[ValidPair] = []
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

    def _confirm(self, engine: Engine, plans: list[TaskPlan]) -> None:
        """Run each task's verifier on its candidate inputs; keep confirmed invalid pairs."""
        calls = []
        for plan in plans:
            inputs = list(dict.fromkeys(c.input for cs in plan.proposed.values() for c in cs))
            fingerprint = self.sources.fingerprint(plan.verifier.source)
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

    def _instances(self, plan: TaskPlan) -> list[DimensionInstance]:
        """Each dimension's instance of the task, drawn by its strategy; the task's report."""
        task_id = plan.task.task_id
        rng = task_rng(self.config.seed, task_id, "draw")
        made = {  # drawn in the table's order, BUILT_DIMENSIONS (rng is shared)
            dimension: strategy.draw(plan, self._settings, rng)
            for dimension, strategy in STRATEGIES.items()
        }
        seed, verifier = self.config.seed, plan.verifier
        records = [
            DimensionInstance(task_id, dimension, seed, verifier, body.prompt, body.key)
            for dimension, body in made.items()
            if body is not None
        ]
        proposed = {k: len(v) for k, v in sorted(plan.proposed.items())}
        confirmed = {k: len(v) for k, v in sorted(plan.confirmed.items())}
        missing = [d for d, body in made.items() if body is None]
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
        if self.generator is not None:
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
        demos_by_task = self.sources.demonstrations(
            sorted({n for ns in self.neighbours.values() for n in ns})
        )
        task_ids = sorted(self.sources.task_paths)
        for start in range(0, len(task_ids), _WINDOW):
            window = task_ids[start : start + _WINDOW]
            samples: dict[str, list[ValidPair]] = {}
            if self.generator is not None and self.samples > 0:
                samples = self._generator_samples(sandbox, store, engine, window)
            plans = []
            for task_id in window:
                plan = self._plan(task_id, demos_by_task, samples.get(task_id))
                if plan is not None:
                    plans.append(plan)
            self._finish(engine, plans)

    def _finish(self, engine: Engine, plans: list[TaskPlan]) -> None:
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
        generator = self.generator
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
            mixture=c.mixture,
            mixture_rule=c.mixture_rule.value,
            per_kind=c.per_kind,
            min_distance=c.min_distance,
            edit_max_distance=EDIT_MAX_DISTANCE,
            editing_kinds=tuple(c.editing_kinds),
            generator_samples=self.samples if generator is not None else 0,
            valid_pairs=c.valid_pairs.value,
            mismatch_pool=c.mismatch_pool.value,
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
