"""The ``arcjudge validate`` command: arguments in, files and a summary out."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from arcjudge.errors import UsageError
from arcjudge.harness.core.outputs import INTERRUPTED, warn
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import (
    ValidateConfig,
    Validator,
    print_summary,
    write_outputs,
)
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import sandbox_for
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import Limits
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec, parse_verifier_spec
from arcjudge.vocabulary import VERIFIER_ENTRY_POINTS


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
        args.samples = args.samples or 10
    args.out = args.out or Path("out")


def _config(args: argparse.Namespace) -> ValidateConfig:
    if args.sample:
        _apply_sample(args)
    if args.tasks is None:
        raise UsageError("--tasks DIR is required (or --sample)")
    if args.out is None:
        raise UsageError("--out DIR is required")
    if not args.source:
        raise UsageError("give at least one --source NAME=KIND:PATH (or --sample)")
    task_files(args.tasks)  # a clear error for a missing or empty directory
    if args.arcgen is not None and not args.arcgen.is_dir():
        raise UsageError(f"--arcgen {args.arcgen}: no such directory")
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
    try:
        limits = Limits(wall_seconds=args.wall)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
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
            bar = None
            if not args.no_progress:
                from tqdm import tqdm

                bar = tqdm(total=len(task_files(config.tasks_dir)), unit="task", file=sys.stderr)

            def progress(label: str) -> None:
                if bar is not None and not label.startswith("generator "):
                    bar.update(1)

            validator = Validator(config, sb, store, progress)
            validator.run()
            if bar is not None:
                bar.close()
        manifest = write_outputs(validator, args.out)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        store.close()
    print_summary(manifest)
    print(
        f"wrote {terminal_safe(str(args.out))}/verdicts.jsonl, suspects.jsonl, manifest.json, "
        "runtime.json, report.html"
    )
    return 0
