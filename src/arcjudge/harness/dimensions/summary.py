"""``dimensions score``'s ``summary.json``, declared once: what was read, graded and counted.

:class:`DimensionScoreSummary` is the file's record (a
:class:`~arcjudge.harness.core.record.Record`): ``DimensionScorer.summary`` builds it, the
command writes its ``to_json`` (``sort_keys``, ``indent=1``) and the report and the printed
table read its fields. Its ``models`` are the per-model statistics tables of
:func:`.statistics.model_statistics` as they are (nested accuracy tables that
``dimensions analyze`` computes and reshapes too), kept as JSON objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arcjudge.harness.core.record import OMIT_DEFAULT, Record, spec
from arcjudge.harness.dimensions.statistics import COMPLETE_TASKS
from arcjudge.harness.dimensions.token_usage import ModelTokens

__all__ = ["AfterSummary", "DefinitionScoring", "DimensionScoreSummary"]


@dataclass(frozen=True)
class DefinitionScoring(Record):
    """Where Definition replies were scored (``summary.json``'s ``definition_scoring``).

    Attributes:
        tasks: The task directory.
        arcgen: The ARC-GEN directory, if any.
        generator: The generator (``{"kind", "path"}``), if any.
        samples: Generator samples per task.
        seed: The generator seed.
        verifiers: The validate run whose chosen verifiers were given, if any.
    """

    tasks: str
    arcgen: str | None
    generator: Mapping[str, str] | None
    samples: int
    seed: int
    verifiers: str | None


@dataclass(frozen=True)
class AfterSummary(Record):
    """The earlier configurations' items ``--after`` read (``summary.json``'s ``after``).

    Attributes:
        files: Their ``items.jsonl`` files, as given.
        accepted_pairs: Model -> run -> Generation pairs accepted there.
        unmatched: ``(model, run)`` with Generation answers but no item there.
    """

    files: tuple[str, ...]
    accepted_pairs: Mapping[str, Mapping[str, int]]
    unmatched: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DimensionScoreSummary(Record):
    """``summary.json`` of ``dimensions score``: its inputs and settings, counts, statistics.

    Attributes:
        instances: The instances file.
        answers: The answers file (``None``: replies or Definition programs were graded).
        replies: The replies file, if any.
        attempts: Output grid candidates counted per test input.
        definitions: The ``arcjudge score`` run of Definition programs, if any.
        min_distance: The Generation threshold.
        edit_max_distance: The Editing distance limit.
        exclude_arcgen: Whether a generated pair that is an ARC-GEN pair fails Generation.
        strict_generation: Whether a generated pair's input and output must each be far
            from every demonstration's.
        tasks: Tasks with an instance.
        full_tasks: Tasks with an instance of every dimension.
        items: Items graded.
        answers_read: Answers (or replies) read.
        answers_problems: ``line N: why`` of lines not used (the first ones).
        answers_problem_count: Lines not used, all of them.
        duplicate_answers: Second answers for the same item.
        unmatched_answers: Answers naming no instance.
        definition_notes: What reading the Definition results noted.
        definition_replies: Definition replies scored.
        definition_scoring: Where they were scored (``None``: none were).
        failure_reasons: ``DIMENSION: reason class`` -> failed items, sorted.
        models: Model -> its statistics (:func:`.statistics.model_statistics`).
        after: With ``--after``: the earlier items read (else not written).
        full_task_over: The tasks full task is over: ``every-task`` (every built task, a
            dimension without an instance a failure: the study's n = tasks x runs) or
            ``complete-tasks`` (only tasks with all five instances: what a summary written
            before this was recorded was computed over).
        missing_dimensions: Built tasks without an instance of some dimension -> those
            dimensions (a failure in full task, or out of it with ``complete-tasks``).
        token_usage: Model -> its token usage and generation settings, when some reply
            recorded them (:func:`.token_usage.token_usage`; else not written).
    """

    instances: str
    answers: str | None
    replies: str | None
    attempts: int
    definitions: str | None
    min_distance: float
    edit_max_distance: float
    exclude_arcgen: bool
    strict_generation: bool
    tasks: int
    full_tasks: int
    items: int
    answers_read: int
    answers_problems: tuple[str, ...]
    answers_problem_count: int
    duplicate_answers: int
    unmatched_answers: int
    definition_notes: tuple[str, ...]
    definition_replies: int
    definition_scoring: DefinitionScoring | None
    failure_reasons: Mapping[str, int]
    models: Mapping[str, Mapping[str, Any]]
    after: AfterSummary | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    full_task_over: str = COMPLETE_TASKS
    missing_dimensions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    token_usage: Mapping[str, ModelTokens] | None = field(
        default=None, metadata=spec(omit=OMIT_DEFAULT)
    )
