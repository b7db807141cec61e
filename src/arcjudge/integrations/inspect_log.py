"""An inspect_ai eval log -> ``replies.jsonl``, for ``dimensions score`` to grade.

Each sample of a log written by the ``arcjudge/potarcin`` task (one per prompt and epoch)
becomes one replies line ``{"id", "model", "run", "reply"}``: the sample id (the prompt's
id, ``TASK_ID/DIMENSION``), the eval's model (or one given), the epoch, and the model's
completion. A sample that ended in an error has no completion: it is left out and counted
(``dimensions score`` then fails that item as not answered, while inspect leaves errored
samples out of its metrics; retry them with ``inspect eval-retry`` before comparing).

Reading a log needs inspect_ai (``pip install 'arcjudge[inspect]'``); it is imported only
when a log is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.safetext import json_dumps

__all__ = ["InspectReplies", "replies_from_inspect_log"]


@dataclass(frozen=True)
class InspectReplies:
    """The replies of one eval log.

    Attributes:
        model: The model of the replies.
        replies: One ``{"id", "model", "run", "reply"}`` per sample with a completion, in
            (run, id) order.
        errored: Ids and epochs of the samples left out because they ended in an error.
    """

    model: str
    replies: list[dict[str, Any]] = field(default_factory=list)
    errored: list[tuple[str, int]] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        """The ``replies.jsonl`` lines (keys sorted, compact)."""
        for reply in self.replies:
            yield json_dumps(reply, sort_keys=True, separators=(",", ":")) + "\n"


def replies_from_inspect_log(path: Path, model: str | None = None) -> InspectReplies:
    """Read an inspect_ai eval log (``.eval`` or ``.json``) into replies lines.

    Args:
        path: The log file.
        model: The model name the replies get (default: the eval's model, e.g.
            ``openai/gpt-4o``).

    Returns:
        The replies, and the samples left out because they ended in an error.

    Raises:
        InputError: When inspect_ai is not installed, or the file is not a readable
            eval log with samples.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(
            "reading an inspect_ai log needs inspect_ai (pip install 'arcjudge[inspect]')"
        ) from None
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # inspect raises many kinds (zip, JSON, validation)
        raise InputError(f"{path}: not an inspect_ai eval log ({type(exc).__name__})") from None
    if not log.samples:
        raise InputError(f"{path}: the log has no samples (status {log.status})")
    name = model or log.eval.model
    result = InspectReplies(name)
    for sample in sorted(log.samples, key=lambda s: (s.epoch, str(s.id))):
        if sample.error is not None:
            result.errored.append((str(sample.id), sample.epoch))
            continue
        result.replies.append(
            {
                "id": str(sample.id),
                "model": name,
                "run": sample.epoch,
                "reply": sample.output.completion,
            }
        )
    return result
