"""Inversion: give an input the task maps to a shown output.

Build: the first valid pair of the (shuffled) pool, kept out of every other dimension's
candidates; its output shown, its input the key. Prompt: the output grid. Reply: one grid.
Rule: :func:`..rules.inversion_verdict`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, cast

from arcjudge.grids import Grid, to_grid, to_lists
from arcjudge.harness.dimensions.gridtext import grid_block
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import parse_grid
from arcjudge.harness.dimensions.rules import RuleVerdict, grid_answer, inversion_verdict
from arcjudge.harness.dimensions.strategies.strategy import ConsistencyCheck, RuleCase, whole_reply
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]

DIMENSION = Dimension.INVERSION

PLACEHOLDERS = frozenset({"output"})


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload:
    """``valid[0]``: its output shown, its input (and provenance) the key."""
    valid = plan.valid[0]
    assert valid.pair.output is not None
    return Payload(
        {"output": to_lists(valid.pair.output)},
        {"input": to_lists(valid.pair.input), **valid.provenance()},
    )


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``output``: the grid to invert."""
    return {"output": to_lists(instance.shown_output())}


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """``$output``: the grid."""
    return {"output": grid_block(to_grid(visible["output"]), grid_format)}


read_reply = whole_reply(parse_grid)


def parse_answer(answer: object) -> tuple[Grid | None, str | None]:
    """The proposed input: a grid, or ``{"input": grid}``."""
    if isinstance(answer, Mapping):
        if "input" not in answer:
            return None, "inversion answer must be a grid or an object with 'input'"
        answer = answer["input"]
    return grid_answer(answer, "input")


def verifier_input(answer: object) -> Grid | None:
    """The proposed input."""
    return cast(Grid, answer)


def rule(case: RuleCase) -> RuleVerdict:
    """:func:`..rules.inversion_verdict` against the output shown."""
    return inversion_verdict(case.instance.shown_output(), case.verifier)


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck:
    """The proposed input with the output shown."""
    return ConsistencyCheck(((cast(Grid, answer), instance.shown_output()),))
