"""One task's material for ``dimensions build``: what every dimension's draw reads.

The builder (:mod:`.build`) fills a :class:`TaskPlan` per task (valid pairs, proposed and
confirmed candidate pairs) and hands it to each dimension's strategy
(:mod:`.strategies`), which draws that dimension's instance from it as a
:class:`Payload`. Nothing here runs a program or reads a file.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from arcjudge.grids import Grid, to_lists
from arcjudge.harness.dimensions.corruptions import CandidatePair
from arcjudge.harness.dimensions.mixture import Mixture
from arcjudge.harness.dimensions.records import VerifierSpec
from arcjudge.sandbox.types import Program
from arcjudge.tasks import Pair, Task
from arcjudge.vocabulary import CandidateKind, MixtureRule

__all__ = [
    "DrawSettings",
    "Payload",
    "TaskPlan",
    "ValidPair",
    "distinct",
    "pair_digest",
    "pair_json",
    "task_rng",
]


def pair_digest(grid_in: Grid, grid_out: Grid) -> str:
    """A short stable digest of a pair (16 hex digits of SHA-256 over compact JSON)."""
    text = json.dumps([to_lists(grid_in), to_lists(grid_out)], separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def pair_json(grid_in: Grid, grid_out: Grid) -> dict[str, Any]:
    """``{"input": grid, "output": grid}`` with grids as lists of lists."""
    return {"input": to_lists(grid_in), "output": to_lists(grid_out)}


def task_rng(seed: int, task_id: str, purpose: str) -> random.Random:
    """The random source of one purpose for one task (independent of the other tasks)."""
    return random.Random(f"arcjudge-dimensions:{seed}:{task_id}:{purpose}")


def distinct(candidates: Iterable[CandidatePair]) -> list[CandidatePair]:
    """Candidates in order, each (input, output) pair kept once."""
    seen: set[tuple[Grid, Grid]] = set()
    result = []
    for cand in candidates:
        if (cand.input, cand.output) not in seen:
            seen.add((cand.input, cand.output))
            result.append(cand)
    return result


@dataclass(frozen=True)
class ValidPair:
    """A valid pair of the task and where it comes from (``seed``: generator samples)."""

    pair: Pair
    split: str
    index: int
    seed: int | None = None

    def provenance(self) -> dict[str, Any]:
        """``{split, index}``, and ``seed`` for a generator sample."""
        found: dict[str, Any] = {"split": self.split, "index": self.index}
        if self.seed is not None:
            found["seed"] = self.seed
        return found


class Payload(NamedTuple):
    """A drawn instance's JSON ``prompt`` and ``key`` (fields per dimension: docs/dimensions.md)."""

    prompt: dict[str, Any]
    key: dict[str, Any]


@dataclass(frozen=True)
class DrawSettings:
    """What the draws read of the build's configuration.

    Attributes:
        mixture: Candidate type weights (Classification; Editing's type choice).
        editing_kinds: The invalid types an Editing pair is drawn from.
        min_distance: Generation's copy threshold (for the hidden reference pair).
        mixture_rule: How Classification draws its five candidate types.
    """

    mixture: Mixture
    editing_kinds: tuple[CandidateKind, ...]
    min_distance: float
    mixture_rule: MixtureRule = MixtureRule.WITHOUT_REPLACEMENT


@dataclass
class TaskPlan:
    """One task's material before and after the verifier runs.

    Attributes:
        task: The task.
        verifier: The verifier source used.
        program: Its program for the task.
        valid: Generator samples, else ARC-GEN pairs, else test pairs (shuffled);
            ``valid[0]`` is the Inversion instance, kept out of the other pools.
        proposed: Candidate invalid pairs per kind, before confirmation.
        confirmed: Per kind, the candidates the verifier confirmed invalid, each with the
            verifier's output for its input (``None``: it maps the input to no grid).
        verifier_failures: Verifier calls that failed, per status.
        sources: ``id(candidate)`` -> the valid pair it was made from.
        arcgen_digests: Digests of the task's ARC-GEN pairs.
        arcgen_count: ARC-GEN pairs with an output that are no demonstration.
        shown_dropped: Candidates dropped for showing a demonstration input, per kind.
    """

    task: Task
    verifier: VerifierSpec
    program: Program
    valid: list[ValidPair]
    proposed: dict[str, list[CandidatePair]]
    confirmed: dict[str, list[tuple[CandidatePair, Grid | None]]] = field(default_factory=dict)
    verifier_failures: Counter[str] = field(default_factory=Counter)
    sources: dict[int, Pair] = field(default_factory=dict)
    arcgen_digests: list[str] = field(default_factory=list)
    arcgen_count: int = 0
    shown_dropped: Counter[str] = field(default_factory=Counter)
