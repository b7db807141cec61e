"""The options of ``arcjudge dimensions``' sub-commands, one function each.

Each sub-command's :class:`~arcjudge.harness.core.runner.Command` (``cli.py``) adds its
options with the function named after it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arcjudge.harness.core.commandline import (
    add_arcgen_argument,
    add_run_arguments,
    add_samples_argument,
    add_tasks_argument,
)
from arcjudge.harness.dimensions.build import DEFAULT_MIN_DISTANCE, DEFAULT_PER_KIND, DEFAULT_SEED
from arcjudge.harness.dimensions.configurations import CONFIGURATIONS_FILE, SEED_STRIDE
from arcjudge.harness.dimensions.embeddings import DEFAULT_NEIGHBOURS
from arcjudge.harness.dimensions.statistics import EVERY_TASK, FULL_TASK_OVER
from arcjudge.vocabulary import (
    EDITING_KINDS,
    GRID_FORMATS,
    MIXTURE_RULES,
    GridFormat,
    MismatchPool,
    MixtureRule,
    ValidPairs,
)

VERIFIER_WALL_HELP = "seconds per verifier call"
"""``--wall``'s help in ``build`` and ``score`` (each verifier call gets that long)."""


def build_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions build``."""
    add_tasks_argument(parser)
    add_arcgen_argument(parser)
    parser.add_argument("--manifest", type=Path, required=True, help="validate output dir")
    parser.add_argument(
        "--generator",
        help="KIND:PATH (arc-gen or re-arc): valid pairs are fresh samples of it "
        "(default: the generator the manifest names; ARC-GEN pairs without one)",
    )
    parser.add_argument(
        "--valid-pairs",
        choices=[v.value for v in ValidPairs],
        default=ValidPairs.GENERATOR.value,
        help="generator (the default, the study's: fresh generator samples whenever a "
        "generator is given or in the manifest) or arc-gen (the ARC-GEN pairs; arcjudge's "
        "default before)",
    )
    parser.add_argument(
        "--mismatch-pool",
        choices=[p.value for p in MismatchPool],
        default=MismatchPool.ARC_GEN.value,
        help="the pairs instance mismatches take outputs from: arc-gen (the default, the "
        "study's: ARC-GEN pairs and demonstrations) or valid (the valid pairs drawn and "
        "demonstrations; before)",
    )
    add_samples_argument(parser)
    parser.add_argument(
        "--editing-kinds",
        default=",".join(EDITING_KINDS),
        help="comma-separated invalid types an Editing pair is drawn from "
        f"(default: the study's {','.join(EDITING_KINDS)})",
    )
    parser.add_argument("--corruptions", type=Path, help="corruptions.jsonl from mutate")
    parser.add_argument(
        "--human-errors",
        type=Path,
        help="H-ARC's incorrect_submissions.csv, or a human_errors.json (docs/dimensions.md)",
    )
    parser.add_argument(
        "--neighbours",
        type=Path,
        help="retrieval: JSONL {task_id, neighbour_task_ids} (default: the baseline embedding)",
    )
    parser.add_argument(
        "--embeddings",
        type=Path,
        help="retrieval: task embeddings (.npz, .npy or JSONL {task_id, embedding}); "
        "neighbours by cosine similarity",
    )
    parser.add_argument(
        "--neighbours-k",
        type=int,
        default=DEFAULT_NEIGHBOURS,
        metavar="K",
        help="retrieval: neighbours per task from embeddings",
    )
    parser.add_argument(
        "--no-baseline-retrieval",
        action="store_true",
        help="without --neighbours or --embeddings, no retrieval candidates (instead of "
        "neighbours by the baseline embedding of the demonstrations)",
    )
    parser.add_argument(
        "--mixture",
        help="arc-agi-1, p-arc, or a JSON file of weights (default: p-arc when --tasks is a "
        "P-ARC export, else arc-agi-1)",
    )
    parser.add_argument(
        "--mixture-rule",
        choices=[r.value for r in MIXTURE_RULES],
        default=MixtureRule.WITHOUT_REPLACEMENT.value,
        help="how Classification draws its 5 candidate types: without-replacement (the "
        "default: no candidate repeats while an unused one remains, a used-up type's weight "
        "goes to the rest, valid included), renormalized (so does a type the task lacks), "
        "fixed-valid (valid keeps its weight; arcjudge's draw before)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="R",
        help="runs a model is to make over the same instances (recorded for the "
        "matched-budget comparison of `dimensions analyze`; needs R >= 5)",
    )
    parser.add_argument(
        "--configurations",
        type=int,
        default=1,
        metavar="K",
        help="K > 1: K independent builds OUT/configuration-1..K, configuration k with seed "
        f"SEED + (k-1)*{SEED_STRIDE:_}, and OUT/{CONFIGURATIONS_FILE} (default 1: one build "
        "in OUT)",
    )
    parser.add_argument(
        "--per-kind", type=int, default=DEFAULT_PER_KIND, help="candidates tried per kind"
    )
    add_run_arguments(parser, wall_help=VERIFIER_WALL_HELP)


def score_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions score``."""
    parser.add_argument("--instances", type=Path, required=True, help="instances.jsonl")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--answers", type=Path, help="answers JSONL (answers already in JSON)")
    given.add_argument(
        "--replies", type=Path, help="replies JSONL: {id, model, run, reply} per prompt id"
    )
    parser.add_argument(
        "--attempts", type=int, default=1, help="output grid: candidates per test input (pass@k)"
    )
    parser.add_argument(
        "--samples",
        type=int,
        help="Definition replies: generator samples per task (default: as the build, "
        "else the validate run)",
    )
    parser.add_argument("--definitions", type=Path, help="arcjudge score output dir")
    parser.add_argument("--programs", type=Path, help="the programs file that score read")
    parser.add_argument(
        "--min-distance",
        type=float,
        default=DEFAULT_MIN_DISTANCE,
        help="generation: a pair this close to a demonstration on input and output is a copy",
    )
    parser.add_argument(
        "--strict-generation",
        action="store_true",
        help="generation: input and output must each be farther than that from every "
        "demonstration (no pair can pass on tasks whose outputs repeat a demonstration's)",
    )
    parser.add_argument(
        "--exclude-arcgen", action="store_true", help="generation: fail exact ARC-GEN pairs"
    )
    parser.add_argument(
        "--full-task-over",
        choices=FULL_TASK_OVER,
        default=EVERY_TASK,
        help="the tasks of full task: every-task (the study's: every built task, a dimension "
        "without an instance a failure) or complete-tasks (only the tasks with all five "
        "instances)",
    )
    parser.add_argument(
        "--after",
        type=Path,
        action="append",
        default=[],
        metavar="ITEMS",
        help="generation: items.jsonl of an earlier configuration (repeatable); each model's "
        "and run's pairs accepted there are pairs it must not copy (as prompts --after shows)",
    )
    add_run_arguments(parser, wall_help=VERIFIER_WALL_HELP)


def replies_from_inspect_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions replies-from-inspect``."""
    parser.add_argument("log", type=Path, help="the log of `inspect eval arcjudge/potarcin`")
    parser.add_argument("--out", type=Path, required=True, help="replies JSONL to write")
    parser.add_argument("--model", help="the replies' model name (default: the eval's model)")


def human_errors_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions human-errors``."""
    parser.add_argument(
        "sources", type=Path, nargs="+", metavar="SOURCE", help="a file or a directory"
    )
    parser.add_argument("--out", type=Path, required=True, help="human_errors.json to write")


def prompts_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dimensions prompts``."""
    parser.add_argument("--instances", type=Path, required=True, help="instances.jsonl")
    add_tasks_argument(parser)
    parser.add_argument("--out", type=Path, required=True, help="the prompts JSONL to write")
    parser.add_argument(
        "--grid-format",
        choices=[f.value for f in GRID_FORMATS],
        default=GridFormat.DIGITS.value,
        help="grids as rows of digits (default) or JSON lists",
    )
    parser.add_argument("--templates", type=Path, help="directory of templates overriding ours")
    parser.add_argument(
        "--after",
        type=Path,
        action="append",
        default=[],
        metavar="ITEMS",
        help="items.jsonl of an earlier configuration (repeatable): the pairs --model had "
        "accepted there are added to each Generation prompt (see --after-shown-as)",
    )
    parser.add_argument(
        "--after-shown-as",
        choices=["demonstrations", "avoid"],
        default="demonstrations",
        help="with --after: the accepted pairs shown as further demonstrations (the study's), "
        "or listed after them as pairs not to copy (avoid)",
    )
    parser.add_argument("--model", help="with --after: whose pairs (default: the only model)")
    parser.add_argument("--run", help="with --after: which run (default: the model's only run)")
