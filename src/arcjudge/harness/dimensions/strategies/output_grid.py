"""The output grid: the standard ARC test (test inputs shown, their outputs hidden).

Build: every test input with a known output (no instance when one is unknown). Prompt:
the test inputs and an answer block per input. Reply: the last grids of the reply, one
(or ``attempts``) per test input. Rule: :func:`..rules.output_grid_verdict` (pass@k).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, cast

from arcjudge.grids import Grid, canonicalize, to_lists
from arcjudge.harness.dimensions.gridtext import grid_block, grid_lists, read_grids
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan
from arcjudge.harness.dimensions.records import DimensionInstance
from arcjudge.harness.dimensions.replies import (
    GridAnswer,
    ParsedReply,
    find_grids,
    split_reply,
    unparsable,
)
from arcjudge.harness.dimensions.rules import RuleVerdict, output_grid_verdict
from arcjudge.harness.dimensions.strategies.strategy import (
    ConsistencyCheck,
    ReadReply,
    RuleCase,
    VerifierInput,
)
from arcjudge.tasks import Task
from arcjudge.vocabulary import Dimension, GridFormat

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]
__all__ += ["inputs_texts", "parse_outputs"]

DIMENSION = Dimension.OUTPUT_GRID

PLACEHOLDERS = frozenset({"test_inputs", "test_count", "answer_grids"})


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload | None:
    """The task's test inputs shown, their outputs the key (all must be known)."""
    tests = plan.task.test
    if not tests or any(p.output is None for p in tests):
        return None
    return Payload(
        {"test_inputs": [to_lists(p.input) for p in tests]},
        {"test_outputs": [to_lists(p.output) for p in tests if p.output is not None]},
    )


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``test_inputs``: the instance's."""
    raw = instance.prompt["test_inputs"]
    if not isinstance(raw, list) or not raw:
        raise TypeError("'test_inputs' must be a non-empty list of grids")
    return {"test_inputs": [grid_lists(g) for g in raw]}


def inputs_texts(visible: Mapping[str, Any], grid_format: GridFormat) -> dict[str, str]:
    """``$test_inputs`` (``Test input N:`` then the grid) and ``$test_count``."""
    inputs = read_grids(visible["test_inputs"])
    return {
        "test_inputs": "\n\n".join(
            f"Test input {n}:\n{grid_block(g, grid_format)}" for n, g in enumerate(inputs, 1)
        ),
        "test_count": str(len(inputs)),
    }


def _answer_grids(count: int) -> str:
    blocks = [f"```\n<output grid for test input {n}>\n```" for n in range(1, count + 1)]
    if count == 1:
        return blocks[0]
    return "\n\n".join(f"Test {n}:\n{block}" for n, block in enumerate(blocks, 1))


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """The test inputs and ``$answer_grids``: an answer block per test input."""
    values = inputs_texts(visible, grid_format)
    values["answer_grids"] = _answer_grids(len(visible["test_inputs"]))
    return values


def parse_outputs(
    reply: object, tests: int, attempts: int = 1
) -> ParsedReply[list[list[GridAnswer]]]:
    """Output-grid answers: per test input, up to ``attempts`` grids, from a reply.

    The well-formed grids of the reply are read as :func:`parse_grid` reads them (a JSON
    list of grids gives its grids in order). The last ``tests * attempts`` of them are the
    answer, in order, ``attempts`` consecutive grids per test input (test 1's attempts
    first); failing that many, the last ``tests`` grids, one attempt each. So a model
    that corrects itself gives its corrected grids last.

    Args:
        reply: The raw reply.
        tests: How many test inputs the task shows.
        attempts: Candidates per test input (ARC's pass@2 is 2).

    Returns:
        A list per test input of its grids (what :func:`parse_answer` takes) and how it
        was read, or ``unparsable: <why>``.

    Raises:
        ValueError: When ``tests`` or ``attempts`` is below 1 (a programmer error).
    """
    if tests < 1 or attempts < 1:
        raise ValueError("tests and attempts must be >= 1")
    if not isinstance(reply, str):
        return unparsable("the reply is not text")
    found = find_grids(split_reply(reply))
    grids = found.grids
    good = [g for g in grids if g.grid is not None]
    per = attempts if len(good) >= tests * attempts else 1
    if len(good) < tests:
        if good or not grids:
            what = f"{len(good)} grid(s)" if good else "no grid"
            return unparsable(f"{what} found, need {tests} (one per test input)")
        return unparsable(f"{grids[-1].source}: {grids[-1].reason}")
    chosen = good[len(good) - tests * per :]
    outputs = [[g.grid for g in chosen[i * per : (i + 1) * per] if g.grid] for i in range(tests)]
    sources = sorted({g.source for g in chosen})
    how = "/".join(sources)
    if len(good) > len(chosen) or found.skipped:
        how += f" (last {len(chosen)} of {len(good)} grids"
        how += f" read; {found.skipped} earlier skipped)" if found.skipped else ")"
    return ParsedReply(outputs, how)


read_reply: ReadReply = parse_outputs


def parse_answer(answer: object) -> tuple[tuple[tuple[Grid, ...], ...] | None, str | None]:
    """Per test input, the attempts (the answer's JSON checked and made grids).

    One entry per test input, in order, each a grid or a list of grids (attempts);
    ``{"outputs": [...]}`` is read too, and a bare grid for a task with one test input.
    """
    if isinstance(answer, Mapping) and "outputs" in answer:
        answer = answer["outputs"]
    grid, _ = canonicalize(answer)
    if grid is not None:  # a bare grid: one test input, one attempt
        return ((grid,),), None
    if not isinstance(answer, list) or not answer:
        return None, "output_grid answer must be a list with one grid (or attempts) per test input"
    tests: list[tuple[Grid, ...]] = []
    for i, entry in enumerate(answer):
        grid, reason = canonicalize(entry)
        if grid is not None:
            tests.append((grid,))
            continue
        # A list of attempts is a list of grids: lists whose items are lists.
        nested = isinstance(entry, list) and bool(entry)
        nested = nested and all(isinstance(a, list) and a and isinstance(a[0], list) for a in entry)
        if not nested:
            return None, f"output {i} is not a grid: {reason}"
        attempts = []
        for j, attempt in enumerate(entry):
            grid, why = canonicalize(attempt)
            if grid is None:
                return None, f"output {i}, attempt {j} is not a grid: {why}"
            attempts.append(grid)
        tests.append(tuple(attempts))
    return tuple(tests), None


verifier_input: VerifierInput | None = None
"""No verifier runs: the outputs are compared with the hidden test outputs."""


def rule(case: RuleCase) -> RuleVerdict:
    """:func:`..rules.output_grid_verdict` (pass@k, ``attempts`` of the settings)."""
    outputs = cast(tuple[tuple[Grid, ...], ...], case.answer)
    return output_grid_verdict(case.instance.test_outputs(), outputs, case.settings.attempts)


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck | None:
    """None: no self-consistency check for this dimension."""
    return None
