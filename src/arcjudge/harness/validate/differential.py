"""Differential analysis: tell a bad verifier from a bad generator sample.

Verifiers that are right on every demonstration and ARC-GEN stable pair (the *trusted
splits*) are compared with each other on every input of the task:

- an input is a **suspect sample** when at least two such verifiers from different sources
  agree with each other and disagree with the expected output, and none of them agrees
  with the expected output: the generator most likely broke its own rule there;
- an input is **disputed** when such verifiers return different outputs;
- with probe samples (extra generator samples drawn only for this comparison, split
  ``probe``), a task whose trusted verifiers disagree on one is **ambiguous**: the
  verifiers encode different rules that the demonstrations do not separate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arcjudge.grids import Grid
from arcjudge.harness.core.results import CandidateOutcome, TaskInput
from arcjudge.harness.validate.records import (
    AmbiguousTask,
    DisputedInput,
    DisputedOutput,
    ProbeOutput,
    SuspectSample,
)
from arcjudge.sandbox.types import Status
from arcjudge.vocabulary import TASK_SPLITS, Split


@dataclass
class TaskAnalysis:
    """What the comparison found on one task."""

    trusted: list[str] = field(default_factory=list)
    suspects: list[SuspectSample] = field(default_factory=list)
    disputes: list[DisputedInput] = field(default_factory=list)
    ambiguous: AmbiguousTask | None = None
    suspect_positions: set[int] = field(default_factory=set)
    quarantinable: list[str] = field(default_factory=list)  # invalid only on suspects


def trusted_sources(
    names: list[str], outcomes: list[CandidateOutcome | None], instances: list[TaskInput]
) -> list[int]:
    """Indexes of the sources that are right on every trusted-split instance."""
    chosen = []
    for i, outcome in enumerate(outcomes):
        if outcome is None or outcome.failure is not None:
            continue
        if all(
            r is not None and r.status is Status.OK and r.grid == inst.expected
            for inst, r in zip(instances, outcome.results, strict=True)
            if inst.split in TASK_SPLITS
        ):
            chosen.append(i)
    return chosen


def analyze(
    task_id: str,
    names: list[str],
    outcomes: list[CandidateOutcome | None],
    instances: list[TaskInput],
) -> TaskAnalysis:
    """Compare the trusted verifiers of one task on all its inputs.

    Args:
        task_id: The task.
        names: Source names, aligned with ``outcomes``.
        outcomes: Each source's outcome (``None`` for a source with no program).
        instances: The task's instances, aligned with each outcome's results.

    Returns:
        Suspects, disputes and the ambiguity flag, with pictures' worth of data.
    """
    analysis = TaskAnalysis()
    trusted = trusted_sources(names, outcomes, instances)
    analysis.trusted = [names[i] for i in trusted]
    if len(trusted) < 2:
        return analysis
    for pos, inst in enumerate(instances):
        produced: dict[Grid, list[str]] = {}
        for i in trusted:
            outcome = outcomes[i]
            assert outcome is not None  # trusted sources all ran
            r = outcome.results[pos]
            if r is not None and r.status is Status.OK and r.grid is not None:
                produced.setdefault(r.grid, []).append(names[i])
        split = Split(inst.split)
        if split is Split.PROBE:
            if len(produced) > 1 and analysis.ambiguous is None:
                analysis.ambiguous = AmbiguousTask(
                    task_id, Split.PROBE, inst.index, inst.seed, inst.grid,
                    tuple(ProbeOutput(g, tuple(s)) for g, s in produced.items()),
                )  # fmt: skip
            continue
        if len(produced) > 1:
            analysis.disputes.append(DisputedInput(
                task_id, split, inst.index, inst.seed, inst.grid, inst.expected,
                tuple(DisputedOutput(g, tuple(s), g == inst.expected) for g, s in produced.items()),
            ))  # fmt: skip
        if inst.expected in produced:
            continue
        agreeing = [(g, s) for g, s in produced.items() if len(s) >= 2]
        if agreeing:
            grid, sources = max(agreeing, key=lambda item: len(item[1]))
            analysis.suspects.append(SuspectSample(
                task_id, split, inst.index, inst.seed, inst.grid, inst.expected, grid,
                tuple(sources),
            ))  # fmt: skip
            analysis.suspect_positions.add(pos)
    return analysis


def only_suspect_failures(
    outcome: CandidateOutcome, instances: list[TaskInput], suspect_positions: set[int]
) -> bool:
    """Whether every wrong answer of a loaded verifier is on a suspect sample."""
    if outcome.failure is not None or not suspect_positions:
        return False
    for pos, (inst, r) in enumerate(zip(instances, outcome.results, strict=True)):
        if inst.split == Split.PROBE:
            continue
        right = r is not None and r.status is Status.OK and r.grid == inst.expected
        if not right and pos not in suspect_positions:
            return False
    return True
