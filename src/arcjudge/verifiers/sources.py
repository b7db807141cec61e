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
directory mounted read-only so their own imports work. A source's files are read by the
rule for untrusted paths (``untrusted_files``) inside the source's directory: a file that
is a symlink out of it (``<task>.py -> another team's file``), a FIFO, a device or over
:data:`MAX_SOURCE_BYTES` is *refused* for its task (``TaskProgram.refused`` says why) and
the other tasks go on; a symlink inside the directory is read, and the provenance records
the file it resolves to.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, read_regular
from arcjudge.sandbox.types import InputFormat, Program
from arcjudge.verifiers.slicing import FunctionIndex, index_functions, slice_function
from arcjudge.vocabulary import GENERATOR_ENTRY_POINT, VERIFIER_ENTRY_POINTS

VERIFIER_KINDS = ("re-arc", "golf", "module")
GENERATOR_KINDS = ("arc-gen", "re-arc")
RE_ARC_DIFFICULTY = (("diff_lb", 0.0), ("diff_ub", 1.0))
MAX_SOURCE_BYTES = 64 << 20
"""The largest source file read (64 MiB; RE-ARC's 400-verifier file is about 0.3 MiB)."""


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
        provenance: Source kind, file (resolved: the file read), sha256 of the file,
            entry point.
        refused: Why the task's file was not read (``program`` is then ``None``): e.g.
            ``<path>: a symlink out of its directory (to <target>)``.
    """

    program: Program | None
    provenance: dict[str, str] = field(default_factory=dict)
    refused: str | None = None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Refused(Exception):
    """A source file the rule refuses (the message says why); its task's problem."""


def _read(path: Path, within: Path) -> tuple[bytes, Path] | None:
    """A source file's bytes and the path they were read from (symlinks resolved).

    Returns:
        ``None`` when there is no such file.

    Raises:
        _Refused: A symlink out of ``within``, not a regular file, or too large.
        SourceError: It cannot be read (permissions, I/O).
    """
    try:
        data = read_regular(str(path), within=str(within), max_bytes=MAX_SOURCE_BYTES)
    except FileNotFoundError:
        return None
    except RefusedPath as exc:
        raise _Refused(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror})") from None
    return data, Path(os.path.realpath(path))


@dataclass
class _SlicedFile:
    """A many-function file (RE-ARC style), read and indexed once."""

    path: Path
    within: Path
    prefix: str

    @classmethod
    def of_checkout(
        cls, directory: Path, file: str, prefix: str, owner: str, given: str | Path
    ) -> _SlicedFile:
        """A RE-ARC checkout's many-function ``file`` (its functions named ``prefix<id>``).

        Raises:
            SourceError: ``OWNER: GIVEN: no FILE (not a RE-ARC checkout)`` when it is not
                there (``given``: the directory as the spec named it).
        """
        sliced = cls(directory / file, directory, prefix)
        if not sliced.path.is_file():
            raise SourceError(f"{owner}: {given}: no {file} (not a RE-ARC checkout)")
        return sliced

    @cached_property
    def read(self) -> tuple[bytes, Path] | str:
        """The file's bytes and resolved path, or why it is refused."""
        try:
            found = _read(self.path, self.within)
        except _Refused as exc:
            return str(exc)
        if found is None:
            raise SourceError(f"{self.path}: no such file")
        return found

    @cached_property
    def index(self) -> FunctionIndex:
        assert not isinstance(self.read, str)
        return index_functions(self.read[0], self.prefix)

    def program_source(self, function: str) -> bytes | None:
        """The file reduced to ``function``, or ``None`` when the file lacks it."""
        assert not isinstance(self.read, str)
        if self.index.error is not None:
            return self.read[0]  # let the sandbox report the load error, per task
        if function not in self.index.names:
            return None
        return slice_function(self.read[0], self.index, function)

    def program_for(
        self, function: str, kind: str, make: Callable[[bytes], Program]
    ) -> TaskProgram:
        """``function``'s program (made by ``make`` from its source), or why there is none."""
        prov = {"kind": kind, "file": str(self.path), "entry_point": function}
        if isinstance(self.read, str):
            return TaskProgram(None, prov, refused=self.read)
        source = self.program_source(function)
        if source is None:
            return TaskProgram(None, prov)
        data, resolved = self.read
        prov |= {"file": str(resolved), "sha256": _sha256(data)}
        return TaskProgram(make(source), prov)

    def task_program(
        self,
        task_id: str,
        kind: str,
        module_dirs: tuple[str, ...],
        input_format: InputFormat,
        name: str,
    ) -> TaskProgram:
        """A task's function (``prefix`` + task id) as the program ``name``, or why none.

        Args:
            task_id: The task.
            kind: The source's kind (for the provenance).
            module_dirs: What the program may import from.
            input_format: How it takes grids (``list`` or ``tuple``).
            name: The program's name in outputs.
        """
        entry = f"{self.prefix}{task_id}"
        return self.program_for(
            entry, kind, lambda source: Program(source, (entry,), module_dirs, input_format, name)
        )


def _file_program(
    file: Path, within: Path, prov: dict[str, str], make: Callable[[bytes], Program]
) -> TaskProgram:
    """The program of a one-task file (an empty or absent file: none), or why not."""
    try:
        found = _read(file, within)
    except _Refused as exc:
        return TaskProgram(None, prov, refused=str(exc))
    if found is None or not found[0].strip():
        return TaskProgram(None, prov)
    data, resolved = found
    prov |= {"file": str(resolved), "sha256": _sha256(data)}
    return TaskProgram(make(data), prov)


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
            self._file = _SlicedFile.of_checkout(self.path, "verifiers.py", "verify_", name, path)
        if kind == "golf":
            self._numbers = {tid: f"task{i:03d}" for i, tid in enumerate(training_ids(), 1)}

    @property
    def module_dirs(self) -> tuple[str, ...]:
        """Directories the sandbox must make importable for this source."""
        return (str(self.path),) if self.kind in ("re-arc", "module") else ()

    def program_for(self, task_id: str) -> TaskProgram:
        """Return this source's program for a task (``program`` is ``None`` if missing).

        A file the rule for untrusted paths refuses gives no program and ``refused``.
        """
        name = f"{self.name}:{task_id}"
        if self.kind == "re-arc":
            return self._file.task_program(task_id, self.kind, self.module_dirs, "tuple", name)
        if self.kind == "golf":
            number = self._numbers.get(task_id)
            prov = {"kind": self.kind, "file": "", "entry_point": "p"}
            if not number:
                return TaskProgram(None, prov)
            file = self.path / f"{number}.py"
            prov["file"] = str(file)
            return _file_program(
                file, self.path, prov, lambda data: Program(data, ("p",), (), "list", name)
            )
        file = self.path / f"{task_id}.py"
        prov = {"kind": self.kind, "file": str(file), "entry_point": "|".join(self.entry_points)}
        return _file_program(
            file,
            self.path,
            prov,
            lambda data: Program(data, self.entry_points, self.module_dirs, "list", name),
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
            self._file = _SlicedFile.of_checkout(
                self.path, "generators.py", "generate_", "generator", path
            )
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
        """Return the generator program for a task (``program`` is ``None`` if missing).

        A file the rule for untrusted paths refuses gives no program and ``refused``.
        """
        name = f"generator:{task_id}"
        if self.kind == "re-arc":
            return self._file.task_program(task_id, self.kind, self.module_dirs, "list", name)
        entry = GENERATOR_ENTRY_POINT
        file = self.path / "tasks" / f"task_{task_id}.py"
        prov = {"kind": self.kind, "file": str(file), "entry_point": entry}
        return _file_program(
            file,
            self.path,
            prov,
            lambda data: Program(data, (entry,), self.module_dirs, "list", name),
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
