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
from functools import partial
from typing import Any

from arcjudge import __version__
from arcjudge.errors import ArcjudgeError
from arcjudge.harness.core.commandline import execute
from arcjudge.harness.core.runner import Command
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.registry import BackendUnavailable


@dataclass(frozen=True)
class _Entry:
    """A subcommand: its help line, what adds its arguments, what runs it (exit code)."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _entry(command: Command[Any, Any]) -> _Entry:
    """A command run by the shared runner (``execute``)."""
    return _Entry(command.help, command.add_arguments, partial(execute, command))


def _commands() -> dict[str, _Entry]:
    """Every subcommand by name, in the order ``--help`` lists them."""
    from arcjudge.harness.analyze import cli as analyze
    from arcjudge.harness.dimensions import cli as dimensions
    from arcjudge.harness.mutate import cli as mutate
    from arcjudge.harness.sandboxing import cli as sandboxing
    from arcjudge.harness.score import cli as score
    from arcjudge.harness.validate import cli as validate

    # `dimensions analyze` is a workflow of its own (harness/analyze): added here to the
    # sub-commands of `dimensions`, which never imports it.
    def add_dimensions_arguments(parser: argparse.ArgumentParser) -> None:
        sub = dimensions.add_arguments(parser)
        analyze.COMMAND.add_arguments(sub.add_parser("analyze", help=analyze.HELP))

    def cmd_dimensions(args: argparse.Namespace) -> int:
        if args.dimensions_command == "analyze":
            return execute(analyze.COMMAND, args)
        return execute(dimensions.COMMANDS[args.dimensions_command], args)

    return {
        "run": _entry(sandboxing.RUN),
        "selfcheck": _entry(sandboxing.SELFCHECK),
        "validate": _entry(validate.COMMAND),
        "score": _entry(score.COMMAND),
        "mutate": _entry(mutate.COMMAND),
        "dimensions": _Entry(
            "instances and scores for the five dimensions",
            add_dimensions_arguments,
            cmd_dimensions,
        ),
        "image": _entry(sandboxing.IMAGE),
        "sandbox": _entry(sandboxing.SANDBOX),
    }


def _parser(commands: dict[str, _Entry] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arcjudge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"arcjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in (commands or _commands()).items():
        command.add_arguments(sub.add_parser(name, help=command.help))
    return parser


class _SafeFormatter(logging.Formatter):
    """A formatter whose output cannot control the terminal (see ``terminal_safe``)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record), keep_newlines=True)


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
