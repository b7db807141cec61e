"""The records ``arcjudge validate`` writes line by line, and reading them back.

``verdicts.jsonl`` holds one :class:`VerdictRecord` per (task, source); ``suspects.jsonl``
holds the differential analysis's findings, each a :class:`SuspectSample`, a
:class:`DisputedInput` or an :class:`AmbiguousTask` (told apart by their ``kind`` key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from arcjudge.grids import Grid
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.core.record import OMIT_DEFAULT, Record, spec, tagged
from arcjudge.harness.core.tally import Tally
from arcjudge.vocabulary import Split, Verdict

__all__ = [
    "AmbiguousTask",
    "DifferentialRecord",
    "DisputedInput",
    "DisputedOutput",
    "ProbeOutput",
    "SuspectSample",
    "VerdictRecord",
    "differential_from_json",
    "read_suspects",
    "read_verdicts",
]


def _no_error_written(record: VerdictRecord) -> bool:
    return record.tally is not None or record.verdict is Verdict.MISSING


@dataclass(frozen=True)
class VerdictRecord(Record):
    """What ``validate`` decided about one verifier source on one task.

    A source with nothing for the task (``missing``) carries neither counts nor error; a
    program that never got to the inputs (it failed to load, was rejected by the policy,
    or the sandbox failed first) carries ``error`` (the end of its error text, possibly
    ``None``); a program that ran carries its ``tally`` and any policy ``findings``.

    Attributes:
        task_id: The task.
        source: The verifier source's name.
        provenance: Where the program came from (kind, file, sha256, entry point).
        verdict: The verdict.
        tally: Counts per split and first failures, when the program ran (its keys are
            the line's).
        error: The error of a program that did not get to run on the inputs (written
            exactly then, even ``None``).
        findings: Policy findings of a program that ran (written only when non-empty).
    """

    task_id: str
    source: str
    provenance: Mapping[str, str]
    verdict: Verdict
    tally: Tally | None = field(default=None, metadata=spec(flatten=True))
    error: str | None = field(default=None, metadata=spec(omit=_no_error_written))
    findings: tuple[str, ...] = field(default=(), metadata=spec(omit=OMIT_DEFAULT))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tally is not None and self.error is not None:
            raise ValueError("a verdict has either a tally or an error, not both")
        if self.verdict is Verdict.MISSING and (self.tally is not None or self.findings):
            raise ValueError("a missing verdict has no tally and no findings")


@dataclass(frozen=True)
class _AtInput(Record):
    """The input a differential record is about (the fields every kind shares).

    Attributes:
        task_id: The task.
        kind: Which kind of record (``suspect``, ``disputed``, ``ambiguous``): the
            class's, written, never given.
        split: The input's split (``probe`` for an ambiguity flag).
        index: Its index in the split.
        seed: Its generator seed (``None`` for a task file's pair).
        input: The input grid.
    """

    task_id: str
    kind: str = field(init=False, default="", metadata=spec(derived=True))
    split: Split
    index: int
    seed: int | None
    input: Grid


@dataclass(frozen=True)
class SuspectSample(_AtInput):
    """An input where trusted verifiers agree with each other, not with the expected output.

    Attributes:
        expected: The output the task or generator gave.
        agreeing_output: What the largest agreeing group of verifiers returned.
        sources: That group's source names.
    """

    kind: str = field(init=False, default="suspect", metadata=spec(derived=True))
    expected: Grid
    agreeing_output: Grid
    sources: tuple[str, ...]


@dataclass(frozen=True)
class DisputedOutput(Record):
    """One of the outputs trusted verifiers returned on a disputed input."""

    output: Grid
    sources: tuple[str, ...]
    is_expected: bool


@dataclass(frozen=True)
class DisputedInput(_AtInput):
    """An input where trusted verifiers return different outputs.

    Attributes:
        expected: The expected output.
        outputs: Each distinct output with the sources that returned it.
    """

    kind: str = field(init=False, default="disputed", metadata=spec(derived=True))
    expected: Grid
    outputs: tuple[DisputedOutput, ...]


@dataclass(frozen=True)
class ProbeOutput(Record):
    """One of the outputs trusted verifiers returned on a probe sample."""

    output: Grid
    sources: tuple[str, ...]


@dataclass(frozen=True)
class AmbiguousTask(_AtInput):
    """A task whose trusted verifiers disagree on a probe sample (the first one found).

    Attributes:
        outputs: Each distinct output with the sources that returned it.
    """

    kind: str = field(init=False, default="ambiguous", metadata=spec(derived=True))
    outputs: tuple[ProbeOutput, ...]


DifferentialRecord = SuspectSample | DisputedInput | AmbiguousTask
"""A line of ``suspects.jsonl``."""

_read_differential = tagged("kind", SuspectSample, DisputedInput, AmbiguousTask)


def differential_from_json(data: Mapping[str, object]) -> DifferentialRecord:
    """Read one ``suspects.jsonl`` object, whichever its ``kind``.

    Raises:
        RecordError: The object is not one of the three kinds (naming the field).
    """
    return cast(DifferentialRecord, _read_differential(data))


def read_verdicts(path: Path) -> list[VerdictRecord]:
    """Read a ``verdicts.jsonl`` file.

    Raises:
        InputError: The file is unreadable or a line is not a verdict (``FILE:LINE``).
    """
    return [r for _, r in read_records(path, VerdictRecord.from_json, "a validate record")]


def read_suspects(path: Path) -> list[DifferentialRecord]:
    """Read a ``suspects.jsonl`` file.

    Raises:
        InputError: The file is unreadable or a line is not a suspect, dispute or ambiguity
            flag (``FILE:LINE``).
    """
    return [r for _, r in read_records(path, differential_from_json, "a validate record")]
