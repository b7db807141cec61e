"""``arcjudge dimensions score``: grade model answers against built instances.

Inputs: ``instances.jsonl`` from ``dimensions build``, and either an answers JSONL (one
line per ``{task_id, dimension, model, run, answer}``, answers already in JSON) or a
replies JSONL (one line per ``{id, model, run, reply}``: a model's raw text for the
prompt ``id`` of ``dimensions prompts``), parsed here by :mod:`.replies`; Definition
replies go through ``score``'s code extraction and are scored in the sandbox in the same
run, on the tasks, ARC-GEN pairs and generator the build recorded (``build.json`` beside
the instances, and the validate manifest it names). Optionally an ``arcjudge score``
output directory for the Definition dimension (``--definitions``) with the programs file
it scored (``--programs``, else the path recorded in its ``summary.json``) for
self-consistency. Every verifier call, and every call of a model's Definition program,
runs in the sandbox, which is given input grids only, through the engine and the result
store (so an interrupted run resumes where it stopped).

The pipeline: the readers (:mod:`.grade_inputs`) give typed answers per item; Definition
replies are scored (:mod:`.definition_scoring`); the verifier runs once per task on the
inputs the answers propose (each strategy's ``verifier_input``); each answer gets its
strategy's ``rule`` (through :data:`.strategies.STRATEGIES`); the models' Definition
programs are checked against their answers (:mod:`.self_consistency`); items and the
summary are written. A replies line's token ``usage`` and generation ``settings`` go to
its item, and ``summary.json`` totals them per model (:mod:`.token_usage`).

One *item* is graded per ``(model, run, task, dimension)``: for every run of a model and
every instance of a dimension the model answered at all (in any run), so a missing answer
is a failed item (``no answer``), while a dimension the model never answered is reported
as not answered. Malformed lines and answers never stop the run: an unreadable line is
listed in ``summary.json`` under ``answers_problems``; a readable line with a malformed
answer fails its item with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.grids import Grid
from arcjudge.harness.core.calls import Call, call_key, outputs_of, run_calls
from arcjudge.harness.core.engine import Engine
from arcjudge.harness.core.keys import module_fingerprint
from arcjudge.harness.core.results import CandidateOutcome
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.build import DEFAULT_MIN_DISTANCE, EDIT_MAX_DISTANCE
from arcjudge.harness.dimensions.configurations import EarlierPairs, read_earlier_pairs
from arcjudge.harness.dimensions.definition_scoring import (
    definition_score_config,
    score_definition_replies,
    scoring_record,
)
from arcjudge.harness.dimensions.grade_inputs import (
    AnswerKey,
    DefinitionResult,
    ParsedAnswer,
    parsed_answer,
    read_answers,
    read_definitions,
    read_replies,
)
from arcjudge.harness.dimensions.records import DimensionItem, VerifierSpec, read_instances
from arcjudge.harness.dimensions.rules import RuleVerdict, VerifierOutput
from arcjudge.harness.dimensions.self_consistency import ProgramsOfModels, with_consistency
from arcjudge.harness.dimensions.statistics import (
    COMPLETE_TASKS,
    EVERY_TASK,
    full_task_tasks,
    missing_dimensions,
    model_statistics,
)
from arcjudge.harness.dimensions.strategies import STRATEGIES
from arcjudge.harness.dimensions.strategies.strategy import GradeSettings, RuleCase
from arcjudge.harness.dimensions.summary import AfterSummary, DimensionScoreSummary
from arcjudge.harness.dimensions.token_usage import token_usage
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, VERIFIER_LIMITS, Limits, Status
from arcjudge.verifiers.sources import SourceError, VerifierSource
from arcjudge.vocabulary import (
    BUILT_DIMENSIONS,
    CONSISTENCY_DIMENSIONS,
    DEFINITION_ENTRY_POINTS,
    Dimension,
    ScoreVerdict,
)

__all__ = ["DimensionScoreConfig", "DimensionScorer", "read_instances"]

_CHUNK = 256  # inputs per sandbox call


@dataclass(frozen=True)
class DimensionScoreConfig:
    """Everything ``dimensions score`` needs besides the sandbox.

    Attributes:
        instances_file: ``instances.jsonl`` of ``dimensions build`` (its ``build.json``
            beside it says where the tasks, ARC-GEN pairs and generator are).
        answers_file: Answers already in JSON (one of this and ``replies_file``).
        replies_file: Raw model replies per prompt id.
        definitions_dir: An ``arcjudge score`` output directory (Definition results).
        programs_file: The programs file that score read (for self-consistency).
        attempts: Output grid: candidates counted per test input (pass@k).
        definition_samples: Generator samples per task for Definition replies (``None``:
            as many as the build drew with its generator, else as the validate run).
        after_files: ``items.jsonl`` of earlier configurations of the build: each model's
            and run's Generation answers must not copy the pairs the same model and run
            had accepted there (:mod:`.configurations`).
        full_task_over: The tasks full task is over: ``every-task`` (the study's: every
            built task, a dimension without an instance a failure) or ``complete-tasks``
            (:data:`~arcjudge.harness.dimensions.statistics.FULL_TASK_OVER`).
    """

    instances_file: Path
    answers_file: Path | None = None
    replies_file: Path | None = None
    definitions_dir: Path | None = None
    programs_file: Path | None = None
    min_distance: float = DEFAULT_MIN_DISTANCE
    edit_max_distance: float = EDIT_MAX_DISTANCE
    exclude_arcgen: bool = False
    strict_generation: bool = False
    verifier_limits: Limits = VERIFIER_LIMITS
    definition_limits: Limits = DEFINITION_LIMITS
    entry_points: tuple[str, ...] = DEFINITION_ENTRY_POINTS
    attempts: int = 1
    definition_samples: int | None = None
    after_files: tuple[Path, ...] = ()
    full_task_over: str = EVERY_TASK


class DimensionScorer:
    """Grades answers; ``items`` and ``summary()`` hold the result after ``run``."""

    def __init__(
        self, config: DimensionScoreConfig, progress: Callable[[int], None] | None = None
    ) -> None:
        self.config = config
        self.progress = progress
        self.instances = read_instances(config.instances_file)
        self.tasks = sorted({t for t, _ in self.instances})
        self.verifier_specs = {t: r.verifier for (t, _), r in sorted(self.instances.items())}
        if (config.answers_file is None) == (config.replies_file is None):
            raise ValueError("give exactly one of answers_file and replies_file")
        if config.answers_file is not None:
            read = read_answers(config.answers_file, self.instances)
        else:
            assert config.replies_file is not None
            read = read_replies(config.replies_file, self.instances, config.attempts)
        self.answers = read.answers
        self.extras = read.extras
        self.definition_replies = read.definition_replies
        self.read_problems = read.problems
        self.problems = read.problems.texts
        self.definitions: dict[tuple[str, str, str], DefinitionResult] = {}
        self.codes: dict[str, str] = {}
        self.definition_notes: list[str] = []
        self.definition_results: list[str] = []  # results.jsonl lines of Definition replies
        self.definition_hows: dict[tuple[str, str, str], str] = {}  # how code was extracted
        if config.definitions_dir is not None:
            if self.definition_replies:
                raise InputError(
                    f"{config.replies_file}: has Definition replies, and Definition results "
                    "were given too (--definitions): use one"
                )
            found = read_definitions(
                config.definitions_dir, config.programs_file, config.entry_points
            )
            self.definitions, self.codes = found.definitions, found.codes
            self.definition_notes = found.notes
        self._definition_scoring = (
            definition_score_config(
                config.instances_file,
                config.replies_file,
                self.instances,
                config.definition_samples,
                config.entry_points,
                config.definition_limits,
            )
            if self.definition_replies
            else None
        )
        self.earlier: EarlierPairs | None = (
            read_earlier_pairs(config.after_files) if config.after_files else None
        )
        self._settings = GradeSettings(
            config.min_distance,
            config.edit_max_distance,
            config.exclude_arcgen,
            config.strict_generation,
            config.attempts,
        )
        self.items: list[DimensionItem] = []
        self._verifiers: dict[str, VerifierSource] = {}
        self._fingerprints: dict[str, str] = {}

    # ------------------------------------------------------------------ inputs

    def module_dirs(self) -> tuple[str, ...]:
        """Directories the instances' verifier sources import from (for the sandbox)."""
        dirs: list[str] = []
        for instance in self.instances.values():
            source = self._verifier_source(instance.verifier)
            dirs.extend(d for d in source.module_dirs if d not in dirs)
        generator = self._definition_scoring.generator if self._definition_scoring else None
        if generator is not None:
            dirs.extend(d for d in generator.module_dirs if d not in dirs)
        return tuple(dirs)

    def _verifier_source(self, spec: VerifierSpec) -> VerifierSource:
        name = spec.source
        if name not in self._verifiers:
            try:
                self._verifiers[name] = VerifierSource(name, spec.kind, spec.path)
            except SourceError as exc:
                raise InputError(
                    f"verifier {name!r} of the instances cannot be loaded: {exc}"
                ) from None
        return self._verifiers[name]

    # ------------------------------------------------------------------ items

    def _models(self) -> dict[str, dict[str, set[str]]]:
        """Model -> {"runs": runs, "dimensions": answered dimensions}."""
        models: dict[str, dict[str, set[str]]] = {}
        for model, run, _, dim in self.answers:
            entry = models.setdefault(model, {"runs": set(), "dimensions": set()})
            entry["runs"].add(run)
            entry["dimensions"].add(dim)
        for model, run, _ in self.definitions:
            entry = models.setdefault(model, {"runs": set(), "dimensions": set()})
            entry["runs"].add(run)
        for reply in self.definition_replies:
            entry = models.setdefault(reply.model, {"runs": set(), "dimensions": set()})
            entry["runs"].add(reply.run)
        return models

    def _parsed(self) -> dict[AnswerKey, ParsedAnswer]:
        return {key: parsed_answer(answer) for key, answer in self.answers.items()}

    def _verifier_outputs(
        self, engine: Engine, parsed: Mapping[AnswerKey, ParsedAnswer]
    ) -> dict[tuple[str, Grid], VerifierOutput]:
        """Run each task's verifier on every input the answers propose (one call a task)."""
        wanted: dict[str, dict[Grid, None]] = {}
        for (_, _, task_id, _), answer in parsed.items():
            if answer.verifier_input is not None:
                wanted.setdefault(task_id, {})[answer.verifier_input] = None
        calls, owners = [], []
        for task_id in sorted(wanted):
            spec = self.verifier_specs[task_id]
            source = self._verifier_source(spec)
            program = source.program_for(task_id).program
            if program is None:
                continue
            key = call_key(engine, program, self._fingerprint(source))
            calls.append(Call(program, key, list(wanted[task_id])))
            owners.append(task_id)
        outputs: dict[tuple[str, Grid], VerifierOutput] = {}

        def done(index: int, outcome: CandidateOutcome) -> None:
            task_id, call = owners[index], calls[index]
            found = outputs_of(call, outcome)
            for grid in call.inputs:
                outputs[(task_id, grid)] = found.get(grid, (Status.INFRA, None))
            if self.progress:
                self.progress(1)

        run_calls(engine, calls, done)
        return outputs

    def _fingerprint(self, source: VerifierSource) -> str:
        """``module_fingerprint`` of a verifier source's module directories (computed once)."""
        if source.name not in self._fingerprints:
            self._fingerprints[source.name] = module_fingerprint(source.module_dirs)
        return self._fingerprints[source.name]

    def _grade(
        self,
        task_id: str,
        dim: Dimension,
        answer: ParsedAnswer,
        outputs: Mapping[tuple[str, Grid], VerifierOutput],
        earlier: tuple[tuple[Grid, Grid], ...] = (),
    ) -> RuleVerdict:
        """An answer's verdict by its dimension's rule (through the strategy table).

        ``earlier``: Generation pairs accepted in earlier configurations.
        """
        rule = STRATEGIES[dim].rule
        if rule is None:
            raise ValueError(f"no rule for {dim!r} and this answer")
        missing: VerifierOutput = (Status.INFRA, None)
        given = answer.verifier_input
        verifier = missing if given is None else outputs.get((task_id, given), missing)
        instance = self.instances[(task_id, dim)]
        return rule(RuleCase(instance, answer.value, verifier, self._settings, earlier))

    def _definition_item(self, model: str, run: str, task_id: str) -> DimensionItem:
        record = self.definitions.get((model, run, task_id))
        cell = (model, run, task_id, Dimension.DEFINITION)
        if record is None:
            return DimensionItem(*cell, passed=False, reason="no Definition program")
        detail = {"program": record.program, "splits": record.splits}
        how = self.definition_hows.get((model, run, task_id))
        if record.verdict is ScoreVerdict.PASS:
            return DimensionItem(*cell, passed=True, reason=None, detail=detail, how=how)
        reason = f"{record.failure or 'fail'}"
        if record.status:
            reason += f" ({record.status})"
        return DimensionItem(*cell, passed=False, reason=reason, detail=detail, how=how)

    # -------------------------------------------------------------------- run

    def work(self) -> int:
        """How many calls ``run`` reports at most, for a progress bar.

        One per task whose verifier runs, one per Definition program (scored from a reply,
        or read from results), and one per program checked for self-consistency.
        """
        verified = {d for d, s in STRATEGIES.items() if s.verifier_input is not None}
        tasks = {k[2] for k in self.answers if k[3] in verified}
        replied = {(r.model, r.run, r.task_id) for r in self.definition_replies}
        checked = 0  # self-consistency: one call per program with answers to check
        if self.codes or replied:
            cells = {k[:3] for k in self.answers if k[3] in CONSISTENCY_DIMENSIONS}
            checked = len(cells & (set(self.definitions) | replied))
        return len(tasks) + len(self.definitions) + len(self.definition_replies) + checked

    def run(self, sandbox: Sandbox, store: ResultStore) -> None:
        """Grade every item: verifier calls and Definition programs in ``sandbox``.

        Every call goes through the engine and is cached in ``store``, so a rerun after an
        interruption redoes only the calls that are missing.
        """
        verifiers = Engine(sandbox, store, self.config.verifier_limits, PolicyMode.OFF, _CHUNK)
        if self._definition_scoring is not None:
            scored = score_definition_replies(
                self.definition_replies, self._definition_scoring, sandbox, store, self.progress
            )
            self.definitions, self.codes = scored.definitions, scored.codes
            self.definition_hows = scored.hows
            self.definition_results = scored.result_lines
        parsed = self._parsed()
        outputs = self._verifier_outputs(verifiers, parsed)
        models = self._models()
        for model in sorted(models):
            answered = models[model]["dimensions"]
            for run in sorted(models[model]["runs"]):
                for task_id in self.tasks:
                    for dim in BUILT_DIMENSIONS:
                        if (task_id, dim) not in self.instances:
                            continue
                        if STRATEGIES[dim].rule is None:  # Definition: score's results
                            if self.config.definitions_dir is not None or self.definition_replies:
                                self.items.append(self._definition_item(model, run, task_id))
                            continue
                        if dim not in answered:
                            continue
                        self.items.append(self._item((model, run, task_id, dim), parsed, outputs))
        if self.codes:
            definitions = Engine(
                sandbox, store, self.config.definition_limits, PolicyMode.OFF, _CHUNK
            )
            programs = ProgramsOfModels(self.definitions, self.codes, self.config.entry_points)
            self.items = with_consistency(
                self.items, parsed, self.instances, programs, definitions, self.progress
            )
        self.items = [self._with_extras(item) for item in self.items]

    def _with_extras(self, item: DimensionItem) -> DimensionItem:
        """The item with its reply's usage and settings, when its line recorded them."""
        extras = self.extras.get((item.model, item.run, item.task_id, item.dimension))
        if extras is None:
            return item
        return replace(item, usage=extras.usage, settings=extras.settings)

    def _item(
        self,
        key: AnswerKey,
        parsed: Mapping[AnswerKey, ParsedAnswer],
        outputs: Mapping[tuple[str, Grid], VerifierOutput],
    ) -> DimensionItem:
        answer = parsed.get(key)
        if answer is None:
            return DimensionItem(*key, passed=False, reason="no answer")
        read = self.answers[key]
        line, how = read.line, read.how
        if answer.problem is not None:
            reason = read.problem or f"malformed answer: {answer.problem}"
            return DimensionItem(*key, passed=False, reason=reason, answer_line=line, how=how)
        earlier = self.earlier.of(*key[:3]) if self.earlier is not None else ()
        verdict = self._grade(key[2], key[3], answer, outputs, earlier)
        return DimensionItem(*key, verdict.passed, verdict.reason, verdict.detail, line, how=how)

    # ----------------------------------------------------------------- output

    def item_lines(self) -> Iterator[str]:
        """Lines of ``items.jsonl`` (model, run, task, dimension order)."""
        for item in self.items:
            yield json_dumps(item.to_json(), sort_keys=True, separators=(",", ":")) + "\n"

    def full_tasks(self) -> list[str]:
        """The tasks full task is over (``full_task_over``: every built task by default)."""
        return full_task_tasks(self.tasks, self.instances.keys(), self.config.full_task_over)

    def complete_tasks(self) -> list[str]:
        """Tasks with an instance of every dimension."""
        return full_task_tasks(self.tasks, self.instances.keys(), COMPLETE_TASKS)

    def summary(self) -> DimensionScoreSummary:
        """``summary.json``: per-model statistics and what was read."""
        reasons: Counter[str] = Counter()
        for item in self.items:
            if not item.passed:
                reasons[f"{item.dimension}: {_reason_class(item.reason)}"] += 1
        c = self.config
        return DimensionScoreSummary(
            instances=str(c.instances_file),
            answers=str(c.answers_file) if c.answers_file else None,
            replies=str(c.replies_file) if c.replies_file else None,
            attempts=c.attempts,
            definitions=str(c.definitions_dir) if c.definitions_dir else None,
            min_distance=c.min_distance,
            edit_max_distance=c.edit_max_distance,
            exclude_arcgen=c.exclude_arcgen,
            strict_generation=c.strict_generation,
            tasks=len(self.tasks),
            full_tasks=len(self.complete_tasks()),
            full_task_over=c.full_task_over,
            missing_dimensions={
                t: tuple(dims)
                for t, dims in missing_dimensions(self.tasks, self.instances.keys()).items()
            },
            items=len(self.items),
            answers_read=len(self.answers),
            answers_problems=tuple(self.problems),
            answers_problem_count=self.read_problems.count,
            duplicate_answers=self.read_problems.duplicates,
            unmatched_answers=self.read_problems.unmatched,
            definition_notes=tuple(self.definition_notes),
            definition_replies=len(self.definition_replies),
            definition_scoring=scoring_record(self._definition_scoring),
            failure_reasons=dict(sorted(reasons.items())),
            models=model_statistics(self.items, self.full_tasks()),
            after=self._after_summary(),
            token_usage=token_usage(self.items) or None,
        )

    def after_unmatched(self) -> list[tuple[str, str]]:
        """``(model, run)`` with Generation answers but no item in the earlier items at all."""
        if self.earlier is None:
            return []
        cells = {k[:2] for k in self.answers if k[3] is Dimension.GENERATION}
        return sorted(cells - self.earlier.cells)

    def _after_summary(self) -> AfterSummary | None:
        """``summary.json``'s ``after`` (with earlier configurations' items only)."""
        if self.earlier is None:
            return None
        return AfterSummary(
            files=tuple(str(p) for p in self.earlier.files),
            accepted_pairs=self.earlier.counts(),
            unmatched=tuple(self.after_unmatched()),
        )


def _reason_class(reason: str | None) -> str:
    """A short class of a failure reason for counting (its text up to the first colon)."""
    text = reason or "fail"
    if text.startswith("copy of demonstration"):
        return "copy of a demonstration"
    if text.startswith("copy of earlier accepted pair"):
        return "copy of an earlier accepted pair"
    if text.startswith("wrong judgment"):
        return "wrong judgment"
    if text.startswith("unparsable"):
        return "unparsable"
    return text.split(":")[0].split(" (")[0]
