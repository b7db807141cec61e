"""One-off ``docker run`` commands of the benchmarks (labelled, no network, removed)."""

from __future__ import annotations

import os
import socket
import subprocess

LABEL = "arcjudge"  # the label every arcjudge container carries (as the docker backend)


def run_argv(image: str, name: str, kind: str, *options: str, stdin: bool = False) -> list[str]:
    """``docker run --rm [-i] --network none --name NAME`` with the bench labels, then IMAGE.

    Args:
        image: The image to run.
        name: The container's name (for ``docker rm -f`` after a timeout).
        kind: The ``arcjudge.bench`` label's value (what ran it).
        options: More ``docker run`` options (volumes, ``--user``), before the image.
        stdin: Keep stdin open (``-i``).

    Returns:
        The command up to and including the image; append the command to run in it.
    """
    return [
        "docker", "run", "--rm", *(["-i"] if stdin else []), "--network", "none",
        "--name", name, "--label", f"{LABEL}=1", "--label", f"{LABEL}.bench={kind}",
        "--label", f"{LABEL}.owner={socket.gethostname()}:{os.getpid()}", *options, image,
    ]  # fmt: skip


def remove(name: str) -> None:
    """``docker rm -f NAME`` (after a timeout or a failure), quietly."""
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
