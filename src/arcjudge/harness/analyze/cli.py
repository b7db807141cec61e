"""The ``arcjudge dimensions analyze`` command.

It is a sub-command of ``dimensions`` (it reads what ``dimensions build`` and ``dimensions
score`` write) but lives in its own workflow package: the top-level ``arcjudge.cli`` adds
it to the ``dimensions`` sub-commands with :func:`add_arguments` and runs it with
:func:`cmd_analyze`, so ``dimensions`` never imports it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arcjudge.errors import UsageError
from arcjudge.harness.analyze.inputs import BOOTSTRAP_RESAMPLES, read_inputs
from arcjudge.harness.analyze.report import render_analysis_report
from arcjudge.harness.core.commandline import require_files, warn
from arcjudge.harness.core.inputs import DEFAULT_SEED
from arcjudge.harness.core.outputs import write_atomic
from arcjudge.safetext import json_dumps, terminal_safe

__all__ = ["HELP", "add_arguments", "cmd_analyze"]

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
        help="seed of the bootstrap resampling (Section 3.1)",
    )
    parser.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=BOOTSTRAP_RESAMPLES,
        metavar="N",
        help="bootstrap resamples of the tasks (Section 3.1)",
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
    parser.add_argument("--out", type=Path, required=True, help="output directory")


def cmd_analyze(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions analyze``."""
    require_files(("--items", args.items), ("--instances", args.instances))
    configurations = [(Path(i), Path(n)) for i, n in args.configuration]
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
    inputs = read_inputs(
        args.items,
        args.instances,
        definitions,
        tuple(args.exclude_model),
        seed=args.seed,
        bootstrap_resamples=args.bootstrap_resamples,
        configurations=configurations,
    )
    described = {
        "items_file": str(args.items),
        "instances_file": str(args.instances),
        "definitions_file": None if definitions is None else str(definitions),
        "configuration_files": [[str(i), str(n)] for i, n in configurations],
    }
    # Imported here: the study pulls in numpy, which no other command needs at start-up.
    from arcjudge.harness.analyze.study import analyze

    analysis = analyze(inputs, described)
    data = analysis.to_json()
    tables = analysis.tables()
    files: dict[str, str] = {}
    for table in tables:
        files[f"{table.name}.csv"] = table.csv()
        files[f"{table.name}.md"] = table.markdown()
    write_atomic(args.out / "tables", files)
    write_atomic(
        args.out,
        {
            "analysis.json": json_dumps(data, sort_keys=True, indent=1) + "\n",
            "report.html": render_analysis_report(data, tables),
        },
    )
    missing = data["definition_failures"].get("excluded_models_not_found") or []
    if missing:
        warn(f"--exclude-model: no Definition results of {', '.join(missing)}")
    if definitions is None:
        warn("no --definitions: Table 9 (Definition failure classes) is empty")
    for a, b in data["increased_sampling"].get("same_seed", []):
        warn(f"--configuration: configurations {a} and {b} were built with the same seed "
             "(the same build twice? Table 6 wants independent configurations)")  # fmt: skip
    print(terminal_safe(tables[0].markdown(), keep_newlines=True))
    if configurations:
        table6 = next(t for t in tables if t.name == "table6")
        print(terminal_safe(table6.markdown(), keep_newlines=True))
    names = ", ".join(t.name for t in tables)
    print(f"wrote {terminal_safe(str(args.out))}/tables/ ({names}; .csv and .md), "
          "analysis.json, report.html")  # fmt: skip
    return 0
