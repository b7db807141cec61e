"""Command-line plumbing the workflows' ``cli.py`` modules share.

The options every sandboxed command takes (backend, workers, executor), the warning and
interruption messages, and the one place that turns a library's :class:`ArcjudgeError` into
``arcjudge: error: ...``. Library modules never import this: they raise and return; only
the ``cli.py`` modules print.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arcjudge.errors import UsageError
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import EXECUTORS
from arcjudge.sandbox.registry import backend_names
from arcjudge.sandbox.types import Limits

__all__ = [
    "INTERRUPTED",
    "Progress",
    "add_backend_arguments",
    "add_docker_runtime_argument",
    "limits_from",
    "require_directories",
    "require_files",
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


def require_directories(*options: tuple[str, Path | None]) -> None:
    """Check that each given ``(flag, path)`` names a directory (``None``: not given).

    Raises:
        UsageError: ``FLAG PATH: no such directory`` for the first one that does not.
    """
    _require(options, Path.is_dir, "directory")


def require_files(*options: tuple[str, Path | None]) -> None:
    """Check that each given ``(flag, path)`` names a file (``None``: not given).

    Raises:
        UsageError: ``FLAG PATH: no such file`` for the first one that does not.
    """
    _require(options, Path.is_file, "file")


def _require(
    options: tuple[tuple[str, Path | None], ...], exists: Callable[[Path], bool], what: str
) -> None:
    for flag, path in options:
        if path is not None and not exists(path):
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
