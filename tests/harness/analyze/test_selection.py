"""The study's task selection for Sections 3.1 and 3.2 (``harness/analyze/selection.py``)."""

from __future__ import annotations

import random

import pytest

from arcjudge.errors import InputError
from arcjudge.harness.analyze.selection import (
    SAMPLED_TASKS,
    passed_all_five,
    read_task_list,
    sampling_selection,
)
from arcjudge.harness.dimensions.records import DimensionItem
from arcjudge.vocabulary import DIMENSIONS
from tests.support.analysis_records import item as record


def item(model: str, run: str, task: str, dim: str, passed: bool) -> DimensionItem:
    return DimensionItem.from_json(record(model, run, task, dim, passed))


def all_five(model: str, run: str, task: str, failing: str | None = None) -> list[DimensionItem]:
    return [item(model, run, task, str(d), str(d) != failing) for d in DIMENSIONS]


def test_passed_all_five_needs_every_dimension_in_one_run():
    items = [
        *all_five("m", "1", "whole"),  # passed entirely in run 1
        *all_five("m", "1", "split", failing="editing"),  # each dimension passed in some run,
        *all_five("m", "2", "split", failing="inversion"),  # never all five in one run
        *all_five("m", "1", "later", failing="definition"),
        *all_five("m", "2", "later"),  # passed entirely in run 2
        *all_five("other", "1", "mine"),  # another model's
        *[i for i in all_five("m", "1", "short") if i.dimension != "generation"],  # no item
        item("m", "1", "grid", "output_grid", True),
        *all_five("m", "1", "grid", failing="classification"),  # the output grid is no dimension
    ]
    tasks = ["whole", "split", "later", "mine", "short", "grid"]
    assert passed_all_five(items, "m", tasks) == ["whole", "later"]
    assert passed_all_five(items, "m", ["later", "whole"]) == ["later", "whole"]  # their order
    assert passed_all_five(items, "other", tasks) == ["mine"]


def passed_tasks(count: int) -> tuple[list[DimensionItem], list[str]]:
    tasks = [f"t{n:03d}" for n in range(count)]
    items = [i for t in tasks for i in all_five("m", "1", t)]
    items += [i for n in range(10) for i in all_five("m", "1", f"f{n}", failing="generation")]
    return items, [*tasks, *(f"f{n}" for n in range(10))]


def test_the_draw_is_a_seeded_random_50_of_the_passed_tasks():
    items, tasks = passed_tasks(80)
    chosen = sampling_selection(items, "m", tasks, SAMPLED_TASKS, 77, frozenset())
    assert SAMPLED_TASKS == 50 and chosen.passed == 80
    assert len(chosen.drawn) == len(set(chosen.drawn)) == 50
    assert set(chosen.drawn) <= {f"t{n:03d}" for n in range(80)}  # never a failed task
    assert list(chosen.drawn) == sorted(chosen.drawn) and chosen.tasks == chosen.drawn
    assert sampling_selection(items, "m", tasks, 50, 77, frozenset()) == chosen
    assert sampling_selection(items, "m", tasks, 50, 78, frozenset()).drawn != chosen.drawn
    # the draw is the seed's: random.Random(seed).sample of the passed tasks in sorted order
    passed = sorted(f"t{n:03d}" for n in range(80))
    assert chosen.drawn == tuple(sorted(random.Random(77).sample(passed, 50)))
    few = sampling_selection(items[: 5 * 12], "m", tasks, 50, 77, frozenset())
    assert few.passed == 12 and len(few.drawn) == 12  # fewer than 50: every one


def test_the_exclusion_list_is_applied_after_the_draw():
    items, tasks = passed_tasks(80)
    drawn = sampling_selection(items, "m", tasks, 50, 77, frozenset()).drawn
    not_drawn = sorted({f"t{n:03d}" for n in range(80)} - set(drawn))
    exclude = frozenset([*drawn[:30], *not_drawn[:5], "unknown"])
    chosen = sampling_selection(items, "m", tasks, 50, 77, exclude)
    assert chosen.drawn == drawn  # the list does not change the draw
    assert chosen.excluded == drawn[:30] and chosen.tasks == drawn[30:]
    assert len(chosen.tasks) == 20  # the study's 50 -> 20
    assert chosen.to_json() == {
        "passed_all_five": 80,
        "drawn": list(drawn),
        "excluded": list(drawn[:30]),
        "tasks": list(drawn[30:]),
    }


def test_a_task_list_is_one_id_a_line_with_comments(tmp_path):
    path = tmp_path / "trivial.txt"
    path.write_text("# trivial Definition programs\n007bbfc7\n\n  0a1d4ef5  # identity\n")
    assert read_task_list(path) == frozenset({"007bbfc7", "0a1d4ef5"})
    with pytest.raises(InputError, match="missing"):
        read_task_list(tmp_path / "missing")
