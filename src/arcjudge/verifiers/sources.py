"""Adapters that turn third-party verifier and generator sources into per-task programs.

Verifier kinds (``--source NAME=KIND:PATH``):
- ``re-arc``: a RE-ARC checkout: ``verifiers.py`` (``from dsl import *``; one
  ``verify_<task_id>(I)`` per task) next to ``dsl.py``; grids are tuples of tuples.
- ``golf``: a directory of ``task001.py`` ... ``task400.py`` defining ``p(g)``; ``taskNNN``
  is the NNN-th ARC-AGI-1 training task id in sorted order. Empty or absent: no solution.
- ``module``: a directory of ``<task_id>.py``, each defining an entry point (``--entrypoint``,
  default tried in order: verify, transform, solve, p).

Generator kinds (``--generator KIND:PATH``):
- ``arc-gen``: an ARC-GEN checkout: ``common.py`` and ``tasks/task_<task_id>.py`` defining
  ``generate(**params)``.
- ``re-arc``: ``generators.py`` (``generate_<task_id>(diff_lb, diff_ub)``) with ``dsl.py``
  and ``utils.py``.

Sources are read here only as bytes (parsed, never run); they run in the sandbox, with their
directory mounted read-only so their own imports work.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.sandbox.types import Program
from arcjudge.verifiers.slicing import FunctionIndex, index_functions, slice_function
from arcjudge.vocabulary import GENERATOR_ENTRY_POINT, VERIFIER_ENTRY_POINTS

VERIFIER_KINDS = ("re-arc", "golf", "module")
GENERATOR_KINDS = ("arc-gen", "re-arc")
RE_ARC_DIFFICULTY = (("diff_lb", 0.0), ("diff_ub", 1.0))


class SourceError(InputError):
    """A source specification or directory is unusable; the message says why."""


def training_ids() -> list[str]:
    """Return the 400 ARC-AGI-1 training task ids in sorted order (golf numbering)."""
    text = resources.files("arcjudge.data").joinpath("arc_agi_1_training_ids.txt").read_text()
    return [line.strip() for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class TaskProgram:
    """A source's program for one task, with where it came from.

    Attributes:
        program: What the sandbox runs (``None`` when the source has nothing for the task).
        provenance: Source kind, file, sha256 of the file, entry point.
    """

    program: Program | None
    provenance: dict[str, str] = field(default_factory=dict)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from None


@dataclass
class _SlicedFile:
    """A many-function file (RE-ARC style), read and indexed once."""

    path: Path
    prefix: str

    @cached_property
    def data(self) -> bytes:
        data = _read(self.path)
        if data is None:
            raise SourceError(f"{self.path}: no such file")
        return data

    @cached_property
    def index(self) -> FunctionIndex:
        return index_functions(self.data, self.prefix)

    def program_source(self, function: str) -> bytes | None:
        """The file reduced to ``function``, or ``None`` when the file lacks it."""
        if self.index.error is not None:
            return self.data  # let the sandbox report the load error, per task
        if function not in self.index.names:
            return None
        return slice_function(self.data, self.index, function)


class VerifierSource:
    """A named verifier source: ``NAME=KIND:PATH``.

    Args:
        name: The source's name in outputs.
        kind: One of ``VERIFIER_KINDS``.
        path: Its directory.
        entry_points: For ``module`` sources, names tried in order.
    """

    def __init__(
        self,
        name: str,
        kind: str,
        path: str | Path,
        entry_points: tuple[str, ...] = VERIFIER_ENTRY_POINTS,
    ) -> None:
        if kind not in VERIFIER_KINDS:
            raise SourceError(
                f"unknown verifier source kind {kind!r} (choose from {', '.join(VERIFIER_KINDS)})"
            )
        self.name = name
        self.kind = kind
        self.path = Path(path).resolve()
        self.entry_points = entry_points
        if not self.path.is_dir():
            raise SourceError(f"{name}: {path}: no such directory")
        if kind == "re-arc":
            self._file = _SlicedFile(self.path / "verifiers.py", "verify_")
            if not self._file.path.is_file():
                raise SourceError(f"{name}: {path}: no verifiers.py (not a RE-ARC checkout)")
        if kind == "golf":
            self._numbers = {tid: f"task{i:03d}" for i, tid in enumerate(training_ids(), 1)}

    @property
    def module_dirs(self) -> tuple[str, ...]:
        """Directories the sandbox must make importable for this source."""
        return (str(self.path),) if self.kind in ("re-arc", "module") else ()

    def program_for(self, task_id: str) -> TaskProgram:
        """Return this source's program for a task (``program`` is ``None`` if missing)."""
        if self.kind == "re-arc":
            entry = f"verify_{task_id}"
            source = self._file.program_source(entry)
            prov = {"kind": self.kind, "file": str(self._file.path), "entry_point": entry}
            if source is None:
                return TaskProgram(None, prov)
            prov["sha256"] = _sha256(self._file.data)
            return TaskProgram(
                Program(source, (entry,), self.module_dirs, "tuple", f"{self.name}:{task_id}"),
                prov,
            )
        if self.kind == "golf":
            number = self._numbers.get(task_id)
            file = self.path / f"{number}.py" if number else None
            data = _read(file) if file else None
            prov = {"kind": self.kind, "file": str(file) if file else "", "entry_point": "p"}
            if not data or not data.strip():
                return TaskProgram(None, prov)
            prov["sha256"] = _sha256(data)
            return TaskProgram(Program(data, ("p",), (), "list", f"{self.name}:{task_id}"), prov)
        file = self.path / f"{task_id}.py"
        data = _read(file)
        prov = {"kind": self.kind, "file": str(file), "entry_point": "|".join(self.entry_points)}
        if not data or not data.strip():
            return TaskProgram(None, prov)
        prov["sha256"] = _sha256(data)
        return TaskProgram(
            Program(data, self.entry_points, self.module_dirs, "list", f"{self.name}:{task_id}"),
            prov,
        )


class GeneratorSource:
    """A generator source: ``KIND:PATH``; draws samples inside the sandbox."""

    def __init__(self, kind: str, path: str | Path) -> None:
        if kind not in GENERATOR_KINDS:
            raise SourceError(
                f"unknown generator kind {kind!r} (choose from {', '.join(GENERATOR_KINDS)})"
            )
        self.kind = kind
        self.path = Path(path).resolve()
        if not self.path.is_dir():
            raise SourceError(f"generator: {path}: no such directory")
        if kind == "re-arc":
            self._file = _SlicedFile(self.path / "generators.py", "generate_")
            if not self._file.path.is_file():
                raise SourceError(f"generator: {path}: no generators.py (not a RE-ARC checkout)")
        elif not (self.path / "tasks").is_dir():
            raise SourceError(f"generator: {path}: no tasks/ directory (not an ARC-GEN checkout)")

    @property
    def module_dirs(self) -> tuple[str, ...]:
        """Directories the sandbox must make importable for this source."""
        return (str(self.path),)

    @property
    def kwargs(self) -> tuple[tuple[str, object], ...]:
        """Keyword arguments of every call (RE-ARC: the full difficulty range)."""
        return RE_ARC_DIFFICULTY if self.kind == "re-arc" else ()

    def program_for(self, task_id: str) -> TaskProgram:
        """Return the generator program for a task (``program`` is ``None`` if missing)."""
        if self.kind == "re-arc":
            entry = f"generate_{task_id}"
            source = self._file.program_source(entry)
            prov = {"kind": self.kind, "file": str(self._file.path), "entry_point": entry}
        else:
            entry = GENERATOR_ENTRY_POINT
            file = self.path / "tasks" / f"task_{task_id}.py"
            source = _read(file)
            prov = {"kind": self.kind, "file": str(file), "entry_point": entry}
        if not source:
            return TaskProgram(None, prov)
        prov["sha256"] = _sha256(source)
        return TaskProgram(
            Program(source, (entry,), self.module_dirs, "list", f"generator:{task_id}"), prov
        )


def parse_verifier_spec(
    text: str, entry_points: tuple[str, ...] = VERIFIER_ENTRY_POINTS
) -> VerifierSource:
    """Parse ``NAME=KIND:PATH`` into a source.

    Raises:
        SourceError: On a malformed spec, unknown kind or missing directory.
    """
    name, eq, rest = text.partition("=")
    kind, colon, path = rest.partition(":")
    if not (eq and colon and name and kind and path):
        raise SourceError(f"source {text!r}: expected NAME=KIND:PATH (e.g. golf1=golf:./golf)")
    return VerifierSource(name, kind, path, entry_points)


def parse_generator_spec(text: str) -> GeneratorSource:
    """Parse ``KIND:PATH`` into a generator source.

    Raises:
        SourceError: On a malformed spec, unknown kind or missing directory.
    """
    kind, colon, path = text.partition(":")
    if not (colon and kind and path):
        raise SourceError(f"generator {text!r}: expected KIND:PATH (e.g. arc-gen:./ARC-GEN)")
    return GeneratorSource(kind, path)
