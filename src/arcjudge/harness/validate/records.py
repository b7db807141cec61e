"""The records ``arcjudge validate`` writes line by line, and reading them back.

``verdicts.jsonl`` holds one :class:`VerdictRecord` per (task, source); ``suspects.jsonl``
holds the differential analysis's findings, each a :class:`SuspectSample`, a
:class:`DisputedInput` or an :class:`AmbiguousTask` (told apart by their ``kind`` key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from arcjudge.grids import Grid, to_lists
from arcjudge.harness.core.jsonl import read_records
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


def _grid(value: Any) -> Grid:
    """A JSON grid (list of lists of ints) as a :data:`~arcjudge.grids.Grid`."""
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        raise TypeError(f"not a grid: {value!r:.80}")
    return tuple(tuple(int(c) for c in row) for row in value)


def _names(value: Any) -> tuple[str, ...]:
    """A JSON list of strings (source names, findings) as a tuple."""
    if not isinstance(value, list):
        raise TypeError(f"not a list of strings: {value!r:.80}")
    return tuple(str(name) for name in value)


@dataclass(frozen=True)
class VerdictRecord:
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
        tally: Counts per split and first failures, when the program ran.
        error: The error of a program that did not get to run on the inputs.
        findings: Policy findings of a program that ran (written only when non-empty).
    """

    task_id: str
    source: str
    provenance: Mapping[str, str]
    verdict: Verdict
    tally: Tally | None = None
    error: str | None = None
    findings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.tally is not None and self.error is not None:
            raise ValueError("a verdict has either a tally or an error, not both")
        if self.verdict is Verdict.MISSING and (self.tally is not None or self.findings):
            raise ValueError("a missing verdict has no tally and no findings")

    def to_json(self) -> dict[str, Any]:
        """The ``verdicts.jsonl`` object (``error`` only for a program that did not run)."""
        record: dict[str, Any] = {
            "task_id": self.task_id,
            "source": self.source,
            "provenance": dict(self.provenance),
            "verdict": self.verdict,
        }
        if self.tally is not None:
            record.update(self.tally.to_json())
        elif self.verdict is not Verdict.MISSING:
            record["error"] = self.error
        if self.findings:
            record["findings"] = list(self.findings)
        return record

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerdictRecord:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A key is missing.
            TypeError, ValueError: A value has the wrong shape (or an unknown verdict).
        """
        provenance = data["provenance"]
        if not isinstance(provenance, Mapping):
            raise TypeError("provenance is not an object")
        return cls(
            task_id=str(data["task_id"]),
            source=str(data["source"]),
            provenance={str(k): str(v) for k, v in provenance.items()},
            verdict=Verdict(data["verdict"]),
            tally=Tally.from_json(data) if "splits" in data else None,
            error=None if data.get("error") is None else str(data["error"]),
            findings=_names(data["findings"]) if "findings" in data else (),
        )


@dataclass(frozen=True)
class _AtInput:
    """The input a differential record is about (the fields every kind shares).

    Attributes:
        task_id: The task.
        split: The input's split (``probe`` for an ambiguity flag).
        index: Its index in the split.
        seed: Its generator seed (``None`` for a task file's pair).
        input: The input grid.
    """

    kind: ClassVar[str]
    task_id: str
    split: Split
    index: int
    seed: int | None
    input: Grid

    def _at_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "kind": self.kind,
            "split": self.split,
            "index": self.index,
            "seed": self.seed,
            "input": to_lists(self.input),
        }

    @staticmethod
    def _at(data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "task_id": str(data["task_id"]),
            "split": Split(data["split"]),
            "index": int(data["index"]),
            "seed": None if data["seed"] is None else int(data["seed"]),
            "input": _grid(data["input"]),
        }


@dataclass(frozen=True)
class SuspectSample(_AtInput):
    """An input where trusted verifiers agree with each other, not with the expected output.

    Attributes:
        expected: The output the task or generator gave.
        agreeing_output: What the largest agreeing group of verifiers returned.
        sources: That group's source names.
    """

    kind: ClassVar[str] = "suspect"
    expected: Grid
    agreeing_output: Grid
    sources: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``suspects.jsonl`` object (``kind`` ``suspect``)."""
        return {
            **self._at_json(),
            "expected": to_lists(self.expected),
            "agreeing_output": to_lists(self.agreeing_output),
            "sources": list(self.sources),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuspectSample:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError, TypeError, ValueError: The object is not a suspect sample.
        """
        return cls(
            **cls._at(data),
            expected=_grid(data["expected"]),
            agreeing_output=_grid(data["agreeing_output"]),
            sources=_names(data["sources"]),
        )


@dataclass(frozen=True)
class DisputedOutput:
    """One of the outputs trusted verifiers returned on a disputed input."""

    output: Grid
    sources: tuple[str, ...]
    is_expected: bool

    def to_json(self) -> dict[str, Any]:
        """``{"output", "sources", "is_expected"}``."""
        return {
            "output": to_lists(self.output),
            "sources": list(self.sources),
            "is_expected": self.is_expected,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DisputedOutput:
        """Read what :meth:`to_json` wrote."""
        return cls(_grid(data["output"]), _names(data["sources"]), bool(data["is_expected"]))


@dataclass(frozen=True)
class DisputedInput(_AtInput):
    """An input where trusted verifiers return different outputs.

    Attributes:
        expected: The expected output.
        outputs: Each distinct output with the sources that returned it.
    """

    kind: ClassVar[str] = "disputed"
    expected: Grid
    outputs: tuple[DisputedOutput, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``suspects.jsonl`` object (``kind`` ``disputed``)."""
        return {
            **self._at_json(),
            "expected": to_lists(self.expected),
            "outputs": [o.to_json() for o in self.outputs],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DisputedInput:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError, TypeError, ValueError: The object is not a disputed input.
        """
        return cls(
            **cls._at(data),
            expected=_grid(data["expected"]),
            outputs=tuple(DisputedOutput.from_json(o) for o in data["outputs"]),
        )


@dataclass(frozen=True)
class ProbeOutput:
    """One of the outputs trusted verifiers returned on a probe sample."""

    output: Grid
    sources: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"output", "sources"}``."""
        return {"output": to_lists(self.output), "sources": list(self.sources)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeOutput:
        """Read what :meth:`to_json` wrote."""
        return cls(_grid(data["output"]), _names(data["sources"]))


@dataclass(frozen=True)
class AmbiguousTask(_AtInput):
    """A task whose trusted verifiers disagree on a probe sample (the first one found).

    Attributes:
        outputs: Each distinct output with the sources that returned it.
    """

    kind: ClassVar[str] = "ambiguous"
    outputs: tuple[ProbeOutput, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``suspects.jsonl`` object (``kind`` ``ambiguous``)."""
        return {**self._at_json(), "outputs": [o.to_json() for o in self.outputs]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AmbiguousTask:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError, TypeError, ValueError: The object is not an ambiguity flag.
        """
        return cls(
            **cls._at(data), outputs=tuple(ProbeOutput.from_json(o) for o in data["outputs"])
        )


DifferentialRecord = SuspectSample | DisputedInput | AmbiguousTask
"""A line of ``suspects.jsonl``."""

_KINDS: dict[str, type[SuspectSample] | type[DisputedInput] | type[AmbiguousTask]] = {
    cls.kind: cls for cls in (SuspectSample, DisputedInput, AmbiguousTask)
}


def differential_from_json(data: Mapping[str, Any]) -> DifferentialRecord:
    """Read one ``suspects.jsonl`` object, whichever its ``kind``.

    Raises:
        KeyError, TypeError, ValueError: The object is not one of the three kinds.
    """
    kind = data["kind"]
    if kind not in _KINDS:
        raise ValueError(f"unknown kind {kind!r:.40}")
    return _KINDS[kind].from_json(data)


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
