"""What a dimension is to the workflows: the protocol every strategy module satisfies.

Each module of :mod:`arcjudge.harness.dimensions.strategies` *is* a strategy: it defines
the members of :class:`DimensionStrategy` at module level (mypy checks every module of the
table against the protocol). ``dimensions build`` draws, ``dimensions prompts`` renders
and reply reading dispatches through the table, never by naming a dimension.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from arcjudge.grids import Grid
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import ParsedReply
from arcjudge.harness.dimensions.rules import RuleVerdict
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DimensionStrategy", "ReadReply", "whole_reply"]

ReadReply = Callable[[object, int, int], ParsedReply[object]]
"""``read_reply(reply, tests, attempts)``: the answer in a raw reply (never raises on a
reply; ``tests`` and ``attempts`` matter to the output grid only)."""


class DimensionStrategy(Protocol):
    """Everything specific to one dimension, from drawing its instance to its rule.

    A strategy module defines these at module level: ``DIMENSION``, ``PLACEHOLDERS``,
    ``draw``, ``visible``, ``texts``, ``read_reply`` and ``rule``.
    """

    @property
    def DIMENSION(self) -> Dimension:
        """The dimension."""

    @property
    def PLACEHOLDERS(self) -> frozenset[str]:
        """The template placeholders it fills beyond the shared ones."""

    @property
    def read_reply(self) -> ReadReply | None:
        """How a raw reply is read (``None``: replies are programs; Definition)."""

    @property
    def rule(self) -> Callable[..., RuleVerdict] | None:
        """Its pass rule in :mod:`..rules` (``None``: ``arcjudge score``'s; Definition)."""

    def draw(self, plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload | None:
        """The task's instance of the dimension, or ``None`` when the task cannot have one.

        ``rng`` is the task's draw source, shared by the dimensions in table order (a draw
        that does not need it leaves it alone).
        """

    def visible(self, instance: DimensionInstance, task: Task) -> dict[str, Any]:
        """The dimension's model-visible material beside the demonstrations (JSON).

        Raises:
            KeyError, TypeError, ValueError: The instance's prompt is malformed.
            InputError: The task file is not the one the instance was built from.
        """

    def texts(
        self,
        visible: Mapping[str, Any],
        demonstrations: Sequence[tuple[Grid, Grid]],
        grid_format: GridFormat,
    ) -> dict[str, str]:
        """The texts of the dimension's placeholders, from its model-visible material."""


def whole_reply(parse: Callable[[object], ParsedReply[object]]) -> ReadReply:
    """A reply reader from a parser that needs no test or attempt counts."""

    def read(reply: object, tests: int, attempts: int) -> ParsedReply[object]:
        return parse(reply)

    return read
