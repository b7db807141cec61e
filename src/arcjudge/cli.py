"""The ``arcjudge`` command line.

Every user mistake (missing file, bad JSON, unknown backend, a program without the named
entry point) ends in one line ``arcjudge: error: ...`` and a non-zero exit, never in a
traceback. Text that a program or an input file controls (error texts, entry points, ids) is
printed through ``terminal_safe``, so it cannot move the cursor or rewrite the screen.
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from arcjudge import __version__
from arcjudge.errors import UsageError
from arcjudge.harness.core.outputs import warn
from arcjudge.harness.core.store import StoreError
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import (
    BACKENDS,
    EXECUTORS,
    BackendUnavailable,
    describe_protections,
    make_sandbox,
    sandbox_for,
)
from arcjudge.sandbox.base import PooledSandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.tasks import SPLITS, TaskFormatError, load_task
from arcjudge.verifiers.sources import SourceError

DEFAULT_ENTRY_POINTS = ("transform", "solve", "verify", "p", "main")


def _add_docker_runtime(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--docker-runtime",
        default=None,
        metavar="NAME",
        help="OCI runtime of the docker backend's containers, e.g. runsc for gVisor "
        "(default: $ARCJUDGE_DOCKER_RUNTIME, else the Docker daemon's default)",
    )


def _add_backend(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="auto", choices=BACKENDS, help="sandbox backend")
    _add_docker_runtime(parser)
    parser.add_argument(
        "--workers", type=int, default=None, help="sandbox pool size (per node with ray)"
    )
    parser.add_argument(
        "--executor", default="local", choices=EXECUTORS, help="run here, or on a Ray cluster"
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="Ray cluster to join (default: auto if RAY_ADDRESS is set, else a local Ray)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arcjudge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"arcjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one program on one task's inputs, in the sandbox")
    run.add_argument("program", type=Path, help="a Python file")
    run.add_argument("--task", type=Path, required=True, help="an ARC task JSON file")
    run.add_argument(
        "--entrypoint",
        action="append",
        help="function to call (repeatable; default tried in order: "
        + ", ".join(DEFAULT_ENTRY_POINTS)
        + ")",
    )
    run.add_argument("--input-format", choices=("list", "tuple"), default="list")
    run.add_argument("--module-dir", action="append", default=[], type=Path)
    run.add_argument("--wall", type=float, default=DEFINITION_LIMITS.wall_seconds)
    run.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")
    _add_backend(run)

    check = sub.add_parser("selfcheck", help="try every attack on a backend; table of results")
    check.add_argument("--backend", default="auto", choices=BACKENDS)
    _add_docker_runtime(check)
    check.add_argument("--case", action="append", help="run only these cases (repeatable)")

    val = sub.add_parser("validate", help="decide which verifier sources are valid per task")
    val.add_argument("--tasks", type=Path, help="directory of ARC task JSON files")
    val.add_argument("--arcgen", type=Path, help="directory of ARC-GEN stable-set files")
    val.add_argument("--generator", help="KIND:PATH (arc-gen or re-arc) for fresh samples")
    val.add_argument("--samples", type=int, default=0, help="generator samples per task")
    val.add_argument(
        "--source", action="append", default=[], help="NAME=KIND:PATH (re-arc, golf, module)"
    )
    val.add_argument("--entrypoint", action="append", help="entry points for module sources")
    val.add_argument("--seed", type=int, default=0, help="sample i uses random.seed(SEED + i)")
    val.add_argument("--out", type=Path, help="output directory")
    val.add_argument("--sample", action="store_true", help="use the bundled sample")
    val.add_argument("--chunk", type=int, default=512, help="inputs per work item")
    val.add_argument("--wall", type=float, default=10.0, help="seconds per call")
    val.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")
    val.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")
    val.add_argument(
        "--quarantine-suspects",
        action="store_true",
        help="also count verifiers wrong only on suspect generator samples (valid_quarantined)",
    )
    val.add_argument(
        "--probe-samples", type=int, default=0, help="extra samples to compare verifiers on"
    )
    val.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_backend(val)

    score = sub.add_parser("score", help="score model-written Definition programs safely")
    from arcjudge.harness.score.cli import add_arguments

    add_arguments(score)
    _add_backend(score)

    mutate = sub.add_parser("mutate", help="corrupted verifiers and their near-miss pairs")
    from arcjudge.harness.mutate.cli import add_arguments as add_mutate_arguments

    add_mutate_arguments(mutate)
    _add_backend(mutate)

    dims = sub.add_parser("dimensions", help="instances and scores for the five dimensions")
    from arcjudge.harness.dimensions.cli import add_arguments as add_dimensions_arguments

    add_dimensions_arguments(dims, _add_backend)

    image = sub.add_parser("image", help="build the docker runtime image")
    image_sub = image.add_subparsers(dest="image_command", required=True)
    build = image_sub.add_parser("build", help="build it (debootstrap + docker import)")
    build.add_argument("--force", action="store_true", help="rebuild even if it exists")
    build.add_argument(
        "--dockerfile", action="store_true", help="use docker build (needs a registry)"
    )

    box = sub.add_parser("sandbox", help="manage sandbox leftovers")
    box_sub = box.add_subparsers(dest="sandbox_command", required=True)
    prune = box_sub.add_parser("prune", help="remove containers left by crashed runs")
    prune.add_argument("--all", action="store_true", help="remove every arcjudge container")

    return parser


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        source = args.program.read_bytes()
    except OSError as exc:
        raise UsageError(f"{args.program}: cannot read ({exc.strerror})") from None
    task = load_task(args.task)
    for d in args.module_dir:
        if not d.is_dir():
            raise UsageError(f"{d}: no such directory")
    try:
        program = Program(
            source,
            tuple(args.entrypoint or DEFAULT_ENTRY_POINTS),
            tuple(str(d) for d in args.module_dir),
            args.input_format,
            name=str(args.program),
        )
        limits = Limits(wall_seconds=args.wall)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    labelled = [(s, i, p) for s in SPLITS for i, p in enumerate(task.split(s))]
    module_dirs = tuple(str(d) for d in args.module_dir)
    with sandbox_for(args, module_dirs=module_dirs, warn=warn) as sandbox:
        result = sandbox.run(
            program, [p.input for _, _, p in labelled], limits, policy=PolicyMode(args.policy)
        )
    for finding in result.findings:
        print(f"policy: {terminal_safe(finding)}")
    if result.status is not ProgramStatus.LOADED:
        raise UsageError(f"{args.program}: {result.status.value}: {_last_line(result.error)}")
    print(f"entry point: {terminal_safe(str(result.entry_point))}")
    tally: dict[str, list[int]] = {}
    for (split, index, pair), r in zip(labelled, result.results, strict=True):
        right = r.status is Status.OK and pair.output is not None and r.grid == pair.output
        verdict = "correct" if right else ("-" if pair.output is None else "wrong")
        detail = "" if r.status is Status.OK else "  " + terminal_safe(_last_line(r.error))
        ms = r.seconds * 1000
        print(f"{split}[{index}]  {r.status.value:<14} {verdict:<8} {ms:8.1f} ms{detail}")
        counts = tally.setdefault(split, [0, 0])
        counts[0] += right
        counts[1] += 1
    print("  ".join(f"{s} {c}/{t}" for s, (c, t) in tally.items()))
    return 0


class _SafeFormatter(logging.Formatter):
    """A formatter whose output cannot control the terminal (see ``terminal_safe``)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record), keep_newlines=True)


def _last_line(text: str | None) -> str:
    # Cut at "\n" only: a "\r" (or another line boundary splitlines knows) is shown escaped.
    lines = (text or "").strip().split("\n")
    return lines[-1].strip()


def _cmd_selfcheck(args: argparse.Namespace) -> int:
    from arcjudge.sandbox.selfcheck import format_known, format_table, run_suite, variant_of

    made: list[PooledSandbox] = []

    def factory() -> PooledSandbox:
        made.append(
            make_sandbox(args.backend, workers=1, warn=warn, docker_runtime=args.docker_runtime)
        )
        return made[-1]

    factory().close()  # fail early and clearly if the backend is unusable
    names = set(args.case) if args.case else None
    outcomes = []
    for outcome in run_suite(factory, names):
        if not outcomes:
            print(describe_protections(variant_of(made[-1]), made[-1].protections()))
        outcomes.append(outcome)
        mark = "contained" if outcome.contained else "NOT CONTAINED"
        known = " (known difference here, see below)" if outcome.known else ""
        print(f"  {outcome.name}: {mark} ({outcome.seconds:.1f} s){known}", flush=True)
    print(format_table(outcomes))
    known = format_known(variant_of(made[-1])) if made else ""
    if known:
        print(known)
    failed = [o.name for o in outcomes if not o.contained]
    if failed:
        print(f"arcjudge: selfcheck failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"selfcheck: all {len(outcomes)} cases contained")
    return 0


def _cmd_image(args: argparse.Namespace) -> int:
    from arcjudge.sandbox.docker import IMAGES_DIR

    script = IMAGES_DIR / "build-rootfs.sh"
    if not script.is_file():
        raise UsageError("images/build-rootfs.sh not found: run from a checkout of arcjudge")
    if args.dockerfile:
        tag = subprocess.run(
            ["bash", str(script), "--print-tag"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if not tag:
            raise UsageError("could not compute the image tag (images/build-rootfs.sh --print-tag)")
        argv = ["docker", "build", "-t", tag, "--build-arg", f"TAG={tag.partition(':')[2]}"]
        argv.append(str(IMAGES_DIR))
    else:
        argv = ["bash", str(script)] + (["--force"] if args.force else [])
    code = subprocess.run(argv, check=False).returncode
    if code != 0:
        raise UsageError(f"image build failed (exit code {code}); see the messages above")
    return 0


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from arcjudge.sandbox.docker import DockerUnavailable, docker_client, prune

    try:
        removed = prune(docker_client(), everything=args.all)
    except DockerUnavailable as exc:
        raise UsageError(str(exc)) from None
    names = terminal_safe(", ".join(removed))
    print(f"removed {len(removed)} container(s){': ' + names if removed else ''}")
    return 0


def _log_warnings_to_stderr() -> None:
    """Show the library's warnings (e.g. missing sandbox protections) as one-liners."""
    logger = logging.getLogger("arcjudge")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_SafeFormatter("arcjudge: warning: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    signal.signal(signal.SIGTERM, _terminate)
    _log_warnings_to_stderr()
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "selfcheck":
            return _cmd_selfcheck(args)
        if args.command == "validate":
            from arcjudge.harness.validate.cli import cmd_validate

            return cmd_validate(args)
        if args.command == "score":
            from arcjudge.harness.score.cli import cmd_score

            return cmd_score(args)
        if args.command == "mutate":
            from arcjudge.harness.mutate.cli import cmd_mutate

            return cmd_mutate(args)
        if args.command == "dimensions":
            from arcjudge.harness.dimensions.cli import cmd_dimensions

            return cmd_dimensions(args)
        if args.command == "image":
            return _cmd_image(args)
        if args.command == "sandbox":
            return _cmd_sandbox(args)
        raise AssertionError(f"unhandled command {args.command!r}")
    except (UsageError, TaskFormatError, BackendUnavailable, SourceError, StoreError) as exc:
        print(f"arcjudge: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arcjudge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
