"""Command-line plumbing the workflows' ``cli.py`` modules share.

The options every sandboxed command takes (backend, workers, executor), the warning and
interruption messages, and the one place that turns a library's :class:`ArcjudgeError` into
``arcjudge: error: ...``. Library modules never import this: they raise and return; only
the ``cli.py`` modules print.
"""

from __future__ import annotations

import argparse
import sys

from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import EXECUTORS
from arcjudge.sandbox.registry import backend_names

__all__ = ["INTERRUPTED", "add_backend_arguments", "add_docker_runtime_argument", "warn"]

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
