"""Definition: write the task's transformation as a program.

Build: an instance that names what the programs are scored on (the task's split sizes
and its ARC-GEN pairs); nothing is drawn. Prompt: the test inputs (never their outputs).
Replies are programs: ``arcjudge score``'s extraction reads them and its scorer is the
rule, so this strategy has no reply reader and no rule of :mod:`..rules`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from arcjudge.errors import InputError
from arcjudge.grids import Grid, to_lists
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance, prompt_id
from arcjudge.harness.dimensions.strategies.output_grid import inputs_texts
from arcjudge.harness.dimensions.strategies.strategy import (
    ConsistencyCheck,
    ParseAnswer,
    ReadReply,
    Rule,
    VerifierInput,
)
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]

DIMENSION = Dimension.DEFINITION

PLACEHOLDERS = frozenset({"test_inputs", "test_count"})


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload:
    """What the task's programs are scored on; the key is empty (``arcjudge score`` grades)."""
    prompt = {
        "score": "arcjudge score results for this task's programs",
        "train": len(plan.task.train),
        "test": len(plan.task.test),
        "arc-gen": plan.arcgen_count,
    }
    return Payload(prompt, {})


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``test_inputs``: the task's (checked against the split sizes the build saw).

    Raises:
        InputError: The task file has other split sizes than the instance was built with.
    """
    for split, pairs in (("train", task.train), ("test", task.test)):
        built = instance.prompt.get(split)
        if isinstance(built, int) and built != len(pairs):
            raise InputError(
                f"{prompt_id(instance.task_id, instance.dimension)}: the task file has "
                f"{len(pairs)} {split} pair(s), the instance was built with {built} "
                "(another task directory?)"
            )
    return {"test_inputs": [to_lists(p.input) for p in task.test]}


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """``$test_inputs`` and ``$test_count``."""
    return inputs_texts(visible, grid_format)


read_reply: ReadReply | None = None
"""Definition replies are programs, read by ``arcjudge score``'s extraction."""

rule: Rule | None = None
"""Scored by ``arcjudge score`` (its failure classes are the rule)."""

parse_answer: ParseAnswer | None = None
"""Definition answers are programs, not JSON values."""


verifier_input: VerifierInput | None = None
"""No verifier runs: a program is scored by ``arcjudge score``."""


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck | None:
    """None: no self-consistency check for this dimension."""
    return None
