"""The ``arcjudge dimensions analyze`` command.

It is a sub-command of ``dimensions`` (it reads what ``dimensions build`` and ``dimensions
score`` write) but lives in its own workflow package: the top-level ``arcjudge.cli`` adds
it to the ``dimensions`` sub-commands and runs it (:data:`COMMAND`) through the shared
runner, so ``dimensions`` never imports it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge.errors import UsageError
from arcjudge.harness.analyze.inputs import (
    BOOTSTRAP_RESAMPLES,
    EVERY_TASK,
    FULL_TASK_OVER,
    Assignments,
    BudgetTasks,
    SamplingTasks,
    read_inputs,
)
from arcjudge.harness.analyze.report import render_analysis_report
from arcjudge.harness.analyze.selection import SAMPLED_TASKS
from arcjudge.harness.core.commandline import require_files
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.runner import DirectCommand, Outputs
from arcjudge.safetext import json_dumps

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox

__all__ = ["COMMAND", "HELP", "AnalyzeCommand", "AnalyzeConfig", "add_arguments"]

HELP = "the study's tables and figures from scored items (CSV, Markdown, report.html)"
"""The sub-command's help line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions analyze`` to its parser."""
    parser.add_argument("--items", type=Path, required=True, help="items.jsonl of dimensions score")
    parser.add_argument(
        "--instances", type=Path, required=True, help="instances.jsonl the items were graded on"
    )
    parser.add_argument(
        "--definitions",
        type=Path,
        help="Definition results: definitions.jsonl of score --replies, or an arcjudge score "
        "output (results.jsonl or its directory); Table 9 needs them",
    )
    parser.add_argument(
        "--exclude-model",
        action="append",
        default=[],
        metavar="NAME",
        help="Table 9: also pool the Definition failures without this model (repeatable)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="seed of the bootstrap resampling (Section 3.1) and of Table 6's task draw",
    )
    parser.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=BOOTSTRAP_RESAMPLES,
        metavar="N",
        help="bootstrap resamples of the tasks (Section 3.1)",
    )
    parser.add_argument(
        "--budget-tasks",
        choices=[str(b) for b in BudgetTasks],
        default=str(BudgetTasks.PASSED_ALL_FIVE),
        help="Section 3.1's tasks per model: passed-all-five (the study's: those it passed on "
        "all five dimensions in some run) or every (every task with all five instances)",
    )
    parser.add_argument(
        "--budget-assignments",
        choices=[str(a) for a in Assignments],
        default=str(Assignments.ALL),
        help="Section 3.1's five dimensions once: all 120 dimension-to-run assignments "
        "(exact) or the five cyclic rotations (the study's choice)",
    )
    parser.add_argument(
        "--configuration",
        nargs=2,
        type=Path,
        action="append",
        default=[],
        metavar=("ITEMS", "INSTANCES"),
        help="Table 6: items.jsonl and instances.jsonl of configuration 2, 3, ... of "
        "build --configurations, in order (repeatable; --items/--instances are configuration 1)",
    )
    parser.add_argument(
        "--sampling-tasks",
        choices=[str(s) for s in SamplingTasks],
        default=str(SamplingTasks.STUDY),
        help="Table 6's tasks per model: study (a seeded random --sampling-size of the tasks "
        "it passed on all five dimensions in configuration 1, minus --exclude-tasks) or every",
    )
    parser.add_argument(
        "--sampling-size",
        type=int,
        default=SAMPLED_TASKS,
        metavar="N",
        help="Table 6: tasks drawn per model (--sampling-tasks study; seeded with --seed)",
    )
    parser.add_argument(
        "--exclude-tasks",
        type=Path,
        metavar="FILE",
        help="Table 6: task ids (one a line, # comments) left out after the draw: the tasks "
        "whose Definition program is trivial",
    )
    parser.add_argument(
        "--full-task-over",
        choices=FULL_TASK_OVER,
        default=EVERY_TASK,
        help="the tasks of full task, Table 7 and Section 3.1: every-task (the study's: every "
        "built task, a dimension without an instance a failure) or complete-tasks (only the "
        "tasks with all five instances)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory")


@dataclass(frozen=True)
class AnalyzeConfig:
    """``arcjudge dimensions analyze`` as a value: which files to read, where to write.

    Attributes:
        items: ``items.jsonl`` of ``dimensions score``.
        instances: ``instances.jsonl`` the items were graded on.
        out: The output directory.
        definitions: Definition results (a results file or a directory with
            ``results.jsonl``), for Table 9; ``None``: Table 9 is empty.
        exclude_models: Table 9 also pools the Definition failures without these models.
        seed: The bootstrap's seed (Section 3.1).
        bootstrap_resamples: Bootstrap resamples of the tasks (Section 3.1).
        configurations: Table 6: (items, instances) of configuration 2, 3, ...
        budget_tasks: Section 3.1's tasks per model.
        budget_assignments: Section 3.1's dimension-to-run assignments.
        sampling_tasks: Table 6's tasks per model.
        sampling_size: Table 6's tasks drawn per model.
        exclude_tasks: Table 6's exclusion list (a file of task ids), if any.
        full_task_over: The tasks of full task, Table 7 and Section 3.1
            (:data:`~arcjudge.harness.analyze.inputs.FULL_TASK_OVER`).
    """

    items: Path
    instances: Path
    out: Path
    definitions: Path | None = None
    exclude_models: tuple[str, ...] = ()
    seed: int = DEFAULT_SEED
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    configurations: tuple[tuple[Path, Path], ...] = ()
    budget_tasks: BudgetTasks = BudgetTasks.PASSED_ALL_FIVE
    budget_assignments: Assignments = Assignments.ALL
    sampling_tasks: SamplingTasks = SamplingTasks.STUDY
    sampling_size: int = SAMPLED_TASKS
    exclude_tasks: Path | None = None
    full_task_over: str = EVERY_TASK


class AnalyzeCommand(DirectCommand[AnalyzeConfig]):
    """``arcjudge dimensions analyze``: the study's tables from scored items."""

    def configure(self, args: argparse.Namespace) -> AnalyzeConfig:
        """The analysis the options ask for; every input file checked first."""
        require_files(("--items", args.items), ("--instances", args.instances))
        configurations = tuple((Path(i), Path(n)) for i, n in args.configuration)
        for items_file, instances_file in configurations:
            require_files(("--configuration", items_file), ("--configuration", instances_file))
        definitions: Path | None = args.definitions
        if definitions is not None and not (
            definitions.is_file() or (definitions / "results.jsonl").is_file()
        ):
            raise UsageError(
                f"--definitions {definitions}: neither a results file nor a directory with "
                "results.jsonl"
            )
        if args.bootstrap_resamples < 1:
            raise UsageError("--bootstrap-resamples must be >= 1")
        if args.sampling_size < 1:
            raise UsageError("--sampling-size must be >= 1")
        if args.exclude_tasks is not None:
            require_files(("--exclude-tasks", args.exclude_tasks))
        return AnalyzeConfig(
            items=args.items,
            instances=args.instances,
            out=args.out,
            definitions=definitions,
            exclude_models=tuple(args.exclude_model),
            seed=args.seed,
            bootstrap_resamples=args.bootstrap_resamples,
            configurations=configurations,
            budget_tasks=BudgetTasks(args.budget_tasks),
            budget_assignments=Assignments(args.budget_assignments),
            sampling_tasks=SamplingTasks(args.sampling_tasks),
            sampling_size=args.sampling_size,
            exclude_tasks=args.exclude_tasks,
            full_task_over=args.full_task_over,
        )

    def run(
        self, config: AnalyzeConfig, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Read the records, compute every table; the tables, analysis.json, report.html."""
        inputs = read_inputs(
            config.items,
            config.instances,
            config.definitions,
            config.exclude_models,
            seed=config.seed,
            bootstrap_resamples=config.bootstrap_resamples,
            configurations=list(config.configurations),
            budget_tasks=config.budget_tasks,
            budget_assignments=config.budget_assignments,
            sampling_tasks=config.sampling_tasks,
            sampling_size=config.sampling_size,
            exclude_tasks=config.exclude_tasks,
            full_task_over=config.full_task_over,
        )
        described = {
            "items_file": str(config.items),
            "instances_file": str(config.instances),
            "definitions_file": None if config.definitions is None else str(config.definitions),
            "configuration_files": [[str(i), str(n)] for i, n in config.configurations],
            "full_task_over": config.full_task_over,
        }
        # Imported here: the study pulls in numpy, which no other command needs at start-up.
        from arcjudge.harness.analyze.study import analyze

        analysis = analyze(inputs, described)
        data = analysis.to_json()
        tables = analysis.tables()
        files: dict[str, str] = {}
        for table in tables:
            files[f"{TABLES_DIR}/{table.name}.csv"] = table.csv()
            files[f"{TABLES_DIR}/{table.name}.md"] = table.markdown()
        files["analysis.json"] = json_dumps(data, sort_keys=True, indent=1) + "\n"
        files["report.html"] = render_analysis_report(data, tables)
        warnings = []
        missing = data["definition_failures"].get("excluded_models_not_found") or []
        if missing:
            warnings.append(f"--exclude-model: no Definition results of {', '.join(missing)}")
        if config.definitions is None:
            warnings.append("no --definitions: Table 9 (Definition failure classes) is empty")
        for a, b in data["increased_sampling"].get("same_seed", []):
            warnings.append(
                f"--configuration: configurations {a} and {b} were built with the same seed "
                "(the same build twice? Table 6 wants independent configurations)"
            )
        lines = [tables[0].markdown()]
        if config.configurations:
            lines.append(next(t for t in tables if t.name == "table6").markdown())
        names = ", ".join(t.name for t in tables)
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=tuple(lines),
            wrote=f"{TABLES_DIR}/ ({names}; .csv and .md), analysis.json, report.html",
            warnings=tuple(warnings),
            result=analysis,
        )


TABLES_DIR = "tables"
"""Where in the output directory the tables go (``.csv`` and ``.md`` each)."""

COMMAND = AnalyzeCommand("analyze", HELP, add_arguments)
"""The ``dimensions analyze`` command."""
