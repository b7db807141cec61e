"""What ``dimensions score`` reads: answers, replies and Definition results, as records.

The readers turn an answers JSONL, a replies JSONL or an ``arcjudge score`` output
directory into typed records per item ``(model, run, task, dimension)``. A malformed line
never stops a read: it is counted and listed in :class:`ReadProblems` (the summary's
``answers_problems``), and a reply that gives no answer keeps the reason
(``unparsable: ...``) for its item. A replies line may carry the reply's token ``usage``
(``{"input", "output", "reasoning"}``) and the generation ``settings`` it was made with;
both are kept per item (a malformed one is listed as a problem and left out, the reply is
still graded). Nothing here runs a program or grades.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.grids import Grid
from arcjudge.harness.core.jsonl import json_value, read_records, read_text_lines
from arcjudge.harness.core.programs import read_programs
from arcjudge.harness.core.record import RecordError
from arcjudge.harness.dimensions.records import DimensionAnswer, DimensionInstance, TokenUsage
from arcjudge.harness.dimensions.strategies import STRATEGIES, parse_answer, parse_reply
from arcjudge.harness.score.records import ScoreResult, ScoreSummary
from arcjudge.sandbox.types import ProgramStatus
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension, ScoreFailure, ScoreVerdict, Split

__all__ = [
    "AnswerKey",
    "AnswersRead",
    "DefinitionReply",
    "DefinitionResult",
    "DefinitionsRead",
    "ParsedAnswer",
    "ReadAnswer",
    "ReadProblems",
    "ReplyExtras",
    "parsed_answer",
    "read_answers",
    "read_definitions",
    "read_replies",
]

AnswerKey = tuple[str, str, str, Dimension]
"""``(model, run, task_id, dimension)``: an item."""

Instances = Mapping[tuple[str, Dimension], DimensionInstance]

_PROBLEM_LIMIT = 200
"""Problems listed in the summary (all are counted)."""


@dataclass
class ReadProblems:
    """The lines that were not read as answers: listed (up to a limit) and counted.

    Attributes:
        texts: ``line N: why``, the first :data:`_PROBLEM_LIMIT` of them.
        count: All of them.
        duplicates: Second answers (or replies) for the same item.
        unmatched: Lines naming no instance of the build.
    """

    texts: list[str] = field(default_factory=list)
    count: int = 0
    duplicates: int = 0
    unmatched: int = 0

    def add(self, text: str) -> None:
        """Count a problem; list it while under the limit."""
        self.count += 1
        if len(self.texts) < _PROBLEM_LIMIT:
            self.texts.append(text)


@dataclass(frozen=True)
class ReadAnswer:
    """An answer read, with its line in the answers (or replies) file.

    ``how`` is how a reply was parsed (``None`` for an answers file); ``problem`` why a
    reply had no answer (``unparsable: ...``).
    """

    line: int
    record: DimensionAnswer
    how: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer in the shape its dimension's rule takes, or why it has none.

    Attributes:
        value: What the strategy's ``parse_answer`` returned (``None`` with a problem).
        problem: Why there is no value (the reply's or the answer's).
        verifier_input: The grid the task's verifier runs on for this answer, if any.
    """

    value: object = None
    problem: str | None = None
    verifier_input: Grid | None = None


def parsed_answer(read: ReadAnswer) -> ParsedAnswer:
    """An answer line parsed by its dimension's strategy (never raises on an answer)."""
    answer = read.record
    if read.problem is not None:
        return ParsedAnswer(problem=read.problem)
    if not answer.answered:
        return ParsedAnswer(problem="the line has no 'answer' field")
    value, reason = parse_answer(answer.dimension, answer.answer)
    if value is None:
        return ParsedAnswer(problem=reason or "not understood")
    verifier_input = STRATEGIES[answer.dimension].verifier_input
    return ParsedAnswer(value, None, verifier_input(value) if verifier_input else None)


@dataclass(frozen=True)
class DefinitionReply:
    """A Definition reply: scored as a program by ``score``'s scorer."""

    line: int
    model: str
    run: str
    task_id: str
    reply: object


@dataclass(frozen=True)
class ReplyExtras:
    """What a replies line says about how its reply was made, beside the reply.

    Attributes:
        usage: The reply's token usage (``None``: not recorded).
        settings: The generation settings (``None``: not recorded).
    """

    usage: TokenUsage | None = None
    settings: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class AnswersRead:
    """An answers or replies file, read: the answers per item and what was not read.

    ``extras``: per item, a replies line's usage and settings (only items whose line has
    either).
    """

    answers: dict[AnswerKey, ReadAnswer]
    definition_replies: list[DefinitionReply]
    problems: ReadProblems
    extras: dict[AnswerKey, ReplyExtras] = field(default_factory=dict)


@dataclass(frozen=True)
class DefinitionResult:
    """The fields of an ``arcjudge score`` result that grading uses."""

    program: str | int
    verdict: ScoreVerdict
    failure: ScoreFailure | None
    status: ProgramStatus | None
    splits: Mapping[str, tuple[int, int]]
    code_sha256: str
    entry_points: tuple[str, ...] | None = None  # what score ran it with, when recorded

    @classmethod
    def of(cls, result: ScoreResult) -> DefinitionResult:
        """The fields of a score result."""
        return cls(
            result.id,
            result.verdict,
            result.failure,
            result.status,
            {} if result.tally is None else result.tally.splits,
            result.code_sha256,
            result.entry_points or None,
        )

    def passes_train_test(self) -> bool:
        """Right on every train and test pair (and at least one of each), no load failure."""
        if self.status:
            return False
        parts = [self.splits.get(s) for s in (Split.TRAIN, Split.TEST)]
        return all(p is not None and p[0] == p[1] and p[1] > 0 for p in parts)


@dataclass(frozen=True)
class DefinitionsRead:
    """An ``arcjudge score`` output directory, read.

    Attributes:
        definitions: The result per ``(model, run, task_id)``.
        codes: Program code by its SHA-256 (for self-consistency; empty without programs).
        notes: What was not used, and why (the summary's ``definition_notes``).
    """

    definitions: dict[tuple[str, str, str], DefinitionResult]
    codes: dict[str, str]
    notes: list[str]


def _objects(path: Path, problems: ReadProblems) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` per line; other lines are listed as problems."""
    for number, text in enumerate(read_text_lines(path), 1):
        if not text.strip():
            continue
        try:
            data = json_value(text)
        except ValueError as exc:
            problems.add(f"line {number}: not valid JSON ({exc})")
            continue
        if not isinstance(data, dict):
            problems.add(f"line {number}: not a JSON object")
            continue
        yield number, data


def read_answers(path: Path, instances: Instances) -> AnswersRead:
    """Answers already in JSON, one per item (Definition answers are not read here).

    Args:
        path: The answers JSONL (``{task_id, dimension, model, run, answer}`` a line;
            optionally ``usage`` and ``settings``).
        instances: The build's instances by ``(task_id, dimension)``.
    """
    problems = ReadProblems()
    answers: dict[AnswerKey, ReadAnswer] = {}
    extras: dict[AnswerKey, ReplyExtras] = {}
    for number, data in _objects(path, problems):
        try:
            record = DimensionAnswer.from_json(data)
        except ValueError as exc:  # says what is missing or unknown
            problems.add(f"line {number}: {exc}")
            continue
        dimension, task_id = record.dimension, record.task_id
        if dimension is Dimension.DEFINITION:
            problems.add(f"line {number}: definition is scored from --definitions; ignored")
            continue
        if (task_id, dimension) not in instances:
            problems.unmatched += 1
            problems.add(f"line {number}: no {dimension} instance for task {task_id[:40]!r}")
            continue
        key = (record.model, record.run, task_id, dimension)
        if key in answers:
            problems.duplicates += 1
            problems.add(f"line {number}: second answer for the same item; ignored")
            continue
        answers[key] = ReadAnswer(number, record)
        found = _extras(data, number, problems)
        if found is not None:
            extras[key] = found
    return AnswersRead(answers, [], problems, extras)


def _extras(data: Mapping[str, Any], number: int, problems: ReadProblems) -> ReplyExtras | None:
    """A replies line's ``usage`` and ``settings`` (``None``: it has neither usable)."""
    usage: TokenUsage | None = None
    settings: Mapping[str, Any] | None = None
    if data.get("usage") is not None:
        try:
            if not isinstance(data["usage"], dict):
                raise RecordError("expected object, got " + type(data["usage"]).__name__)
            usage = TokenUsage.from_json(data["usage"])
        except RecordError as exc:
            problems.add(f"line {number}: 'usage' ignored ({exc})")
    if data.get("settings") is not None:
        if isinstance(data["settings"], dict):
            settings = dict(data["settings"])
        else:
            problems.add(f"line {number}: 'settings' ignored (not a JSON object)")
    return None if usage is None and settings is None else ReplyExtras(usage, settings)


def read_replies(path: Path, instances: Instances, attempts: int) -> AnswersRead:
    """Raw replies, each parsed into an answer (Definition replies kept as text).

    Args:
        path: The replies JSONL (``{id, model, run, reply}`` a line; ``id`` a prompt's;
            optionally ``usage`` and ``settings``).
        instances: The build's instances by ``(task_id, dimension)``.
        attempts: Output grid: candidates read per test input.
    """
    problems = ReadProblems()
    answers: dict[AnswerKey, ReadAnswer] = {}
    extras: dict[AnswerKey, ReplyExtras] = {}
    definition_replies: list[DefinitionReply] = []
    definition_keys: set[AnswerKey] = set()
    for number, data in _objects(path, problems):
        missing = [k for k in ("id", "model", "run") if data.get(k) is None]
        if "reply" not in data:
            missing.append("reply")
        if missing:
            problems.add(f"line {number}: missing {', '.join(missing)}")
            continue
        task_id, _, name = str(data["id"]).rpartition("/")
        dimension = Dimension(name) if name in BUILT_DIMENSIONS else None
        if dimension is None or (task_id, dimension) not in instances:
            problems.unmatched += 1
            problems.add(f"line {number}: no prompt {str(data['id'])[:60]!r} in the instances")
            continue
        key = (str(data["model"]), str(data["run"]), task_id, dimension)
        if key in answers or key in definition_keys:
            problems.duplicates += 1
            problems.add(f"line {number}: second reply for the same item; ignored")
            continue
        reply = data["reply"]
        found = _extras(data, number, problems)
        if found is not None:
            extras[key] = found
        if dimension is Dimension.DEFINITION:
            definition_replies.append(DefinitionReply(number, *key[:3], reply))
            definition_keys.add(key)
            continue
        tests = 1
        if dimension is Dimension.OUTPUT_GRID:
            tests = len(instances[(task_id, dimension)].test_inputs())
        parsed = parse_reply(dimension, reply, tests=tests, attempts=attempts)
        record = DimensionAnswer(task_id, dimension, key[0], key[1], parsed.answer)
        problem = None if parsed.ok else parsed.how
        answers[key] = ReadAnswer(number, record, parsed.how, problem)
    return AnswersRead(answers, definition_replies, problems, extras)


def read_definitions(
    directory: Path, programs_file: Path | None, entry_points: tuple[str, ...]
) -> DefinitionsRead:
    """Definition results of an ``arcjudge score`` run, and the code of its programs.

    Args:
        directory: The ``arcjudge score`` output directory (its ``results.jsonl``).
        programs_file: The programs file score read; ``None``: the one its
            ``summary.json`` names, if it is there.
        entry_points: The entry points for results that do not record theirs.
    """
    definitions: dict[tuple[str, str, str], DefinitionResult] = {}
    notes: list[str] = []
    codes: dict[str, str] = {}
    results = read_records(directory / "results.jsonl", ScoreResult.from_json, "a score result")
    for number, result in results:
        model, run = result.fields.get("model"), result.fields.get("run")
        if model is None or run is None:
            notes.append(f"line {number}: no model or run field; not used")
            continue
        key = (str(model), str(run), str(result.task_id))
        if key in definitions:
            notes.append(f"line {number}: second program for {key}; ignored")
            continue
        definitions[key] = DefinitionResult.of(result)
    programs = programs_file
    if programs is None:
        try:
            summary = json_value((directory / "summary.json").read_text(encoding="utf-8"))
            recorded = ScoreSummary.from_json(summary).programs_file
        except (OSError, ValueError):  # none, or not score's: the programs file is not known
            recorded = None
        programs = Path(recorded) if recorded and Path(recorded).is_file() else None
    if programs is None:
        notes.append("no programs file (give --programs): self-consistency not computed")
        return DefinitionsRead(definitions, codes, notes)
    # Code is extracted from replies with the entry points score used (they decide
    # which block is the program), so read once per entry-point list the results name.
    lists = {d.entry_points or entry_points for d in definitions.values()}
    for points in sorted(lists or {entry_points}):
        for record in read_programs(programs, points):
            code_hash = hashlib.sha256(record.code.encode("utf-8")).hexdigest()
            codes[code_hash] = record.code
    return DefinitionsRead(definitions, codes, notes)
