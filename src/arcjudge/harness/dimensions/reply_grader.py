"""Grading one raw model reply at a time, the way an evaluation framework's scorer asks.

:class:`ReplyGrader` grades each reply with :class:`~.grading.DimensionScorer` itself, over
a one-line instances file (the reply's instance, with the build's ``build.json`` beside it)
and a one-line replies file, so a reply graded here gets the item that ``dimensions score
--replies`` gives it in a whole run: the same parsing, the same rule, the same verifier
calls (and, for Definition, the same ``arcjudge score`` run) through the engine and the
result store. What needs several replies of a model at once is left to the whole run:
self-consistency (a model's Definition program on its other answers) is not computed here.
One sandbox and one store serve every reply; both are opened at the first
:meth:`ReplyGrader.grade` and closed by :meth:`ReplyGrader.close`. A grader is used from one
thread at a time (the store is SQLite).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.grading import (
    DimensionScoreConfig,
    DimensionScorer,
    read_instances,
)
from arcjudge.harness.dimensions.records import DimensionInstance, DimensionItem, prompt_id
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.backends import make_sandbox
from arcjudge.vocabulary import Dimension

__all__ = ["ReplyGrader"]

_BUILD = "build.json"
"""The build's record beside ``instances.jsonl`` (Definition replies are scored on the
inputs it names)."""


def _line(data: dict[str, Any]) -> str:
    return json_dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


class ReplyGrader:
    """Grades one raw reply at a time against the instances of a ``dimensions build``.

    Args:
        config: The grading configuration (``min_distance``, ``strict_generation``,
            ``attempts``, limits...); its ``instances_file`` is what every reply is graded
            against (with ``build.json`` beside it for Definition replies); its answers
            and replies files are not read.
        backend: The sandbox backend (``auto``, ``process``, ``docker``, or a registered one).
        workers: The sandbox's pool size (default: one per core).
        store: The result store's file (default: a temporary one, removed at close).
        warn: Receives one-line warnings (e.g. ``auto`` falling back to ``process``).

    Raises:
        InputError: When the instances file is not a ``dimensions build`` output.
    """

    def __init__(
        self,
        config: DimensionScoreConfig,
        *,
        backend: str = "auto",
        workers: int | None = None,
        store: Path | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.backend = backend
        self.workers = workers
        self.store_path = store
        self.warn = warn
        self.instances: dict[str, DimensionInstance] = {
            prompt_id(task_id, dim): instance
            for (task_id, dim), instance in read_instances(config.instances_file).items()
        }
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._sandbox: Sandbox | None = None
        self._store: ResultStore | None = None

    def instance(self, reply_id: str) -> DimensionInstance:
        """The instance a reply id (``TASK_ID/DIMENSION``) names.

        Raises:
            InputError: When the instances have no such instance.
        """
        instance = self.instances.get(reply_id)
        if instance is None:
            raise InputError(f"{self.config.instances_file}: no instance {reply_id[:80]!r}")
        return instance

    def _config(self, instances: Path, replies: Path) -> DimensionScoreConfig:
        return dataclasses.replace(
            self.config, instances_file=instances, answers_file=None, replies_file=replies
        )

    def _module_dirs(self, folder: Path) -> tuple[str, ...]:
        """What every reply's programs import from.

        The verifiers' directories, and the generator's that Definition replies are
        scored with (when the build names one).
        """
        replies = folder / "module-dirs.jsonl"
        replies.write_text("", encoding="utf-8")
        dirs = DimensionScorer(self._config(self.config.instances_file, replies)).module_dirs()
        definition = next(
            (i for i, x in self.instances.items() if x.dimension is Dimension.DEFINITION), None
        )
        if definition is not None:
            replies.write_text(
                _line({"id": definition, "model": "-", "run": "-", "reply": ""}), encoding="utf-8"
            )
            try:
                scorer = DimensionScorer(self._config(self.config.instances_file, replies))
            except InputError:  # no usable build.json: a Definition reply will say so
                return dirs
            dirs = scorer.module_dirs()
        return dirs

    def _open(self) -> tuple[Path, Sandbox, ResultStore]:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="arcjudge-replies-")
            build = self.config.instances_file.parent / _BUILD
            if build.is_file():
                (Path(self._dir.name) / _BUILD).write_bytes(build.read_bytes())
        folder = Path(self._dir.name)
        if self._sandbox is None:
            self._sandbox = make_sandbox(
                self.backend, self.workers, module_dirs=self._module_dirs(folder), warn=self.warn
            )
        if self._store is None:
            self._store = ResultStore(self.store_path or folder / "cache.sqlite")
        return folder, self._sandbox, self._store

    def grade(self, reply_id: str, model: str, run: str, reply: str) -> DimensionItem:
        """Grade one reply; programs run in the sandbox, through the result store.

        Args:
            reply_id: The prompt's id, ``TASK_ID/DIMENSION``.
            model: The model (as it appears in the item).
            run: The run (an epoch, as text).
            reply: The model's raw reply.

        Returns:
            The item ``dimensions score --replies`` gives the reply (its ``answer_line``
            is 1, the one-line file's; ``how`` says how the reply was read).

        Raises:
            InputError: For an id without an instance, or a Definition reply when the
                build's record (``build.json``) is missing or names missing inputs.
        """
        instance = self.instance(reply_id)
        folder, sandbox, store = self._open()
        instances = folder / "instance.jsonl"
        instances.write_text(_line(instance.to_json()), encoding="utf-8")
        replies = folder / "reply.jsonl"
        replies.write_text(
            _line({"id": reply_id, "model": model, "run": run, "reply": reply}), encoding="utf-8"
        )
        scorer = DimensionScorer(self._config(instances, replies))
        scorer.run(sandbox, store)
        (item,) = scorer.items
        return item

    def close(self) -> None:
        """Close the sandbox and the store and remove the temporary files (safe twice)."""
        sandbox, self._sandbox = self._sandbox, None
        store, self._store = self._store, None
        folder, self._dir = self._dir, None
        try:
            if sandbox is not None:
                sandbox.close()
        finally:
            try:
                if store is not None:
                    store.close()
            finally:
                if folder is not None:
                    folder.cleanup()
