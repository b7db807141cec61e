"""The dimensions as strategies: one module per dimension, one table over them.

Each module (:mod:`.output_grid`, :mod:`.definition`, :mod:`.classification`,
:mod:`.generation`, :mod:`.editing`, :mod:`.inversion`) holds what is specific to its
dimension and *is* its :class:`DimensionStrategy` (the protocol's members at module
level; mypy checks each module of the table against it): how its instance is drawn from
a task's plan, what a model is shown and how the prompt's placeholders are filled, how a
reply and an answer are read, which input the verifier runs on, its rule and its
self-consistency check. :data:`STRATEGIES` lists them by
:class:`~arcjudge.vocabulary.Dimension`, in the order instances are drawn and written
(``BUILT_DIMENSIONS``); ``build``, ``prompts``, reply reading and ``dimensions score`` go
through it. A new dimension is a new module here and its line in ``_MODULES`` (beside its
word in the vocabulary and its prompt template). A module's ``__all__`` lists the
strategy's members, then what it offers beyond them (a parser, a constant).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arcjudge.harness.dimensions.replies import ParsedReply
from arcjudge.harness.dimensions.strategies import (
    classification,
    definition,
    editing,
    generation,
    inversion,
    output_grid,
)
from arcjudge.harness.dimensions.strategies.strategy import DimensionStrategy
from arcjudge.vocabulary import Dimension

__all__ = ["STRATEGIES", "DimensionStrategy", "parse_answer", "parse_reply"]

_MODULES: tuple[DimensionStrategy, ...] = (
    output_grid,
    definition,
    classification,
    generation,
    editing,
    inversion,
)

STRATEGIES: Mapping[Dimension, DimensionStrategy] = MappingProxyType(
    {module.DIMENSION: module for module in _MODULES}
)
"""Every dimension's strategy, in draw order (one task's draws share a random source)."""


def parse_reply(
    dimension: str, reply: object, *, tests: int = 1, attempts: int = 1
) -> ParsedReply[object]:
    """Parse a reply for a dimension answered with grids or judgments.

    Args:
        dimension: ``output_grid``, ``classification``, ``generation``, ``editing`` or
            ``inversion`` (Definition replies are programs: see
            :mod:`arcjudge.harness.core.extract`).
        reply: The raw reply.
        tests: Output grid: the number of test inputs.
        attempts: Output grid: candidates per test input.

    Returns:
        The answer :func:`parse_answer` takes for that dimension, and how it was read.

    Raises:
        ValueError: For a dimension without a reply parser (a programmer error).
    """
    read = STRATEGIES[Dimension(dimension)].read_reply if dimension in STRATEGIES else None
    if read is None:
        raise ValueError(f"no reply parser for dimension {dimension!r}")
    return read(reply, tests, attempts)


def parse_answer(dimension: str, answer: object) -> tuple[object | None, str | None]:
    """Check an answer's shape and turn it into the value its dimension's rule takes.

    Args:
        dimension: A dimension answered with JSON (not Definition).
        answer: The decoded JSON answer.

    Returns:
        ``(parsed, None)`` or ``(None, reason)``. Parsed values: a tuple of 5 bools
        (``True`` = valid) for classification; ``(input grid, output grid)`` for
        generation and editing; the input grid for inversion; per test input, a tuple
        of attempts for the output grid.

    Raises:
        ValueError: For a dimension without an answer shape (a programmer error).
    """
    parse = STRATEGIES[Dimension(dimension)].parse_answer if dimension in STRATEGIES else None
    if parse is None:
        raise ValueError(f"no answer shape for dimension {dimension!r}")
    return parse(answer)
