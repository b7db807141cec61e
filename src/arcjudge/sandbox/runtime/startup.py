"""What a supervisor does once, at start: pin itself to a CPU, preload modules, scrub.

Stdlib only, imported by bare name beside ``runner.py`` (nothing here may import arcjudge).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
if TYPE_CHECKING:
    from .removal import remove_tree
else:
    from removal import remove_tree
del sys.path[0]

DEFAULT_PRELOAD = (
    "re",
    "math",
    "itertools",
    "functools",
    "collections",
    "copy",
    "random",
    "heapq",
    "bisect",
    "operator",
    "string",
    "typing",
    "dataclasses",
    "fractions",
    "numpy",
)
"""Modules the supervisor imports before forking the zygote (``--preload`` replaces them)."""


def scrub(directories: tuple[str, ...]) -> None:
    """Delete everything inside the writable directories, so the next program sees none of it.

    Never raises: what a program left must not stop the supervisor.
    """
    for directory in directories:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(directory, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    remove_tree(path)
                else:
                    os.unlink(path)
            except Exception:
                pass


def preload(names: list[str]) -> list[str]:
    """Import each of ``names`` now (before the zygote forks); the ones that loaded."""
    loaded = []
    for name in names:
        try:
            __import__(name)
            loaded.append(name)
        except Exception:
            continue
    return loaded


def pin_to_slot(slot: int) -> int | None:
    """Pin this process to the ``slot``-th CPU (modulo) of those it may use.

    Called first thing, before any import starts a thread and before the zygote is
    forked, so every thread and program after it inherits the CPU.

    Returns:
        The CPU, or ``None`` where affinity cannot be set (not Linux, or refused).
    """
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        allowed = sorted(os.sched_getaffinity(0))
        cpu = allowed[slot % len(allowed)]
        os.sched_setaffinity(0, {cpu})
    except (OSError, ValueError, IndexError):
        return None
    return cpu
