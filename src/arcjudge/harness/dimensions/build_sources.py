"""What ``dimensions build`` reads: the manifest's verifiers, task files, and candidate sources.

:class:`BuildSources` reads each input once and hands the builder (:mod:`.build`) what it
asks for: a task, its chosen verifier's program, the human errors, each task's
neighbours for retrieval. A task or verifier that cannot be used is recorded in
``skipped`` (with the reason ``build.json`` lists), never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from arcjudge.errors import InputError
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.core.keys import module_fingerprint
from arcjudge.harness.core.manifest import read_manifest
from arcjudge.harness.dimensions.corruptions import CandidatePair, load_neighbours
from arcjudge.harness.dimensions.embeddings import (
    BASELINE_FEATURES,
    baseline_embeddings,
    nearest_neighbours,
    read_embeddings,
)
from arcjudge.harness.dimensions.human_errors import load_human_errors
from arcjudge.harness.dimensions.records import VerifierSpec
from arcjudge.sandbox.types import Program
from arcjudge.tasks import Pair, Task, TaskFormatError, load_task, task_files
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource

__all__ = ["BuildSources", "as_input_error", "read_corruptions"]

T = TypeVar("T")


def as_input_error(read: Callable[[Path], T], path: Path) -> T:
    """``read(path)``, a ``ValueError`` or ``OSError`` of a bad file an ``InputError``.

    The readers of human errors and neighbours raise those (their message names the
    file); the command line shows an ``InputError`` as one line, never a traceback.
    """
    try:
        return read(path)
    except InputError:
        raise
    except (ValueError, OSError) as exc:
        raise InputError(str(exc)) from None


def read_corruptions(path: Path) -> dict[str, list[CandidatePair]]:
    """Read ``corruptions.jsonl`` of ``arcjudge mutate`` (file order kept per task).

    Raises:
        InputError: The file is unreadable or a line is not a corruption record
            (``FILE:LINE: not a corruption record (field ...)``).
    """
    result: dict[str, list[CandidatePair]] = {}
    for _, c in read_records(path, CorruptionRecord.from_json, "a corruption record"):
        detail = {"mutant_id": c.mutant_id, "split": c.split.value, "index": c.index}
        result.setdefault(c.task_id, []).append(
            CandidatePair(c.task_id, c.KIND, c.input, c.output, c.correct_output, detail)
        )
    return result


class BuildSources:
    """The manifest, the task files and the human errors of a build, read once.

    Args:
        tasks_dir: Task JSON files (ARC or Kaggle format).
        manifest_dir: A ``validate`` output directory (each task's ``chosen`` verifier).
        human_errors_file: H-ARC's ``incorrect_submissions.csv`` or a ``human_errors.json``.

    Raises:
        InputError: The manifest or the human errors cannot be read.
    """

    def __init__(self, tasks_dir: Path, manifest_dir: Path, human_errors_file: Path | None) -> None:
        self.manifest = read_manifest(manifest_dir).manifest
        self.chosen = self.manifest.chosen
        self.task_paths = {p.stem: p for p in task_files(tasks_dir)}
        self.human = (
            as_input_error(load_human_errors, human_errors_file) if human_errors_file else None
        )
        self.skipped: dict[str, str] = {}
        self._programs: dict[str, VerifierSource] = {}
        self._fingerprints: dict[str, str] = {}

    def task(self, task_id: str) -> Task | None:
        """Load a task (not kept: ARC-GEN pairs are large; the caller keeps what it needs)."""
        path = self.task_paths.get(task_id)
        if path is None:
            return None
        try:
            return load_task(path)
        except TaskFormatError as exc:
            self.skipped[task_id] = f"unreadable task: {exc}"
            return None

    def source(self, name: str) -> VerifierSource:
        """The manifest's source ``name`` (built once: RE-ARC files are sliced on load)."""
        if name not in self._programs:
            self._programs[name] = self.manifest.verifier_source(name)
        return self._programs[name]

    def verifier(self, task_id: str) -> tuple[VerifierSpec, Program] | None:
        """The task's chosen verifier and its program, or ``None`` (reason in ``skipped``)."""
        name = self.chosen.get(task_id)
        if not name:
            self.skipped[task_id] = "no valid verifier in the manifest"
            return None
        tp = self.source(name).program_for(task_id)
        program = tp.program
        if program is None:
            why = "has no program for the task" if tp.refused is None else f"refused {tp.refused}"
            self.skipped[task_id] = f"source {name!r} {why}"
            return None
        described = self.manifest.source(name)
        return VerifierSpec(name, described.kind, described.path), program

    def fingerprint(self, name: str) -> str:
        """``module_fingerprint`` of source ``name``'s module directories (computed once)."""
        if name not in self._fingerprints:
            self._fingerprints[name] = module_fingerprint(self.source(name).module_dirs)
        return self._fingerprints[name]

    def module_dirs(self, generator: GeneratorSource | None) -> tuple[str, ...]:
        """Directories the chosen verifier sources and the generator import from."""
        dirs: list[str] = []
        for name in sorted(set(self.chosen.values())):
            dirs.extend(d for d in self.source(name).module_dirs if d not in dirs)
        if generator is not None:
            dirs.extend(d for d in generator.module_dirs if d not in dirs)
        return tuple(dirs)

    def neighbours(
        self,
        neighbours_file: Path | None,
        embeddings_file: Path | None,
        baseline_retrieval: bool,
        k: int,
    ) -> tuple[dict[str, list[str]], dict[str, Any]]:
        """Each task's neighbours for retrieval, and where they came from (``build.json``).

        Raises:
            InputError: The neighbours or embeddings file cannot be read.
            ValueError: Both files are given (a programmer error: the command refuses it).
        """
        if neighbours_file is not None and embeddings_file is not None:
            raise ValueError("give a neighbours file or an embeddings file, not both")
        if neighbours_file is not None:
            return as_input_error(load_neighbours, neighbours_file), {
                "source": "neighbours", "file": str(neighbours_file),
            }  # fmt: skip
        if embeddings_file is None and not baseline_retrieval:
            return {}, {"source": "none"}
        ids = sorted(self.task_paths)
        if embeddings_file is not None:
            given = read_embeddings(embeddings_file, ids)
            vectors = {t: v for t, v in given.items() if t in self.task_paths}
            info: dict[str, Any] = {"source": "embeddings", "file": str(embeddings_file),
                                    "embedded": len(given)}  # fmt: skip
        else:
            vectors = baseline_embeddings(self.demonstrations(ids))
            info = {"source": "baseline embedding", "features": list(BASELINE_FEATURES)}
        info.update(k=k, tasks=len(vectors))
        return nearest_neighbours(vectors, k), info

    def demonstrations(self, task_ids: Iterable[str]) -> dict[str, tuple[Pair, ...]]:
        """The train pairs of each readable task of ``task_ids``, in that order."""
        demos = {}
        for task_id in task_ids:
            task = self.task(task_id)
            if task is not None:
                demos[task_id] = task.train
        return demos
