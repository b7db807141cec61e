"""The ``arcjudge validate`` command: arguments in, files and a summary out."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
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
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import (
    ValidateConfig,
    Validator,
    summary_lines,
    write_outputs,
)
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import sandbox_for
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec, parse_verifier_spec
from arcjudge.vocabulary import VERIFIER_ENTRY_POINTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``validate`` options to a sub-parser."""
    parser.add_argument(
        "--tasks", type=Path, help="ARC task JSON directory, task folders or a P-ARC export"
    )
    parser.add_argument("--arcgen", type=Path, help="directory of ARC-GEN stable-set files")
    parser.add_argument("--generator", help="KIND:PATH (arc-gen or re-arc) for fresh samples")
    parser.add_argument(
        "--samples",
        type=int,
        help=f"generator samples per task (default {DEFAULT_SAMPLES} with --generator)",
    )
    parser.add_argument(
        "--source", action="append", default=[], help="NAME=KIND:PATH (re-arc, golf, module)"
    )
    parser.add_argument("--entrypoint", action="append", help="entry points for module sources")
    parser.add_argument(
        "--seed",
        type=int,
        help=f"sample i uses random.seed(SEED + i) (default {DEFAULT_SEED}; 0 with --sample)",
    )
    parser.add_argument("--out", type=Path, help="output directory")
    parser.add_argument("--sample", action="store_true", help="use the bundled sample")
    parser.add_argument("--chunk", type=int, default=512, help="inputs per work item")
    parser.add_argument("--wall", type=float, default=10.0, help="seconds per call")
    parser.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")
    parser.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")
    parser.add_argument(
        "--quarantine-suspects",
        action="store_true",
        help="also count verifiers wrong only on suspect generator samples (valid_quarantined)",
    )
    parser.add_argument(
        "--probe-samples", type=int, default=0, help="extra samples to compare verifiers on"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_backend_arguments(parser)


SAMPLE_SEED = 0
"""``validate --sample``'s seed: the bundled sample's EXPECTED.json and README are for it."""

SAMPLE_SAMPLES = 10
"""``validate --sample``'s generator samples per task (EXPECTED.json's)."""


def sample_dir() -> Path:
    """The bundled sample (tasks, verifier sources in three formats, generators)."""
    return Path(str(resources.files("arcjudge.data").joinpath("sample")))


def _apply_sample(args: argparse.Namespace) -> None:
    root = sample_dir()
    if not (root / "tasks").is_dir():
        raise UsageError(f"the bundled sample is missing ({root})")
    args.tasks = args.tasks or root / "tasks"
    if not args.source:
        args.source = [
            f"re-arc=re-arc:{root / 're-arc'}",
            f"golf=golf:{root / 'golf'}",
            f"module=module:{root / 'module'}",
        ]
    if args.generator is None:
        args.generator = f"arc-gen:{root / 'generators' / 'arc-gen'}"
        args.samples = args.samples or SAMPLE_SAMPLES
    if args.seed is None:  # EXPECTED.json and the sample's README are for seed 0
        args.seed = SAMPLE_SEED
    args.out = args.out or Path("out")


def _config(args: argparse.Namespace) -> ValidateConfig:
    if args.sample:
        _apply_sample(args)
    if args.tasks is None:
        raise UsageError("--tasks DIR is required (or --sample)")
    if args.out is None:
        raise UsageError("--out DIR is required")
    task_set = use_task_set(args, args.out, source=True, generator=True)
    if not args.source:
        raise UsageError(
            "give at least one --source NAME=KIND:PATH (or --sample, or --tasks a task set "
            "with verifiers)"
        )
    task_files(args.tasks)  # a clear error for a missing or empty directory
    require_directories(("--arcgen", args.arcgen))
    if args.samples is None:
        args.samples = DEFAULT_SAMPLES if args.generator else 0
    if args.seed is None:
        args.seed = DEFAULT_SEED
    if args.samples < 0 or args.chunk < 1:
        raise UsageError("--samples must be >= 0 and --chunk >= 1")
    if args.probe_samples < 0:
        raise UsageError("--probe-samples must be >= 0")
    if (args.samples or args.probe_samples) and args.generator is None:
        raise UsageError("--samples needs --generator KIND:PATH")
    entry_points = tuple(args.entrypoint or VERIFIER_ENTRY_POINTS)
    sources = tuple(parse_verifier_spec(text, entry_points) for text in args.source)
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise UsageError(f"source names must be unique: {', '.join(names)}")
    limits = limits_from(args.wall)
    return ValidateConfig(
        tasks_dir=args.tasks,
        sources=sources,
        arcgen_dir=args.arcgen,
        generator=parse_generator_spec(args.generator) if args.generator else None,
        samples=args.samples if args.generator else 0,
        seed=args.seed,
        chunk=args.chunk,
        limits=limits,
        policy=PolicyMode(args.policy),
        quarantine_suspects=args.quarantine_suspects,
        probe_samples=args.probe_samples if args.generator else 0,
        task_set=task_set,
    )


def cmd_validate(args: argparse.Namespace) -> int:
    """Run ``arcjudge validate``; return the exit code."""
    config = _config(args)
    module_dirs = tuple(d for s in config.sources for d in s.module_dirs)
    if config.generator is not None:
        module_dirs += config.generator.module_dirs
    store = ResultStore(args.store or args.out / "cache.sqlite")

    try:
        with sandbox_for(args, module_dirs=module_dirs, warn=warn) as sb:
            total = len(task_files(config.tasks_dir))
            with Progress(total, "task", not args.no_progress) as bar:

                def progress(label: str) -> None:
                    if not label.startswith("generator "):
                        bar.update(1)

                validator = Validator(config, sb, store, progress)
                validator.run()
        manifest = write_outputs(validator, args.out)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        store.close()
    for line in summary_lines(manifest):
        print(terminal_safe(line))
    sys.stdout.flush()
    print(
        f"wrote {terminal_safe(str(args.out))}/verdicts.jsonl, suspects.jsonl, manifest.json, "
        "runtime.json, report.html"
    )
    return 0
