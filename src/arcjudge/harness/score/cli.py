"""The ``arcjudge score`` command: arguments in, files and a summary table out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arcjudge.errors import UsageError
from arcjudge.harness.core.commandline import (
    INTERRUPTED,
    Progress,
    add_backend_arguments,
    limits_from,
    require_directories,
    use_task_set,
    warn,
)
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES, DEFAULT_SEED
from arcjudge.harness.core.outputs import runtime_json, write_atomic
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.score.scorer import ScoreConfig, Scorer, summary_table
from arcjudge.safetext import json_dumps, terminal_safe
from arcjudge.sandbox.backends import sandbox_for
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``score`` options to a sub-parser."""
    parser.add_argument("--programs", type=Path, required=True, help="programs JSONL file")
    parser.add_argument(
        "--tasks",
        type=Path,
        required=True,
        help="ARC task JSON directory, task folders or a P-ARC export",
    )
    parser.add_argument("--arcgen", type=Path, help="directory of ARC-GEN stable-set files")
    parser.add_argument("--generator", help="KIND:PATH (arc-gen or re-arc) for fresh samples")
    parser.add_argument(
        "--samples",
        type=int,
        help=f"generator samples per task (default {DEFAULT_SAMPLES} with --generator)",
    )
    parser.add_argument("--verifiers", type=Path, help="validate output dir (manifest.json)")
    parser.add_argument("--entrypoint", action="append", help="entry point names, in order")
    parser.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="sample i uses random.seed(SEED + i)"
    )
    parser.add_argument("--wall", type=float, default=5.0, help="seconds per call")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per program chunk")
    parser.add_argument("--chunk", type=int, default=512, help="inputs per work item")
    parser.add_argument("--stop-at-first-failure", action="store_true")
    parser.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--no-progress", action="store_true")
    add_backend_arguments(parser)


def _config(args: argparse.Namespace) -> ScoreConfig:
    task_files(args.tasks)
    require_directories(("--arcgen", args.arcgen), ("--verifiers", args.verifiers))
    if args.samples and not args.generator:
        raise UsageError("--samples needs --generator KIND:PATH")
    if args.samples is None:
        args.samples = DEFAULT_SAMPLES if args.generator else 0
    if args.samples < 0 or args.chunk < 1:
        raise UsageError("--samples must be >= 0 and --chunk >= 1")
    entry_points = tuple(args.entrypoint or DEFINITION_ENTRY_POINTS)
    if not all(e.isidentifier() for e in entry_points):
        raise UsageError(f"--entrypoint must name Python identifiers: {', '.join(entry_points)}")
    limits = limits_from(args.wall, args.budget)
    return ScoreConfig(
        programs_file=args.programs,
        tasks_dir=args.tasks,
        arcgen_dir=args.arcgen,
        generator=parse_generator_spec(args.generator) if args.generator else None,
        samples=args.samples,
        seed=args.seed,
        verifiers_dir=args.verifiers,
        entry_points=entry_points,
        limits=limits,
        policy=PolicyMode(args.policy),
        chunk=args.chunk,
        stop_at_first_failure=args.stop_at_first_failure,
    )


def cmd_score(args: argparse.Namespace) -> int:
    """Run ``arcjudge score``; return the exit code."""
    task_set = use_task_set(args, args.out, generator=True)
    config = _config(args)
    module_dirs = config.generator.module_dirs if config.generator else ()
    store_path = args.store or args.out / "cache.sqlite"

    store = None
    try:
        with sandbox_for(args, module_dirs=module_dirs, warn=warn) as sb:
            store = ResultStore(store_path)
            scorer = Scorer(config, sb, store)
            with Progress(len(scorer.records), "program", not args.no_progress) as bar:
                scorer.progress = bar.update
                scorer.run()
        from arcjudge.harness.score.report import render_score_report

        summary = scorer.summary()
        write_atomic(
            args.out,
            {
                "results.jsonl": "".join(scorer.result_lines()),
                "timings.jsonl": "".join(scorer.timing_lines()),
                "summary.json": json_dumps(
                    summary.to_json() | ({"task_set": task_set} if task_set else {}),
                    sort_keys=True,
                    indent=1,
                )
                + "\n",
                "runtime.json": runtime_json(scorer.runtime),
                "report.html": render_score_report(summary, scorer.scored()),
            },
        )
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if store is not None:
            store.close()
    print(summary_table(summary))
    print(
        f"wrote {terminal_safe(str(args.out))}/results.jsonl, summary.json, timings.jsonl, "
        "runtime.json, report.html"
    )
    return 0
