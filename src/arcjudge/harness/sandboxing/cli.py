"""``arcjudge run``, ``selfcheck``, ``image`` and ``sandbox``: the sandbox's own commands.

Each is a :class:`~arcjudge.harness.core.runner.Command` run by the shared runner, like
the workflows' commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge.errors import UsageError
from arcjudge.harness.core.commandline import (
    add_backend_arguments,
    add_docker_runtime_argument,
    add_policy_argument,
    sandbox_options,
    warn,
)
from arcjudge.harness.core.runner import DirectCommand, Needs, Outputs
from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.backends import SandboxOptions, describe_protections
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.registry import backend_names
from arcjudge.sandbox.types import DEFINITION_LIMITS, Limits, Program, ProgramStatus, Status
from arcjudge.tasks import Task, load_task
from arcjudge.vocabulary import RUN_ENTRY_POINTS, TASK_SPLITS

if TYPE_CHECKING:
    from arcjudge.harness.core.store import ResultStore
    from arcjudge.sandbox.interface import Sandbox
    from arcjudge.sandbox.selfcheck import CaseOutcome

__all__ = [
    "IMAGE",
    "RUN",
    "SANDBOX",
    "SELFCHECK",
    "ImageCommand",
    "PruneCommand",
    "RunCommand",
    "SelfcheckCommand",
]


def _last_line(text: str | None) -> str:
    # Cut at "\n" only: a "\r" (or another line boundary splitlines knows) is shown escaped.
    lines = (text or "").strip().split("\n")
    return lines[-1].strip()


@dataclass(frozen=True)
class RunProgram:
    """``arcjudge run`` as a value: one program on one task's inputs.

    Attributes:
        program: The program (source, entry points, module directories, input format).
        task: The task whose inputs it is called on.
        limits: Its limits.
        policy: The static policy's mode.
        sandbox: The sandbox to run it in.
    """

    program: Program
    task: Task
    limits: Limits
    policy: PolicyMode = PolicyMode.WARN
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``run`` options."""
    parser.add_argument("program", type=Path, help="a Python file")
    parser.add_argument("--task", type=Path, required=True, help="an ARC task JSON file")
    parser.add_argument(
        "--entrypoint",
        action="append",
        help="function to call (repeatable; default tried in order: "
        + ", ".join(RUN_ENTRY_POINTS)
        + ")",
    )
    parser.add_argument("--input-format", choices=("list", "tuple"), default="list")
    parser.add_argument("--module-dir", action="append", default=[], type=Path)
    parser.add_argument("--wall", type=float, default=DEFINITION_LIMITS.wall_seconds)
    add_policy_argument(parser)
    add_backend_arguments(parser)


class RunCommand(DirectCommand[RunProgram]):
    """``arcjudge run``: one program on one task's inputs, in the sandbox."""

    def configure(self, args: argparse.Namespace) -> RunProgram:
        """The program, its task and limits; a clear error for a file that is not there."""
        try:
            source = args.program.read_bytes()
        except OSError as exc:
            raise UsageError(f"{args.program}: cannot read ({exc.strerror})") from None
        task = load_task(args.task)
        for d in args.module_dir:
            if not d.is_dir():
                raise UsageError(f"{d}: no such directory")
        try:
            program = Program(
                source,
                tuple(args.entrypoint or RUN_ENTRY_POINTS),
                tuple(str(d) for d in args.module_dir),
                args.input_format,
                name=str(args.program),
            )
            limits = Limits(wall_seconds=args.wall)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return RunProgram(program, task, limits, PolicyMode(args.policy), sandbox_options(args))

    def needs(self, config: RunProgram) -> Needs:
        """A sandbox whose programs may import from the program's module directories."""
        return Needs(config.sandbox, config.program.module_dirs)

    def run(
        self, config: RunProgram, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Call the program on every input; one line per input and the counts per split."""
        assert sandbox is not None
        program, task = config.program, config.task
        labelled = [(s, i, p) for s in TASK_SPLITS for i, p in enumerate(task.split(s))]
        result = sandbox.run(
            program, [p.input for _, _, p in labelled], config.limits, policy=config.policy
        )
        lines = [f"policy: {terminal_safe(finding)}" for finding in result.findings]
        if result.status is not ProgramStatus.LOADED:  # the findings often say why
            error = f"{program.name}: {result.status.value}: {_last_line(result.error)}"
            return Outputs(
                lines=tuple(lines),
                stderr=(f"arcjudge: error: {terminal_safe(error)}",),
                exit_code=2,
                result=result,
            )
        lines.append(f"entry point: {terminal_safe(str(result.entry_point))}")
        tally: dict[str, list[int]] = {}
        for (split, index, pair), r in zip(labelled, result.results, strict=True):
            right = r.status is Status.OK and pair.output is not None and r.grid == pair.output
            verdict = "correct" if right else ("-" if pair.output is None else "wrong")
            detail = "" if r.status is Status.OK else "  " + terminal_safe(_last_line(r.error))
            ms = r.seconds * 1000
            lines.append(
                f"{split}[{index}]  {r.status.value:<14} {verdict:<8} {ms:8.1f} ms{detail}"
            )
            counts = tally.setdefault(split, [0, 0])
            counts[0] += right
            counts[1] += 1
        lines.append("  ".join(f"{s} {c}/{t}" for s, (c, t) in tally.items()))
        return Outputs(lines=tuple(lines), result=result)


@dataclass(frozen=True)
class Selfcheck:
    """``arcjudge selfcheck`` as a value: which backend, which attacks.

    Attributes:
        sandbox: The backend (and OCI runtime) to try (one worker per case).
        cases: The cases to run (``None``: every case).
        echo: Receives a line as each case finishes (the suite takes minutes).
    """

    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    cases: frozenset[str] | None = None
    echo: Callable[[str], None] | None = None


def _selfcheck_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``selfcheck`` options."""
    parser.add_argument("--backend", default="auto", choices=backend_names())
    add_docker_runtime_argument(parser)
    parser.add_argument("--case", action="append", help="run only these cases (repeatable)")


class SelfcheckCommand(DirectCommand[Selfcheck]):
    """``arcjudge selfcheck``: every attack tried on a backend; a table of results."""

    def configure(self, args: argparse.Namespace) -> Selfcheck:
        """The backend and cases asked for; each finished case is printed as it comes."""
        options = SandboxOptions(args.backend, 1, docker_runtime=args.docker_runtime)
        cases = frozenset(args.case) if args.case else None
        return Selfcheck(options, cases, echo=_echo)

    def run(self, config: Selfcheck, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Run the suite, each case in a fresh one-worker sandbox; the table.

        The exit code is 1 when a case is not contained.
        """
        from arcjudge.sandbox.selfcheck import format_known, format_table, run_suite, variant_of

        made: list[Sandbox] = []
        echo = config.echo or (lambda line: None)

        def factory(module_dirs: tuple[str, ...] = ()) -> Sandbox:
            made.append(config.sandbox.make(module_dirs, warn=warn))
            return made[-1]

        factory().close()  # fail early and clearly if the backend is unusable
        outcomes: list[CaseOutcome] = []
        for outcome in run_suite(factory, set(config.cases) if config.cases else None):
            if not outcomes:
                echo(describe_protections(variant_of(made[-1]), made[-1].protections()))
            outcomes.append(outcome)
            mark = "contained" if outcome.contained else "NOT CONTAINED"
            known = " (known difference here, see below)" if outcome.known else ""
            echo(f"  {outcome.name}: {mark} ({outcome.seconds:.1f} s){known}")
        lines = [format_table(outcomes)]
        known_text = format_known(variant_of(made[-1])) if made else ""
        if known_text:
            lines.append(known_text)
        failed = [o.name for o in outcomes if not o.contained]
        if failed:
            failure = f"arcjudge: selfcheck failed: {', '.join(failed)}"
            return Outputs(lines=tuple(lines), stderr=(failure,), exit_code=1, result=outcomes)
        lines.append(f"selfcheck: all {len(outcomes)} cases contained")
        return Outputs(lines=tuple(lines), result=outcomes)


def _echo(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True)
class ImageBuild:
    """``arcjudge image build`` as a value.

    Attributes:
        force: Rebuild even if the image exists.
        dockerfile: Use ``docker build`` (needs a registry) instead of debootstrap.
        print_tag: Only give the image reference the docker backend expects.
    """

    force: bool = False
    dockerfile: bool = False
    print_tag: bool = False


def _image_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``image build`` and its options."""
    image_sub = parser.add_subparsers(dest="image_command", required=True)
    build = image_sub.add_parser("build", help="build it (debootstrap + docker import)")
    build.add_argument("--force", action="store_true", help="rebuild even if it exists")
    build.add_argument(
        "--dockerfile", action="store_true", help="use docker build (needs a registry)"
    )
    build.add_argument(
        "--print-tag",
        action="store_true",
        help="only print the image reference the docker backend expects (needs no root, no docker)",
    )


class ImageCommand(DirectCommand[ImageBuild]):
    """``arcjudge image build``: the docker runtime image."""

    def configure(self, args: argparse.Namespace) -> ImageBuild:
        """What to build; ``--print-tag`` with a build option is refused."""
        if args.print_tag and (args.force or args.dockerfile):
            raise UsageError(
                "--print-tag builds nothing: it takes neither --force nor --dockerfile"
            )
        return ImageBuild(args.force, args.dockerfile, args.print_tag)

    def run(
        self, config: ImageBuild, sandbox: Sandbox | None, store: ResultStore | None
    ) -> Outputs:
        """Build the image (or name it); a note when ``ARCJUDGE_IMAGE`` overrides it."""
        from arcjudge.sandbox.image import (
            ImageError,
            build_image,
            image_reference,
            overriding_image,
        )

        lines: tuple[str, ...] = ()
        try:
            reference = None
            if config.print_tag:
                reference = image_reference()
                lines = (reference,)
            else:
                code = build_image(force=config.force, dockerfile=config.dockerfile)
                if code != 0:
                    raise UsageError(
                        f"image build failed (exit code {code}); see the messages above"
                    )
            other = overriding_image(reference)
        except ImageError as exc:
            raise UsageError(str(exc)) from None
        notes: tuple[str, ...] = ()
        if other:
            notes = (
                f"arcjudge: note: ARCJUDGE_IMAGE={terminal_safe(other)} is set: the docker "
                "backend uses that image, not the one built from these inputs",
            )
        return Outputs(lines=lines, stderr=notes, result=reference)


@dataclass(frozen=True)
class Prune:
    """``arcjudge sandbox prune`` as a value.

    Attributes:
        everything: Remove every arcjudge container, not only those of crashed runs.
    """

    everything: bool = False


def _sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``sandbox prune`` and its options."""
    box_sub = parser.add_subparsers(dest="sandbox_command", required=True)
    prune = box_sub.add_parser("prune", help="remove containers left by crashed runs")
    prune.add_argument("--all", action="store_true", help="remove every arcjudge container")


class PruneCommand(DirectCommand[Prune]):
    """``arcjudge sandbox prune``: containers left by crashed runs, removed."""

    def configure(self, args: argparse.Namespace) -> Prune:
        """Which containers to remove."""
        return Prune(args.all)

    def run(self, config: Prune, sandbox: Sandbox | None, store: ResultStore | None) -> Outputs:
        """Remove the containers; one line naming them."""
        from arcjudge.sandbox.docker import prune
        from arcjudge.sandbox.docker_daemon import DockerUnavailable, docker_client

        try:
            removed = prune(docker_client(), everything=config.everything)
        except DockerUnavailable as exc:
            raise UsageError(str(exc)) from None
        names = terminal_safe(", ".join(removed))
        line = f"removed {len(removed)} container(s){': ' + names if removed else ''}"
        return Outputs(lines=(line,), result=tuple(removed))


RUN = RunCommand("run", "run one program on one task's inputs, in the sandbox", _run_arguments)
"""The ``run`` command."""
SELFCHECK = SelfcheckCommand(
    "selfcheck", "try every attack on a backend; table of results", _selfcheck_arguments
)
"""The ``selfcheck`` command."""
IMAGE = ImageCommand("image", "build the docker runtime image", _image_arguments)
"""The ``image`` command."""
SANDBOX = PruneCommand("sandbox", "manage sandbox leftovers", _sandbox_arguments)
"""The ``sandbox`` command."""
