"""Task sets: what ``--tasks`` names, told apart and read (``docs/task-sets.md``).

Formats (:class:`~arcjudge.vocabulary.TaskSetFormat`): a directory of ARC task JSON files
(ARC-AGI-1, ARC-AGI-2, Kaggle's with ``arc-gen``: the workflows read it as it is), P-ARC's
tabular export (CSV or Parquet, :mod:`arcjudge.tasksets.parc`) and task folders
(:mod:`arcjudge.tasksets.folders`). The latter two are read in full into a
:class:`TaskSet`, every task with its demonstrations, test pairs, stable pairs, verifier,
generator and human errors; ``arcjudge.harness.core.materialize`` writes such a set once
as an ARC JSON directory and the sources the workflows already take. Nothing here runs a
task set's code: verifiers and generators are parsed for their entry points only.
"""

from __future__ import annotations

from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.tasksets.entrypoints import EntryPoint, EntryPointError
from arcjudge.tasksets.folders import is_task_folders, read_task_folders
from arcjudge.tasksets.model import LeftOut, RowError, SourceFile, TaskEntry, TaskSet
from arcjudge.tasksets.parc import PARQUET_SUFFIXES, read_parc
from arcjudge.vocabulary import TaskSetFormat

__all__ = [
    "EXPORT_SUFFIXES",
    "EntryPoint",
    "EntryPointError",
    "LeftOut",
    "RowError",
    "SourceFile",
    "TaskEntry",
    "TaskSet",
    "detect_format",
    "read_task_set",
]

EXPORT_SUFFIXES = (".csv", *PARQUET_SUFFIXES)
"""File suffixes read as a P-ARC export."""


def detect_format(path: str | Path) -> TaskSetFormat:
    """Which format ``path`` is in.

    A directory with ``*.json`` files is an ARC JSON directory; one without, but with
    ``<name>/task.json`` folders, is a set of task folders; a ``.csv`` file is P-ARC's
    CSV export, a ``.parquet`` or ``.pq`` file its Parquet export.

    Raises:
        InputError: Nothing is there, or it is none of these (saying what is expected).
    """
    path = Path(path)
    expected = (
        "a directory of ARC task JSON files, a directory of task folders (<id>/task.json) "
        "or a P-ARC export (.csv, .parquet)"
    )
    if path.is_dir():
        if any(path.glob("*.json")):
            return TaskSetFormat.ARC_JSON
        if is_task_folders(path):
            return TaskSetFormat.TASK_FOLDERS
        raise InputError(f"{path}: no *.json task files and no task folders (expected {expected})")
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in PARQUET_SUFFIXES:
            return TaskSetFormat.P_ARC_PARQUET
        if suffix == ".csv":
            return TaskSetFormat.P_ARC_CSV
        raise InputError(f"{path}: a file that is not a task set (expected {expected})")
    if path.exists() or path.is_symlink():  # a FIFO, a device, a dangling symlink: not read
        raise InputError(f"{path}: not a directory or a regular file (expected {expected})")
    raise InputError(f"{path}: no such file or directory")


def read_task_set(path: str | Path) -> TaskSet | None:
    """Read a task set in full, or ``None`` for an ARC JSON directory (read as it is).

    Raises:
        InputError: See :func:`detect_format`, :func:`~arcjudge.tasksets.parc.read_parc`
            and :func:`~arcjudge.tasksets.folders.read_task_folders`.
    """
    fmt = detect_format(path)
    if fmt is TaskSetFormat.ARC_JSON:
        return None
    if fmt is TaskSetFormat.TASK_FOLDERS:
        return read_task_folders(path)
    return read_parc(path)
