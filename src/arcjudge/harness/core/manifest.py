"""``validate``'s ``manifest.json``, declared once: written by validate, read by the others.

:class:`Manifest` and its nested records are the file's fields (a
:class:`~arcjudge.harness.core.record.Record` each); ``validate`` builds one and writes its
``to_json`` (``sort_keys``, ``indent=1``); :func:`read_manifest` (for mutate, score
``--verifiers`` and dimensions) reads it back through ``Manifest.from_json``, its errors
naming the file and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.jsonl import json_value
from arcjudge.harness.core.record import OMIT_DEFAULT, Record, RecordError, spec
from arcjudge.verifiers.sources import VerifierSource
from arcjudge.vocabulary import Verdict

__all__ = [
    "Manifest",
    "ManifestCoverage",
    "ManifestDifferential",
    "ManifestFile",
    "ManifestGenerator",
    "ManifestSource",
    "ManifestTask",
    "read_manifest",
]


@dataclass(frozen=True)
class ManifestSource(Record):
    """A verifier source validate checked.

    Attributes:
        name: Its name (``--source NAME=...``).
        kind: One of ``VERIFIER_KINDS``.
        path: Its directory (as resolved by validate).
    """

    name: str
    kind: str
    path: str


@dataclass(frozen=True)
class ManifestGenerator(Record):
    """The generator validate drew samples from.

    Attributes:
        kind: Its kind.
        path: Its directory.
    """

    kind: str
    path: str


@dataclass(frozen=True)
class ManifestCoverage(Record):
    """How many tasks have a valid verifier.

    Attributes:
        tasks: Tasks validated.
        covered: Tasks with at least one valid source.
        fraction: ``covered / tasks`` rounded to 6 places (0.0 with no task).
        unsampled: Tasks checked on fewer generator samples than asked (``None``: a
            manifest older than this count).
        covered_unsampled: Of those, the tasks with a source right on every input it had
            (``valid_unsampled``; ``valid``, and in ``covered``, with
            ``allow_missing_samples``; ``None``: an older manifest).
    """

    tasks: int
    covered: int
    fraction: float
    unsampled: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    covered_unsampled: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))


def _not_quarantining(counts: ManifestDifferential) -> bool:
    return counts.covered_quarantined is None


@dataclass(frozen=True)
class ManifestDifferential(Record):
    """What the differential analysis found, in tasks.

    Attributes:
        tasks_with_suspects: Tasks with at least one suspect sample.
        tasks_only_suspect_failures: Uncovered tasks whose sources fail only on suspects.
        tasks_with_disputes: Tasks where valid sources disagree.
        tasks_ambiguous: Tasks flagged ambiguous.
        covered_quarantined: Tasks covered once suspects are quarantined (written only
            with ``--quarantine-suspects``).
    """

    tasks_with_suspects: int
    tasks_only_suspect_failures: int
    tasks_with_disputes: int
    tasks_ambiguous: int
    covered_quarantined: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))


def _not_quarantined(entry: ManifestTask) -> bool:
    return entry.valid_quarantined is None


@dataclass(frozen=True)
class ManifestTask(Record):
    """One task's line in the manifest.

    Attributes:
        chosen: The first valid source (``None``: none is valid).
        valid: Every valid source, in the sources' order.
        splits: Inputs per split the task had (splits sorted).
        valid_quarantined: With ``--quarantine-suspects``: the sources valid once suspect
            samples are quarantined, besides ``valid`` (else not written).
        chosen_quarantined: With ``--quarantine-suspects``: the first source valid either
            way (written, maybe ``null``, exactly when ``valid_quarantined`` is).
        suspects: Suspect samples (with more than one source; else not written).
        disputes: Disputed inputs (with more than one source).
        ambiguous: Whether the task is ambiguous (with more than one source).
        generator: What drawing the task's generator samples gave (with a generator).
        valid_unsampled: The sources right on every input the task had, when it had fewer
            generator samples than asked (not in ``valid``; written only when there is
            one; none with ``allow_missing_samples``, where they are ``valid``).
    """

    chosen: str | None
    valid: tuple[str, ...]
    splits: Mapping[str, int]
    valid_quarantined: tuple[str, ...] | None = field(
        default=None, metadata=spec(omit=OMIT_DEFAULT)
    )
    chosen_quarantined: str | None = field(default=None, metadata=spec(omit=_not_quarantined))
    suspects: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    disputes: int | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    ambiguous: bool | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    generator: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    valid_unsampled: tuple[str, ...] = field(default=(), metadata=spec(omit=OMIT_DEFAULT))


@dataclass(frozen=True)
class Manifest(Record):
    """``manifest.json``: what validate decided, per task, and how it was run.

    Attributes:
        sources: The verifier sources, in the order given.
        generator: The generator samples were drawn from (``None``: none).
        seed: The generator seed.
        samples: Generator samples per task that grade a verifier.
        probe_samples: Further samples per task that only probe.
        quarantine_suspects: Whether ``--quarantine-suspects`` was given.
        wall_seconds: Seconds allowed per call (``limits.wall_seconds``).
        coverage: How many tasks have a valid verifier.
        differential: What the differential analysis found.
        per_source: Source name -> verdict -> tasks (every verdict, in its order).
        tasks: Task id -> its entry, sorted.
        task_set: What ``--tasks`` named, when it was a task set (written only then).
        allow_missing_samples: Whether ``--allow-missing-samples`` was given: a verifier
            right on the inputs of a task short of generator samples is ``valid`` (and
            failed samples were dropped, not redrawn). Always written; a manifest without
            it (older than the rule) reads ``True``, the rule it was made under.

    Raises:
        RecordError: (when read) A task's ``chosen`` source is not among ``sources``.
    """

    sources: tuple[ManifestSource, ...]
    generator: ManifestGenerator | None
    seed: int
    samples: int
    probe_samples: int
    quarantine_suspects: bool
    wall_seconds: float = field(metadata=spec(key=("limits", "wall_seconds")))
    coverage: ManifestCoverage
    differential: ManifestDifferential
    per_source: Mapping[str, Mapping[Verdict, int]]
    tasks: Mapping[str, ManifestTask]
    task_set: Mapping[str, Any] | None = field(default=None, metadata=spec(omit=OMIT_DEFAULT))
    allow_missing_samples: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        names = {s.name for s in self.sources}
        for task_id, entry in self.tasks.items():
            if entry.chosen and entry.chosen not in names:
                raise RecordError(
                    f"source {entry.chosen!r} is not described in 'sources'",
                    ("tasks", task_id, "chosen"),
                )

    @property
    def chosen(self) -> dict[str, str]:
        """Task id -> the source chosen for it (tasks without a valid source absent)."""
        return {t: e.chosen for t, e in self.tasks.items() if e.chosen}

    @property
    def valid(self) -> dict[str, set[str]]:
        """Task id -> names of every source valid for it."""
        return {t: set(e.valid) for t, e in self.tasks.items()}

    def source(self, name: str) -> ManifestSource:
        """The source named ``name``.

        Raises:
            KeyError: No source has that name.
        """
        for source in self.sources:
            if source.name == name:
                return source
        raise KeyError(name)

    def verifier_source(self, name: str) -> VerifierSource:
        """The :class:`VerifierSource` the manifest describes under ``name``."""
        source = self.source(name)
        return VerifierSource(name, source.kind, source.path)


@dataclass(frozen=True)
class ManifestFile:
    """A manifest as read, and the file it was read from.

    Attributes:
        path: The ``manifest.json`` read.
        manifest: Its record.
    """

    path: Path
    manifest: Manifest


def read_manifest(directory: Path) -> ManifestFile:
    """Read ``DIRECTORY/manifest.json`` through :class:`Manifest`.

    Raises:
        InputError: When it is missing, unreadable, or not a validate manifest (naming the
            file and the field: a missing or malformed field, a chosen source not
            described).
    """
    path = directory / "manifest.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{directory}: no manifest.json (run arcjudge validate)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    try:
        data = json_value(text)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        manifest = Manifest.from_json(data)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: not a validate manifest ({exc})") from None
    return ManifestFile(path, manifest)
