"""The Python API's functions: each command's run, from a typed config to a typed result.

Each function runs the same :class:`~arcjudge.harness.core.runner.Command` as the command
line, through the same runner (:func:`~arcjudge.harness.core.runner.perform`): the sandbox
and the result store are opened and closed around the run, the output files are written
atomically into ``out``, and nothing is printed. A bad config raises
:class:`~arcjudge.errors.ArcjudgeError` (as the command line's one-line errors do); a
program's failure is a status in the result, never an exception.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from arcjudge.harness.core.runner import Command, Outputs, perform, write_outputs
from arcjudge.sandbox.backends import SandboxOptions

if TYPE_CHECKING:
    from arcjudge.harness.analyze.cli import AnalyzeConfig
    from arcjudge.harness.analyze.study import Analysis
    from arcjudge.harness.dimensions.build import BuildConfig
    from arcjudge.harness.dimensions.grading import DimensionScoreConfig
    from arcjudge.harness.mutate.cli import MutateOutcome
    from arcjudge.harness.mutate.mutator import MutateConfig
    from arcjudge.harness.score.cli import ScoreOutcome
    from arcjudge.harness.score.scorer import ScoreConfig
    from arcjudge.harness.validate.cli import ValidateOutcome
    from arcjudge.harness.validate.validator import ValidateConfig

__all__ = ["analyze", "build", "grade", "mutate", "score", "validate"]

log = logging.getLogger("arcjudge")
T = TypeVar("T")


def _perform(command: Command[Any, Any], config: object) -> Outputs:
    outputs = perform(command, config, warn=log.warning, report=log.info)
    write_outputs(outputs)
    return outputs


def validate(
    config: ValidateConfig,
    out: Path,
    *,
    sandbox: SandboxOptions | None = None,
    store: Path | None = None,
) -> ValidateOutcome:
    """Decide which verifier sources are valid per task (``arcjudge validate``).

    Args:
        config: The tasks, the sources (:func:`parse_verifier_spec`), the inputs, limits.
        out: Where ``verdicts.jsonl``, ``suspects.jsonl``, ``manifest.json``,
            ``runtime.json`` and ``report.html`` are written.
        sandbox: The sandbox (default: ``auto``, one worker per core).
        store: The result cache (default ``OUT/cache.sqlite``): a rerun resumes.

    Returns:
        The manifest (``manifest.json``'s record, a
        :class:`~arcjudge.harness.core.manifest.Manifest`) and every verdict.
    """
    from arcjudge.harness.validate.cli import COMMAND, ValidateOutcome, ValidateRun

    run = ValidateRun(config, Path(out), store, sandbox or SandboxOptions())
    return _result(_perform(COMMAND, run), ValidateOutcome)


def score(
    config: ScoreConfig,
    out: Path,
    *,
    sandbox: SandboxOptions | None = None,
    store: Path | None = None,
) -> ScoreOutcome:
    """Score model-written Definition programs (``arcjudge score``).

    Args:
        config: The programs file, the tasks, the inputs (ARC-GEN, generator samples),
            entry points and limits.
        out: Where ``results.jsonl``, ``timings.jsonl``, ``summary.json``,
            ``runtime.json`` and ``report.html`` are written.
        sandbox: The sandbox (default: ``auto``, one worker per core).
        store: The result cache (default ``OUT/cache.sqlite``): a rerun resumes.

    Returns:
        One :class:`ScoreResult` per program, in the programs file's order, and the summary.
    """
    from arcjudge.harness.score.cli import COMMAND, ScoreOutcome, ScoreRun

    run = ScoreRun(config, Path(out), store, sandbox or SandboxOptions())
    return _result(_perform(COMMAND, run), ScoreOutcome)


def mutate(
    config: MutateConfig,
    out: Path,
    *,
    sandbox: SandboxOptions | None = None,
    store: Path | None = None,
) -> MutateOutcome:
    """Corrupted verifiers and their near-miss pairs (``arcjudge mutate``).

    Args:
        config: The tasks, the sources, the operators, the inputs and limits.
        out: Where ``mutants.jsonl``, ``corruptions.jsonl``, ``summary.json`` and
            ``runtime.json`` are written.
        sandbox: The sandbox (default: ``auto``, one worker per core).
        store: The result cache (default ``OUT/cache.sqlite``): a rerun resumes.

    Returns:
        The summary (``summary.json``'s record, a
        :class:`~arcjudge.harness.mutate.records.MutateSummary`) and the files' lines.
    """
    from arcjudge.harness.mutate.cli import COMMAND, MutateOutcome, MutateRun

    run = MutateRun(config, Path(out), store, sandbox or SandboxOptions())
    return _result(_perform(COMMAND, run), MutateOutcome)


def build(
    config: BuildConfig,
    out: Path,
    *,
    configurations: int = 1,
    sandbox: SandboxOptions | None = None,
    store: Path | None = None,
) -> tuple[dict[str, Any], ...]:
    """Evaluation instances for every task and dimension (``arcjudge dimensions build``).

    Args:
        config: The tasks, the validate manifest, the candidates' inputs, the mixture.
        out: Where ``instances.jsonl``, ``build.json`` and ``runtime.json`` are written
            (with ``configurations`` K > 1: one ``configuration-k`` directory each, and
            ``configurations.json``).
        configurations: Independent builds (Section 3.2's configurations), seeds apart.
        sandbox: The sandbox (default: ``auto``, one worker per core).
        store: The result cache (default ``OUT/cache.sqlite``), shared by the builds.

    Returns:
        Each build's summary (``build.json``).
    """
    from arcjudge.harness.dimensions.cli import COMMANDS, BuildPlan

    plan = BuildPlan.of(
        config, Path(out), configurations=configurations, store=store, sandbox=sandbox
    )
    return _result(_perform(COMMANDS["build"], plan), tuple)


def grade(
    config: DimensionScoreConfig,
    out: Path,
    *,
    sandbox: SandboxOptions | None = None,
    store: Path | None = None,
) -> dict[str, Any]:
    """Grade answers or model replies to the instances (``arcjudge dimensions score``).

    Args:
        config: The instances, the answers or replies (or Definition programs), attempts.
        out: Where ``items.jsonl``, ``summary.json``, ``runtime.json``, ``report.html``
            (and ``definitions.jsonl``) are written.
        sandbox: The sandbox (default: ``auto``, one worker per core).
        store: The result cache (default ``OUT/cache.sqlite``): a rerun resumes.

    Returns:
        The summary (``summary.json``): per model and dimension.
    """
    from arcjudge.harness.dimensions.cli import COMMANDS, GradePlan

    plan = GradePlan(config, Path(out), store, sandbox or SandboxOptions())
    return _result(_perform(COMMANDS["score"], plan), dict)


def analyze(config: AnalyzeConfig) -> Analysis:
    """The study's tables from scored items (``arcjudge dimensions analyze``).

    Args:
        config: The items and instances files, Definition results, configurations and
            the output directory (``tables/``, ``analysis.json``, ``report.html``).

    Returns:
        The analysis: every section, and its tables (``Analysis.tables()``).
    """
    from arcjudge.harness.analyze.cli import COMMAND
    from arcjudge.harness.analyze.study import Analysis

    return _result(_perform(COMMAND, config), Analysis)


def _result(outputs: Outputs, kind: type[T]) -> T:
    assert isinstance(outputs.result, kind), outputs.result
    return outputs.result
