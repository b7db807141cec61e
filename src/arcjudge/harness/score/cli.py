"""The ``arcjudge score`` command: arguments in, files and a summary table out."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge.errors import UsageError
from arcjudge.harness.core.commandline import (
    Progress,
    TaskSetChoice,
    add_arcgen_argument,
    add_backend_arguments,
    add_policy_argument,
    add_samples_argument,
    add_store_argument,
    add_tasks_argument,
    command_run,
    limits_from,
    require_directories,
    use_task_set,
)
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES, DEFAULT_SEED
from arcjudge.harness.core.outputs import runtime_json
from arcjudge.harness.core.runner import CommandRun, DirectCommand, Needs, Outputs
from arcjudge.harness.score.records import ScoreResult, ScoreSummary
from arcjudge.harness.score.scorer import ScoreConfig, Scorer, summary_table
from arcjudge.safetext import json_dumps
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``score`` options to a sub-parser."""
    parser.add_argument("--programs", type=Path, required=True, help="programs JSONL file")
    add_tasks_argument(parser)
    add_arcgen_argument(parser)
    parser.add_argument("--generator", help="KIND:PATH (arc-gen or re-arc) for fresh samples")
    add_samples_argument(parser)
    parser.add_argument("--verifiers", type=Path, help="validate output dir (manifest.json)")
    parser.add_argument("--entrypoint", action="append", help="entry point names, in order")
    add_policy_argument(parser)
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="sample i uses random.seed(SEED + i)"
    )
    parser.add_argument("--wall", type=float, default=5.0, help="seconds per call")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per program chunk")
    parser.add_argument("--chunk", type=int, default=512, help="inputs per work item")
    parser.add_argument("--stop-at-first-failure", action="store_true")
    add_store_argument(parser)
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--no-progress", action="store_true")
    add_backend_arguments(parser)


ScoreRun = CommandRun[ScoreConfig]
"""``arcjudge score`` as a value: the score config, the output directory, the sandbox."""


@dataclass(frozen=True)
class ScoreOutcome:
    """What ``arcjudge score`` found: one result per program and the summary."""

    results: tuple[ScoreResult, ...]
    summary: ScoreSummary


class ScoreCommand(DirectCommand[ScoreRun]):
    """``arcjudge score``: model-written Definition programs, scored safely."""

    def configure(self, args: argparse.Namespace) -> ScoreRun:
        """The run the options ask for (``--tasks`` a task set: materialized into OUT)."""
        chosen = use_task_set(args.tasks, args.out, generator=args.generator, fill=("generator",))
        return command_run(_config(args, chosen), args, chosen.record)

    def needs(self, config: ScoreRun) -> Needs:
        """A sandbox (programs import from the generator's directories) and the store."""
        generator = config.config.generator
        return config.needs(generator.module_dirs if generator else ())

    def run(self, config: ScoreRun, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Score every program; the results, timings, summary, runtime and report."""
        from arcjudge.harness.score.report import render_score_report

        assert sandbox is not None and store is not None
        scorer = Scorer(config.config, sandbox, store)
        with Progress(len(scorer.records), "program", config.progress) as bar:
            scorer.progress = bar.update
            scorer.run()
        summary = scorer.summary(config.task_set)
        files = {
            "results.jsonl": "".join(scorer.result_lines()),
            "timings.jsonl": "".join(scorer.timing_lines()),
            "summary.json": json_dumps(summary.to_json(), sort_keys=True, indent=1) + "\n",
            "runtime.json": runtime_json(scorer.runtime),
            "report.html": render_score_report(summary, scorer.scored()),
        }
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=(summary_table(summary),),
            wrote="results.jsonl, summary.json, timings.jsonl, runtime.json, report.html",
            result=ScoreOutcome(tuple(scorer.scored()), summary),
        )


def _config(args: argparse.Namespace, chosen: TaskSetChoice) -> ScoreConfig:
    task_files(chosen.tasks)
    require_directories(("--arcgen", args.arcgen), ("--verifiers", args.verifiers))
    generator = chosen.generator
    if args.samples and not generator:
        raise UsageError("--samples needs --generator KIND:PATH")
    samples = args.samples
    if samples is None:
        samples = DEFAULT_SAMPLES if generator else 0
    if samples < 0 or args.chunk < 1:
        raise UsageError("--samples must be >= 0 and --chunk >= 1")
    entry_points = tuple(args.entrypoint or DEFINITION_ENTRY_POINTS)
    if not all(e.isidentifier() for e in entry_points):
        raise UsageError(f"--entrypoint must name Python identifiers: {', '.join(entry_points)}")
    limits = limits_from(args.wall, args.budget)
    return ScoreConfig(
        programs_file=args.programs,
        tasks_dir=chosen.tasks,
        arcgen_dir=args.arcgen,
        generator=parse_generator_spec(generator) if generator else None,
        samples=samples,
        seed=args.seed,
        verifiers_dir=args.verifiers,
        entry_points=entry_points,
        limits=limits,
        policy=PolicyMode(args.policy),
        chunk=args.chunk,
        stop_at_first_failure=args.stop_at_first_failure,
    )


COMMAND = ScoreCommand("score", "score model-written Definition programs safely", add_arguments)
"""The ``score`` command."""
