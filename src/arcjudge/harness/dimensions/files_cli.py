"""``arcjudge dimensions`` prompts, replies-from-inspect, human-errors: one file into another.

No sandbox and no store: each reads its inputs, makes one file and says what it wrote,
through the shared runner as every :class:`~arcjudge.harness.core.runner.Command`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge.errors import InputError, UsageError
from arcjudge.harness.core.commandline import require_directories, require_files, use_task_set
from arcjudge.harness.core.runner import DirectCommand, Outputs
from arcjudge.harness.dimensions.configurations import read_earlier_pairs, with_earlier_pairs
from arcjudge.harness.dimensions.grading import read_instances
from arcjudge.harness.dimensions.human_errors import collect_human_errors, human_errors_json
from arcjudge.harness.dimensions.prompts import prompt_lines, prompt_summary, render_prompts
from arcjudge.integrations.inspect_log import replies_from_inspect_log
from arcjudge.safetext import terminal_safe
from arcjudge.vocabulary import GridFormat

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox

__all__ = ["HumanErrorsCommand", "PromptsCommand", "RepliesFromInspectCommand"]


@dataclass(frozen=True)
class InspectRepliesConfig:
    """``arcjudge dimensions replies-from-inspect`` as a value.

    Attributes:
        log: The inspect_ai eval log to read.
        out: The replies JSONL to write.
        model: The replies' model name (``None``: the eval's model).
    """

    log: Path
    out: Path
    model: str | None = None


class RepliesFromInspectCommand(DirectCommand[InspectRepliesConfig]):
    """``arcjudge dimensions replies-from-inspect``: an inspect_ai log as replies JSONL."""

    def configure(self, args: argparse.Namespace) -> InspectRepliesConfig:
        """The log to read (it must be a file)."""
        require_files(("LOG", args.log))
        return InspectRepliesConfig(args.log, args.out, args.model)

    def run(
        self, config: InspectRepliesConfig, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """The replies of the log's model, one line each."""
        found = replies_from_inspect_log(config.log, config.model)
        warnings: tuple[str, ...] = ()
        if found.errored:
            warnings = (f"{len(found.errored)} sample(s) ended in an error and have no reply",)
        line = (f"wrote {len(found.replies)} replies of {found.model} to "
                f"{config.out}")  # fmt: skip
        return Outputs(
            out_dir=config.out.parent,
            files={config.out.name: "".join(found.lines())},
            lines=(terminal_safe(line),),
            wrote="",
            warnings=warnings,
            result=found,
        )


@dataclass(frozen=True)
class PromptsConfig:
    """``arcjudge dimensions prompts`` as a value.

    Attributes:
        instances: The instances file.
        tasks: The ARC JSON task directory (a task set's materialized copy).
        out: The prompts JSONL to write.
        grid_format: How grids are written in the prompts.
        templates: A directory of templates overriding the bundled ones.
        after: Earlier configurations' items (``--after``): accepted pairs to add.
        model: With ``after``: whose pairs (``None``: the only model).
        run: With ``after``: which run (``None``: the model's only run).
        listed_as_avoid: With ``after``: the accepted pairs listed as pairs not to copy
            (``--after-shown-as avoid``), not shown as further demonstrations.
    """

    instances: Path
    tasks: Path
    out: Path
    grid_format: GridFormat = GridFormat.DIGITS
    templates: Path | None = None
    after: tuple[Path, ...] = ()
    model: str | None = None
    run: str | None = None
    listed_as_avoid: bool = False


class PromptsCommand(DirectCommand[PromptsConfig]):
    """``arcjudge dimensions prompts``: the instances as prompts, one per line."""

    def configure(self, args: argparse.Namespace) -> PromptsConfig:
        """The files to read, checked; ``--out`` must not be a directory."""
        require_files(("--instances", args.instances), *(("--after", path) for path in args.after))
        require_directories(("--templates", args.templates))
        if args.out.is_dir():
            raise UsageError(f"--out {args.out}: a directory (give the file to write)")
        tasks = use_task_set(args.tasks, args.out.parent).tasks
        if not args.after and (args.model is not None or args.run is not None):
            raise UsageError(
                "--model and --run name whose accepted pairs --after adds: give --after"
            )
        return PromptsConfig(
            args.instances,
            tasks,
            args.out,
            GridFormat(args.grid_format),
            args.templates,
            tuple(args.after),
            args.model,
            args.run,
            args.after_shown_as == "avoid",
        )

    def run(
        self, config: PromptsConfig, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Every instance's prompt (with ``--after``, the accepted pairs added)."""
        instances = list(read_instances(config.instances).values())
        added = ""
        if config.after:
            earlier = read_earlier_pairs(config.after)
            model, run = _the_cell(earlier.cells, config.model, config.run)
            pairs = earlier.for_cell(model, run)
            instances = with_earlier_pairs(instances, pairs, config.listed_as_avoid)
            count = sum(len(p) for p in pairs.values())
            how = "pairs not to copy" if config.listed_as_avoid else "demonstrations"
            added = (
                f"; {count} pair(s) {terminal_safe(model)} run {terminal_safe(run)} had "
                f"accepted added to the Generation prompts of {len(pairs)} task(s) as {how}"
            )
        prompts = render_prompts(instances, config.tasks, config.grid_format, config.templates)
        line = f"{prompt_summary(prompts)}{added}; wrote {terminal_safe(str(config.out))}"
        return Outputs(
            out_dir=config.out.parent,
            files={config.out.name: prompt_lines(prompts)},
            lines=(line,),
            wrote="",
            result=prompts,
        )


def _the_cell(
    cells: frozenset[tuple[str, str]], model: str | None, run: str | None
) -> tuple[str, str]:
    """The one ``(model, run)`` of the --after items that --model and --run leave.

    Raises:
        UsageError: None is left, or several are (naming them).
    """
    left = sorted(c for c in cells if model in (None, c[0]) and run in (None, c[1]))
    if len(left) == 1:
        return left[0]
    asked = " ".join(f"--{k} {v}" for k, v in (("model", model), ("run", run)) if v is not None)
    if not left:
        raise UsageError(f"--after: no item of {asked or 'any model'} in the items given")
    shown = ", ".join(f"{m} run {r}" for m, r in left[:6]) + (", ..." if len(left) > 6 else "")
    raise UsageError(
        f"--after: the items hold several models or runs ({terminal_safe(shown)}): "
        "name one with --model and --run"
    )


@dataclass(frozen=True)
class HumanErrorsConfig:
    """``arcjudge dimensions human-errors`` as a value.

    Attributes:
        sources: The files and directories to merge (each exists).
        out: The ``human_errors.json`` to write.
    """

    sources: tuple[Path, ...]
    out: Path


class HumanErrorsCommand(DirectCommand[HumanErrorsConfig]):
    """``arcjudge dimensions human-errors``: H-ARC's wrong outputs, collected into one file."""

    def configure(self, args: argparse.Namespace) -> HumanErrorsConfig:
        """The sources to read (each must exist)."""
        for source in args.sources:
            if not source.exists():
                raise UsageError(f"{source}: no such file or directory")
        return HumanErrorsConfig(tuple(args.sources), args.out)

    def run(
        self, config: HumanErrorsConfig, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Every wrong output per task and test, and the rows skipped (a warning each)."""
        try:
            found = collect_human_errors(list(config.sources))
        except (ValueError, OSError) as exc:
            raise InputError(str(exc)) from None
        warnings = [f"skipped {reason}" for reason in found.skipped[:10]]
        if len(found.skipped) > 10:
            warnings.append(f"... and {len(found.skipped) - 10} more skipped")
        grids = sum(len(e) for tests in found.tests.values() for e in tests.values())
        line = (f"wrote {grids} wrong output(s) of {len(found.tests)} task(s) to "
                f"{terminal_safe(str(config.out))}")  # fmt: skip
        return Outputs(
            out_dir=config.out.parent,
            files={config.out.name: human_errors_json(found)},
            lines=(line,),
            wrote="",
            warnings=tuple(warnings),
            result=found,
        )
