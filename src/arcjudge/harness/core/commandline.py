"""Command-line plumbing the workflows' ``cli.py`` modules share.

The options every sandboxed command takes (backend, workers, executor) and those several
commands share (``--tasks``, ``--arcgen``, ``--samples``, ``--policy``, ``--store``, the
``--wall``/``--out``/``--store``/``--no-progress`` tail), ``--tasks`` as any
task set (:func:`use_task_set`: materialized, with the set's defaults), the warning and
interruption messages, and the one place that turns a library's :class:`ArcjudgeError` into
``arcjudge: error: ...``. Library modules never import this: they raise and return; only
the ``cli.py`` modules print.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError, UsageError
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES
from arcjudge.harness.core.runner import (
    Command,
    CommandRun,
    ConfigT,
    PreparedT,
    WorkT,
    perform,
    write_outputs,
)
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import EXECUTORS, SandboxOptions
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.registry import backend_names
from arcjudge.sandbox.types import Limits
from arcjudge.tasksets import EXPORT_SUFFIXES, detect_format, read_task_set
from arcjudge.vocabulary import TASK_SET_SOURCE, TaskSetFormat

__all__ = [
    "INTERRUPTED",
    "Progress",
    "TaskSetChoice",
    "add_arcgen_argument",
    "add_backend_arguments",
    "add_docker_runtime_argument",
    "add_policy_argument",
    "add_run_arguments",
    "add_samples_argument",
    "add_store_argument",
    "add_tasks_argument",
    "command_run",
    "execute",
    "limits_from",
    "require_directories",
    "require_files",
    "sandbox_options",
    "use_task_set",
    "warn",
]


INTERRUPTED = "arcjudge: interrupted; finished work is saved, rerun the same command to resume"
"""What a command prints when Ctrl-C or SIGTERM stops it mid-run."""


def warn(message: str) -> None:
    """Print a one-line warning to stderr (control characters shown as escapes)."""
    print(f"arcjudge: warning: {terminal_safe(message)}", file=sys.stderr)


def add_docker_runtime_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--docker-runtime NAME`` (the docker backend's OCI runtime, e.g. gVisor's runsc)."""
    parser.add_argument(
        "--docker-runtime",
        default=None,
        metavar="NAME",
        help="OCI runtime of the docker backend's containers, e.g. runsc for gVisor "
        "(default: $ARCJUDGE_DOCKER_RUNTIME, else the Docker daemon's default)",
    )


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the sandbox options: ``--backend``, ``--docker-runtime``, ``--workers``, Ray's."""
    parser.add_argument(
        "--backend", default="auto", choices=backend_names(), help="sandbox backend"
    )
    add_docker_runtime_argument(parser)
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


TASKS_HELP = "ARC task JSON directory, task folders or a P-ARC export"
"""``--tasks``' help: every command that reads tasks takes any task set."""


def add_tasks_argument(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add ``--tasks`` (an ARC JSON directory, task folders or a P-ARC export)."""
    parser.add_argument("--tasks", type=Path, required=required, help=TASKS_HELP)


def add_arcgen_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--arcgen DIR`` (ARC-GEN's stable-set files)."""
    parser.add_argument("--arcgen", type=Path, help="directory of ARC-GEN stable-set files")


def add_samples_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--samples N`` (generator samples per task; the default named in its help)."""
    parser.add_argument(
        "--samples",
        type=int,
        help=f"generator samples per task (default {DEFAULT_SAMPLES} with --generator)",
    )


def add_policy_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--policy`` (the static policy's mode, ``warn`` by default)."""
    parser.add_argument("--policy", choices=[m.value for m in PolicyMode], default="warn")


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--store FILE`` (the result cache, by default ``OUT/cache.sqlite``)."""
    parser.add_argument("--store", type=Path, help="result cache (default: OUT/cache.sqlite)")


def add_run_arguments(parser: argparse.ArgumentParser, *, wall_help: str) -> None:
    """Add the options that end a ``dimensions`` command writing a directory.

    ``--wall`` (10 s, its help ``wall_help``), ``--out``, ``--store``, ``--no-progress``
    and the sandbox options (:func:`add_backend_arguments`), in that order.
    """
    parser.add_argument("--wall", type=float, default=10.0, help=wall_help)
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    add_store_argument(parser)
    parser.add_argument("--no-progress", action="store_true")
    add_backend_arguments(parser)


def sandbox_options(args: argparse.Namespace) -> SandboxOptions:
    """The sandbox the options of :func:`add_backend_arguments` choose (``args`` is only read).

    Options a command does not have (``run`` has no ``--executor`` of its own, say) take
    their defaults.
    """
    defaults = SandboxOptions()
    return SandboxOptions(
        backend=getattr(args, "backend", defaults.backend),
        workers=getattr(args, "workers", defaults.workers),
        executor=getattr(args, "executor", defaults.executor),
        ray_address=getattr(args, "ray_address", defaults.ray_address),
        docker_runtime=getattr(args, "docker_runtime", defaults.docker_runtime),
    )


def command_run(
    config: WorkT, args: argparse.Namespace, task_set: dict[str, Any] | None = None
) -> CommandRun[WorkT]:
    """A workflow's config with the options every writing command has (``args`` only read).

    ``--out``, ``--store``, the sandbox options and ``--no-progress``.
    """
    return CommandRun(
        config=config,
        out=args.out,
        store=args.store,
        sandbox=sandbox_options(args),
        task_set=task_set,
        progress=not args.no_progress,
    )


def require_directories(*options: tuple[str, Path | None]) -> None:
    """Check that each given ``(flag, path)`` names a directory (``None``: not given).

    Raises:
        UsageError: ``FLAG PATH: no such directory`` for the first one that does not.
    """
    _require(options, Path.is_dir, "directory")


def require_files(*options: tuple[str, Path | None]) -> None:
    """Check that each given ``(flag, path)`` names a file (``None``: not given).

    Raises:
        UsageError: ``FLAG PATH: no such file`` for the first one that does not, or
            ``FLAG PATH: not a regular file`` (a FIFO, a device, a directory) for one that
            is something else.
    """
    _require(options, Path.is_file, "file")


def _require(
    options: tuple[tuple[str, Path | None], ...], exists: Callable[[Path], bool], what: str
) -> None:
    for flag, path in options:
        if path is not None and not exists(path):
            if path.exists() or path.is_symlink():  # something else is there
                kind = "regular file" if what == "file" else what
                raise UsageError(f"{flag} {path}: not a {kind}")
            raise UsageError(f"{flag} {path}: no such {what}")


def limits_from(wall_seconds: float, total_seconds: float | None = None) -> Limits:
    """The limits a command's ``--wall`` (and budget) ask for, the rest at their defaults.

    Raises:
        UsageError: A value the limits refuse (the message names the limit).
    """
    try:
        if total_seconds is None:
            return Limits(wall_seconds=wall_seconds)
        return Limits(wall_seconds=wall_seconds, total_seconds=total_seconds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class Progress:
    """A progress bar on stderr, or nothing with ``--no-progress``; use as a context manager.

    Args:
        total: Units of work in all.
        unit: What one unit is ("task", "program").
        enabled: ``False`` gives a bar that shows nothing.
    """

    def __init__(self, total: int, unit: str, enabled: bool = True) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit=unit, file=sys.stderr)

    def update(self, count: int = 1) -> None:
        """Advance by ``count`` units."""
        if self._bar is not None:
            self._bar.update(count)

    def close(self) -> None:
        """Finish the bar (it stays on screen)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


TASKSET_DIR = "taskset"
"""Where in a command's output directory a task set is materialized."""


@dataclass(frozen=True)
class TaskSetChoice:
    """``--tasks`` as an ARC JSON directory, with the defaults the task set fills in.

    Attributes:
        tasks: The ARC JSON task directory to read (the one given, or the task set's
            materialized copy).
        source: The ``--source`` specs: those given, else the set's verifiers when asked.
        generator: ``--generator``: the one given, else the set's generators when asked.
        human_errors: ``--human-errors``: the one given, else the set's when asked.
        record: ``None`` for an ARC JSON directory, else the record for manifests and
            summaries: the set's format, path, digest, counts, rows left out and
            ``defaults`` (the flags it filled in).
    """

    tasks: Path
    source: tuple[str, ...] = ()
    generator: str | None = None
    human_errors: Path | None = None
    record: dict[str, Any] | None = None


def use_task_set(
    tasks: Path,
    out_dir: Path,
    *,
    source: Sequence[str] | None = None,
    generator: str | None = None,
    human_errors: Path | None = None,
    fill: Collection[str] = (),
) -> TaskSetChoice:
    """Turn ``--tasks`` into an ARC JSON directory, with the task set's defaults.

    An ARC JSON directory is left as it is. A P-ARC export or a directory of task folders
    is read, written once into ``OUT_DIR/taskset/<digest>/``
    (:mod:`arcjudge.harness.core.materialize`) and its task directory chosen; rows or
    folders left out are warned about, one line each. Each default named in ``fill``
    (``source``, ``generator``, ``human_errors``) that the command line leaves open
    (the value given is empty) is then the set's, said in one line.

    Args:
        tasks: ``--tasks``.
        out_dir: The command's output directory.
        source: ``--source`` as given.
        generator: ``--generator`` as given.
        human_errors: ``--human-errors`` as given.
        fill: Which of those the task set may fill in.

    Returns:
        The choice: what to read, and each option's value.

    Raises:
        UsageError: The set has no usable task.
        InputError: The file or directory is not a task set (see
            :func:`arcjudge.tasksets.detect_format`).
    """
    from arcjudge.harness.core.materialize import materialize

    given = TaskSetChoice(Path(tasks), tuple(source or ()), generator, human_errors)
    path = Path(tasks)
    if not path.exists() and path.suffix.lower() not in EXPORT_SUFFIXES:
        return given  # the command's own "no such directory"
    try:
        if detect_format(path) is TaskSetFormat.ARC_JSON:
            return given
    except InputError:
        if path.is_dir():
            return given  # the command's own "no *.json task files"
        raise
    task_set = read_task_set(path)
    assert task_set is not None
    for item in task_set.left_out:
        warn(f"--tasks {path}: left out {item.message}")
    if not task_set.entries:
        raise UsageError(f"--tasks {path}: no usable task ({len(task_set.left_out)} left out)")
    made = materialize(task_set, out_dir / TASKSET_DIR)
    counts = made.description["counts"]
    parts = ", ".join(
        f"{counts[key]} {label}"
        for key, label in (
            ("with_verifier", "with a verifier"),
            ("with_generator", "with a generator"),
            ("with_stable_pairs", "with stable pairs"),
            ("with_human_errors", "with human errors"),
        )
    )
    left = f", {counts['left_out']} left out" if counts["left_out"] else ""
    print(terminal_safe(f"--tasks {path}: {task_set.format.value}, {counts['tasks']} task(s) "
                        f"({parts}){left}; as ARC task files in {made.root}"))  # fmt: skip
    defaults: dict[str, str] = {}
    chosen = dataclasses.replace(given, tasks=made.tasks_dir)
    if "source" in fill and not given.source and made.verifiers_dir is not None:
        defaults["source"] = f"{TASK_SET_SOURCE}=module:{made.verifiers_dir}"
        chosen = dataclasses.replace(chosen, source=(defaults["source"],))
    if "generator" in fill and given.generator is None and made.generators_dir is not None:
        defaults["generator"] = f"arc-gen:{made.generators_dir}"
        chosen = dataclasses.replace(chosen, generator=defaults["generator"])
    wanted = "human_errors" in fill and given.human_errors is None
    if wanted and made.human_errors_file is not None:
        defaults["human_errors"] = str(made.human_errors_file)
        chosen = dataclasses.replace(chosen, human_errors=made.human_errors_file)
    for flag, value in defaults.items():
        print(terminal_safe(f"using the task set's {flag.replace('_', ' ')}: "
                            f"--{flag.replace('_', '-')} {value}"))  # fmt: skip
    return dataclasses.replace(chosen, record={**made.record(), "defaults": defaults})


def execute(command: Command[ConfigT, PreparedT], args: argparse.Namespace) -> int:
    """Run ``command`` from the command line: config, run, write, print; the exit code.

    Ctrl-C or SIGTERM (raised as ``KeyboardInterrupt``) during the run or the writing
    prints :data:`INTERRUPTED` and gives 130: finished work is in the store, and no output
    file is ever half-written.
    """
    config = command.configure(args)
    try:
        outputs = perform(command, config, warn, report=print)
        write_outputs(outputs)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    for message in outputs.warnings:
        warn(message)
    for line in outputs.lines:
        print(terminal_safe(line, keep_newlines=True))
    sys.stdout.flush()
    for line in outputs.stderr:
        print(terminal_safe(line, keep_newlines=True), file=sys.stderr)
    if outputs.out_dir is not None and outputs.wrote != "":
        listed = outputs.wrote if outputs.wrote is not None else ", ".join(outputs.files)
        print(f"wrote {terminal_safe(str(outputs.out_dir))}/{terminal_safe(listed)}")
    return outputs.exit_code
