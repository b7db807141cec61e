"""What a dimension is to the workflows: one record of the functions specific to it.

Each module of :mod:`arcjudge.harness.dimensions.strategies` makes one
:class:`DimensionStrategy` (its ``STRATEGY``) and the package's table lists them by
dimension; ``dimensions build`` draws, ``dimensions prompts`` renders and ``dimensions
score`` reads replies through that table, never by naming a dimension.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arcjudge.grids import Grid
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import ParsedReply
from arcjudge.harness.dimensions.rules import RuleVerdict
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DimensionStrategy", "Draw", "ReadReply", "Texts", "Visible"]

Draw = Callable[[TaskPlan, DrawSettings, random.Random], Payload | None]
"""``draw(plan, settings, rng)``: the task's instance of the dimension, or ``None`` when the
task cannot have one. ``rng`` is the task's draw source, shared by the dimensions in
table order (a draw that does not need it leaves it alone)."""

Visible = Callable[[DimensionInstance, Task], dict[str, Any]]
"""``visible(instance, task)``: the dimension's model-visible material beside the
demonstrations (JSON). Raises ``KeyError``/``TypeError``/``ValueError`` for a malformed
instance, ``InputError`` for a task file that is not the instance's."""

Texts = Callable[[Mapping[str, Any], Sequence[tuple[Grid, Grid]], GridFormat], dict[str, str]]
"""``texts(visible, demonstrations, grid_format)``: the dimension's placeholders' texts."""

ReadReply = Callable[[object, int, int], ParsedReply[object]]
"""``read(reply, tests, attempts)``: the answer in a raw reply (never raises on a reply)."""


@dataclass(frozen=True)
class DimensionStrategy:
    """Everything specific to one dimension, from building its instance to its rule.

    Attributes:
        dimension: The dimension.
        draw: How its instance is drawn from a task's plan (``dimensions build``).
        placeholders: The template placeholders it fills beyond the shared ones.
        visible: What of an instance a model is shown (``dimensions prompts``).
        texts: Its placeholders' texts from that material.
        read_reply: How a raw reply is read (``None``: replies are programs, scored by
            ``arcjudge score``'s extraction; Definition).
        rule: Its pass rule in :mod:`..rules` (``None``: ``arcjudge score``'s; Definition).
    """

    dimension: Dimension
    draw: Draw
    placeholders: frozenset[str]
    visible: Visible
    texts: Texts
    read_reply: ReadReply | None
    rule: Callable[..., RuleVerdict] | None
