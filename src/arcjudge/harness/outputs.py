"""Writing a command's output files: all at the end, each atomically."""

from __future__ import annotations

import os
import sys
from pathlib import Path

INTERRUPTED = "arcjudge: interrupted; finished work is saved, rerun the same command to resume"


def write_atomic(out_dir: Path, files: dict[str, str]) -> None:
    """Write each file to a temporary name, then rename it into place.

    An interrupted run therefore never leaves a half-written output behind.

    Args:
        out_dir: The output directory (created if missing).
        files: File name -> text.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        tmp = out_dir / f".{name}.tmp-{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out_dir / name)


def warn(message: str) -> None:
    """Print a one-line warning to stderr."""
    print(f"arcjudge: warning: {message}", file=sys.stderr)
