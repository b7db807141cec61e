"""What a dimension is to the workflows: the protocol every strategy module satisfies.

Each module of :mod:`arcjudge.harness.dimensions.strategies` *is* a strategy: it defines
the members of :class:`DimensionStrategy` at module level (mypy checks every module of the
table against the protocol). ``dimensions build`` draws, ``dimensions prompts`` renders
and reply reading dispatches through the table, never by naming a dimension.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from arcjudge.grids import Grid
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import ParsedReply
from arcjudge.harness.dimensions.rules import RuleVerdict, VerifierOutput
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = [
    "ConsistencyCheck",
    "DimensionStrategy",
    "GradeSettings",
    "ParseAnswer",
    "ReadReply",
    "Rule",
    "RuleCase",
    "VerifierInput",
    "whole_reply",
]

ReadReply = Callable[[object, int, int], ParsedReply[object]]
"""``read_reply(reply, tests, attempts)``: the answer in a raw reply (never raises on a
reply; ``tests`` and ``attempts`` matter to the output grid only)."""

ParseAnswer = Callable[[object], tuple[object | None, str | None]]
"""``parse_answer(answer)``: an answer's JSON value checked and turned into what the rule
takes, ``(value, None)``, or ``(None, why)`` (never raises on an answer)."""


@dataclass(frozen=True)
class GradeSettings:
    """The grading options the rules read (``dimensions score``'s flags).

    Attributes:
        min_distance: Generation: the distance within which a pair copies another.
        edit_max_distance: Editing: how far an edit may move each grid.
        exclude_arcgen: Generation: a pair equal to an ARC-GEN pair fails.
        strict_generation: Generation: input and output must each be far enough.
        attempts: Output grid: candidates counted per test input (pass@k).
    """

    min_distance: float
    edit_max_distance: float
    exclude_arcgen: bool
    strict_generation: bool
    attempts: int


@dataclass(frozen=True)
class RuleCase:
    """One parsed answer to grade, with everything its rule reads.

    Attributes:
        instance: The item's instance (its hidden key included).
        answer: The answer, as the strategy's ``parse_answer`` returned it.
        verifier: The task's verifier on the strategy's ``verifier_input`` of the answer
            (``(Status.INFRA, None)`` when it did not run, or the answer has none).
        settings: The grading options.
        earlier: Generation pairs the same model and run had accepted in earlier
            configurations.
    """

    instance: DimensionInstance
    answer: object
    verifier: VerifierOutput
    settings: GradeSettings
    earlier: tuple[tuple[Grid, Grid], ...] = ()


@dataclass(frozen=True)
class ConsistencyCheck:
    """Self-consistency: the pairs a model's Definition program is asked about for an answer.

    Attributes:
        pairs: ``(input, output)`` pairs; the program agrees with a pair when it maps the
            input to the output.
        judgments: ``None``: one pair, the answer's own (the program should agree with it).
            Else the answer's judgment (``True``: valid) per pair, compared with the
            program's view pair by pair.
        truths: With ``judgments``: whether each pair is valid (the hidden labels).
    """

    pairs: tuple[tuple[Grid, Grid], ...]
    judgments: tuple[bool, ...] | None = None
    truths: tuple[bool, ...] = ()


Rule = Callable[[RuleCase], RuleVerdict]
"""``rule(case)``: an answer's verdict (a wrapper over its function in :mod:`..rules`)."""

VerifierInput = Callable[[object], Grid | None]
"""``verifier_input(answer)``: the grid of a parsed answer the task's verifier runs on."""


class DimensionStrategy(Protocol):
    """Everything specific to one dimension, from drawing its instance to its rule.

    A strategy module defines these at module level: ``DIMENSION``, ``PLACEHOLDERS``,
    ``draw``, ``visible``, ``texts``, ``read_reply``, ``parse_answer``, ``verifier_input``,
    ``rule`` and ``consistency``.
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
    def parse_answer(self) -> ParseAnswer | None:
        """How an answer's JSON is read (``None``: Definition, scored from programs)."""

    @property
    def rule(self) -> Rule | None:
        """Its pass rule over :mod:`..rules` (``None``: ``arcjudge score``'s; Definition)."""

    @property
    def verifier_input(self) -> VerifierInput | None:
        """What the task's verifier runs on for an answer (``None``: it never runs)."""

    def consistency(self, instance: DimensionInstance, answer: object) -> ConsistencyCheck | None:
        """What the model's Definition program is checked on for a parsed answer.

        ``None``: the dimension has no self-consistency check.
        """

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
