"""Mixture weights of candidate pair types for the Classification dimension.

A Classification instance shows five candidate pairs; each one's *type* is drawn from a
mixture: ``valid`` (a correct pair) or one of the invalid kinds of
:mod:`arcjudge.harness.dimensions.corruptions`. The reference study's weights are built in
(``arc-agi-1`` and ``p-arc``); a JSON file ``{"valid": 0.25, "human_error": ..., ...}``
may give others. When an invalid type has no candidate for a task, its weight is
redistributed over the remaining invalid types in proportion to their weights (the weight
of ``valid`` does not change), and :meth:`Mixture.for_available` reports what moved;
:func:`for_all_available` spreads it over every available type, ``valid`` included (the
``renormalized`` rule of :class:`~arcjudge.vocabulary.MixtureRule`). Within an instance,
:func:`unused_weights` keeps only the types with a candidate left, so the next draw
renormalizes over them (the ``without-replacement`` and ``renormalized`` rules).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.jsonl import json_value
from arcjudge.harness.core.record import Codec, Record, codec_for, spec
from arcjudge.vocabulary import CANDIDATE_KINDS, INVALID_KINDS, TaskSetFormat

__all__ = [
    "PRESETS",
    "Mixture",
    "default_mixture",
    "for_all_available",
    "load_mixture",
    "unused_weights",
]


PRESETS: dict[str, dict[str, float]] = {
    "arc-agi-1": {
        "valid": 0.250,
        "human_error": 0.235,
        "instance_mismatch": 0.215,
        "corrupted_verifier": 0.130,
        "retrieval": 0.103,
        "color_flip": 0.067,
    },
    "p-arc": {
        "valid": 0.250,
        "human_error": 0.265,
        "instance_mismatch": 0.215,
        "corrupted_verifier": 0.160,
        "retrieval": 0.073,
        "color_flip": 0.037,
    },
}
"""The reference study's mixtures (ARC-AGI-1 and P-ARC)."""

_TOLERANCE = 1e-6


_WEIGHTS: Codec[Mapping[str, float]] = codec_for(Mapping[str, float])
"""A mixture file's object: candidate type -> weight (a number)."""


def _every_kind(weights: Mapping[str, float]) -> dict[str, float]:
    return {k: float(weights.get(k, 0.0)) for k in CANDIDATE_KINDS}


@dataclass(frozen=True)
class Mixture(Record):
    """Weights per candidate type (they sum to 1); ``build.json``'s ``mixture``.

    Written as ``{"name", "weights"}`` with every type of :data:`CANDIDATE_KINDS` in its
    order (missing ones as 0.0).

    Attributes:
        name: The preset name, or the file the weights came from.
        weights: Type -> weight, for every type of :data:`CANDIDATE_KINDS` (missing ones are 0).

    Raises:
        ValueError: An unknown type, a weight not a finite number >= 0, weights not summing
            to 1, or no invalid type with a positive weight.
    """

    name: str
    weights: Mapping[str, float] = field(
        metadata=spec(codec=Codec("weights", _WEIGHTS.decode, _every_kind, Mapping))
    )

    def __post_init__(self) -> None:
        """Check the weights: known types, finite, non-negative, summing to 1."""
        super().__post_init__()
        unknown = sorted(set(self.weights) - set(CANDIDATE_KINDS))
        if unknown:
            raise ValueError(
                f"unknown candidate types {unknown} (known: {', '.join(CANDIDATE_KINDS)})"
            )
        for kind, weight in self.weights.items():
            if isinstance(weight, bool) or not isinstance(weight, int | float):
                raise ValueError(f"weight of {kind!r} must be a number, got {weight!r}")
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"weight of {kind!r} must be finite and >= 0, got {weight}")
        total = sum(self.weights.values())
        if abs(total - 1.0) > _TOLERANCE:
            raise ValueError(f"weights must sum to 1, they sum to {total:.6g}")
        if sum(self.weights.get(k, 0.0) for k in INVALID_KINDS) <= 0:
            raise ValueError("at least one invalid type needs a positive weight")

    def weight(self, kind: str) -> float:
        """Return the weight of ``kind`` (0 when absent)."""
        return float(self.weights.get(kind, 0.0))

    def for_available(self, available: Iterable[str]) -> tuple[dict[str, float], list[str]]:
        """Weights for a task where only ``available`` types have candidates.

        The weight of each unavailable invalid type is spread over the available invalid
        types in proportion to their own weights. ``valid`` keeps its weight (it is
        assumed available; the builder skips tasks without valid pairs).

        Args:
            available: The invalid types (and possibly ``valid``) that have candidates.

        Returns:
            ``(weights, redistributed)``: the effective weights of the available types
            (zero-weight types left out; rounded to 12 decimals so they serialize the same
            everywhere) and the unavailable types whose positive weight was moved. When no
            invalid type with a positive weight is available, the weights are ``{}``.
        """
        have = set(available)
        live: list[str] = [k for k in INVALID_KINDS if k in have and self.weight(k) > 0]
        moved: list[str] = [k for k in INVALID_KINDS if k not in have and self.weight(k) > 0]
        if not live:
            return {}, moved
        invalid_total = sum(self.weight(k) for k in INVALID_KINDS)
        live_total = sum(self.weight(k) for k in live)
        weights = {"valid": self.weight("valid")} if self.weight("valid") > 0 else {}
        for kind in live:
            weights[kind] = round(self.weight(kind) * invalid_total / live_total, 12)
        return weights, moved


def for_all_available(
    mixture: Mixture, available: Iterable[str]
) -> tuple[dict[str, float], list[str]]:
    """Weights for a task where only ``available`` types have candidates, valid included.

    Like :meth:`Mixture.for_available`, but the weight of each unavailable invalid type is
    spread over every available type, ``valid`` included, in proportion to their weights
    (``valid`` is assumed available, as there).

    Args:
        mixture: The build's mixture.
        available: The invalid types (and possibly ``valid``) that have candidates.

    Returns:
        ``(weights, redistributed)`` as :meth:`Mixture.for_available` gives them: the
        effective weights (rounded to 12 decimals; ``{}`` when no invalid type with a
        positive weight is available) and the unavailable types whose weight was moved.
    """
    have = set(available)
    live: list[str] = [k for k in INVALID_KINDS if k in have and mixture.weight(k) > 0]
    moved: list[str] = [k for k in INVALID_KINDS if k not in have and mixture.weight(k) > 0]
    if not live:
        return {}, moved
    kinds = ["valid", *live] if mixture.weight("valid") > 0 else live
    total = sum(mixture.weight(k) for k in kinds)
    return {k: round(mixture.weight(k) / total, 12) for k in kinds}, moved


def unused_weights(weights: Mapping[str, float], unused: Iterable[str]) -> dict[str, float]:
    """The part of ``weights`` whose types still have an unused candidate.

    A draw from the result renormalizes over those types, so a used-up type's weight is
    shared by all the others (``valid`` included) in proportion to their weights.

    Args:
        weights: The task's effective weights (type -> weight).
        unused: The types with a candidate not yet shown in the instance.

    Returns:
        The weights of the types in ``unused``; all of ``weights`` when none of its types
        is (every candidate is shown: one must repeat).
    """
    left = set(unused)
    live = {k: w for k, w in weights.items() if k in left and w > 0}
    return live or dict(weights)


def draw(weights: Mapping[str, float], rng: random.Random) -> str:
    """Draw one type from ``weights`` (iterated in :data:`CANDIDATE_KINDS` order, so deterministic).

    Args:
        weights: Type -> weight; need not sum exactly to 1.
        rng: The only source of randomness (one ``random()`` call per draw).

    Returns:
        The type drawn.

    Raises:
        ValueError: If no weight is positive.
    """
    kinds = [k for k in CANDIDATE_KINDS if weights.get(k, 0.0) > 0]
    if not kinds:
        raise ValueError("nothing to draw from: no positive weight")
    total = sum(weights[k] for k in kinds)
    point = rng.random() * total
    for kind in kinds:
        point -= weights[kind]
        if point < 0:
            return kind
    return kinds[-1]


_P_ARC_EXPORTS = frozenset({TaskSetFormat.P_ARC_CSV.value, TaskSetFormat.P_ARC_PARQUET.value})


def default_mixture(task_set: Mapping[str, Any] | None) -> str:
    """The preset a build uses without ``--mixture``: the study's for its task set.

    Args:
        task_set: The record of the task set ``--tasks`` named (its ``format``), or
            ``None`` for an ARC JSON directory.

    Returns:
        ``p-arc`` for a P-ARC export, else ``arc-agi-1``.
    """
    fmt = task_set.get("format") if task_set else None
    return "p-arc" if fmt in _P_ARC_EXPORTS else "arc-agi-1"


def load_mixture(spec: str | Path) -> Mixture:
    """A preset name (``arc-agi-1``, ``p-arc``) or a JSON file of type -> weight.

    Raises:
        InputError: For an unknown name, an unreadable file or bad weights.
    """
    text = str(spec)
    if text in PRESETS:
        return Mixture(text, dict(PRESETS[text]))
    path = Path(text)
    if not path.is_file():
        raise InputError(f"{text}: neither a mixture preset ({', '.join(PRESETS)}) nor a file")
    try:
        raw = json_value(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: cannot read JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a JSON object of candidate type -> weight")
    try:
        return Mixture(str(path), _WEIGHTS.decode(raw))
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None
