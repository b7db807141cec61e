"""The records ``arcjudge score`` writes: result lines, timing lines and the summary.

Each record has one :meth:`to_json` (the object written, with ``sort_keys``) and one
``from_json`` that reads it back (raising ``KeyError``, ``TypeError`` or ``ValueError`` on
a malformed object; readers of files turn those into :class:`~arcjudge.errors.InputError`).

A result carries the program record's own fields (``model``, ``run``, anything else but
``code`` and ``response``). The keys a result writes win over a field of the same name.
Reading back, a key a result writes only sometimes (``splits``, ``statuses``,
``first_failure``, ``status``, ``findings``, ``extraction``, ``entry_points``) is the
result's when it holds what a result writes there, else a carried field: either way the
line is written again byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self, TypeAlias, TypeVar

from arcjudge.harness.core.stats import wilson_interval
from arcjudge.harness.core.tally import Tally
from arcjudge.sandbox.types import ProgramStatus
from arcjudge.vocabulary import FAILURE_CLASSES, FailureClass

__all__ = [
    "INFRA",
    "SCORE_FAILURES",
    "ExtractionRecord",
    "GroupSummary",
    "ScoreFailure",
    "ScoreResult",
    "ScoreSummary",
    "TimingLine",
    "parse_failure",
]

INFRA: Literal["infra"] = "infra"
"""The failure of a program the sandbox (not the program) failed on."""

ScoreFailure: TypeAlias = FailureClass | Literal["infra"]
"""Why a program failed: its failure class, or ``infra``."""

SCORE_FAILURES: tuple[ScoreFailure, ...] = (*FAILURE_CLASSES, INFRA)
"""Every failure a result may have, in the order summaries count them."""

_TALLY_KEYS = ("splits", "statuses", "first_failure")


def parse_failure(value: object) -> ScoreFailure:
    """The failure named by ``value``.

    Raises:
        ValueError: ``value`` names no failure.
    """
    if value == INFRA:
        return INFRA
    if isinstance(value, str) and value in set(FAILURE_CLASSES):
        return FailureClass(value)
    raise ValueError(f"unknown failure {value!r}")


def _identifier(value: object, name: str) -> str | int:
    if not isinstance(value, str | int):
        raise TypeError(f"{name} must be a string or an integer, not {value!r}")
    return value


def _optional_str(value: object, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a string or null, not {value!r}")
    return value


@dataclass(frozen=True)
class ExtractionRecord:
    """Which fenced block of a ``response`` was taken as the program, and why.

    Attributes:
        block: The chosen block's index among the reply's code blocks (``None``: none).
        blocks: How many code blocks the reply has.
        reason: How the block was chosen.
        fence_unclosed: Whether the chosen block's fence was never closed.
    """

    block: int | None
    blocks: int
    reason: str
    fence_unclosed: bool

    def to_json(self) -> dict[str, Any]:
        """``{"block", "blocks", "reason", "fence_unclosed"}``."""
        return {
            "block": self.block,
            "blocks": self.blocks,
            "reason": self.reason,
            "fence_unclosed": self.fence_unclosed,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A key is missing.
            TypeError: A value has the wrong type.
        """
        block, blocks, reason = data["block"], data["blocks"], data["reason"]
        unclosed = data["fence_unclosed"]
        if not (block is None or isinstance(block, int)) or not isinstance(blocks, int):
            raise TypeError("extraction block and blocks must be integers")
        if not isinstance(reason, str) or not isinstance(unclosed, bool):
            raise TypeError("extraction reason must be a string, fence_unclosed a boolean")
        return cls(block, blocks, reason, unclosed)


@dataclass(frozen=True)
class ScoreResult:
    """One line of ``results.jsonl``: what happened to one program.

    Exactly one of three shapes: the program ran (``tally`` set), it did not load
    (``status`` and ``error`` set), or there was nothing to run (``error`` only: no code in
    the reply). The verdict is ``pass`` exactly when ``failure`` is ``None``.

    Attributes:
        id: The program record's id.
        task_id: The task it answers.
        code_sha256: SHA-256 of the program text run.
        failure: ``None`` for a pass, else why it failed.
        tally: Per split counts and first failures, when the program loaded.
        status: The load status, when it did not load.
        error: The end of the load error, or why nothing ran.
        findings: Policy findings on the program (written only when there are some).
        extraction: For a ``response`` record: which block was taken (else absent).
        fields: The program record's other fields (``model``, ``run``, ...).
        entry_points: The entry points the program was run with, tried in order (what
            ``--entrypoint`` gave; written when known), so that whoever runs the program
            again (``dimensions score``'s self-consistency) calls the same function.
    """

    id: str | int
    task_id: str | int
    code_sha256: str
    failure: ScoreFailure | None
    tally: Tally | None = None
    status: ProgramStatus | None = None
    error: str | None = None
    findings: tuple[str, ...] = ()
    extraction: ExtractionRecord | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    entry_points: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether the program passed (its verdict is ``pass``)."""
        return self.failure is None

    @property
    def model(self) -> str | None:
        """The summary group of the program: its ``model`` field as text, if it has one."""
        return str(self.fields["model"]) if "model" in self.fields else None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the line (the program record's fields first, then ours)."""
        record: dict[str, Any] = {
            **self.fields,
            "id": self.id,
            "task_id": self.task_id,
            "code_sha256": self.code_sha256,
        }
        if self.extraction is not None:
            record["extraction"] = self.extraction.to_json()
        if self.entry_points:
            record["entry_points"] = list(self.entry_points)
        record["verdict"] = "pass" if self.failure is None else "fail"
        record["failure"] = self.failure
        if self.tally is not None:
            record.update(self.tally.to_json())
        else:
            if self.status is not None:
                record["status"] = self.status.value
            record["error"] = self.error
        if self.findings:
            record["findings"] = list(self.findings)
        return record

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read a line :meth:`to_json` wrote.

        Raises:
            KeyError: A key is missing.
            TypeError, ValueError: A value has the wrong shape, or the verdict does not
                match the failure.
        """
        own = {"id", "task_id", "code_sha256", "verdict", "failure"}
        failure = None if data["failure"] is None else parse_failure(data["failure"])
        verdict = data["verdict"]
        if verdict not in ("pass", "fail") or (verdict == "pass") != (failure is None):
            raise ValueError(f"verdict {verdict!r} does not fit failure {failure!r}")
        sha = data["code_sha256"]
        if not isinstance(sha, str):
            raise TypeError("code_sha256 must be a string")
        tally = _read_back(Tally.from_json, {k: data[k] for k in _TALLY_KEYS if k in data})
        status = error = None
        if tally is not None:
            own.update(_TALLY_KEYS)
        elif failure is None:
            raise ValueError("a passing program needs its splits, statuses and first failures")
        else:
            error = _optional_str(data["error"], "error")
            own.add("error")
            status = _read_back(ProgramStatus, data.get("status"))
            if status is not None and status is not ProgramStatus.LOADED:
                own.add("status")
            else:
                status = None
        findings = _read_back(_findings, data.get("findings"))
        if findings:
            own.add("findings")
        extraction = _read_back(ExtractionRecord.from_json, data.get("extraction"))
        if extraction is not None:
            own.add("extraction")
        entry_points = _read_back(_entry_points, data.get("entry_points"))
        if entry_points is not None:
            own.add("entry_points")
        return cls(
            id=_identifier(data["id"], "id"),
            task_id=_identifier(data["task_id"], "task_id"),
            code_sha256=sha,
            failure=failure,
            tally=tally,
            status=status,
            error=error,
            findings=tuple(findings or ()),
            extraction=extraction,
            fields={k: v for k, v in data.items() if k not in own},
            entry_points=tuple(entry_points or ()),
        )


T = TypeVar("T")


def _read_back(read: Callable[[Any], T], value: object) -> T | None:
    """``read(value)`` when that is what a result writes as ``value``, else ``None``.

    A result carries its program record's fields, so a key it may write (``status``,
    ``findings``, ...) may instead hold a field of the same name the result did not write.
    """
    if value is None:
        return None
    try:
        parsed = read(value)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    to_json = getattr(parsed, "to_json", None)
    written = to_json() if callable(to_json) else parsed
    return parsed if written == value else None


def _entry_points(value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise TypeError("entry_points is a non-empty list of names")
    if not all(isinstance(e, str) and e.isidentifier() for e in value):
        raise TypeError("entry_points must be Python identifiers")
    return value


def _findings(value: object) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(f, str) for f in value):
        raise TypeError("findings are a non-empty list of strings")
    return value


@dataclass(frozen=True)
class TimingLine:
    """One line of ``timings.jsonl``: sandbox seconds spent on a program (0 when cached)."""

    id: str | int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """``{"id", "seconds"}``."""
        return {"id": self.id, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A key is missing.
            TypeError: A value has the wrong type.
        """
        seconds = data["seconds"]
        if not isinstance(seconds, int | float) or isinstance(seconds, bool):
            raise TypeError(f"seconds must be a number, not {seconds!r}")
        return cls(_identifier(data["id"], "id"), seconds)


def _rate(count: int, n: int) -> float:
    return round(count / n, 6) if n else 0.0


@dataclass(frozen=True)
class GroupSummary:
    """A group's counts (one model's programs, or all); rates are derived from them.

    Attributes:
        programs: How many programs.
        passed: How many passed.
        failures: Failed programs per failure, in :data:`SCORE_FAILURES` order.
    """

    programs: int
    passed: int
    failures: Mapping[ScoreFailure, int]

    @classmethod
    def of(cls, results: Iterable[ScoreResult]) -> Self:
        """The counts of some results."""
        listed = list(results)
        counts = {f: sum(r.failure == f for r in listed) for f in SCORE_FAILURES}
        return cls(len(listed), sum(r.passed for r in listed), counts)

    @property
    def pass_rate_ci95(self) -> tuple[float, float]:
        """The Wilson 95% interval of the pass rate (rounded to 6 places)."""
        low, high = wilson_interval(self.passed, self.programs)
        return round(low, 6), round(high, 6)

    def to_json(self) -> dict[str, Any]:
        """Programs, pass rate with its interval, failure counts and shares."""
        n = self.programs
        return {
            "programs": n,
            "passed": self.passed,
            "pass_rate": _rate(self.passed, n),
            "pass_rate_ci95": list(self.pass_rate_ci95),
            "failures": {str(f): self.failures.get(f, 0) for f in SCORE_FAILURES},
            "failure_shares": {str(c): _rate(self.failures.get(c, 0), n) for c in FAILURE_CLASSES},
            "load_failure_share": _rate(self.failures.get(FailureClass.STATIC, 0), n),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read the counts :meth:`to_json` wrote (the rates follow from them).

        Raises:
            KeyError: A key is missing.
            TypeError, ValueError: A count is not an integer, or a failure is unknown.
        """
        failures = {parse_failure(k): int(v) for k, v in data["failures"].items()}
        return cls(int(data["programs"]), int(data["passed"]), failures)


@dataclass(frozen=True)
class ScoreSummary:
    """``summary.json``: the run's settings and per group statistics.

    Attributes:
        programs: Programs scored.
        programs_file: The programs file (resolved path).
        seed: The generator seed.
        samples: Generator samples per task.
        wall_seconds: Seconds allowed per call.
        groups: ``(all)`` first, then each model, sorted.
        generator: Per task, what drawing (and verifying) generator samples gave.
    """

    programs: int
    programs_file: str
    seed: int
    samples: int
    wall_seconds: float
    groups: Mapping[str, GroupSummary]
    generator: Mapping[str, Mapping[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``summary.json``."""
        return {
            "programs": self.programs,
            "programs_file": self.programs_file,
            "seed": self.seed,
            "samples": self.samples,
            "limits": {"wall_seconds": self.wall_seconds},
            "groups": {name: g.to_json() for name, g in self.groups.items()},
            "generator": {t: dict(r) for t, r in self.generator.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` wrote.

        Raises:
            KeyError: A key is missing.
            TypeError, ValueError: A value has the wrong shape.
        """
        generator, wall = data["generator"], data["limits"]["wall_seconds"]
        if not isinstance(wall, int | float) or isinstance(wall, bool):
            raise TypeError(f"wall_seconds must be a number, not {wall!r}")
        if not isinstance(generator, Mapping) or not all(
            isinstance(r, Mapping) for r in generator.values()
        ):
            raise TypeError("generator must map task ids to objects")
        return cls(
            int(data["programs"]),
            str(data["programs_file"]),
            int(data["seed"]),
            int(data["samples"]),
            wall,
            {str(k): GroupSummary.from_json(v) for k, v in data["groups"].items()},
            {str(t): dict(r) for t, r in generator.items()},
        )
