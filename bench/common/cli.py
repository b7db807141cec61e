"""Driving the harness through its command line, as a user would."""

from __future__ import annotations

import subprocess
import sys

from common.measure import now


def arcjudge(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``python -m arcjudge.cli ARGV`` (output captured).

    Returns:
        The finished process and its wall time in seconds.
    """
    start = now()
    proc = subprocess.run(
        [sys.executable, "-m", "arcjudge.cli", *argv], capture_output=True, text=True, check=False
    )
    return proc, now() - start


def arcjudge_or_exit(argv: list[str]) -> tuple[str, float]:
    """``arcjudge(argv)``; on a failure print the ends of its output and exit 1.

    Returns:
        Its standard output and wall time in seconds.
    """
    proc, seconds = arcjudge(argv)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        raise SystemExit(1)
    return proc.stdout, seconds
