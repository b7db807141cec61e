"""Task folders: a directory of ``<task_id>/`` folders, one per task (``docs/task-sets.md``).

Each folder holds ``task.json`` (an ARC task: ``train`` and ``test`` pairs; required) and,
each optional, ``verifier.py`` (a ``module``-style verifier), ``generator.py`` (an
``arc-gen``-style generator), ``stable.json`` (stable pairs: a JSON list of ``{input,
output}``, or an object of such lists under ``train``/``test``; without it, ``task.json``'s
own ``arc-gen`` key) and ``human_errors.json`` (a list of wrong outputs, entries as in
``human_errors.json``: a grid, or ``{"output", "count", "test_index"}``). Other files are
ignored, as are hidden folders and ``__pycache__``. A folder that is wrong in any way is
left out with the reason; the others are read. Files are read by the rule for untrusted
paths inside the task set's directory: regular files of at most ``TASK_FILE_BYTES`` (a
FIFO, a device or a symlink out of the directory leaves its folder out, refused).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from arcjudge import tasks
from arcjudge.errors import InputError
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, read_regular
from arcjudge.tasksets.model import (
    LeftOut,
    RowError,
    TaskEntry,
    TaskSet,
    decode_json,
    make_entry,
)
from arcjudge.vocabulary import TaskSetFormat

__all__ = ["FOLDER_FILES", "TASK_FILE", "is_task_folders", "read_task_folders"]

TASK_FILE = "task.json"
"""The one file a task folder must have."""

FOLDER_FILES = (TASK_FILE, "verifier.py", "generator.py", "stable.json", "human_errors.json")
"""The files of a task folder that are read (every one but ``task.json`` optional)."""


def _folders(directory: Path) -> list[Path]:
    return sorted(
        p
        for p in directory.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name != "__pycache__"
    )


def is_task_folders(directory: Path) -> bool:
    """Whether some folder of ``directory`` has a ``task.json``."""
    return any((p / TASK_FILE).is_file() for p in _folders(directory))


def _read(path: Path, within: Path) -> bytes | None:
    try:
        return read_regular(str(path), within=str(within), max_bytes=tasks.TASK_FILE_BYTES)
    except FileNotFoundError:
        return None
    except RefusedPath as exc:
        raise RowError(f"{path.name}: refused: {exc.reason}") from None
    except OSError as exc:
        raise RowError(f"{path.name}: cannot read ({exc.strerror})") from None


def _entry(folder: Path, files: dict[str, bytes | None]) -> TaskEntry:
    raw_task = files[TASK_FILE]
    if raw_task is None:
        raise RowError(f"no {TASK_FILE}")
    task = decode_json(raw_task, TASK_FILE)
    if not isinstance(task, dict) or "train" not in task or "test" not in task:
        raise RowError(f"{TASK_FILE}: not an ARC task (needs 'train' and 'test' keys)")
    stable_file = files["stable.json"]
    stable = decode_json(stable_file, "stable.json") if stable_file is not None else None
    if stable is None and "arc-gen" in task:
        stable = task["arc-gen"]
    errors_file = files["human_errors.json"]
    human_errors = None if errors_file is None else decode_json(errors_file, "human_errors.json")
    return make_entry(
        folder.name,
        train=task["train"],
        test=task["test"],
        stable=stable,
        verifier=files["verifier.py"],
        generator=files["generator.py"],
        human_errors=human_errors,
    )


def read_task_folders(directory: str | Path) -> TaskSet:
    """Read a directory of task folders.

    Args:
        directory: The directory.

    Returns:
        The set: one entry per usable folder (in name order), each folder left out with its
        reason. Its ``sha256`` covers every file read, with its folder and name.

    Raises:
        InputError: The directory is missing or unreadable.
    """
    directory = Path(directory)
    try:
        folders = _folders(directory)
    except OSError as exc:
        raise InputError(f"{directory}: cannot list ({exc.strerror or exc})") from None
    digest = hashlib.sha256()
    entries: list[TaskEntry] = []
    left_out: list[LeftOut] = []
    for folder in folders:
        where = f"folder {folder.name}"
        try:
            files = {name: _read(folder / name, directory) for name in FOLDER_FILES}
            for name, data in files.items():
                if data is not None:
                    label = f"{folder.name}/{name}\0{len(data)}\0"
                    digest.update(label.encode("utf-8", "surrogateescape"))
                    digest.update(data)
            entries.append(_entry(folder, files))
        except RowError as exc:
            left_out.append(LeftOut(where, folder.name, str(exc)))
    return TaskSet(
        path=directory,
        format=TaskSetFormat.TASK_FOLDERS,
        sha256=digest.hexdigest(),
        entries=tuple(entries),
        left_out=tuple(left_out),
    )
