"""The ``arcjudge mutate`` command: arguments in, files and a yield table out."""

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
    add_store_argument,
    add_tasks_argument,
    command_run,
    limits_from,
    require_directories,
    use_task_set,
)
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.outputs import runtime_json
from arcjudge.harness.core.runner import CommandRun, DirectCommand, Needs, Outputs
from arcjudge.harness.mutate.mutator import MutateConfig, Mutator, summary_text
from arcjudge.harness.mutate.records import MutateSummary
from arcjudge.harness.mutate.schemata import BATCH
from arcjudge.safetext import json_dumps
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_verifier_spec

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox

PAPER = "paper"
"""``--operators paper`` (the default): the reference study's operators (one per source kind)."""
ALL = "all"
"""``--operators all``: every registered operator (a wider set than the study's)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``mutate`` options to a sub-parser."""
    add_tasks_argument(parser)
    add_arcgen_argument(parser)
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        help="NAME=KIND:PATH (default with a task set: its verifiers)",
    )
    parser.add_argument("--manifest", type=Path, help="validate output dir: mutate valid only")
    parser.add_argument(
        "--operators",
        default=PAPER,
        help="'paper' (default: the study's two: RE-ARC assignment drop with rewiring, "
        "binary-operation prune to the left operand elsewhere), 'all' (every registered "
        "operator), or comma-separated operator names",
    )
    parser.add_argument("--max-per-task", type=int, default=10, help="nearest misses kept")
    parser.add_argument("--inputs", type=int, default=20, help="valid inputs per task")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--demonstration-inputs",
        action="store_true",
        help="also run mutants on the train pairs (their corrupted pairs reuse a "
        "demonstration's input; dimensions build drops them)",
    )
    parser.add_argument(
        "--target-pairs",
        type=int,
        metavar="K",
        help="stop a task once its mutants, taken in a seeded order (--seed, task id), "
        "have K confirmed corrupted pairs (default: every mutant runs)",
    )
    parser.add_argument(
        "--one-program-per-mutant",
        action="store_true",
        help="run each mutant as a sandbox program of its own (slower; the default runs "
        "the mutants of one verifier in batches, one process per batch)",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=BATCH,
        metavar="N",
        help="mutants per batch (default: %(default)s)",
    )
    parser.add_argument("--wall", type=float, default=10.0, help="seconds per call")
    add_store_argument(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    add_backend_arguments(parser)


MutateRun = CommandRun[MutateConfig]
"""``arcjudge mutate`` as a value: the mutate config, the output directory, the sandbox."""


@dataclass(frozen=True)
class MutateOutcome:
    """What ``arcjudge mutate`` made: the summary and the files' lines.

    Attributes:
        summary: The summary (``summary.json``'s record).
        mutant_lines: The lines of ``mutants.jsonl``.
        corruption_lines: The lines of ``corruptions.jsonl``.
    """

    summary: MutateSummary
    mutant_lines: tuple[str, ...]
    corruption_lines: tuple[str, ...]


class MutateCommand(DirectCommand[MutateRun]):
    """``arcjudge mutate``: corrupted verifiers and their near-miss pairs."""

    def configure(self, args: argparse.Namespace) -> MutateRun:
        """The run the options ask for (``--tasks`` a task set: materialized into OUT)."""
        chosen = use_task_set(args.tasks, args.out, source=args.source, fill=("source",))
        return command_run(_config(args, chosen), args, chosen.record)

    def needs(self, config: MutateRun) -> Needs:
        """A sandbox (mutants import from their sources' directories) and the store."""
        module_dirs = tuple(d for s in config.config.sources for d in s.module_dirs)
        return config.needs(module_dirs)

    def run(self, config: MutateRun, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Mutate every verifier; mutants, corrupted pairs, summary, runtime."""
        assert sandbox is not None and store is not None
        total = len(task_files(config.config.tasks_dir))
        with Progress(total, "task", config.progress) as bar:
            mutator = Mutator(config.config, sandbox, store, bar.update)
            mutator.run()
        summary = mutator.summary(config.task_set)
        mutants = tuple(mutator.mutant_lines())
        corruptions = tuple(mutator.corruption_lines())
        files = {
            "mutants.jsonl": "".join(mutants),
            "corruptions.jsonl": "".join(corruptions),
            "summary.json": json_dumps(summary.to_json(), sort_keys=True, indent=1) + "\n",
            "runtime.json": runtime_json(mutator.runtime),
        }
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=(summary_text(summary),),
            result=MutateOutcome(summary, mutants, corruptions),
        )


def _config(args: argparse.Namespace, chosen: TaskSetChoice) -> MutateConfig:
    from arcjudge.mutation import OPERATORS

    task_files(chosen.tasks)
    if not chosen.source:
        raise UsageError(
            "give at least one --source NAME=KIND:PATH (or --tasks a task set with verifiers)"
        )
    require_directories(("--arcgen", args.arcgen), ("--manifest", args.manifest))
    operators = None
    chosen_set = args.operators.strip()
    paper = chosen_set == PAPER
    if chosen_set not in (PAPER, ALL):
        names = [n.strip() for n in chosen_set.split(",") if n.strip()]
        if not names:
            raise UsageError("--operators: give 'paper', 'all' or operator names")
        unknown = [n for n in names if n not in OPERATORS]
        if unknown:
            raise UsageError(
                f"unknown operator(s) {', '.join(unknown)} (known: {', '.join(OPERATORS)})"
            )
        operators = tuple(OPERATORS[n] for n in names)
    if args.inputs < 1 or (args.max_per_task is not None and args.max_per_task < 0):
        raise UsageError("--inputs must be >= 1 and --max-per-task >= 0")
    if (args.target_pairs is not None and args.target_pairs < 1) or args.batch < 1:
        raise UsageError("--target-pairs and --batch must be >= 1")
    limits = limits_from(args.wall, max(60.0, args.wall * 4))
    return MutateConfig(
        tasks_dir=chosen.tasks,
        sources=tuple(parse_verifier_spec(text) for text in chosen.source),
        arcgen_dir=args.arcgen,
        manifest_dir=args.manifest,
        operators=operators,
        max_per_task=args.max_per_task,
        inputs=args.inputs,
        seed=args.seed,
        limits=limits,
        study_operators=paper,
        demonstration_inputs=args.demonstration_inputs,
        target_pairs=args.target_pairs,
        one_program_per_mutant=args.one_program_per_mutant,
        batch=args.batch,
    )


COMMAND = MutateCommand("mutate", "corrupted verifiers and their near-miss pairs", add_arguments)
"""The ``mutate`` command."""
