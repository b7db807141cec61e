"""What a task set is once read: its tasks, each with what it ships, and what was left out.

Every reader turns one row or folder into a :class:`TaskEntry` with :func:`make_entry`,
which checks everything that can be checked without running anything: the task id, the
grids of the demonstrations, test pairs and stable pairs, and the verifier's and
generator's entry points (:mod:`arcjudge.tasksets.entrypoints`). A row or folder that fails
a check raises :class:`RowError`; the reader records it as a :class:`LeftOut` and goes on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.tasks import Pair, Task, TaskFormatError, read_pairs
from arcjudge.tasksets.entrypoints import (
    EntryPoint,
    EntryPointError,
    expose_entry_point,
    find_entry_point,
)
from arcjudge.vocabulary import (
    GENERATOR_ENTRY_POINT,
    VERIFIER_ENTRY_POINTS,
    Split,
    TaskSetFormat,
)

__all__ = [
    "STABLE_KEYS",
    "TASK_ID_PATTERN",
    "LeftOut",
    "RowError",
    "SourceFile",
    "TaskEntry",
    "TaskSet",
    "decode_json",
    "make_entry",
    "stable_pairs",
]

TASK_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
"""Task ids become file names: letters, digits, ``_``, ``.``, ``-``; not starting with a dot."""

STABLE_KEYS: tuple[str, ...] = (Split.TRAIN, Split.TEST)
"""The lists of pairs a stable bundle given as an object holds, concatenated in this order."""


class RowError(InputError):
    """One row or folder of a task set is unusable; the message names it and says why."""


@dataclass(frozen=True)
class LeftOut:
    """A row or folder left out of a task set.

    Attributes:
        where: ``row N`` (an export) or the folder's name.
        task_id: The task id, when it could be read.
        reason: What is wrong.
    """

    where: str
    task_id: str | None
    reason: str

    @property
    def message(self) -> str:
        """``row 3 (task t3): reason`` or ``folder abc: reason``."""
        named = not self.task_id or self.where.endswith(f" {self.task_id}")
        task = "" if named else f" (task {self.task_id})"
        return f"{self.where}{task}: {self.reason}"

    def to_json(self) -> dict[str, str | None]:
        """``{"where", "task_id", "reason"}``."""
        return {"where": self.where, "task_id": self.task_id, "reason": self.reason}


@dataclass(frozen=True)
class SourceFile:
    """A verifier or generator module as the workflows will run it.

    Attributes:
        data: The source, with the entry point bound under its expected name.
        entry: Where the entry point was found.
    """

    data: bytes
    entry: EntryPoint


@dataclass(frozen=True)
class TaskEntry:
    """One task of a set and what it ships.

    Attributes:
        task: Demonstrations, test pairs, and the stable pairs as ``arc_gen``.
        verifier: A ``module``-style verifier (input grid -> output grid), if any.
        generator: An ``arc-gen``-style generator (``{"input", "output"}`` after
            ``random.seed``), if any.
        human_errors: Wrong answers people gave, as ``human_errors.json`` entries, if any.
    """

    task: Task
    verifier: SourceFile | None = None
    generator: SourceFile | None = None
    human_errors: tuple[object, ...] | None = None

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.task.task_id


@dataclass(frozen=True)
class TaskSet:
    """A task set read in full.

    Attributes:
        path: What was read.
        format: Its format.
        sha256: Hash of every byte read (the set's content address).
        entries: The usable tasks, in task-id order.
        left_out: The rows or folders left out, in reading order.
    """

    path: Path
    format: TaskSetFormat
    sha256: str
    entries: tuple[TaskEntry, ...]
    left_out: tuple[LeftOut, ...] = ()


def decode_json(text: str | bytes, what: str) -> object:
    """Decode one JSON value (a cell or a file).

    Raises:
        RowError: ``WHAT: not valid JSON (...)``, also for nesting too deep to decode.
    """
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RowError(f"{what}: not valid JSON ({exc})") from None
    except RecursionError:
        raise RowError(f"{what}: not valid JSON (nested too deeply)") from None


def stable_pairs(raw: object, what: str) -> tuple[Pair, ...]:
    """A stable bundle's pairs: a list of ``{input, output}``, or an object of such lists.

    An object's lists under ``STABLE_KEYS`` (``train`` then ``test``, those present) are
    concatenated; it must have at least one of them, and other keys are ignored.

    Raises:
        RowError: The bundle is neither, or a pair is not two grids.
    """
    if isinstance(raw, dict):
        lists = [(str(key), raw[key]) for key in STABLE_KEYS if key in raw]
        if not lists:
            keys = ", ".join(sorted(map(str, raw))[:5]) or "none"
            raise RowError(f"{what}: an object without {' or '.join(STABLE_KEYS)} (keys: {keys})")
        return tuple(p for key, pairs in lists for p in _pairs(pairs, f"{what}.{key}", True))
    return _pairs(raw, what, True)


def _pairs(raw: object, what: str, need_output: bool) -> tuple[Pair, ...]:
    try:
        return read_pairs(raw, what, need_output)
    except TaskFormatError as exc:
        raise RowError(str(exc)) from None


def _source(data: bytes | None, what: str, names: tuple[str, ...]) -> SourceFile | None:
    if data is None or not data.strip():
        return None
    try:
        entry = find_entry_point(data, names)
    except EntryPointError as exc:
        raise RowError(f"{what}: {exc}") from None
    return SourceFile(expose_entry_point(data, entry), entry)


def make_entry(
    task_id: str,
    train: object,
    test: object,
    stable: object = None,
    verifier: bytes | None = None,
    generator: bytes | None = None,
    human_errors: object = None,
) -> TaskEntry:
    """Check one task's parts and put them together.

    Args:
        task_id: The id (checked against ``TASK_ID_PATTERN``).
        train: Decoded JSON: the demonstrations (a non-empty list of pairs).
        test: Decoded JSON: the test pairs (a non-empty list; outputs may be absent).
        stable: Decoded JSON: the stable bundle (see :func:`stable_pairs`), or ``None``.
        verifier: The verifier's source (empty or ``None``: none).
        generator: The generator's source (empty or ``None``: none).
        human_errors: Decoded JSON: a list of ``human_errors.json`` entries, or ``None``.

    Returns:
        The entry; sources carry their entry point under the name the workflows try.

    Raises:
        RowError: Naming the part that is wrong and why.
    """
    if not TASK_ID_PATTERN.fullmatch(task_id):
        raise RowError(
            f"task id {task_id[:80]!r} is not usable as a file name (letters, digits, _ . -; "
            "at most 128, not starting with . _ or -)"
        )
    train_pairs = _pairs(train, "train", True)
    test_pairs = _pairs(test, "test", False)
    if not train_pairs:
        raise RowError("train: no demonstration")
    if not test_pairs:
        raise RowError("test: no test pair")
    stable_set = () if stable is None else stable_pairs(stable, "stable")
    if human_errors is not None and not isinstance(human_errors, list):
        raise RowError("human errors: not a list of wrong outputs")
    return TaskEntry(
        task=Task(task_id, train_pairs, test_pairs, stable_set),
        verifier=_source(verifier, "verifier", VERIFIER_ENTRY_POINTS),
        generator=_source(generator, "generator", (GENERATOR_ENTRY_POINT,)),
        human_errors=None if human_errors is None else tuple(human_errors),
    )
