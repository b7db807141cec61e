"""Grading one raw model reply at a time, the way an evaluation framework's scorer asks.

:class:`ReplyGrader` grades each reply with :class:`~.grading.DimensionScorer` itself, over
a one-line instances file (the reply's instance) and a one-line replies file, so a reply
graded here gets exactly the item that ``dimensions score`` gives it in a whole run: the
same parsing, the same rule, the same verifier calls through the engine and the result
store. One sandbox and one store serve every reply; both are opened at the first
:meth:`ReplyGrader.grade` and closed by :meth:`ReplyGrader.close`. A grader is used from one
thread at a time (the store is SQLite).

Until ``DimensionScoreConfig`` reads raw replies (its ``replies_file`` field), a reply is
parsed here with :func:`.replies.parse_reply` and graded as a one-line answers file, which
covers the dimensions that parser reads (classification, generation, editing, inversion).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
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
from arcjudge.harness.dimensions.replies import parse_reply
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Sandbox
from arcjudge.sandbox.backends import make_sandbox
from arcjudge.vocabulary import Dimension

__all__ = ["READS_REPLIES", "GradedReply", "ReplyGrader", "reply_parsers"]

READS_REPLIES = "replies_file" in {f.name for f in dataclasses.fields(DimensionScoreConfig)}
"""Whether ``DimensionScoreConfig`` grades raw replies itself (``dimensions score --replies``)."""

_PARSED_HERE = (
    Dimension.CLASSIFICATION,
    Dimension.GENERATION,
    Dimension.EDITING,
    Dimension.INVERSION,
)


def reply_parsers() -> tuple[Dimension, ...] | None:
    """The dimensions whose replies can be graded, or ``None`` for every dimension.

    ``None`` once ``DimensionScoreConfig`` reads raw replies; before that, the dimensions
    :func:`.replies.parse_reply` reads.
    """
    return None if READS_REPLIES else _PARSED_HERE


@dataclass(frozen=True)
class GradedReply:
    """A reply's item and how the reply was read.

    Attributes:
        item: The item ``dimensions score`` gives this reply (``answer_line`` is 1: the
            one-line file's).
        how: How the reply was read (``"rows of digits"``, ``"unparsable: ..."``), or
            ``None`` for a dimension without a reply parser (definition, output_grid).
    """

    item: DimensionItem
    how: str | None


def _line(data: dict[str, Any]) -> str:
    return json_dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def _how(dimension: Dimension, reply: str) -> str | None:
    try:
        return parse_reply(dimension, reply).how
    except ValueError:  # no reply parser for this dimension
        return None


class ReplyGrader:
    """Grades one raw reply at a time against the instances of a ``dimensions build``.

    Args:
        config: The grading configuration (``min_distance``, ``strict_generation``,
            limits...); its ``instances_file`` is the instances every reply is graded
            against, its answers (or replies) file is not read.
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

    def _open(self) -> tuple[Path, Sandbox, ResultStore]:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="arcjudge-replies-")
        folder = Path(self._dir.name)
        if self._sandbox is None:
            empty = folder / "empty.jsonl"
            empty.write_text("", encoding="utf-8")
            every = DimensionScorer(self._config(self.config.instances_file, empty))
            self._sandbox = make_sandbox(
                self.backend, self.workers, module_dirs=every.module_dirs(), warn=self.warn
            )
        if self._store is None:
            self._store = ResultStore(self.store_path or folder / "cache.sqlite")
        return folder, self._sandbox, self._store

    def _config(self, instances: Path, reply_file: Path) -> DimensionScoreConfig:
        if READS_REPLIES:
            fields: dict[str, Any] = {"answers_file": None, "replies_file": reply_file}
        else:
            fields = {"answers_file": reply_file}
        return dataclasses.replace(self.config, instances_file=instances, **fields)

    def grade(self, reply_id: str, model: str, run: str, reply: str) -> GradedReply:
        """Grade one reply; verifier calls run in the sandbox, through the result store.

        Args:
            reply_id: The prompt's id, ``TASK_ID/DIMENSION``.
            model: The model (as it appears in the item).
            run: The run (an epoch, as text).
            reply: The model's raw reply.

        Returns:
            The item and how the reply was read.

        Raises:
            InputError: For an id without an instance, or a dimension whose replies this
                arcjudge cannot grade yet (see :func:`reply_parsers`).
        """
        instance = self.instance(reply_id)
        dimension = instance.dimension
        readable = reply_parsers()
        if readable is not None and dimension not in readable:
            raise InputError(
                f"{reply_id[:80]}: {dimension} replies cannot be graded by this arcjudge yet"
            )
        folder, sandbox, store = self._open()
        instances = folder / "instance.jsonl"
        instances.write_text(_line(instance.to_json()), encoding="utf-8")
        replies = folder / "reply.jsonl"
        if READS_REPLIES:
            record: dict[str, Any] = {"id": reply_id, "model": model, "run": run, "reply": reply}
        else:
            record = {
                "task_id": instance.task_id,
                "dimension": dimension,
                "model": model,
                "run": run,
                "answer": parse_reply(dimension, reply).answer,
            }
        replies.write_text(_line(record), encoding="utf-8")
        scorer = DimensionScorer(self._config(instances, replies))
        scorer.run(sandbox, store)
        (item,) = scorer.items
        return GradedReply(item, _how(dimension, reply))

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
