"""The lines ``dimensions build`` prints: what a build made, read from its ``build.json``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from arcjudge.vocabulary import BUILT_DIMENSIONS

__all__ = ["summary_text"]


def summary_text(summary: Mapping[str, Any]) -> str:
    """The printed summary of a build."""
    n = summary["instances"]
    lines = [
        "instances: " + ", ".join(f"{d} {n.get(d, 0)}" for d in BUILT_DIMENSIONS),
        "classification candidates by type: "
        + ", ".join(f"{k} {v}" for k, v in summary["classification_kinds"].items())
        + f" (mixture {summary['mixture']['name']}, rule {summary['mixture_rule']})",
    ]
    sources = summary.get("valid_sources") or {}
    if sources:
        lines.append(
            "valid pairs from (tasks): " + ", ".join(f"{k} {v}" for k, v in sources.items())
        )
    dropped = summary.get("demonstration_inputs_dropped") or {}
    if dropped:
        lines.append(
            "candidates dropped for showing a demonstration input: "
            + ", ".join(f"{k} {v}" for k, v in dropped.items())
        )
    moved = Counter(k for t in summary["tasks"].values() for k in t["redistributed"])
    if moved:
        lines.append(
            "weight redistributed (tasks without the type): "
            + ", ".join(f"{k} {v}" for k, v in sorted(moved.items()))
        )
    if summary["skipped"]:
        lines.append(f"skipped tasks: {len(summary['skipped'])} (reasons in build.json)")
    retrieval = summary.get("retrieval") or {}
    if retrieval.get("source") in ("baseline embedding", "embeddings"):
        lines.append(
            f"retrieval neighbours: {retrieval['source']} (k={retrieval['k']}, "
            f"{retrieval['tasks']} tasks)"
        )
    repeats = summary.get("repeats", 1)
    if repeats > 1:
        lines.append(
            f"repeats: answer every instance {repeats} times (runs 1..{repeats}: the same "
            "instances, for the matched-budget comparison of dimensions analyze)"
        )
    return "\n".join(lines)
