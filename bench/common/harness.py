"""The one place the benchmarks import ``arcjudge.harness`` internals from.

The other benchmarks drive the harness through its command line (``python -m
arcjudge.cli``); ``validate_full.py`` needs the API (to count the jobs sent to the
sandbox and to profile the harness), through these names only.
"""

from __future__ import annotations

from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import ValidateConfig, Validator, write_outputs

__all__ = ["ResultStore", "ValidateConfig", "Validator", "default_chunk", "write_outputs"]


def default_chunk() -> int:
    """``ValidateConfig.chunk``'s default (what ``arcjudge validate`` uses)."""
    from pathlib import Path

    return ValidateConfig(Path("."), sources=()).chunk
