"""arcjudge: run untrusted ARC verifiers and model-written programs safely.

The public Python API, one import away (``import arcjudge``)::

    report = arcjudge.validate(arcjudge.ValidateConfig(tasks_dir, sources), out)
    scored = arcjudge.score(arcjudge.ScoreConfig(programs_file, tasks_dir), out)

- the commands as functions (:func:`validate`, :func:`score`, :func:`mutate`,
  :func:`build`, :func:`grade`, :func:`analyze`): a typed config in, a typed result out,
  the output files written as the command line writes them, nothing printed;
- their configs and results (:class:`ValidateConfig`, :class:`ScoreResult`, ...) and the
  parsers of source specs (:func:`parse_verifier_spec`, :func:`parse_generator_spec`);
- the sandbox (:class:`Sandbox`, :func:`make_sandbox`, :class:`SandboxOptions`,
  :class:`Program`, :class:`Limits`, the statuses);
- the values (:class:`Grid`, :class:`Task`, :func:`load_task`), the errors, and the
  bundled sample (:func:`sample_dir`).

Everything else (``arcjudge.harness.*``, ``arcjudge.sandbox.<module>``) is internal and
may change. Names are imported from their modules on first use, so ``import arcjudge``
stays cheap (the command line imports it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arcjudge.lazy_names import lazy_names

if TYPE_CHECKING:
    from arcjudge._api import analyze, build, grade, mutate, score, validate
    from arcjudge.errors import ArcjudgeError, InputError, UsageError
    from arcjudge.grids import Grid
    from arcjudge.harness.analyze.cli import AnalyzeConfig
    from arcjudge.harness.analyze.study import Analysis
    from arcjudge.harness.dimensions.build import BuildConfig
    from arcjudge.harness.dimensions.grading import DimensionScoreConfig
    from arcjudge.harness.mutate.cli import MutateOutcome
    from arcjudge.harness.mutate.mutator import MutateConfig
    from arcjudge.harness.score.cli import ScoreOutcome
    from arcjudge.harness.score.records import ScoreResult, ScoreSummary
    from arcjudge.harness.score.scorer import ScoreConfig
    from arcjudge.harness.validate.cli import ValidateOutcome, sample_dir
    from arcjudge.harness.validate.records import VerdictRecord
    from arcjudge.harness.validate.validator import ValidateConfig
    from arcjudge.sandbox.backends import SandboxOptions, make_sandbox
    from arcjudge.sandbox.interface import Sandbox
    from arcjudge.sandbox.policy import PolicyMode
    from arcjudge.sandbox.types import Limits, Program, ProgramResult, RunResult
    from arcjudge.tasks import Task, load_task
    from arcjudge.verifiers.sources import parse_generator_spec, parse_verifier_spec
    from arcjudge.vocabulary import ProgramStatus, Split, Status, Verdict

__version__ = "0.1.0"

_HOMES = {
    **dict.fromkeys(("analyze", "build", "grade", "mutate", "score", "validate"), "_api"),
    "BuildConfig": "harness.dimensions.build",
    "DimensionScoreConfig": "harness.dimensions.grading",
    **dict.fromkeys(("ArcjudgeError", "InputError", "UsageError"), "errors"),
    "Grid": "grids",
    **dict.fromkeys(("AnalyzeConfig",), "harness.analyze.cli"),
    "Analysis": "harness.analyze.study",
    "MutateOutcome": "harness.mutate.cli",
    "MutateConfig": "harness.mutate.mutator",
    "ScoreOutcome": "harness.score.cli",
    **dict.fromkeys(("ScoreResult", "ScoreSummary"), "harness.score.records"),
    "ScoreConfig": "harness.score.scorer",
    **dict.fromkeys(("ValidateOutcome", "sample_dir"), "harness.validate.cli"),
    "VerdictRecord": "harness.validate.records",
    "ValidateConfig": "harness.validate.validator",
    **dict.fromkeys(("SandboxOptions", "make_sandbox"), "sandbox.backends"),
    "Sandbox": "sandbox.interface",
    "PolicyMode": "sandbox.policy",
    **dict.fromkeys(("Limits", "Program", "ProgramResult", "RunResult"), "sandbox.types"),
    **dict.fromkeys(("Task", "load_task"), "tasks"),
    **dict.fromkeys(("parse_generator_spec", "parse_verifier_spec"), "verifiers.sources"),
    **dict.fromkeys(("ProgramStatus", "Split", "Status", "Verdict"), "vocabulary"),
}
"""The module each public name lives in (relative to this package)."""

__all__ = [
    "Analysis",
    "AnalyzeConfig",
    "ArcjudgeError",
    "BuildConfig",
    "DimensionScoreConfig",
    "Grid",
    "InputError",
    "Limits",
    "MutateConfig",
    "MutateOutcome",
    "PolicyMode",
    "Program",
    "ProgramResult",
    "ProgramStatus",
    "RunResult",
    "Sandbox",
    "SandboxOptions",
    "ScoreConfig",
    "ScoreOutcome",
    "ScoreResult",
    "ScoreSummary",
    "Split",
    "Status",
    "Task",
    "UsageError",
    "ValidateConfig",
    "ValidateOutcome",
    "Verdict",
    "VerdictRecord",
    "__version__",
    "analyze",
    "build",
    "grade",
    "load_task",
    "make_sandbox",
    "mutate",
    "parse_generator_spec",
    "parse_verifier_spec",
    "sample_dir",
    "score",
    "validate",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals(), __all__)
