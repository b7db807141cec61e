"""Driving the harness through its command line, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

from common.measure import now


def arcjudge(
    argv: list[str], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``python -m arcjudge.cli ARGV`` (output captured).

    Args:
        argv: The command line after ``arcjudge``.
        env: Environment variables to set for it (on top of this process's).

    Returns:
        The finished process and its wall time in seconds.
    """
    start = now()
    proc = subprocess.run(
        [sys.executable, "-m", "arcjudge.cli", *argv], capture_output=True, text=True,
        check=False, env={**os.environ, **(env or {})},
    )  # fmt: skip
    return proc, now() - start


def arcjudge_or_exit(argv: list[str], env: dict[str, str] | None = None) -> tuple[str, float]:
    """``arcjudge(argv, env)``; on a failure print the ends of its output and exit 1.

    Returns:
        Its standard output and wall time in seconds.
    """
    proc, seconds = arcjudge(argv, env)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        raise SystemExit(1)
    return proc.stdout, seconds
