"""One runner for every command: the sandbox and store lifecycle, atomic outputs.

A command is a :class:`Command`: its name, help line and argument adder (given to its
instance), a typed config built from the parsed arguments (:meth:`Command.configure`,
which reads the ``Namespace`` and never writes it), the live objects its run works on, made
from the config before anything opens (:meth:`Command.prepare`: inputs read, so bad input
fails first; a :class:`DirectCommand` runs on its config as it is), what it needs
(:meth:`Command.needs`: a sandbox, and with it which directories programs may import from,
a result store) and :meth:`Command.run`, which takes the prepared work and what it needs
and returns :class:`Outputs` (files, lines to print) without writing or printing anything
itself. :func:`perform` is the one place that prepares, opens the sandbox and the store,
closes them on every way out, and :func:`write_outputs` writes the files atomically; the
command line's ``execute`` (``commandline.py``) adds Ctrl-C (or SIGTERM: exit code 130 with
the resume hint) and the printing, the ``wrote ...`` line included. The public Python API
(:mod:`arcjudge`) runs the same commands through :func:`perform`, which prints nothing.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from arcjudge.harness.core.outputs import write_atomic
from arcjudge.sandbox.backends import SandboxOptions

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox

__all__ = [
    "STORE_NAME",
    "Command",
    "CommandRun",
    "DirectCommand",
    "Needs",
    "Outputs",
    "perform",
    "write_outputs",
]

ConfigT = TypeVar("ConfigT")
PreparedT = TypeVar("PreparedT")
WorkT = TypeVar("WorkT")

ArgumentAdder = Callable[[argparse.ArgumentParser], None]
"""A function that adds a command's options to its sub-parser."""


@dataclass(frozen=True)
class Needs:
    """What a command's run needs the runner to open for it (and close after it).

    Attributes:
        sandbox: The sandbox to open (``None``: the command runs no program).
        module_dirs: Directories the sandbox's programs may import from.
        store: The result store's file (``None``: no store).
    """

    sandbox: SandboxOptions | None = None
    module_dirs: tuple[str, ...] = ()
    store: Path | None = None


@dataclass(frozen=True)
class CommandRun(Generic[WorkT]):
    """A workflow's config with what every command that writes a directory adds to it.

    Attributes:
        config: The workflow's own config (``ValidateConfig``, ``ScoreConfig``, ...).
        out: The output directory.
        store: The result cache (``None``: ``OUT/cache.sqlite``).
        sandbox: The sandbox to run the programs in.
        task_set: The task set's record (``--tasks`` a P-ARC export or task folders).
        progress: Show a progress bar on stderr.
    """

    config: WorkT
    out: Path
    store: Path | None = None
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    task_set: dict[str, Any] | None = None
    progress: bool = False

    def needs(self, module_dirs: tuple[str, ...]) -> Needs:
        """The sandbox (its programs importing from ``module_dirs``) and the store."""
        return Needs(self.sandbox, module_dirs, self.store or self.out / STORE_NAME)


STORE_NAME = "cache.sqlite"
"""The result store's file name in a command's output directory (without ``--store``)."""


@dataclass(frozen=True)
class Outputs:
    """What a command made: files to write into ``out_dir`` and lines to print.

    Attributes:
        out_dir: Where the files go (``None``: the command writes no file).
        files: Each file's path relative to ``out_dir`` (a name, or ``dir/name``) and text;
            written atomically (each to a temporary name, then renamed), in this order.
        lines: Printed to stdout (made terminal-safe) before the ``wrote`` line.
        warnings: One-line warnings, printed to stderr (before ``lines``).
        stderr: Lines printed to stderr as they are, after ``lines`` (notes, a failure).
        wrote: What the ``wrote`` line names after ``OUT_DIR/`` (default: the files' names
            joined by ", "); ``""`` for no ``wrote`` line.
        exit_code: The command's exit code.
        result: The command's typed result (for the Python API), or ``None``.
    """

    out_dir: Path | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    wrote: str | None = None
    warnings: tuple[str, ...] = ()
    stderr: tuple[str, ...] = ()
    exit_code: int = 0
    result: object = None


class Command(ABC, Generic[ConfigT, PreparedT]):
    """A subcommand: its arguments, its typed config, its prepared work, needs and run.

    A subclass implements :meth:`configure`, :meth:`prepare` (a :class:`DirectCommand`
    has it) and :meth:`run` (and :meth:`needs` when it runs programs or keeps results);
    its instance is given the name, help line and argument adder
    (``BuildCommand("build", "evaluation instances ...", build_arguments)``).

    Args:
        name: The sub-command's name.
        help: Its one-line help (``arcjudge --help`` lists it).
        arguments: Adds its options to its sub-parser.
    """

    def __init__(self, name: str, help: str, arguments: ArgumentAdder) -> None:
        self.name = name
        self.help = help
        self._arguments = arguments

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's options to its sub-parser (the argument adder it was given)."""
        self._arguments(parser)

    @abstractmethod
    def configure(self, args: argparse.Namespace) -> ConfigT:
        """The typed config the parsed arguments ask for (``args`` is only read).

        Raises:
            UsageError: A bad option or input (one line naming it).
        """

    @abstractmethod
    def prepare(self, config: ConfigT, warn: Callable[[str], None]) -> PreparedT:
        """The live objects the run works on, its inputs read; before anything opens.

        Args:
            config: The config.
            warn: Receives one-line warnings about the inputs.

        Raises:
            InputError: An input file cannot be read.
        """

    def needs(self, work: PreparedT) -> Needs:
        """What :meth:`run` needs opened (default: nothing)."""
        return Needs()

    @abstractmethod
    def run(self, work: PreparedT, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Do the work; return what to write and print (write and print nothing here)."""


class DirectCommand(Command[ConfigT, ConfigT]):
    """A command whose run works on its config as it is (nothing to prepare)."""

    def prepare(self, config: ConfigT, warn: Callable[[str], None]) -> ConfigT:
        """The config itself."""
        return config


def perform(
    command: Command[ConfigT, PreparedT],
    config: ConfigT,
    warn: Callable[[str], None] | None = None,
    report: Callable[[str], None] | None = None,
) -> Outputs:
    """Prepare ``config``, open what the work needs, run it, close everything: no file, no print.

    Args:
        command: The command.
        config: Its config.
        warn: Receives the inputs' and the sandbox's one-line warnings (e.g. ``auto``
            falling back).
        report: Receives the sandbox's closing lines (``ray``: one per node).

    Returns:
        The command's outputs (not yet written).
    """
    from arcjudge.harness.core.store import ResultStore

    work = command.prepare(config, warn or _ignore)
    needs = command.needs(work)
    with ExitStack() as stack:
        store = None
        if needs.store is not None:
            store = ResultStore(needs.store)
            stack.callback(store.close)
        if needs.sandbox is None:
            return command.run(work, None, store)
        sandbox = needs.sandbox.make(needs.module_dirs, warn=warn, report=report)
        with sandbox:
            outputs = command.run(work, sandbox, store)
        return outputs


def _ignore(message: str) -> None:
    """A ``warn`` that drops the warning."""


def write_outputs(outputs: Outputs) -> None:
    """Write ``outputs.files`` atomically, grouped by sub-directory, in their order."""
    if outputs.out_dir is None or not outputs.files:
        return
    groups: dict[Path, dict[str, str]] = {}
    for name, text in outputs.files.items():
        path = outputs.out_dir / name
        groups.setdefault(path.parent, {})[path.name] = text
    for directory, files in groups.items():
        write_atomic(directory, files)
