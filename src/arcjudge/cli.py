"""The ``arcjudge`` command line.

Every user mistake (missing file, bad JSON, unknown backend, a program without the named
entry point) ends in one line ``arcjudge: error: ...`` and a non-zero exit, never in a
traceback. Text that a program or an input file controls (error texts, entry points, ids) is
printed through ``terminal_safe``, so it cannot move the cursor or rewrite the screen.
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge import __version__
from arcjudge.errors import ArcjudgeError, UsageError
from arcjudge.harness.core.commandline import (
    add_backend_arguments,
    add_docker_runtime_argument,
    warn,
)
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.backends import (
    BackendUnavailable,
    describe_protections,
    make_sandbox,
    sandbox_for,
)
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.registry import backend_names
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.tasks import load_task
from arcjudge.vocabulary import RUN_ENTRY_POINTS, TASK_SPLITS

if TYPE_CHECKING:
    from arcjudge.sandbox.selfcheck import CaseOutcome


@dataclass(frozen=True)
class _Command:
    """A subcommand: its help line, what adds its arguments, what runs it (exit code)."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _commands() -> dict[str, _Command]:
    """Every subcommand by name: this module's own, then one per harness workflow."""
    from arcjudge.harness.analyze import cli as analyze
    from arcjudge.harness.dimensions import cli as dimensions
    from arcjudge.harness.mutate import cli as mutate
    from arcjudge.harness.score import cli as score
    from arcjudge.harness.validate import cli as validate

    # `dimensions analyze` is a workflow of its own (harness/analyze): added here to the
    # sub-commands of `dimensions`, which never imports it.
    def add_dimensions_arguments(parser: argparse.ArgumentParser) -> None:
        sub = dimensions.add_arguments(parser)
        analyze.add_arguments(sub.add_parser("analyze", help=analyze.HELP))

    def cmd_dimensions(args: argparse.Namespace) -> int:
        if args.dimensions_command == "analyze":
            return analyze.cmd_analyze(args)
        return dimensions.cmd_dimensions(args)

    return {
        "run": _Command(
            "run one program on one task's inputs, in the sandbox", _add_run_arguments, _cmd_run
        ),
        "selfcheck": _Command(
            "try every attack on a backend; table of results",
            _add_selfcheck_arguments,
            _cmd_selfcheck,
        ),
        "validate": _Command(
            "decide which verifier sources are valid per task",
            validate.add_arguments,
            validate.cmd_validate,
        ),
        "score": _Command(
            "score model-written Definition programs safely", score.add_arguments, score.cmd_score
        ),
        "mutate": _Command(
            "corrupted verifiers and their near-miss pairs", mutate.add_arguments, mutate.cmd_mutate
        ),
        "dimensions": _Command(
            "instances and scores for the five dimensions",
            add_dimensions_arguments,
            cmd_dimensions,
        ),
        "image": _Command("build the docker runtime image", _add_image_arguments, _cmd_image),
        "sandbox": _Command("manage sandbox leftovers", _add_sandbox_arguments, _cmd_sandbox),
    }


def _parser(commands: dict[str, _Command] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arcjudge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"arcjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in (commands or _commands()).items():
        command.add_arguments(sub.add_parser(name, help=command.help))
    return parser


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("program", type=Path, help="a Python file")
    run.add_argument("--task", type=Path, required=True, help="an ARC task JSON file")
    run.add_argument(
        "--entrypoint",
        action="append",
        help="function to call (repeatable; default tried in order: "
        + ", ".join(RUN_ENTRY_POINTS)
        + ")",
    )
    run.add_argument("--input-format", choices=("list", "tuple"), default="list")
    run.add_argument("--module-dir", action="append", default=[], type=Path)
    run.add_argument("--wall", type=float, default=DEFINITION_LIMITS.wall_seconds)
    run.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")
    add_backend_arguments(run)


def _add_selfcheck_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument("--backend", default="auto", choices=backend_names())
    add_docker_runtime_argument(check)
    check.add_argument("--case", action="append", help="run only these cases (repeatable)")


def _add_image_arguments(image: argparse.ArgumentParser) -> None:
    image_sub = image.add_subparsers(dest="image_command", required=True)
    build = image_sub.add_parser("build", help="build it (debootstrap + docker import)")
    build.add_argument("--force", action="store_true", help="rebuild even if it exists")
    build.add_argument(
        "--dockerfile", action="store_true", help="use docker build (needs a registry)"
    )
    build.add_argument(
        "--print-tag",
        action="store_true",
        help="only print the image reference the docker backend expects (needs no root, no docker)",
    )


def _add_sandbox_arguments(box: argparse.ArgumentParser) -> None:
    box_sub = box.add_subparsers(dest="sandbox_command", required=True)
    prune = box_sub.add_parser("prune", help="remove containers left by crashed runs")
    prune.add_argument("--all", action="store_true", help="remove every arcjudge container")


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
            tuple(args.entrypoint or RUN_ENTRY_POINTS),
            tuple(str(d) for d in args.module_dir),
            args.input_format,
            name=str(args.program),
        )
        limits = Limits(wall_seconds=args.wall)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    labelled = [(s, i, p) for s in TASK_SPLITS for i, p in enumerate(task.split(s))]
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

    made: list[Sandbox] = []

    def factory(module_dirs: tuple[str, ...] = ()) -> Sandbox:
        made.append(
            make_sandbox(
                args.backend, workers=1, warn=warn, docker_runtime=args.docker_runtime,
                module_dirs=module_dirs,
            )
        )  # fmt: skip
        return made[-1]

    factory().close()  # fail early and clearly if the backend is unusable
    names = set(args.case) if args.case else None
    outcomes: list[CaseOutcome] = []
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
    from arcjudge.sandbox.image import ImageError, build_image, image_reference, overriding_image

    if args.print_tag and (args.force or args.dockerfile):
        raise UsageError("--print-tag builds nothing: it takes neither --force nor --dockerfile")
    try:
        reference = None
        if args.print_tag:
            reference = image_reference()
            print(reference)
        else:
            code = build_image(force=args.force, dockerfile=args.dockerfile)
            if code != 0:
                raise UsageError(f"image build failed (exit code {code}); see the messages above")
        other = overriding_image(reference)
    except ImageError as exc:
        raise UsageError(str(exc)) from None
    if other:
        print(
            f"arcjudge: note: ARCJUDGE_IMAGE={terminal_safe(other)} is set: the docker backend "
            "uses that image, not the one built from these inputs",
            file=sys.stderr,
        )
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


# The harness allocates millions of small acyclic objects (grids are tuples of tuples of
# ints, results are records): with the default thresholds (700, 10, 10) the cyclic
# collector kept traversing them, about a tenth of the harness's CPU in ``score``
# (bench/README.md, issue 18). Cycles are still collected, in fewer, later passes.
GC_THRESHOLDS = (50_000, 20, 20)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    signal.signal(signal.SIGTERM, _terminate)
    gc.set_threshold(*GC_THRESHOLDS)
    _log_warnings_to_stderr()
    commands = _commands()
    args = _parser(commands).parse_args(argv)
    try:
        return commands[args.command].run(args)
    except (ArcjudgeError, BackendUnavailable) as exc:
        print(f"arcjudge: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arcjudge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
