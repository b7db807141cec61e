"""The records of ``arcjudge dimensions``: instances, answers and scored items.

* :class:`DimensionInstance`: one line of ``instances.jsonl`` (``dimensions build``), one
  per (task, dimension). Its ``prompt`` and ``key`` stay JSON objects (their fields differ
  per dimension; see ``docs/dimensions.md``); the typed accessors give the fields
  ``dimensions score`` grades with, and :meth:`DimensionInstance.from_json` checks them.
* :class:`DimensionAnswer`: one line of an answers JSONL (written by whoever runs a model).
* :class:`DimensionItem`: one line of ``items.jsonl`` (``dimensions score``), one per
  (model, run, task, dimension), with its :class:`Consistency` when computed, and the
  reply's :class:`TokenUsage` and generation settings when its replies line had them.

Each is a :class:`~arcjudge.harness.core.record.Record` (its fields give ``to_json`` and
``from_json``; a malformed value is a ``RecordError`` naming the field), but for
:class:`DimensionAnswer`, which reads a model's answers file loosely (aliases, numbers as
text); readers add the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from arcjudge.errors import InputError
from arcjudge.grids import Grid, to_grid
from arcjudge.harness.core.jsonl import json_value, read_records
from arcjudge.harness.core.record import OMIT_DEFAULT, Codec, Record, RecordError, spec
from arcjudge.harness.dimensions.mixture import Mixture
from arcjudge.harness.dimensions.rules import normalize_dimension
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension, Judgment

__all__ = [
    "BUILT_DIMENSION",
    "CLASSIFICATION_SIZE",
    "BuildInfo",
    "BuildInputs",
    "Consistency",
    "DimensionAnswer",
    "DimensionInstance",
    "DimensionItem",
    "InstanceKey",
    "TokenUsage",
    "VerifierSpec",
    "prompt_id",
    "read_build_info",
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


def _decode_built_dimension(value: object) -> Dimension:
    if isinstance(value, str) and value in BUILT_DIMENSIONS:
        return Dimension(value)
    raise RecordError(f"unknown dimension {str(value)[:40]!r}")


BUILT_DIMENSION: Codec[Dimension] = Codec(
    "built dimension", _decode_built_dimension, lambda d: d, Dimension
)
"""A dimension ``dimensions build`` makes instances of (its value; others are an error)."""


@dataclass(frozen=True)
class VerifierSpec(Record):
    """The verifier ``validate`` chose for a task: the manifest's source, as built on.

    Attributes:
        source: The source's name in the manifest.
        kind: The source's kind (``re-arc``, ``golf``, ``module``...).
        path: The source's path.
    """

    source: str
    kind: str
    path: str


@dataclass(frozen=True)
class DimensionInstance(Record):
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
    dimension: Dimension = field(metadata=spec(codec=BUILT_DIMENSION))
    seed: int
    verifier: VerifierSpec
    prompt: Mapping[str, Any]
    key: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote; the fields grading uses are checked too.

        Raises:
            RecordError: A field is missing or has the wrong type (or the dimension is
                not a built one).
            LookupError, TypeError, ValueError: A field grading uses is malformed.
        """
        instance = super().from_json(data)
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

    Not a :class:`~arcjudge.harness.core.record.Record`, on purpose: an answers file is
    model material, written by whoever ran the model, so it is read loosely (dimension
    aliases in any case, numbers as text, ``answer`` any JSON or absent) rather than
    field by field; what an answer holds is checked when it is graded.

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
class Consistency(Record):
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
    right: tuple[bool | None, ...] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))


@dataclass(frozen=True)
class TokenUsage(Record):
    """The tokens one reply cost (a replies line's ``usage``; inspect's ``ModelUsage``).

    Attributes:
        input: Input (prompt) tokens.
        output: Output tokens (reasoning tokens included, as the providers count them).
        reasoning: Reasoning (thinking) tokens, when the provider reports them.
    """

    input: int
    output: int
    reasoning: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read a ``usage`` object: non-negative token counts.

        Raises:
            RecordError: A count is missing, not an integer, or negative.
        """
        usage = super().from_json(data)
        counts = {"input": usage.input, "output": usage.output, "reasoning": usage.reasoning}
        negative = [k for k, v in counts.items() if v is not None and v < 0]
        if negative:
            raise RecordError(f"field {negative[0]!r}: a token count must be >= 0")
        return usage


@dataclass(frozen=True)
class DimensionItem(Record):
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
        usage: The reply's token usage, when its replies line recorded one.
        settings: The generation settings the reply was made with (``temperature``,
            ``reasoning_effort``, ``reasoning_tokens``...), when its line recorded them.
    """

    model: str
    run: str
    task_id: str
    dimension: Dimension
    passed: bool
    reason: str | None
    detail: Mapping[str, Any] = field(default_factory=dict)
    answer_line: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    consistency: Consistency | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    how: str | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    usage: TokenUsage | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    settings: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))


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


@dataclass(frozen=True)
class BuildInputs(Record):
    """The inputs a build was made from (``build.json``'s ``inputs``; paths as given).

    Attributes:
        tasks: The task directory.
        manifest: The validate run's directory (its ``manifest.json``).
        arcgen: The ARC-GEN directory, if any.
        generator: The generator (``{"kind", "path"}``) valid pairs were drawn from, if any.
        corruptions: ``mutate``'s ``corruptions.jsonl``, if given.
        human_errors: The human errors file, if given.
        neighbours: The neighbours file, if given.
        embeddings: The embeddings file, if given.
    """

    tasks: str
    manifest: str
    arcgen: str | None = None
    generator: Mapping[str, Any] | None = None
    corruptions: str | None = None
    human_errors: str | None = None
    neighbours: str | None = None
    embeddings: str | None = None


@dataclass(frozen=True)
class BuildInfo(Record):
    """``build.json``: what ``dimensions build`` was asked, what it read and made.

    Every key has a default when read (a record of an older build, or a hand-written one,
    may have only some): the readers say which they need.

    Attributes:
        configuration: The configuration this build is (written only for one).
        task_set: The task set ``--tasks`` named (written only for one).
        seed: The build seed.
        repeats: Runs per instance a model answers (``None``: not recorded).
        mixture: The mixture's name and weights.
        mixture_rule: How Classification drew its candidate types
            (:class:`~arcjudge.vocabulary.MixtureRule`; ``None``: not recorded, a build
            made before the rule was chosen, which drew by ``fixed-valid``).
        valid_pairs: Where valid pairs came from (:class:`~arcjudge.vocabulary.ValidPairs`;
            ``None``: not recorded, a build made before the choice: ARC-GEN unless
            ``--generator`` was given).
        mismatch_pool: The pairs instance mismatches took outputs from
            (:class:`~arcjudge.vocabulary.MismatchPool`; ``None``: not recorded, ``valid``).
        per_kind: Candidates proposed per invalid kind and task.
        min_distance: The Generation threshold.
        edit_max_distance: The Editing distance limit.
        editing_kinds: The invalid kinds Editing shows.
        generator_samples: Generator samples drawn per task (0 without a generator).
        inputs: The inputs the build read.
        retrieval: Where retrieval neighbours came from.
        instances: Instances per built dimension.
        classification_kinds: Classification candidates per kind.
        valid_sources: Tasks per source of their valid pairs.
        demonstration_inputs_dropped: Candidates dropped for showing a demonstration input.
        human_error_rows_skipped: Rows of the human errors file not used.
        tasks: Per task: what was available and used.
        skipped: Per skipped task: why.
    """

    configuration: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    task_set: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    seed: int | None = None
    repeats: int | None = None
    mixture: Mixture | None = None
    mixture_rule: str | None = None
    valid_pairs: str | None = None
    mismatch_pool: str | None = None
    per_kind: int | None = None
    min_distance: float | None = None
    edit_max_distance: float | None = None
    editing_kinds: tuple[str, ...] = ()
    generator_samples: int = 0
    inputs: BuildInputs | None = None
    retrieval: Mapping[str, Any] | None = None
    instances: Mapping[str, int] = field(default_factory=dict)
    classification_kinds: Mapping[str, int] = field(default_factory=dict)
    valid_sources: Mapping[str, int] = field(default_factory=dict)
    demonstration_inputs_dropped: Mapping[str, int] = field(default_factory=dict)
    human_error_rows_skipped: tuple[Any, ...] = ()
    tasks: Mapping[str, Any] = field(default_factory=dict)
    skipped: Mapping[str, Any] = field(default_factory=dict)


def read_build_info(path: Path) -> BuildInfo:
    """Read a ``build.json``.

    Raises:
        FileNotFoundError: There is none (the callers say what that means for them).
        InputError: It is unreadable, not JSON, or not a build record (naming the field).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    try:
        data = json_value(text)
        if not isinstance(data, dict):
            raise RecordError("expected object, got " + type(data).__name__)
        return BuildInfo.from_json(data)
    except ValueError as exc:
        raise InputError(f"{path}: not a dimensions build record ({exc})") from None


def read_build_repeats(instances_file: Path) -> int | None:
    """The ``repeats`` of the ``build.json`` beside ``instances_file`` (``None``: none).

    Raises:
        InputError: The ``build.json`` is there but not readable JSON, or its ``repeats``
            is not a positive integer.
    """
    path = instances_file.parent / "build.json"
    if not path.is_file():
        return None
    repeats = read_build_info(path).repeats
    if repeats is not None and repeats < 1:
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
