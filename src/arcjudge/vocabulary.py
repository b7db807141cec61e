"""The words arcjudge's files and command lines use, each defined once.

Every value is a :class:`~enum.StrEnum`, so a member *is* its JSON and command-line string
(``Split.ARC_GEN == "arc-gen"``, ``json.dumps(Split.TRAIN) == '"train"'``) and files written
with them are unchanged. The order of members is the order outputs list them in. Statuses of
a single call and of a program's load (:class:`Status`, :class:`ProgramStatus`) are the
sandbox's contract: defined here, with the groups of them the workflows use, and exported by
the sandbox too (``arcjudge.sandbox.Status``).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ANSWER_DIMENSIONS",
    "BUILT_DIMENSIONS",
    "CANDIDATE_KINDS",
    "CONSISTENCY_DIMENSIONS",
    "DEFINITION_ENTRY_POINTS",
    "DIMENSIONS",
    "EDITING_KINDS",
    "FAILURE_CLASSES",
    "GENERATOR_ENTRY_POINT",
    "GRID_FORMATS",
    "INVALID_KINDS",
    "MIXTURE_RULES",
    "MUTANT_STATUSES",
    "REPORTED_SPLITS",
    "RUNTIME_STATUSES",
    "RUN_ENTRY_POINTS",
    "SCORE_FAILURES",
    "TASK_SET_FORMATS",
    "TASK_SET_SOURCE",
    "TASK_SPLITS",
    "VERDICTS",
    "VERIFIER_ENTRY_POINTS",
    "CandidateKind",
    "Dimension",
    "FailureClass",
    "GridFormat",
    "Judgment",
    "MismatchPool",
    "MixtureRule",
    "MutantStatus",
    "ProgramStatus",
    "ScoreFailure",
    "ScoreVerdict",
    "Split",
    "Status",
    "TaskSetFormat",
    "ValidPairs",
    "Verdict",
]


class Status(StrEnum):
    """Outcome of one call of a program on one input (a contract: values are stable)."""

    OK = "ok"
    INVALID_OUTPUT = "invalid_output"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    CRASHED = "crashed"
    INFRA = "infra"


class ProgramStatus(StrEnum):
    """Outcome of loading a program, decided once before any input runs."""

    LOADED = "loaded"
    LOAD_ERROR = "load_error"
    POLICY_REJECTED = "policy_rejected"
    INFRA = "infra"


class Split(StrEnum):
    """Where an input comes from."""

    TRAIN = "train"
    """The task's demonstrations."""
    TEST = "test"
    """The task's test pairs."""
    ARC_GEN = "arc-gen"
    """The ARC-GEN stable set (or a task set's own stable pairs)."""
    GENERATOR = "generator"
    """Fresh samples of a generator, seeded per task and index."""
    PROBE = "probe"
    """Extra generator samples that only compare verifiers (never grade one)."""


TASK_SPLITS: tuple[Split, ...] = (Split.TRAIN, Split.TEST, Split.ARC_GEN)
"""The splits a task file holds; the trusted ones in differential analysis."""

REPORTED_SPLITS: tuple[Split, ...] = (*TASK_SPLITS, Split.GENERATOR)
"""The splits tallied in verdicts and results, in this order."""


class Verdict(StrEnum):
    """What ``validate`` decided about one verifier source on one task."""

    VALID = "valid"
    VALID_QUARANTINED = "valid_quarantined"
    VALID_UNSAMPLED = "valid_unsampled"
    """Right on every input it was checked on, but its task had fewer generator samples
    than asked (its generator missing or failed): not valid, unless
    ``--allow-missing-samples``."""
    INVALID = "invalid"
    MISSING = "missing"
    LOAD_ERROR = "load_error"
    POLICY_REJECTED = "policy_rejected"
    INFRA = "infra"


VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
"""Every verdict, in the order summaries count them."""


class FailureClass(StrEnum):
    """Why a Definition program failed (the study's static / runtime / rule split)."""

    STATIC = "static"
    RUNTIME = "runtime"
    RULE = "rule"


FAILURE_CLASSES: tuple[FailureClass, ...] = tuple(FailureClass)
"""Every failure class, in the order summaries show them."""


class ScoreFailure(StrEnum):
    """Why a program ``score`` ran failed: its failure class, or ``infra``.

    The first three are :class:`FailureClass`'s values (a member equals the failure class
    of the same value: ``ScoreFailure.RULE == FailureClass.RULE``).
    """

    STATIC = FailureClass.STATIC.value
    RUNTIME = FailureClass.RUNTIME.value
    RULE = FailureClass.RULE.value
    INFRA = "infra"
    """The sandbox (not the program) failed."""


SCORE_FAILURES: tuple[ScoreFailure, ...] = tuple(ScoreFailure)
"""Every failure a score result may have, in the order summaries count them."""


class ScoreVerdict(StrEnum):
    """What ``score`` decided about one program: ``pass`` exactly when it has no failure."""

    PASS = "pass"
    FAIL = "fail"


RUNTIME_STATUSES: frozenset[Status] = frozenset(
    {Status.ERROR, Status.TIMEOUT, Status.MEMORY, Status.CRASHED, Status.OUTPUT_LIMIT}
)
"""Call statuses that make a program's failure a runtime failure."""


class CandidateKind(StrEnum):
    """How a Classification or Editing candidate pair was made, in the reference study's order."""

    VALID = "valid"
    HUMAN_ERROR = "human_error"
    INSTANCE_MISMATCH = "instance_mismatch"
    CORRUPTED_VERIFIER = "corrupted_verifier"
    RETRIEVAL = "retrieval"
    COLOR_FLIP = "color_flip"


CANDIDATE_KINDS: tuple[CandidateKind, ...] = tuple(CandidateKind)
"""Every candidate kind: ``valid`` first."""

INVALID_KINDS: tuple[CandidateKind, ...] = tuple(
    k for k in CandidateKind if k is not CandidateKind.VALID
)
"""The kinds of invalid (corrupted) candidate pairs."""


class ValidPairs(StrEnum):
    """Where ``dimensions build`` takes a task's valid pairs from."""

    GENERATOR = "generator"
    """The default (the study's "dynamic correct" pairs): fresh generator samples with the
    verifier's outputs, from ``--generator`` or else the generator the manifest names
    (ARC-GEN pairs for a task it gives no usable sample for, or without any generator)."""
    ARC_GEN = "arc-gen"
    """The task's ARC-GEN pairs even when a generator is known (arcjudge's default before;
    then the test pairs, for a task without ARC-GEN pairs)."""


class MismatchPool(StrEnum):
    """The pairs whose outputs ``dimensions build`` gives an instance mismatch."""

    ARC_GEN = "arc-gen"
    """The default (the study's): the task's ARC-GEN pairs and its demonstrations, whatever
    the valid pairs are (its valid pairs and demonstrations for a task without ARC-GEN
    pairs)."""
    VALID = "valid"
    """The valid pairs the build drew (generator samples when there are) and the
    demonstrations: arcjudge's pool before."""


class MixtureRule(StrEnum):
    """How ``dimensions build`` draws a Classification instance's five candidate types."""

    WITHOUT_REPLACEMENT = "without-replacement"
    """The default (closest to the reference study's realized shares): a type the task has
    no candidate of gives its weight to the available invalid types; within an instance no
    candidate repeats while an unused one remains, a type whose candidates are used up
    leaving the draw and the remaining types (``valid`` included) sharing its weight."""
    RENORMALIZED = "renormalized"
    """As ``without-replacement``, but a type the task has no candidate of gives its weight
    to every available type, ``valid`` included."""
    FIXED_VALID = "fixed-valid"
    """arcjudge's rule before: ``valid`` keeps its weight, a missing invalid type's weight
    goes to the available invalid types, and a type whose candidates are used up is drawn
    again (a candidate repeats, ``reused: true``)."""


MIXTURE_RULES: tuple[MixtureRule, ...] = tuple(MixtureRule)
"""Every Classification draw rule, the default first."""

EDITING_KINDS: tuple[CandidateKind, ...] = (
    CandidateKind.HUMAN_ERROR,
    CandidateKind.CORRUPTED_VERIFIER,
    CandidateKind.COLOR_FLIP,
)
"""The kinds an Editing instance's pair may be by default: the study's three (human error,
corrupted verifier, color flip; ``dimensions build --editing-kinds`` chooses others)."""


class Dimension(StrEnum):
    """The five PotARCin dimensions and the standard output-grid test."""

    OUTPUT_GRID = "output_grid"
    DEFINITION = "definition"
    CLASSIFICATION = "classification"
    GENERATION = "generation"
    EDITING = "editing"
    INVERSION = "inversion"


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension.DEFINITION,
    Dimension.CLASSIFICATION,
    Dimension.GENERATION,
    Dimension.EDITING,
    Dimension.INVERSION,
)
"""The five PotARCin dimensions, in the order tables list them: full-task accuracy is over
these (the output-grid test is reported beside it)."""

BUILT_DIMENSIONS: tuple[Dimension, ...] = (Dimension.OUTPUT_GRID, *DIMENSIONS)
"""Every dimension ``dimensions build`` makes instances of, in the order it writes them."""

ANSWER_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension.OUTPUT_GRID,
    Dimension.CLASSIFICATION,
    Dimension.GENERATION,
    Dimension.EDITING,
    Dimension.INVERSION,
)
"""The dimensions answered with grids or judgments (Definition is answered with a program)."""

CONSISTENCY_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension.CLASSIFICATION,
    Dimension.GENERATION,
    Dimension.INVERSION,
)
"""The dimensions whose answers a model's own Definition program is checked against."""


class GridFormat(StrEnum):
    """How prompts write grids as text (``dimensions prompts --grid-format``)."""

    DIGITS = "digits"
    """One row a line, one digit a cell, no separators: ``012`` then ``340``."""
    JSON = "json"
    """JSON nested lists on one line: ``[[0,1,2],[3,4,0]]``."""


GRID_FORMATS: tuple[GridFormat, ...] = tuple(GridFormat)
"""Every grid format: the default (``digits``) first."""


class Judgment(StrEnum):
    """A Classification answer for one candidate pair."""

    VALID = "valid"
    INVALID = "invalid"


class MutantStatus(StrEnum):
    """What running a mutant on a task's inputs showed."""

    KILLED = "killed"
    """Wrong on some input: its outputs there are corrupted pairs."""
    EQUIVALENT_ON_EVIDENCE = "equivalent_on_evidence"
    """Right on every input tried."""
    CRASHES = "crashes"
    """Did not load, or failed with a runtime error on every input."""
    INVALID_OUTPUT = "invalid_output"
    """Never wrong where it answered, but some answers were missing or not grids."""


MUTANT_STATUSES: tuple[MutantStatus, ...] = tuple(MutantStatus)
"""Every mutant status, in the order summaries count them."""


DEFINITION_ENTRY_POINTS: tuple[str, ...] = ("transform", "solve", "p", "main")
"""Functions tried in order in a model-written Definition program."""

VERIFIER_ENTRY_POINTS: tuple[str, ...] = ("verify", "transform", "solve", "p")
"""Functions tried in order in a ``module`` verifier source."""

RUN_ENTRY_POINTS: tuple[str, ...] = ("transform", "solve", "verify", "p", "main")
"""Functions ``arcjudge run`` tries in order: a Definition program's, then a verifier's."""

GENERATOR_ENTRY_POINT = "generate"
"""The function an ``arc-gen`` generator source defines (``generate(**params)``)."""


class TaskSetFormat(StrEnum):
    """What ``--tasks`` names (``arcjudge.tasksets`` tells them apart)."""

    ARC_JSON = "arc-json"
    """A directory of ARC task JSON files (ARC-AGI-1/2, Kaggle's with ``arc-gen``)."""
    P_ARC_CSV = "p-arc-csv"
    """P-ARC's tabular export as CSV (UTF-8)."""
    P_ARC_PARQUET = "p-arc-parquet"
    """P-ARC's tabular export as Parquet."""
    TASK_FOLDERS = "task-folders"
    """A directory of ``<task_id>/task.json`` folders (``docs/task-sets.md``)."""


TASK_SET_FORMATS: tuple[TaskSetFormat, ...] = tuple(TaskSetFormat)
"""Every task-set format: the ARC JSON directory first."""

TASK_SET_SOURCE = "taskset"
"""The verifier source name a task set's own verifiers get (``--source taskset=module:...``)."""
