"""The study's task selection for Sections 3.1 and 3.2.

The study does not run its follow-up experiments on every task:

* Section 3.1 (matched budget) on the tasks a model passed on all five dimensions;
* Section 3.2 (increased sampling) on a random 50 of the tasks a model passed on all
  five, minus those whose Definition program is trivial (an exclusion list; the study
  was left with 20).

Here a model *passed a task on all five* when in at least one of its runs it passed each
of the five PotARCin dimensions of the task (the output grid is not one of them). For
Section 3.2 the items are configuration 1's; the draw is ``random.Random(seed).sample``
of the passed tasks in sorted order (every one when there are no more than the sample
size), the excluded tasks are removed after the draw, as the study did.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.vocabulary import DIMENSIONS, Dimension

__all__ = [
    "SAMPLED_TASKS",
    "SamplingSelection",
    "passed_all_five",
    "read_task_list",
    "sampling_selection",
]

SAMPLED_TASKS = 50
"""Section 3.2's tasks per model before the exclusion list, as the study."""


def passed_all_five(items: Iterable[DimensionItem], model: str, tasks: Sequence[str]) -> list[str]:
    """The ``tasks`` (in their order) ``model`` passed on all five dimensions in some run."""
    passed: dict[tuple[str, str], set[Dimension]] = defaultdict(set)
    for item in items:
        if item.model == model and item.passed and item.dimension in DIMENSIONS:
            passed[(item.run, item.task_id)].add(item.dimension)
    entire = {task for (_, task), dims in passed.items() if len(dims) == len(DIMENSIONS)}
    return [task for task in tasks if task in entire]


@dataclass(frozen=True)
class SamplingSelection:
    """One model's Section 3.2 tasks and how they were chosen.

    Attributes:
        passed: How many tasks (with all five instances) it passed on all five.
        drawn: The seeded random draw of at most the sample size of them, sorted.
        excluded: The drawn tasks the exclusion list removed, sorted.
        tasks: The tasks Section 3.2 is computed over (``drawn`` minus ``excluded``).
    """

    passed: int
    drawn: tuple[str, ...]
    excluded: tuple[str, ...]
    tasks: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """As ``analysis.json`` records it."""
        return {
            "passed_all_five": self.passed,
            "drawn": list(self.drawn),
            "excluded": list(self.excluded),
            "tasks": list(self.tasks),
        }


def sampling_selection(
    items: Iterable[DimensionItem],
    model: str,
    full_tasks: Sequence[str],
    size: int,
    seed: int,
    exclude: frozenset[str],
) -> SamplingSelection:
    """Section 3.2's tasks of ``model``: a seeded draw of those it passed, minus ``exclude``.

    Args:
        items: Configuration 1's items.
        model: The model.
        full_tasks: The tasks with all five instances (in every configuration).
        size: How many to draw (all of them when fewer were passed).
        seed: The draw's seed.
        exclude: Task ids removed after the draw (trivial Definition programs).
    """
    passed = sorted(passed_all_five(items, model, full_tasks))
    drawn = sorted(random.Random(seed).sample(passed, min(size, len(passed))))
    excluded = tuple(t for t in drawn if t in exclude)
    return SamplingSelection(
        len(passed), tuple(drawn), excluded, tuple(t for t in drawn if t not in exclude)
    )


def read_task_list(path: Path) -> frozenset[str]:
    """Read a list of task ids: one a line; blank lines and ``#`` comments are skipped.

    Raises:
        InputError: The file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the task list ({exc})") from None
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return frozenset(line for line in lines if line)
