"""An inspect_ai eval log -> ``replies.jsonl``, for ``dimensions score`` to grade.

Each sample of a log written by the ``arcjudge/potarcin`` task (one per prompt and epoch)
becomes one replies line ``{"id", "model", "run", "reply"}``: the sample id (the prompt's
id, ``TASK_ID/DIMENSION``), the eval's model (or one given), the epoch, and the model's
completion; with the sample's token ``usage`` (``{"input", "output", "reasoning"}``, the
eval model's entry of ``sample.model_usage``; ``reasoning`` only when the provider reports
it) and the generation ``settings`` of the eval (``temperature``, ``reasoning_effort``,
``reasoning_tokens``: the task's ``GenerateConfig``, as ``log.plan.config`` records it,
overridden by the values ``inspect eval`` was given, ``log.eval.model_generate_config``;
only the ones set). A sample that ended in an error has no completion: it is left out and
counted (``dimensions score`` then fails that item as not answered, while inspect leaves
errored samples out of its metrics; retry them with ``inspect eval-retry`` before
comparing).

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

__all__ = ["SETTING_NAMES", "InspectReplies", "replies_from_inspect_log"]

SETTING_NAMES = ("temperature", "reasoning_effort", "reasoning_tokens")
"""The generation settings a replies line records (inspect's ``GenerateConfig`` fields)."""


@dataclass(frozen=True)
class InspectReplies:
    """The replies of one eval log.

    Attributes:
        model: The model of the replies.
        replies: One ``{"id", "model", "run", "reply"}`` per sample with a completion, in
            (run, id) order, with ``usage`` and ``settings`` when the log has them.
        errored: Ids and epochs of the samples left out because they ended in an error.
    """

    model: str
    replies: list[dict[str, Any]] = field(default_factory=list)
    errored: list[tuple[str, int]] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        """The ``replies.jsonl`` lines (keys sorted, compact)."""
        for reply in self.replies:
            yield json_dumps(reply, sort_keys=True, separators=(",", ":")) + "\n"


def _settings(log: Any) -> dict[str, Any]:
    """The generation settings set for the eval: the plan's, overridden by the eval's."""
    settings: dict[str, Any] = {}
    for config in (log.plan.config, log.eval.model_generate_config):
        for name in SETTING_NAMES:
            value = getattr(config, name, None)
            if value is not None:
                settings[name] = value
    return settings


def _usage(sample: Any, model: str) -> dict[str, int] | None:
    """The sample's tokens of the eval's model (else of every model it called), if any."""
    usages = dict(sample.model_usage or {})
    chosen = [usages[model]] if model in usages else list(usages.values())
    if not chosen:
        return None
    usage = {
        "input": sum(u.input_tokens for u in chosen),
        "output": sum(u.output_tokens for u in chosen),
    }
    reasoning = [u.reasoning_tokens for u in chosen if u.reasoning_tokens is not None]
    if reasoning:
        usage["reasoning"] = sum(reasoning)
    return usage


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
    settings = _settings(log)
    result = InspectReplies(name)
    for sample in sorted(log.samples, key=lambda s: (s.epoch, str(s.id))):
        if sample.error is not None:
            result.errored.append((str(sample.id), sample.epoch))
            continue
        reply: dict[str, Any] = {
            "id": str(sample.id),
            "model": name,
            "run": sample.epoch,
            "reply": sample.output.completion,
        }
        usage = _usage(sample, log.eval.model)
        if usage is not None:
            reply["usage"] = usage
        if settings:
            reply["settings"] = settings
        result.replies.append(reply)
    return result
