"""Definition's pass rule, ``failure_class``: every input right, else the class of the failure.

Pure: results are built here (no sandbox), so this is the fast tier's check of the rule
(``test_score.py`` checks every verdict and failure class end to end, on programs it runs).
"""

from __future__ import annotations

import pytest

from arcjudge.harness.core.results import CandidateOutcome, StoredResult, TaskInput
from arcjudge.harness.score.scorer import failure_class
from arcjudge.sandbox.types import ProgramStatus, Status
from arcjudge.vocabulary import ScoreFailure

RIGHT = ((1, 2),)
WRONG = ((2, 1),)
INSTANCES = [TaskInput("train", 0, ((2, 1),), RIGHT), TaskInput("test", 0, ((1, 1),), RIGHT)]


def ok(grid, right=None) -> StoredResult:
    return StoredResult(Status.OK, grid, right=right)


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([ok(RIGHT), ok(RIGHT)], None),  # judged by the grids
        ([ok(RIGHT, True), ok(RIGHT, True)], None),  # judged by the engine
        ([ok(RIGHT), ok(WRONG)], ScoreFailure.RULE),
        ([ok(WRONG, False), ok(RIGHT, True)], ScoreFailure.RULE),
        ([ok(RIGHT), StoredResult(Status.INVALID_OUTPUT, error="cell 10")], ScoreFailure.RULE),
        ([ok(RIGHT), StoredResult(Status.TIMEOUT)], ScoreFailure.RUNTIME),
        ([StoredResult(Status.ERROR), ok(RIGHT)], ScoreFailure.RUNTIME),
        ([StoredResult(Status.TIMEOUT), ok(WRONG)], ScoreFailure.RULE),  # a wrong grid first
        ([ok(RIGHT), StoredResult(Status.INFRA)], ScoreFailure.INFRA),
        ([ok(RIGHT), None], ScoreFailure.INFRA),  # an input never run is no pass
    ],
)
def test_a_program_passes_only_when_every_input_is_right(results, expected):
    assert failure_class(CandidateOutcome(results=results), INSTANCES) == expected


def test_a_program_that_does_not_load_is_static_and_a_sandbox_failure_infra():
    load = CandidateOutcome(failure=(ProgramStatus.LOAD_ERROR, "SyntaxError"))
    assert failure_class(load, INSTANCES) == ScoreFailure.STATIC
    infra = CandidateOutcome(failure=(ProgramStatus.INFRA, "worker died"))
    assert failure_class(infra, INSTANCES) == ScoreFailure.INFRA


def test_inputs_skipped_after_a_failure_keep_its_class_but_alone_are_no_pass():
    skipped = CandidateOutcome(results=[ok(WRONG), None], skipped=True)
    assert failure_class(skipped, INSTANCES) == ScoreFailure.RULE
    only_skipped = CandidateOutcome(results=[ok(RIGHT), ok(RIGHT)], skipped=True)
    assert failure_class(only_skipped, INSTANCES) == ScoreFailure.INFRA
