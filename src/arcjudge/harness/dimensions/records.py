"""The records of ``arcjudge dimensions``: instances, answers and scored items.

* :class:`DimensionInstance`: one line of ``instances.jsonl`` (``dimensions build``), one
  per (task, dimension). Its ``prompt`` and ``key`` stay JSON objects (their fields differ
  per dimension; see ``docs/dimensions.md``); the typed accessors give the fields
  ``dimensions score`` grades with, and :meth:`DimensionInstance.from_json` checks them.
* :class:`DimensionAnswer`: one line of an answers JSONL (written by whoever runs a model).
* :class:`DimensionItem`: one line of ``items.jsonl`` (``dimensions score``), one per
  (model, run, task, dimension), with its :class:`Consistency` when computed.

Each has one ``to_json`` and one ``from_json``; ``from_json`` raises ``KeyError``,
``TypeError`` or ``ValueError`` on a malformed record (readers add the file and line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from arcjudge.errors import InputError
from arcjudge.grids import Grid, to_grid
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.dimensions.rules import normalize_dimension
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension, Judgment

__all__ = [
    "CLASSIFICATION_SIZE",
    "Consistency",
    "DimensionAnswer",
    "DimensionInstance",
    "DimensionItem",
    "InstanceKey",
    "VerifierSpec",
    "prompt_id",
    "read_build_repeats",
    "read_instances",
    "read_items",
]

GridPair = tuple[Grid, Grid]

CLASSIFICATION_SIZE = 5
"""Candidate pairs per Classification instance."""


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what!r} must be an object")
    return value


def _list(value: object, what: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{what!r} must be a list")
    return value


def _pair(value: object, what: str) -> GridPair:
    pair = _object(value, what)
    return to_grid(pair["input"]), to_grid(pair["output"])


def prompt_id(task_id: str, dimension: str) -> str:
    """The id of an instance's prompt (and of the replies to it): ``TASK_ID/DIMENSION``.

    Task ids are file stems, so they hold no ``/``; the id is split at its last one.
    """
    return f"{task_id}/{dimension}"


@dataclass(frozen=True)
class VerifierSpec:
    """The verifier ``validate`` chose for a task: the manifest's source, as built on.

    Attributes:
        source: The source's name in the manifest.
        kind: The source's kind (``re-arc``, ``golf``, ``module``...).
        path: The source's path.
    """

    source: str
    kind: str
    path: str

    def to_json(self) -> dict[str, Any]:
        """``{"source", "kind", "path"}``."""
        return {"source": self.source, "kind": self.kind, "path": self.path}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A field is missing.
        """
        return cls(str(data["source"]), str(data["kind"]), str(data["path"]))


@dataclass(frozen=True)
class DimensionInstance:
    """One evaluation instance: what a model is shown and what only the scorer sees.

    Attributes:
        task_id: The task.
        dimension: Which dimension the instance is of.
        seed: The build seed.
        verifier: The verifier the instance was built (and is graded) with.
        prompt: What a model may be shown (per dimension; see ``docs/dimensions.md``).
        key: Hidden labels, provenance and reference answers (per dimension).
    """

    task_id: str
    dimension: Dimension
    seed: int
    verifier: VerifierSpec
    prompt: Mapping[str, Any]
    key: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The ``instances.jsonl`` object."""
        return {
            "task_id": self.task_id,
            "dimension": self.dimension,
            "seed": self.seed,
            "verifier": self.verifier.to_json(),
            "prompt": dict(self.prompt),
            "key": dict(self.key),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote; the fields grading uses are checked too.

        Raises:
            KeyError: A field is missing.
            TypeError, ValueError: A field has the wrong shape (or the dimension is unknown).
        """
        name = str(data["task_id"]), str(data["dimension"])
        if name[1] not in BUILT_DIMENSIONS:
            raise ValueError(f"unknown dimension {name[1]!r}")
        prompt = _object(data["prompt"], "prompt")
        key, verifier = _object(data["key"], "key"), _object(data["verifier"], "verifier")
        seed = data["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError("'seed' must be an integer")
        instance = cls(name[0], Dimension(name[1]), seed, VerifierSpec.from_json(verifier),
                       prompt, key)  # fmt: skip
        instance._check()
        return instance

    def _check(self) -> None:
        """Read the fields grading uses for this dimension (raises when one is malformed)."""
        if self.dimension is Dimension.CLASSIFICATION:
            if not len(self.candidates()) == len(self.labels()) == CLASSIFICATION_SIZE:
                raise ValueError(f"{CLASSIFICATION_SIZE} candidates with a label each are needed")
        elif self.dimension is Dimension.GENERATION:
            self.avoid()
            self.arcgen_digests()
        elif self.dimension is Dimension.EDITING:
            self.shown_pair()
        elif self.dimension is Dimension.INVERSION:
            self.shown_output()
        elif self.dimension is Dimension.OUTPUT_GRID:
            if not self.test_inputs() or len(self.test_inputs()) != len(self.test_outputs()):
                raise ValueError("one test output per test input is needed")

    # Output grid -------------------------------------------------------------

    def test_inputs(self) -> tuple[Grid, ...]:
        """Output grid: the test inputs shown, in order."""
        return tuple(to_grid(g) for g in _list(self.prompt["test_inputs"], "test_inputs"))

    def test_outputs(self) -> tuple[Grid, ...]:
        """Output grid: the hidden test outputs, one per test input."""
        return tuple(to_grid(g) for g in _list(self.key["test_outputs"], "test_outputs"))

    # Classification ----------------------------------------------------------

    def candidates(self) -> tuple[GridPair, ...]:
        """Classification: the candidate pairs shown, in order."""
        return tuple(_pair(c, "candidate") for c in _list(self.prompt["candidates"], "candidates"))

    def labels(self) -> tuple[Judgment, ...]:
        """Classification: the hidden label of each candidate."""
        return tuple(Judgment(str(v)) for v in _list(self.key["labels"], "labels"))

    def kinds(self) -> tuple[str, ...]:
        """Classification: the candidate kind of each slot."""
        return tuple(str(k) for k in _list(self.key["kinds"], "kinds"))

    # Generation --------------------------------------------------------------

    def avoid(self) -> tuple[GridPair, ...]:
        """Generation: the demonstrations a generated pair must not copy."""
        return tuple(_pair(p, "avoid") for p in _list(self.prompt["avoid"], "avoid"))

    def arcgen_digests(self) -> frozenset[str]:
        """Generation: digests of the task's ARC-GEN pairs (empty when not recorded)."""
        return frozenset(str(d) for d in _list(self.key.get("arcgen_digests", []), "digests"))

    # Editing and Inversion ---------------------------------------------------

    def shown_pair(self) -> GridPair:
        """Editing: the invalid pair to repair."""
        return _pair(self.prompt, "prompt")

    def shown_output(self) -> Grid:
        """Inversion: the output grid whose input is wanted."""
        return to_grid(self.prompt["output"])


@dataclass(frozen=True)
class DimensionAnswer:
    """One line of an answers file.

    Attributes:
        task_id: The task.
        dimension: The dimension (names are case-insensitive and aliases accepted on read).
        model: The model.
        run: The run (numbers are read as text, so runs compare as text).
        answer: The decoded JSON answer (its shape is checked when grading).
        answered: Whether the line has an ``answer`` field at all.
    """

    task_id: str
    dimension: Dimension
    model: str
    run: str
    answer: object = None
    answered: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"task_id", "dimension", "model", "run", "answer"}`` (no ``answer`` when absent)."""
        data: dict[str, Any] = {
            "task_id": self.task_id,
            "dimension": self.dimension,
            "model": self.model,
            "run": self.run,
        }
        if self.answered:
            data["answer"] = self.answer
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read an answer line (what :meth:`to_json` writes, or a looser one).

        Raises:
            ValueError: A field is missing or null (``"missing task_id, run"``), or the
                dimension is unknown (``"unknown dimension 'x'"``).
        """
        missing = [k for k in ("task_id", "dimension", "model", "run") if data.get(k) is None]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        dimension = normalize_dimension(data["dimension"])
        if dimension is None:
            raise ValueError(f"unknown dimension {str(data['dimension'])[:40]!r}")
        return cls(
            str(data["task_id"]),
            Dimension(dimension),
            str(data["model"]),
            str(data["run"]),
            data.get("answer"),
            "answer" in data,
        )


@dataclass(frozen=True)
class Consistency:
    """Whether a model's own Definition program agrees with one of its answers.

    Attributes:
        definition_passes_train_test: The program is right on the task's train and test
            pairs.
        agree: Classification: per candidate, whether the program's view (maps the input
            to the output) matches the model's judgment; else whether the program maps the
            answer's input to its output.
        right: Classification only: per candidate, whether the judgment was right.
    """

    definition_passes_train_test: bool
    agree: bool | tuple[bool | None, ...]
    right: tuple[bool | None, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"definition_passes_train_test", "agree"}`` and ``right`` for Classification."""
        data: dict[str, Any] = {
            "definition_passes_train_test": self.definition_passes_train_test,
            "agree": list(self.agree) if isinstance(self.agree, tuple) else self.agree,
        }
        if self.right is not None:
            data["right"] = list(self.right)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A field is missing.
            TypeError: A field has the wrong type.
        """
        agree = data["agree"]
        right = data.get("right")
        if not isinstance(data["definition_passes_train_test"], bool):
            raise TypeError("'definition_passes_train_test' must be true or false")
        return cls(
            data["definition_passes_train_test"],
            tuple(_flags(agree, "agree")) if isinstance(agree, list) else _flag(agree),
            None if right is None else tuple(_flags(right, "right")),
        )


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _flags(value: object, what: str) -> list[bool | None]:
    return [None if v is None else _flag(v) for v in _list(value, what)]


@dataclass(frozen=True)
class DimensionItem:
    """One graded (model, run, task, dimension).

    Attributes:
        model: The model.
        run: The run.
        task_id: The task.
        dimension: The dimension.
        passed: Whether the item passed.
        reason: Why it failed (``None`` when it passed).
        detail: JSON facts of the grading (right judgments, distances, the Definition
            program and its splits...); their keys differ per dimension.
        answer_line: The answers (or replies) file's line graded (absent when there was
            no answer).
        consistency: The Definition program's agreement, when computed.
        how: For an answer read from a raw reply: how it was parsed (``"json"``,
            ``"code block rows"``, ... or ``"unparsable: <why>"``).
    """

    model: str
    run: str
    task_id: str
    dimension: Dimension
    passed: bool
    reason: str | None
    detail: Mapping[str, Any] = field(default_factory=dict)
    answer_line: int | None = None
    consistency: Consistency | None = None
    how: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``items.jsonl`` object (``answer_line``, ``consistency``, ``how`` when set)."""
        data: dict[str, Any] = {
            "model": self.model,
            "run": self.run,
            "task_id": self.task_id,
            "dimension": self.dimension,
        }
        if self.answer_line is not None:
            data["answer_line"] = self.answer_line
        data.update(passed=self.passed, reason=self.reason, detail=dict(self.detail))
        if self.consistency is not None:
            data["consistency"] = self.consistency.to_json()
        if self.how is not None:
            data["how"] = self.how
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A field is missing.
            TypeError, ValueError: A field has the wrong shape.
        """
        reason = data["reason"]
        line = data.get("answer_line")
        info = data.get("consistency")
        how = data.get("how")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
            raise TypeError("'answer_line' must be an integer")
        return cls(
            str(data["model"]),
            str(data["run"]),
            str(data["task_id"]),
            Dimension(data["dimension"]),
            _flag(data["passed"]),
            None if reason is None else str(reason),
            _object(data["detail"], "detail"),
            line,
            None if info is None else Consistency.from_json(_object(info, "consistency")),
            None if how is None else str(how),
        )


InstanceKey = tuple[str, Dimension]
"""``(task_id, dimension)``: an instance."""


def read_instances(path: Path) -> dict[InstanceKey, DimensionInstance]:
    """Read ``instances.jsonl``; ``(task_id, dimension)`` -> instance.

    Raises:
        InputError: When the file is not a ``dimensions build`` output.
    """
    result: dict[InstanceKey, DimensionInstance] = {}
    for number, instance in read_records(path, DimensionInstance.from_json, "an instance record"):
        key = (instance.task_id, instance.dimension)
        if key in result:
            raise InputError(f"{path}:{number}: second instance for {key[0]} {key[1]}")
        result[key] = instance
    if not result:
        raise InputError(f"{path}: no instances")
    return result


def read_build_repeats(instances_file: Path) -> int | None:
    """The ``repeats`` of the ``build.json`` beside ``instances_file`` (``None``: none).

    Raises:
        InputError: The ``build.json`` is there but not readable JSON, or its ``repeats``
            is not a positive integer.
    """
    path = instances_file.parent / "build.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    repeats = data.get("repeats") if isinstance(data, dict) else None
    if repeats is None:
        return None
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise InputError(f"{path}: 'repeats' is not a positive integer: {repeats!r}")
    return repeats


def read_items(path: Path) -> tuple[DimensionItem, ...]:
    """Read ``items.jsonl`` of ``dimensions score``, in file order.

    Raises:
        InputError: When the file cannot be read, a line is not an item record (naming
            the line), or there is no item.
    """
    items = tuple(r for _, r in read_records(path, DimensionItem.from_json, "an item record"))
    if not items:
        raise InputError(f"{path}: no items")
    return items
