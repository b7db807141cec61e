"""Self-consistency: a model's own Definition program run on its other answers.

For every ``(model, run, task)`` with a Definition program whose code is known, each
answered item of a :data:`~arcjudge.vocabulary.CONSISTENCY_DIMENSIONS` dimension asks its
strategy which pairs the program is checked on (``consistency``); the program runs once
on them all, in the sandbox, through the engine, and the items get a
:class:`~.records.Consistency`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from arcjudge.harness.core.engine import Engine
from arcjudge.harness.dimensions.consistency import agrees_many
from arcjudge.harness.dimensions.grade_inputs import AnswerKey, DefinitionResult, ParsedAnswer
from arcjudge.harness.dimensions.records import Consistency, DimensionInstance, DimensionItem
from arcjudge.harness.dimensions.strategies import STRATEGIES
from arcjudge.harness.dimensions.strategies.strategy import ConsistencyCheck
from arcjudge.sandbox.types import Program
from arcjudge.vocabulary import CONSISTENCY_DIMENSIONS, Dimension

__all__ = ["ProgramsOfModels", "with_consistency"]

Cell = tuple[str, str, str]
"""``(model, run, task_id)``."""


@dataclass(frozen=True)
class ProgramsOfModels:
    """The models' Definition programs.

    Attributes:
        definitions: The Definition result per ``(model, run, task_id)``.
        codes: Program code by its SHA-256.
        entry_points: For results that do not record the entry points score used.
    """

    definitions: Mapping[Cell, DefinitionResult]
    codes: Mapping[str, str]
    entry_points: tuple[str, ...]


def _consistency(passes: bool, check: ConsistencyCheck, agreement: Sequence[bool]) -> Consistency:
    """An item's consistency from the program's agreement with each of its pairs."""
    if check.judgments is None:
        return Consistency(passes, agreement[0])
    judged = check.judgments
    agree = tuple(judged[i] == says for i, says in enumerate(agreement))
    right = tuple(judged[i] == check.truths[i] for i in range(len(agreement)))
    return Consistency(passes, agree, right)


def with_consistency(
    items: Sequence[DimensionItem],
    parsed: Mapping[AnswerKey, ParsedAnswer],
    instances: Mapping[tuple[str, Dimension], DimensionInstance],
    programs: ProgramsOfModels,
    engine: Engine,
    progress: Callable[[int], None] | None = None,
) -> list[DimensionItem]:
    """The items, those checked annotated with their model's program's agreement.

    Args:
        items: The graded items.
        parsed: The parsed answers per item.
        instances: The instances.
        programs: The models' Definition programs.
        engine: Runs the programs (Definition limits).
        progress: Called with 1 per program run.
    """
    result = list(items)
    by_cell: dict[Cell, list[int]] = {}  # -> indices into the items
    for index, item in enumerate(result):
        if item.dimension in CONSISTENCY_DIMENSIONS:
            by_cell.setdefault((item.model, item.run, item.task_id), []).append(index)
    checked: list[tuple[Program, list[tuple[object, object]]]] = []
    plans: list[tuple[Cell, list[tuple[int, ConsistencyCheck]]]] = []
    for cell in sorted(by_cell):
        record = programs.definitions.get(cell)
        code = programs.codes.get(str(record.code_sha256)) if record else None
        if record is None or code is None:
            continue
        checks: list[tuple[int, ConsistencyCheck]] = []
        for index in by_cell[cell]:
            dim = result[index].dimension
            answer = parsed.get((*cell, dim))
            if answer is None or answer.problem is not None:
                continue
            check = STRATEGIES[dim].consistency(instances[(cell[2], dim)], answer.value)
            if check is not None and check.pairs:
                checks.append((index, check))
        if not checks:
            continue
        # The entry points score ran the program with (``--entrypoint``), so the same
        # function is called here; the default list for results that do not say.
        entry_points = record.entry_points or programs.entry_points
        program = Program(code.encode("utf-8"), entry_points, (), "list", str(record.program))
        pairs: list[tuple[object, object]] = [p for _, c in checks for p in c.pairs]
        checked.append((program, pairs))
        plans.append((cell, checks))

    def done(index: int) -> None:
        if progress:
            progress(1)

    runs = agrees_many(checked, engine, done)
    for (cell, checks), agreement in zip(plans, runs, strict=True):
        definition = programs.definitions.get(cell)
        passes = definition is not None and definition.passes_train_test()
        start = 0
        for index, check in checks:
            says = agreement[start : start + len(check.pairs)]
            start += len(check.pairs)
            info = _consistency(passes, check, says)
            result[index] = replace(result[index], consistency=info)
    return result
