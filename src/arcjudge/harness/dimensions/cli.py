"""The ``arcjudge dimensions build`` and ``arcjudge dimensions score`` commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError, UsageError
from arcjudge.harness.core.commandline import (
    INTERRUPTED,
    Progress,
    add_backend_arguments,
    limits_from,
    require_directories,
    require_files,
    use_task_set,
    warn,
)
from arcjudge.harness.core.outputs import runtime_json, write_atomic
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.build import (
    DEFAULT_MIN_DISTANCE,
    DEFAULT_PER_KIND,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    EDIT_MAX_DISTANCE,
    BuildConfig,
    Builder,
    summary_text,
)
from arcjudge.harness.dimensions.configurations import (
    CONFIGURATIONS_FILE,
    SEED_STRIDE,
    configuration_name,
    configurations_record,
    read_earlier_pairs,
    with_earlier_pairs,
)
from arcjudge.harness.dimensions.embeddings import DEFAULT_NEIGHBOURS
from arcjudge.harness.dimensions.grading import (
    DimensionScoreConfig,
    DimensionScorer,
    read_instances,
)
from arcjudge.harness.dimensions.human_errors import collect_human_errors, human_errors_json
from arcjudge.harness.dimensions.mixture import load_mixture
from arcjudge.harness.dimensions.prompts import prompt_lines, prompt_summary, render_prompts
from arcjudge.harness.dimensions.report import render_dimensions_report, summary_table
from arcjudge.integrations.inspect_log import replies_from_inspect_log
from arcjudge.safetext import json_dumps, terminal_safe
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.backends import sandbox_for
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec
from arcjudge.vocabulary import (
    EDITING_KINDS,
    GRID_FORMATS,
    INVALID_KINDS,
    CandidateKind,
    GridFormat,
)

TASKS_HELP = "ARC task JSON directory, task folders or a P-ARC export"


def add_arguments(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add the ``build``, ``score``, ``prompts`` and ``replies-from-inspect`` sub-commands.

    Returns:
        The sub-commands' action, to which the top-level command line adds the
        sub-commands other workflows provide (``analyze``).
    """
    sub = parser.add_subparsers(dest="dimensions_command", required=True)
    build = sub.add_parser("build", help="evaluation instances for every task and dimension")
    build.add_argument("--tasks", type=Path, required=True, help=TASKS_HELP)
    build.add_argument("--arcgen", type=Path, help="directory of ARC-GEN stable-set files")
    build.add_argument("--manifest", type=Path, required=True, help="validate output dir")
    build.add_argument(
        "--generator",
        help="KIND:PATH (arc-gen or re-arc): valid pairs are fresh samples of it "
        "(default: the ARC-GEN pairs)",
    )
    build.add_argument(
        "--samples",
        type=int,
        help=f"generator samples per task (default {DEFAULT_SAMPLES} with --generator)",
    )
    build.add_argument(
        "--editing-kinds",
        default=",".join(EDITING_KINDS),
        help="comma-separated invalid types an Editing pair is drawn from "
        f"(default: the study's {','.join(EDITING_KINDS)})",
    )
    build.add_argument("--corruptions", type=Path, help="corruptions.jsonl from mutate")
    build.add_argument(
        "--human-errors",
        type=Path,
        help="H-ARC's incorrect_submissions.csv, or a human_errors.json (docs/dimensions.md)",
    )
    build.add_argument(
        "--neighbours",
        type=Path,
        help="retrieval: JSONL {task_id, neighbour_task_ids} (default: the baseline embedding)",
    )
    build.add_argument(
        "--embeddings",
        type=Path,
        help="retrieval: task embeddings (.npz, .npy or JSONL {task_id, embedding}); "
        "neighbours by cosine similarity",
    )
    build.add_argument(
        "--neighbours-k",
        type=int,
        default=DEFAULT_NEIGHBOURS,
        metavar="K",
        help="retrieval: neighbours per task from embeddings",
    )
    build.add_argument(
        "--no-baseline-retrieval",
        action="store_true",
        help="without --neighbours or --embeddings, no retrieval candidates (instead of "
        "neighbours by the baseline embedding of the demonstrations)",
    )
    build.add_argument(
        "--mixture", default="arc-agi-1", help="arc-agi-1, p-arc, or a JSON file of weights"
    )
    build.add_argument("--seed", type=int, default=DEFAULT_SEED)
    build.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="R",
        help="runs a model is to make over the same instances (recorded for the "
        "matched-budget comparison of `dimensions analyze`; needs R >= 5)",
    )
    build.add_argument(
        "--configurations",
        type=int,
        default=1,
        metavar="K",
        help="K > 1: K independent builds OUT/configuration-1..K, configuration k with seed "
        f"SEED + (k-1)*{SEED_STRIDE:_}, and OUT/{CONFIGURATIONS_FILE} (default 1: one build "
        "in OUT)",
    )
    build.add_argument(
        "--per-kind", type=int, default=DEFAULT_PER_KIND, help="candidates tried per kind"
    )
    build.add_argument("--wall", type=float, default=10.0, help="seconds per verifier call")
    build.add_argument("--out", type=Path, required=True, help="output directory")
    build.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")
    build.add_argument("--no-progress", action="store_true")
    add_backend_arguments(build)

    score = sub.add_parser("score", help="grade model answers; statistics per model")
    score.add_argument("--instances", type=Path, required=True, help="instances.jsonl")
    given = score.add_mutually_exclusive_group(required=True)
    given.add_argument("--answers", type=Path, help="answers JSONL (answers already in JSON)")
    given.add_argument(
        "--replies", type=Path, help="replies JSONL: {id, model, run, reply} per prompt id"
    )
    score.add_argument(
        "--attempts", type=int, default=1, help="output grid: candidates per test input (pass@k)"
    )
    score.add_argument(
        "--samples",
        type=int,
        help="Definition replies: generator samples per task (default: as the build, "
        "else the validate run)",
    )
    score.add_argument("--definitions", type=Path, help="arcjudge score output dir")
    score.add_argument("--programs", type=Path, help="the programs file that score read")
    score.add_argument(
        "--min-distance",
        type=float,
        default=DEFAULT_MIN_DISTANCE,
        help="generation: a pair this close to a demonstration on input and output is a copy",
    )
    score.add_argument(
        "--strict-generation",
        action="store_true",
        help="generation: input and output must each be farther than that from every "
        "demonstration (no pair can pass on tasks whose outputs repeat a demonstration's)",
    )
    score.add_argument(
        "--exclude-arcgen", action="store_true", help="generation: fail exact ARC-GEN pairs"
    )
    score.add_argument(
        "--after",
        type=Path,
        action="append",
        default=[],
        metavar="ITEMS",
        help="generation: items.jsonl of an earlier configuration (repeatable); each model's "
        "and run's pairs accepted there are pairs it must not copy (as prompts --after shows)",
    )
    score.add_argument("--wall", type=float, default=10.0, help="seconds per verifier call")
    score.add_argument("--out", type=Path, required=True, help="output directory")
    score.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")
    score.add_argument("--no-progress", action="store_true")
    add_backend_arguments(score)

    convert = sub.add_parser(
        "replies-from-inspect", help="an inspect_ai eval log -> replies JSONL (score --replies)"
    )
    convert.add_argument("log", type=Path, help="the log of `inspect eval arcjudge/potarcin`")
    convert.add_argument("--out", type=Path, required=True, help="replies JSONL to write")
    convert.add_argument("--model", help="the replies' model name (default: the eval's model)")

    errors = sub.add_parser(
        "human-errors",
        help="merge human errors (H-ARC CSVs, human_errors.json, directories of per-task "
        "JSON files) into one human_errors.json for build --human-errors",
    )
    errors.add_argument(
        "sources", type=Path, nargs="+", metavar="SOURCE", help="a file or a directory"
    )
    errors.add_argument("--out", type=Path, required=True, help="human_errors.json to write")

    prompts = sub.add_parser("prompts", help="model-ready prompts for every instance")
    prompts.add_argument("--instances", type=Path, required=True, help="instances.jsonl")
    prompts.add_argument("--tasks", type=Path, required=True, help=TASKS_HELP)
    prompts.add_argument("--out", type=Path, required=True, help="the prompts JSONL to write")
    prompts.add_argument(
        "--grid-format",
        choices=[f.value for f in GRID_FORMATS],
        default=GridFormat.DIGITS.value,
        help="grids as rows of digits (default) or JSON lists",
    )
    prompts.add_argument("--templates", type=Path, help="directory of templates overriding ours")
    prompts.add_argument(
        "--after",
        type=Path,
        action="append",
        default=[],
        metavar="ITEMS",
        help="items.jsonl of an earlier configuration (repeatable): the pairs --model had "
        "accepted there are listed in each Generation prompt as pairs it must not copy",
    )
    prompts.add_argument("--model", help="with --after: whose pairs (default: the only model)")
    prompts.add_argument("--run", help="with --after: which run (default: the model's only run)")
    return sub


def _run_then_write(
    args: argparse.Namespace,
    module_dirs: tuple[str, ...],
    run: Callable[[Sandbox, ResultStore], None],
    files: Callable[[], dict[str, str]],
) -> bool:
    """Run in the sandbox with the result store, then write the outputs atomically.

    The outputs are ``files()`` and ``runtime.json`` (the sandbox's runtime). The store is
    ``--store`` or ``OUT/cache.sqlite``; after Ctrl-C it keeps the finished calls, nothing
    else is written, and ``False`` is returned (a rerun resumes).
    """
    store = ResultStore(args.store or args.out / "cache.sqlite")
    try:
        with sandbox_for(args, module_dirs=module_dirs, warn=warn) as sandbox:
            run(sandbox, store)
            runtime = sandbox.runtime()
        write_atomic(args.out, {**files(), "runtime.json": runtime_json(runtime)})
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return False
    finally:
        store.close()
    return True


def cmd_build(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions build`` (``--configurations K``: K builds, one directory each)."""
    task_set = use_task_set(args, args.out, generator=True, human_errors=True)
    task_files(args.tasks)
    require_directories(("--manifest", args.manifest), ("--arcgen", args.arcgen))
    require_files(
        ("--corruptions", args.corruptions),
        ("--human-errors", args.human_errors),
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
    if args.samples is not None and args.generator is None:
        raise UsageError("--samples needs --generator KIND:PATH")
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
    base = BuildConfig(
        tasks_dir=args.tasks,
        manifest_dir=args.manifest,
        arcgen_dir=args.arcgen,
        corruptions_file=args.corruptions,
        human_errors_file=args.human_errors,
        neighbours_file=args.neighbours,
        embeddings_file=args.embeddings,
        baseline_retrieval=not args.no_baseline_retrieval,
        neighbours=args.neighbours_k,
        mixture=load_mixture(args.mixture),
        seed=args.seed,
        per_kind=args.per_kind,
        limits=limits_from(args.wall),
        generator=parse_generator_spec(args.generator) if args.generator else None,
        samples=DEFAULT_SAMPLES if args.samples is None else args.samples,
        editing_kinds=tuple(CandidateKind(k) for k in dict.fromkeys(editing)),
        repeats=args.repeats,
        task_set=task_set,
    )
    if args.configurations == 1:
        summary = _build_one(args, base)
        if summary is None:
            return 130
        print(terminal_safe(summary_text(summary), keep_newlines=True))
        print(f"wrote {terminal_safe(str(args.out))}/instances.jsonl, build.json, runtime.json")
        return 0
    return _build_configurations(args, base)


def _build_configurations(args: argparse.Namespace, base: BuildConfig) -> int:
    """K configurations, each a plain build in ``OUT/configuration-k``; then the list.

    All share one result store (``--store``, else ``OUT/cache.sqlite``), so a rerun after
    an interruption builds every configuration again from the cache (same bytes) and
    writes ``configurations.json`` once all are written.
    """
    store = args.store or args.out / "cache.sqlite"
    record = configurations_record(base.seed, args.configurations)
    stale = args.out / configuration_name(args.configurations + 1)
    if stale.is_dir():
        warn(f"{stale} is of an earlier build with more configurations; "
             f"{CONFIGURATIONS_FILE} lists {args.configurations}")  # fmt: skip
    for entry in record["configurations"]:
        number, seed = entry["configuration"], entry["seed"]
        out = args.out / entry["directory"]
        config = replace(base, seed=seed, configuration=number)
        each = argparse.Namespace(**{**vars(args), "out": out, "store": store})
        summary = _build_one(each, config, warn_rows=number == 1)  # the same rows each time
        if summary is None:
            return 130
        print(f"configuration {number} (seed {seed}):")
        print(terminal_safe(summary_text(summary), keep_newlines=True))
    text = json_dumps(record, sort_keys=True, indent=1) + "\n"
    write_atomic(args.out, {CONFIGURATIONS_FILE: text})
    last = configuration_name(args.configurations)
    print(f"wrote {terminal_safe(str(args.out))}/{configuration_name(1)} ... {last} "
          f"(instances.jsonl, build.json, runtime.json each), {CONFIGURATIONS_FILE}")  # fmt: skip
    return 0


def _build_one(
    args: argparse.Namespace, config: BuildConfig, warn_rows: bool = True
) -> dict[str, Any] | None:
    """One build into ``args.out``: its ``build.json`` summary, ``None`` after Ctrl-C.

    ``warn_rows``: warn about the H-ARC rows skipped.
    """
    bar = Progress(len(task_files(args.tasks)), "task", not args.no_progress)
    builder = Builder(config, bar.update)
    made: dict[str, dict[str, Any]] = {}

    def files() -> dict[str, str]:
        bar.close()
        made["summary"] = builder.summary()
        return {
            "instances.jsonl": "".join(builder.lines()),
            "build.json": json_dumps(made["summary"], sort_keys=True, indent=1) + "\n",
        }

    written = _run_then_write(args, builder.module_dirs(), builder.run, files)
    bar.close()
    if not written:
        return None
    summary = made["summary"]
    for reason in summary["human_error_rows_skipped"][:5] if warn_rows else ():
        warn(f"--human-errors: skipped {reason}")
    return summary


def cmd_score(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions score``."""
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
    config = DimensionScoreConfig(
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
    )
    scorer = DimensionScorer(config)
    for model, run in scorer.after_unmatched():
        warn(f"--after: no item of {model} run {run} in the earlier items (its pairs there, "
             "if any, are not avoided: are the runs named alike?)")  # fmt: skip
    bar = Progress(scorer.work(), "job", not args.no_progress)
    scorer.progress = bar.update
    made: dict[str, dict[str, Any]] = {}

    def files() -> dict[str, str]:
        bar.close()
        made["summary"] = summary = scorer.summary()
        written = {
            "items.jsonl": "".join(scorer.item_lines()),
            "summary.json": json_dumps(summary, sort_keys=True, indent=1) + "\n",
            "report.html": render_dimensions_report(summary),
        }
        if scorer.definition_results:
            written["definitions.jsonl"] = "".join(scorer.definition_results)
        return written

    written = _run_then_write(args, scorer.module_dirs(), scorer.run, files)
    bar.close()
    if not written:
        return 130
    summary = made["summary"]
    if summary["answers_problem_count"]:
        what = "reply" if args.replies else "answer"
        warn(f"{summary['answers_problem_count']} {what} line(s) not used (see summary.json)")
    for note in summary["definition_notes"][:5]:
        warn(f"--definitions: {note}")
    print(summary_table(summary))
    extra = ", definitions.jsonl" if summary["definition_replies"] else ""
    print(
        f"wrote {terminal_safe(str(args.out))}/items.jsonl, summary.json, runtime.json, "
        f"report.html{extra}"
    )
    return 0


def cmd_replies_from_inspect(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions replies-from-inspect``."""
    require_files(("LOG", args.log))
    found = replies_from_inspect_log(args.log, args.model)
    write_atomic(args.out.parent, {args.out.name: "".join(found.lines())})
    if found.errored:
        warn(f"{len(found.errored)} sample(s) ended in an error and have no reply")
    print(f"wrote {len(found.replies)} replies of {terminal_safe(found.model)} to "
          f"{terminal_safe(str(args.out))}")  # fmt: skip
    return 0


def cmd_prompts(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions prompts``."""
    require_files(("--instances", args.instances), *(("--after", path) for path in args.after))
    require_directories(("--templates", args.templates))
    if args.out.is_dir():
        raise UsageError(f"--out {args.out}: a directory (give the file to write)")
    use_task_set(args, args.out.parent)
    if not args.after and (args.model is not None or args.run is not None):
        raise UsageError("--model and --run name whose accepted pairs --after adds: give --after")
    instances = list(read_instances(args.instances).values())
    added = ""
    if args.after:
        earlier = read_earlier_pairs(args.after)
        model, run = _the_cell(earlier.cells, args.model, args.run)
        pairs = earlier.for_cell(model, run)
        instances = with_earlier_pairs(instances, pairs)
        count = sum(len(p) for p in pairs.values())
        added = (f"; {count} pair(s) {terminal_safe(model)} run {terminal_safe(run)} had "
                 f"accepted added to the Generation prompts of {len(pairs)} task(s)")  # fmt: skip
    prompts = render_prompts(instances, args.tasks, args.grid_format, args.templates)
    write_atomic(args.out.parent, {args.out.name: prompt_lines(prompts)})
    print(f"{prompt_summary(prompts)}{added}; wrote {terminal_safe(str(args.out))}")
    return 0


def _the_cell(
    cells: frozenset[tuple[str, str]], model: str | None, run: str | None
) -> tuple[str, str]:
    """The one ``(model, run)`` of the --after items that --model and --run leave.

    Raises:
        UsageError: None is left, or several are (naming them).
    """
    left = sorted(c for c in cells if model in (None, c[0]) and run in (None, c[1]))
    if len(left) == 1:
        return left[0]
    asked = " ".join(f"--{k} {v}" for k, v in (("model", model), ("run", run)) if v is not None)
    if not left:
        raise UsageError(f"--after: no item of {asked or 'any model'} in the items given")
    shown = ", ".join(f"{m} run {r}" for m, r in left[:6]) + (", ..." if len(left) > 6 else "")
    raise UsageError(
        f"--after: the items hold several models or runs ({terminal_safe(shown)}): "
        "name one with --model and --run"
    )


def cmd_human_errors(args: argparse.Namespace) -> int:
    """Run ``arcjudge dimensions human-errors``."""
    for source in args.sources:
        if not source.exists():
            raise UsageError(f"{source}: no such file or directory")
    try:
        found = collect_human_errors(list(args.sources))
    except (ValueError, OSError) as exc:
        raise InputError(str(exc)) from None
    write_atomic(args.out.parent, {args.out.name: human_errors_json(found)})
    for reason in found.skipped[:10]:
        warn(f"skipped {reason}")
    if len(found.skipped) > 10:
        warn(f"... and {len(found.skipped) - 10} more skipped")
    grids = sum(len(e) for tests in found.tests.values() for e in tests.values())
    print(f"wrote {grids} wrong output(s) of {len(found.tests)} task(s) to "
          f"{terminal_safe(str(args.out))}")  # fmt: skip
    return 0


def cmd_dimensions(args: argparse.Namespace) -> int:
    """Dispatch ``arcjudge dimensions``."""
    if args.dimensions_command == "build":
        return cmd_build(args)
    if args.dimensions_command == "replies-from-inspect":
        return cmd_replies_from_inspect(args)
    if args.dimensions_command == "prompts":
        return cmd_prompts(args)
    if args.dimensions_command == "human-errors":
        return cmd_human_errors(args)
    return cmd_score(args)
