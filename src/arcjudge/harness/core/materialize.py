"""A task set written once as what the workflows read: task JSON and source directories.

A :class:`~arcjudge.tasksets.TaskSet` that is not an ARC JSON directory (a P-ARC export,
task folders) is written into ``UNDER/<digest>/``, ``digest`` naming what was read (its
format, its bytes and this layout's version), so the same set is written once however
often a command reruns, and two sets never share a directory:

- ``tasks/<task_id>.json``: ARC task JSON, the stable pairs as the ``arc-gen`` split (so
  they are used wherever the workflows use ARC-GEN pairs);
- ``verifiers/<task_id>.py``: a ``module`` verifier source directory;
- ``generators/tasks/task_<task_id>.py``: an ``arc-gen`` generator directory;
- ``human_errors.json``: task id -> wrong outputs (``dimensions build --human-errors``);
- ``taskset.json``: what was read, each task's parts and entry points, and the rows or
  folders left out with their reasons (written last: its presence marks a finished set).

Each part exists only when some task has it. The directory is written under a temporary
name and renamed into place, files 0600 and directories 0700 as every output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.grids import to_lists
from arcjudge.harness.core.outputs import make_private_dir, write_private
from arcjudge.safetext import encode_utf8, json_dumps
from arcjudge.tasks import Pair
from arcjudge.tasksets import LeftOut, TaskEntry, TaskSet

__all__ = [
    "DESCRIPTION_FILE",
    "LAYOUT_VERSION",
    "MaterializedTaskSet",
    "materialize",
]

LAYOUT_VERSION = 1
"""The version of what :func:`materialize` writes (part of the directory's digest)."""

DESCRIPTION_FILE = "taskset.json"
"""The file describing a materialized set (written last)."""

TASKS, VERIFIERS, GENERATORS, HUMAN_ERRORS = "tasks", "verifiers", "generators", "human_errors.json"


@dataclass(frozen=True)
class MaterializedTaskSet:
    """A task set on disk in the workflows' formats.

    Attributes:
        root: The set's directory (absolute).
        tasks_dir: The ARC JSON directory (``--tasks``).
        verifiers_dir: The ``module`` verifier directory, if a task has a verifier.
        generators_dir: The ``arc-gen`` generator directory, if a task has a generator.
        human_errors_file: The ``human_errors.json``, if a task has human errors.
        description: What ``taskset.json`` holds.
        left_out: The rows or folders left out.
        written: ``False`` when an earlier run had written the same set.
    """

    root: Path
    tasks_dir: Path
    verifiers_dir: Path | None
    generators_dir: Path | None
    human_errors_file: Path | None
    description: dict[str, Any]
    left_out: tuple[LeftOut, ...]
    written: bool

    def record(self) -> dict[str, Any]:
        """The short record manifests and summaries keep: no per-task detail."""
        d = self.description
        keep = ("format", "path", "sha256", "materialized", "counts", "left_out")
        return {k: d[k] for k in keep}


def _pairs(pairs: tuple[Pair, ...]) -> list[dict[str, Any]]:
    return [
        {"input": to_lists(p.input)} | ({} if p.output is None else {"output": to_lists(p.output)})
        for p in pairs
    ]


def _task_json(entry: TaskEntry) -> str:
    task = entry.task
    data = {"train": _pairs(task.train), "test": _pairs(task.test)}
    if task.arc_gen:
        data["arc-gen"] = _pairs(task.arc_gen)
    return json_dumps(data, separators=(",", ":")) + "\n"


def _description(task_set: TaskSet, root: Path) -> dict[str, Any]:
    entries = task_set.entries
    tasks = {}
    for e in entries:
        info: dict[str, Any] = {"train": len(e.task.train), "test": len(e.task.test),
                                "stable": len(e.task.arc_gen)}  # fmt: skip
        if e.verifier is not None:
            info["verifier"] = e.verifier.entry.to_json()
        if e.generator is not None:
            info["generator"] = e.generator.entry.to_json()
        if e.human_errors is not None:
            info["human_errors"] = len(e.human_errors)
        tasks[e.task_id] = info
    return {
        "layout": LAYOUT_VERSION,
        "format": task_set.format.value,
        "path": str(task_set.path),
        "sha256": task_set.sha256,
        "materialized": str(root),
        "counts": {
            "tasks": len(entries),
            "left_out": len(task_set.left_out),
            "with_verifier": sum(e.verifier is not None for e in entries),
            "with_generator": sum(e.generator is not None for e in entries),
            "with_stable_pairs": sum(bool(e.task.arc_gen) for e in entries),
            "with_human_errors": sum(e.human_errors is not None for e in entries),
        },
        "left_out": [item.to_json() for item in task_set.left_out],
        "tasks": tasks,
    }


def _write(task_set: TaskSet, directory: Path, description: dict[str, Any]) -> None:
    make_private_dir(directory / TASKS)
    entries = task_set.entries
    for e in entries:
        write_private(directory / TASKS / f"{e.task_id}.json", encode_utf8(_task_json(e)))
    if any(e.verifier for e in entries):
        make_private_dir(directory / VERIFIERS)
    if any(e.generator for e in entries):
        make_private_dir(directory / GENERATORS / "tasks")
    for e in entries:
        if e.verifier is not None:
            write_private(directory / VERIFIERS / f"{e.task_id}.py", e.verifier.data)
        if e.generator is not None:
            path = directory / GENERATORS / "tasks" / f"task_{e.task_id}.py"
            write_private(path, e.generator.data)
    errors = {e.task_id: list(e.human_errors) for e in entries if e.human_errors is not None}
    if errors:
        text = json_dumps(errors, sort_keys=True, separators=(",", ":")) + "\n"
        write_private(directory / HUMAN_ERRORS, encode_utf8(text))
    text = json_dumps(description, sort_keys=True, indent=1) + "\n"
    write_private(directory / DESCRIPTION_FILE, encode_utf8(text))


def materialize(task_set: TaskSet, under: Path) -> MaterializedTaskSet:
    """Write a task set into ``under/<digest>/`` unless an earlier run did.

    Args:
        task_set: The set read (it must have at least one task).
        under: Where sets are written (e.g. a command's ``OUT/taskset``).

    Returns:
        Where each part is.

    Raises:
        OSError: The directory cannot be written.
    """
    digest = hashlib.sha256(
        f"arcjudge task set layout {LAYOUT_VERSION}\0{task_set.format.value}\0"
        f"{task_set.sha256}".encode()
    ).hexdigest()[:16]
    make_private_dir(under)
    root = (under / digest).resolve()
    description = _description(task_set, root)
    written = False
    if not (root / DESCRIPTION_FILE).is_file():
        if root.exists():
            shutil.rmtree(root)  # a set whose writing was cut short: never renamed into place
        tmp = under / f".{digest}.tmp-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        make_private_dir(tmp)
        try:
            _write(task_set, tmp, description)
            os.rename(tmp, root)
            written = True
        except OSError:
            if not (root / DESCRIPTION_FILE).is_file():  # not written meanwhile by another run
                raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)

    def part(name: str) -> Path | None:
        path = root / name
        return path if path.exists() else None

    return MaterializedTaskSet(
        root=root,
        tasks_dir=root / TASKS,
        verifiers_dir=part(VERIFIERS),
        generators_dir=part(GENERATORS),
        human_errors_file=part(HUMAN_ERRORS),
        description=description,
        left_out=task_set.left_out,
        written=written,
    )
