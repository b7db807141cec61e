"""The ``arcjudge validate`` command: arguments in, files and a summary out."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arcjudge.errors import UsageError
from arcjudge.harness.core.commandline import (
    Progress,
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
from arcjudge.harness.core.manifest import Manifest
from arcjudge.harness.core.runner import CommandRun, DirectCommand, Needs, Outputs
from arcjudge.harness.validate.records import VerdictRecord
from arcjudge.harness.validate.validator import (
    ValidateConfig,
    Validator,
    output_files,
    summary_lines,
)
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.tasks import task_files
from arcjudge.verifiers.sources import parse_generator_spec, parse_verifier_spec
from arcjudge.vocabulary import VERIFIER_ENTRY_POINTS

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``validate`` options to a sub-parser."""
    add_tasks_argument(parser, required=False)
    add_arcgen_argument(parser)
    parser.add_argument("--generator", help="KIND:PATH (arc-gen or re-arc) for fresh samples")
    add_samples_argument(parser)
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
    add_policy_argument(parser)
    add_store_argument(parser)
    parser.add_argument(
        "--quarantine-suspects",
        action="store_true",
        help="also count verifiers wrong only on suspect generator samples (valid_quarantined)",
    )
    parser.add_argument(
        "--probe-samples", type=int, default=0, help="extra samples to compare verifiers on"
    )
    parser.add_argument(
        "--allow-missing-samples",
        action="store_true",
        help="the old rule: drop failed samples (no redraw) and call a verifier valid on "
        "a task short of samples (not valid_unsampled)",
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


ValidateRun = CommandRun[ValidateConfig]
"""``arcjudge validate`` as a value: the validate config, the output directory, the sandbox."""


@dataclass(frozen=True)
class ValidateOutcome:
    """What ``arcjudge validate`` decided: the manifest and one verdict per verifier.

    Attributes:
        manifest: The manifest (``manifest.json``'s record).
        verdicts: One verdict per (task, source), in task then source order.
    """

    manifest: Manifest
    verdicts: tuple[VerdictRecord, ...]


class ValidateCommand(DirectCommand[ValidateRun]):
    """``arcjudge validate``: which verifier sources are valid, per task."""

    def configure(self, args: argparse.Namespace) -> ValidateRun:
        """The run the options ask for (``--sample``: the bundled sample's)."""
        return _config(args)

    def needs(self, config: ValidateRun) -> Needs:
        """A sandbox (programs import from the sources' and generator's dirs), the store."""
        validate = config.config
        module_dirs = tuple(d for s in validate.sources for d in s.module_dirs)
        if validate.generator is not None:
            module_dirs += validate.generator.module_dirs
        return config.needs(module_dirs)

    def run(
        self, config: ValidateRun, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Validate every source on every task; verdicts, suspects, manifest, report."""
        assert sandbox is not None and store is not None
        total = len(task_files(config.config.tasks_dir))
        with Progress(total, "task", config.progress) as bar:

            def progress(label: str) -> None:
                if not label.startswith("generator "):
                    bar.update(1)

            validator = Validator(config.config, sandbox, store, progress)
            validator.run()
        manifest, files = output_files(validator)
        return Outputs(
            out_dir=config.out,
            files=files,
            lines=tuple(summary_lines(manifest)),
            result=ValidateOutcome(manifest, tuple(validator.verdict_records())),
        )


COMMAND = ValidateCommand(
    "validate", "decide which verifier sources are valid per task", add_arguments
)
"""The ``validate`` command."""


def _sample_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """What ``--sample`` fills in that the command line leaves open."""
    root = sample_dir()
    if not (root / "tasks").is_dir():
        raise UsageError(f"the bundled sample is missing ({root})")
    filled: dict[str, Any] = {
        "tasks": args.tasks or root / "tasks",
        "source": args.source
        or [
            f"re-arc=re-arc:{root / 're-arc'}",
            f"golf=golf:{root / 'golf'}",
            f"module=module:{root / 'module'}",
        ],
        "generator": args.generator,
        "samples": args.samples,
        "seed": SAMPLE_SEED if args.seed is None else args.seed,
        "out": args.out or Path("out"),
    }
    if args.generator is None:
        filled["generator"] = f"arc-gen:{root / 'generators' / 'arc-gen'}"
        filled["samples"] = args.samples or SAMPLE_SAMPLES
    return filled


def _config(args: argparse.Namespace) -> ValidateRun:
    given = {
        k: getattr(args, k) for k in ("tasks", "source", "generator", "samples", "seed", "out")
    }
    if args.sample:
        given = _sample_defaults(args)
    if given["tasks"] is None:
        raise UsageError("--tasks DIR is required (or --sample)")
    out: Path | None = given["out"]
    if out is None:
        raise UsageError("--out DIR is required")
    chosen = use_task_set(
        given["tasks"],
        out,
        source=given["source"],
        generator=given["generator"],
        fill=("source", "generator"),
    )
    if not chosen.source:
        raise UsageError(
            "give at least one --source NAME=KIND:PATH (or --sample, or --tasks a task set "
            "with verifiers)"
        )
    task_files(chosen.tasks)  # a clear error for a missing or empty directory
    require_directories(("--arcgen", args.arcgen))
    generator = chosen.generator
    samples = given["samples"]
    if samples is None:
        samples = DEFAULT_SAMPLES if generator else 0
    seed = DEFAULT_SEED if given["seed"] is None else given["seed"]
    if samples < 0 or args.chunk < 1:
        raise UsageError("--samples must be >= 0 and --chunk >= 1")
    if args.probe_samples < 0:
        raise UsageError("--probe-samples must be >= 0")
    if (samples or args.probe_samples) and generator is None:
        raise UsageError("--samples needs --generator KIND:PATH")
    entry_points = tuple(args.entrypoint or VERIFIER_ENTRY_POINTS)
    sources = tuple(parse_verifier_spec(text, entry_points) for text in chosen.source)
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise UsageError(f"source names must be unique: {', '.join(names)}")
    limits = limits_from(args.wall)
    validate = ValidateConfig(
        tasks_dir=chosen.tasks,
        sources=sources,
        arcgen_dir=args.arcgen,
        generator=parse_generator_spec(generator) if generator else None,
        samples=samples if generator else 0,
        seed=seed,
        chunk=args.chunk,
        limits=limits,
        policy=PolicyMode(args.policy),
        quarantine_suspects=args.quarantine_suspects,
        probe_samples=args.probe_samples if generator else 0,
        task_set=chosen.record,
        allow_missing_samples=args.allow_missing_samples,
    )
    return command_run(validate, argparse.Namespace(**{**vars(args), "out": out}))
