"""Appendix F of the study: token usage per model and dataset, and the settings used.

The items of ``dimensions score`` keep their reply's token ``usage`` (``{"input",
"output", "reasoning"}``) and generation ``settings`` when the replies file had them
(``dimensions replies-from-inspect`` writes both from inspect's log). Per model, over the
items of configuration 1 (the analysed build; one dataset): how many items, how many
recorded their usage (``n``), the total and mean input, output and reasoning tokens (means
over the items that recorded each; reasoning only when the provider reports it), and the
generation settings the items record. Without any usage the table still lists the models,
each with ``n`` 0, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.analyze.sections import Section, models_of
from arcjudge.harness.analyze.tables import Cell, Column, Table
from arcjudge.harness.dimensions.token_usage import ModelTokens, token_usage

__all__ = ["settings_text", "token_usage_section"]

NOTE = (
    "Token usage per model on this build's dataset (configuration 1), as the study's "
    "Appendix F: items, the replies among them that recorded their usage (n: the usage "
    "field of a replies line; replies-from-inspect writes it from the inspect log), total "
    "and mean input, output and reasoning (thinking) tokens, means over the replies that "
    "recorded each (reasoning tokens only where the provider reports them; providers count "
    "them within the output tokens), and the generation settings the replies record."
)


def settings_text(settings: tuple[Mapping[str, Any], ...]) -> str | None:
    """``name=value, ...`` per distinct settings, ``; `` between them (``None``: none)."""
    if not settings:
        return None
    return "; ".join(", ".join(f"{k}={v}" for k, v in sorted(s.items())) for s in settings)


def _row(
    model: str, dataset: str | None, tokens: ModelTokens | None, items: int
) -> tuple[Cell, ...]:
    if tokens is None or not tokens.replies:
        settings = None if tokens is None else settings_text(tokens.settings)
        return (model, dataset, items, 0, None, None, None, None, 0, None, None, settings)
    return (
        model, dataset, tokens.items, tokens.replies, tokens.input, tokens.mean_input,
        tokens.output, tokens.mean_output, tokens.reasoning_replies, tokens.reasoning,
        tokens.mean_reasoning, settings_text(tokens.settings),
    )  # fmt: skip


def token_usage_section(inputs: AnalysisInputs) -> Section:
    """Appendix F: the ``token_usage`` section and its table ``appendix_f``."""
    usage = token_usage(inputs.items)
    counts: dict[str, int] = {}
    for item in inputs.items:
        counts[item.model] = counts.get(item.model, 0) + 1
    models = models_of(inputs)
    rows = tuple(_row(m, inputs.dataset, usage.get(m), counts[m]) for m in models)
    columns = (
        Column("model"),
        Column("dataset", "text", "Dataset"),
        Column("items", "int", "Items"),
        Column("replies", "int", "Replies with usage (n)"),
        Column("input", "int", "Input tokens"),
        Column("mean_input", "number", "Mean input"),
        Column("output", "int", "Output tokens"),
        Column("mean_output", "number", "Mean output"),
        Column("reasoning_replies", "int", "Replies with reasoning"),
        Column("reasoning", "int", "Reasoning tokens"),
        Column("mean_reasoning", "number", "Mean reasoning"),
        Column("settings", "text", "Settings"),
    )
    recorded = any(tokens.replies for tokens in usage.values())
    note = NOTE if recorded else NOTE + " No reply of these items recorded its usage."
    table = Table("appendix_f", "Appendix F: token usage per model and dataset", note,
                  columns, rows)  # fmt: skip
    data = {
        "dataset": inputs.dataset,
        "recorded": recorded,
        "models": {m: usage[m].to_json() if m in usage else None for m in models},
    }
    return Section("token_usage", data, (table,))
