"""``arcjudge dimensions``: build, score, prompts, replies-from-inspect, human-errors.

Each is a :class:`~arcjudge.harness.core.runner.Command` run by the shared runner.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arcjudge.errors import UsageError
from arcjudge.harness.core.commandline import (
    Progress,
    limits_from,
    require_directories,
    require_files,
    sandbox_options,
    use_task_set,
    warn,
)
from arcjudge.harness.core.outputs import runtime_json
from arcjudge.harness.core.runner import STORE_NAME, Command, Needs, Outputs
from arcjudge.harness.dimensions.arguments import (
    build_arguments,
    human_errors_arguments,
    prompts_arguments,
    replies_from_inspect_arguments,
    score_arguments,
)
from arcjudge.harness.dimensions.build import (
    DEFAULT_SAMPLES,
    EDIT_MAX_DISTANCE,
    BuildConfig,
    Builder,
)
from arcjudge.harness.dimensions.build_summary import summary_text
from arcjudge.harness.dimensions.configurations import (
    CONFIGURATIONS_FILE,
    SEED_STRIDE,
    configuration_name,
    configurations_record,
)
from arcjudge.harness.dimensions.files_cli import (
    HumanErrorsCommand,
    PromptsCommand,
    RepliesFromInspectCommand,
)
from arcjudge.harness.dimensions.grading import (
    DimensionScoreConfig,
    DimensionScorer,
)
from arcjudge.harness.dimensions.mixture import default_mixture, load_mixture
from arcjudge.harness.dimensions.report import render_dimensions_report, summary_table
from arcjudge.harness.dimensions.token_usage import usage_lines
from arcjudge.safetext import json_dumps
from arcjudge.sandbox.backends import SandboxOptions
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec
from arcjudge.vocabulary import (
    INVALID_KINDS,
    CandidateKind,
    MismatchPool,
    MixtureRule,
    ValidPairs,
)

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox


def add_arguments(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add every sub-command of ``COMMANDS``, each with its own options.

    Returns:
        The sub-commands' action, to which the top-level command line adds the
        sub-commands other workflows provide (``analyze``).
    """
    sub = parser.add_subparsers(dest="dimensions_command", required=True)
    for command in COMMANDS.values():
        command.add_arguments(sub.add_parser(command.name, help=command.help))
    return sub


@dataclass(frozen=True)
class BuildPlan:
    """``arcjudge dimensions build`` as a plan: each build's directory and config.

    Attributes:
        builds: ``(directory, config)`` per configuration (one without
            ``--configurations``).
        out: The output directory.
        store: The result cache all builds share (default ``OUT/cache.sqlite``).
        sandbox: The sandbox the verifiers and generators run in.
        configurations: ``configurations.json``'s record with ``--configurations K > 1``.
        progress: Show a progress bar per build on stderr.
    """

    builds: tuple[tuple[Path, BuildConfig], ...]
    out: Path
    store: Path | None = None
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    configurations: dict[str, Any] | None = None
    progress: bool = False

    @classmethod
    def of(
        cls,
        config: BuildConfig,
        out: Path,
        *,
        configurations: int = 1,
        store: Path | None = None,
        sandbox: SandboxOptions | None = None,
        progress: bool = False,
    ) -> BuildPlan:
        """The plan of one build, or of K configurations (``OUT/configuration-k``)."""
        options = sandbox or SandboxOptions()
        if configurations == 1:
            return cls(((out, config),), out, store, options, None, progress)
        record = configurations_record(config.seed, configurations)
        builds = tuple(
            (
                out / entry["directory"],
                replace(config, seed=entry["seed"], configuration=entry["configuration"]),
            )
            for entry in record["configurations"]
        )
        return cls(builds, out, store, options, record, progress)


@dataclass(frozen=True)
class BuildWork:
    """``arcjudge dimensions build`` prepared: the plan and a builder per build.

    Attributes:
        plan: The plan.
        builders: One per ``plan.builds``, in its order, its inputs already read.
    """

    plan: BuildPlan
    builders: tuple[Builder, ...]


class BuildCommand(Command[BuildPlan, BuildWork]):
    """``arcjudge dimensions build``: evaluation instances for every task and dimension."""

    def configure(self, args: argparse.Namespace) -> BuildPlan:
        """The plan the options ask for (``--configurations K``: K builds)."""
        config = _build_config(args)
        stale = args.out / configuration_name(args.configurations + 1)
        if args.configurations > 1 and stale.is_dir():
            warn(f"{stale} is of an earlier build with more configurations; "
                 f"{CONFIGURATIONS_FILE} lists {args.configurations}")  # fmt: skip
        return BuildPlan.of(
            config,
            args.out,
            configurations=args.configurations,
            store=args.store,
            sandbox=sandbox_options(args),
            progress=not args.no_progress,
        )

    def prepare(self, config: BuildPlan, warn: Callable[[str], None]) -> BuildWork:
        """A builder per build, its inputs read.

        Raises:
            InputError: An input file (manifest, corruptions, human errors, neighbours)
                cannot be read.
        """
        return BuildWork(config, tuple(Builder(build) for _, build in config.builds))

    def needs(self, work: BuildWork) -> Needs:
        """A sandbox (the chosen sources' and the generator's directories) and the store."""
        dirs: list[str] = []
        for builder in work.builders:
            dirs.extend(d for d in builder.module_dirs() if d not in dirs)
        plan = work.plan
        return Needs(plan.sandbox, tuple(dirs), plan.store or plan.out / STORE_NAME)

    def run(self, work: BuildWork, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Every build in turn; each one's instances, build.json and runtime.json.

        All builds share the store, so a rerun after an interruption builds every
        configuration again from the cache (same bytes) and writes ``configurations.json``
        once all are written.
        """
        assert sandbox is not None and store is not None
        config = work.plan
        files: dict[str, str] = {}
        lines: list[str] = []
        summaries = []
        builds = zip(config.builds, work.builders, strict=True)
        for number, ((directory, _), builder) in enumerate(builds, 1):
            total = len(builder.sources.task_paths)
            with Progress(total, "task", config.progress) as bar:
                builder.progress = bar.update
                builder.run(sandbox, store)
            summary = builder.summary()
            summaries.append(summary)
            prefix = "" if config.configurations is None else f"{directory.name}/"
            files[f"{prefix}instances.jsonl"] = "".join(builder.lines())
            files[f"{prefix}build.json"] = json_dumps(summary, sort_keys=True, indent=1) + "\n"
            files[f"{prefix}runtime.json"] = runtime_json(sandbox.runtime())
            if config.configurations is not None:
                lines.append(f"configuration {number} (seed {builder.config.seed}):")
            lines.append(summary_text(summary))
        # The rows skipped are the same in every configuration: said once.
        warnings = tuple(f"--human-errors: skipped {reason}"
                         for reason in summaries[0]["human_error_rows_skipped"][:5])  # fmt: skip
        wrote = None
        if config.configurations is not None:
            record = config.configurations
            files[CONFIGURATIONS_FILE] = json_dumps(record, sort_keys=True, indent=1) + "\n"
            last = configuration_name(len(config.builds))
            wrote = (f"{configuration_name(1)} ... {last} (instances.jsonl, build.json, "
                     f"runtime.json each), {CONFIGURATIONS_FILE}")  # fmt: skip
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=tuple(lines),
            wrote=wrote,
            warnings=warnings,
            result=tuple(summaries),
        )


def _build_config(args: argparse.Namespace) -> BuildConfig:
    """The build the options ask for (``--tasks`` a task set: materialized into OUT)."""
    chosen = use_task_set(
        args.tasks,
        args.out,
        generator=args.generator,
        human_errors=args.human_errors,
        fill=("generator", "human_errors"),
    )
    task_files(chosen.tasks)
    require_directories(("--manifest", args.manifest), ("--arcgen", args.arcgen))
    require_files(
        ("--corruptions", args.corruptions),
        ("--human-errors", chosen.human_errors),
        ("--neighbours", args.neighbours),
        ("--embeddings", args.embeddings),
    )
    if args.neighbours is not None and args.embeddings is not None:
        raise UsageError("give --neighbours or --embeddings, not both")
    if args.neighbours_k < 1:
        raise UsageError("--neighbours-k must be >= 1")
    if args.per_kind < 1:
        raise UsageError("--per-kind must be >= 1")
    if args.repeats < 1:
        raise UsageError("--repeats must be >= 1")
    if args.valid_pairs == ValidPairs.ARC_GEN and (chosen.generator or args.samples):
        raise UsageError("--valid-pairs arc-gen takes no --generator and no --samples")
    if args.samples is not None and args.samples < 1:
        raise UsageError("--samples must be >= 1")
    if args.configurations < 1:
        raise UsageError("--configurations must be >= 1")
    if args.configurations > 1 and (args.samples or DEFAULT_SAMPLES) >= SEED_STRIDE:
        raise UsageError(
            f"--samples must be < {SEED_STRIDE:_} with --configurations (the configurations' "
            "generator seeds would overlap)"
        )
    editing = [k.strip() for k in args.editing_kinds.split(",") if k.strip()]
    unknown = [k for k in editing if k not in INVALID_KINDS]
    if unknown or not editing:
        raise UsageError(
            f"--editing-kinds: unknown type(s) {', '.join(unknown) or '(none given)'} "
            f"(choose from {', '.join(INVALID_KINDS)})"
        )
    return BuildConfig(
        tasks_dir=chosen.tasks,
        manifest_dir=args.manifest,
        arcgen_dir=args.arcgen,
        corruptions_file=args.corruptions,
        human_errors_file=chosen.human_errors,
        neighbours_file=args.neighbours,
        embeddings_file=args.embeddings,
        baseline_retrieval=not args.no_baseline_retrieval,
        neighbours=args.neighbours_k,
        mixture=load_mixture(args.mixture or default_mixture(chosen.record)),
        mixture_rule=MixtureRule(args.mixture_rule),
        seed=args.seed,
        per_kind=args.per_kind,
        limits=limits_from(args.wall),
        generator=parse_generator_spec(chosen.generator) if chosen.generator else None,
        samples=args.samples,
        valid_pairs=ValidPairs(args.valid_pairs),
        mismatch_pool=MismatchPool(args.mismatch_pool),
        editing_kinds=tuple(CandidateKind(k) for k in dict.fromkeys(editing)),
        repeats=args.repeats,
        task_set=chosen.record,
    )


@dataclass(frozen=True)
class GradePlan:
    """``arcjudge dimensions score`` as a plan: what to grade, where the files go.

    Attributes:
        config: The grading (instances, answers or replies, Definition programs).
        out: The output directory.
        store: The result cache (default ``OUT/cache.sqlite``).
        sandbox: The sandbox the verifiers and Definition programs run in.
        progress: Show a progress bar on stderr.
    """

    config: DimensionScoreConfig
    out: Path
    store: Path | None = None
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    progress: bool = False


@dataclass(frozen=True)
class GradeWork:
    """``arcjudge dimensions score`` prepared: the plan and its grader.

    Attributes:
        plan: The plan.
        scorer: The grader, its inputs read (instances, answers or replies, Definition
            programs).
    """

    plan: GradePlan
    scorer: DimensionScorer


class GradeCommand(Command[GradePlan, GradeWork]):
    """``arcjudge dimensions score``: answers or replies graded, per item."""

    def configure(self, args: argparse.Namespace) -> GradePlan:
        """The grading the options ask for; every input file checked first."""
        config = _score_config(args)
        return GradePlan(config, args.out, args.store, sandbox_options(args), not args.no_progress)

    def prepare(self, config: GradePlan, warn: Callable[[str], None]) -> GradeWork:
        """The grader, its inputs read; a warning per ``--after`` cell without items.

        Raises:
            InputError: An input file cannot be read.
        """
        scorer = DimensionScorer(config.config)
        for model, run in scorer.after_unmatched():
            warn(f"--after: no item of {model} run {run} in the earlier items (its pairs "
                 "there, if any, are not avoided: are the runs named alike?)")  # fmt: skip
        return GradeWork(config, scorer)

    def needs(self, work: GradeWork) -> Needs:
        """A sandbox (the instances' sources' directories) and the store."""
        plan = work.plan
        return Needs(plan.sandbox, work.scorer.module_dirs(), plan.store or plan.out / STORE_NAME)

    def run(self, work: GradeWork, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Grade every item; items, summary, report (and Definition results)."""
        assert sandbox is not None and store is not None
        config, scorer = work.plan, work.scorer
        with Progress(scorer.work(), "job", config.progress) as bar:
            scorer.progress = bar.update
            scorer.run(sandbox, store)
        summary = scorer.summary()
        files = {
            "items.jsonl": "".join(scorer.item_lines()),
            "summary.json": json_dumps(summary.to_json(), sort_keys=True, indent=1) + "\n",
            "report.html": render_dimensions_report(summary),
        }
        if scorer.definition_results:
            files["definitions.jsonl"] = "".join(scorer.definition_results)
        files["runtime.json"] = runtime_json(sandbox.runtime())
        warnings = []
        if summary.answers_problem_count:
            what = "reply" if scorer.config.replies_file else "answer"
            warnings.append(
                f"{summary.answers_problem_count} {what} line(s) not used (see summary.json)"
            )
        warnings += [f"--definitions: {note}" for note in summary.definition_notes[:5]]
        extra = ", definitions.jsonl" if summary.definition_replies else ""
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=(summary_table(summary), *usage_lines(summary.token_usage or {})),
            wrote=f"items.jsonl, summary.json, runtime.json, report.html{extra}",
            warnings=tuple(warnings),
            result=summary.to_json(),  # the Python API's grade() gives summary.json's object
        )


def _score_config(args: argparse.Namespace) -> DimensionScoreConfig:
    """The grading the options ask for; every input file checked first."""
    require_files(
        ("--instances", args.instances),
        ("--answers", args.answers),
        ("--replies", args.replies),
        ("--programs", args.programs),
        *(("--after", path) for path in args.after),
    )
    if args.attempts < 1:
        raise UsageError("--attempts must be >= 1")
    if args.samples is not None and args.samples < 0:
        raise UsageError("--samples must be >= 0")
    if args.definitions is not None and not (args.definitions / "results.jsonl").is_file():
        raise UsageError(f"--definitions {args.definitions}: no results.jsonl (run arcjudge score)")
    if not 0 <= args.min_distance < 1:
        raise UsageError("--min-distance must be in [0, 1)")
    return DimensionScoreConfig(
        instances_file=args.instances,
        answers_file=args.answers,
        replies_file=args.replies,
        attempts=args.attempts,
        definition_samples=args.samples,
        definitions_dir=args.definitions,
        programs_file=args.programs,
        min_distance=args.min_distance,
        edit_max_distance=EDIT_MAX_DISTANCE,
        exclude_arcgen=args.exclude_arcgen,
        strict_generation=args.strict_generation,
        verifier_limits=limits_from(args.wall),
        after_files=tuple(args.after),
        full_task_over=args.full_task_over,
    )


COMMANDS: dict[str, Command[Any, Any]] = {
    command.name: command
    for command in (
        BuildCommand("build", "evaluation instances for every task and dimension", build_arguments),
        GradeCommand("score", "grade model answers; statistics per model", score_arguments),
        RepliesFromInspectCommand(
            "replies-from-inspect",
            "an inspect_ai eval log -> replies JSONL (score --replies)",
            replies_from_inspect_arguments,
        ),
        HumanErrorsCommand(
            "human-errors",
            "merge human errors (H-ARC CSVs, human_errors.json, directories of per-task JSON "
            "files) into one human_errors.json for build --human-errors",
            human_errors_arguments,
        ),
        PromptsCommand("prompts", "model-ready prompts for every instance", prompts_arguments),
    )
}
"""The ``dimensions`` sub-commands by name (``analyze`` is added by the command line)."""
