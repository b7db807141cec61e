"""What ``arcjudge mutate`` writes per mutant: a ``mutants.jsonl`` line.

The corrupted pairs (``corruptions.jsonl``) are
:class:`~arcjudge.harness.core.corruption.CorruptionRecord`, in the core, since
``dimensions build`` reads them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arcjudge.harness.core.record import Record
from arcjudge.vocabulary import MutantStatus

__all__ = ["MutantRecord"]


@dataclass(frozen=True)
class MutantRecord(Record):
    """One mutant of one verifier source, and how it fared on the task's inputs.

    Attributes:
        id: ``{task_id}:{source}:{operator}:{anchor}[:{variant}]``.
        task_id: The task.
        source: The verifier source's name.
        operator: The mutation operator's name.
        anchor: Content-based name of the changed place.
        variant: Which change at that place, if the operator has several, else ``None``.
        diff: Unified diff of the mutant against the original.
        status: Its class on the inputs.
        counts: Inputs per outcome: ``right``, ``wrong``, a call status or ``not_run``
            (in key order).
    """

    id: str
    task_id: str
    source: str
    operator: str
    anchor: str
    variant: str | None
    diff: str
    status: MutantStatus
    counts: Mapping[str, int]
