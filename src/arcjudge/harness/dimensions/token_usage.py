"""Token usage per model: what the replies cost, from the items that recorded it.

A replies (or answers) line may carry its reply's ``usage`` (``{"input", "output",
"reasoning"}``, as ``dimensions replies-from-inspect`` writes it from inspect's log); the
item keeps it (:attr:`DimensionItem.usage`). :func:`token_usage` totals it per model, with
the generation settings the items record: ``summary.json``'s ``token_usage`` and a printed
line per model. Items without usage count in ``items`` only; reasoning tokens are totalled
over the items that report them (a provider may not).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from arcjudge.harness.core.record import Record
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.safetext import json_dumps, terminal_safe

__all__ = ["ModelTokens", "token_usage", "usage_lines"]


def _mean(total: int | None, count: int) -> float | None:
    return None if total is None or not count else round(total / count, 6)


@dataclass(frozen=True)
class ModelTokens(Record):
    """One model's token usage over its items.

    Attributes:
        items: The model's items.
        replies: Items whose reply recorded its usage (the means' ``n``).
        input: Input tokens, summed over them.
        output: Output tokens, summed.
        reasoning: Reasoning tokens, summed over the items that report them (``None``:
            none does).
        reasoning_replies: Items that report reasoning tokens.
        mean_input: ``input / replies`` (6 decimals; ``None`` without usage).
        mean_output: ``output / replies``.
        mean_reasoning: ``reasoning / reasoning_replies``.
        settings: The distinct generation settings the items record, sorted.
    """

    items: int
    replies: int
    input: int
    output: int
    reasoning: int | None
    reasoning_replies: int
    mean_input: float | None
    mean_output: float | None
    mean_reasoning: float | None
    settings: tuple[Mapping[str, Any], ...]


def _totals(items: list[DimensionItem]) -> ModelTokens:
    used = [i.usage for i in items if i.usage is not None]
    reasoned = [u.reasoning for u in used if u.reasoning is not None]
    input_total = sum(u.input for u in used)
    output_total = sum(u.output for u in used)
    reasoning = sum(reasoned) if reasoned else None
    distinct = {json_dumps(i.settings, sort_keys=True): i.settings for i in items if i.settings}
    return ModelTokens(
        items=len(items),
        replies=len(used),
        input=input_total,
        output=output_total,
        reasoning=reasoning,
        reasoning_replies=len(reasoned),
        mean_input=_mean(input_total, len(used)),
        mean_output=_mean(output_total, len(used)),
        mean_reasoning=_mean(reasoning, len(reasoned)),
        settings=tuple(dict(distinct[k]) for k in sorted(distinct)),
    )


def token_usage(items: Iterable[DimensionItem]) -> dict[str, ModelTokens]:
    """Model -> its token usage, for the models with an item that records usage or settings.

    Empty when no item records either (``summary.json`` then has no ``token_usage``).
    """
    by_model: dict[str, list[DimensionItem]] = {}
    for item in items:
        by_model.setdefault(item.model, []).append(item)
    recorded = (m for m, its in by_model.items() if any(i.usage or i.settings for i in its))
    return {model: _totals(by_model[model]) for model in sorted(recorded)}


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def usage_lines(usage: Mapping[str, ModelTokens]) -> list[str]:
    """One printed line per model: replies with usage, totals and means of its tokens."""
    lines = []
    for model, tokens in usage.items():
        reasoning = "n/a" if tokens.reasoning is None else str(tokens.reasoning)
        lines.append(
            f"tokens {terminal_safe(model)}: {tokens.replies} of {tokens.items} replies with "
            f"usage; input {tokens.input} (mean {_number(tokens.mean_input)}), output "
            f"{tokens.output} (mean {_number(tokens.mean_output)}), reasoning {reasoning} "
            f"(mean {_number(tokens.mean_reasoning)}, {tokens.reasoning_replies} replies)"
        )
    return lines
