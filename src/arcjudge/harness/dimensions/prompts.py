"""Instances -> model-ready prompts (``arcjudge dimensions prompts``).

A :class:`Prompt` is one line of ``prompts.jsonl``: the chat ``messages`` (a system and a
user message) for one instance, its ``id`` (:func:`.records.prompt_id`, which replies to
it carry), and ``model_visible``: exactly the data rendered into the messages (the task's
demonstrations and the dimension's material), so a consumer can render them again with
:func:`render_messages`. Nothing of an instance's ``key`` is read here: the messages are
made from ``model_visible`` alone, and ``model_visible`` from the instance's ``prompt``
and the task's demonstrations (and, for Definition, its test inputs; never a test output).

Messages are rendered from one template per dimension (``templates/<dimension>.txt``)
and a shared ``templates/system.txt``, shipped as package data; :func:`load_templates`
takes a directory whose files override them by name. Templates are
:class:`string.Template` text: ``$name`` placeholders (:data:`PLACEHOLDERS` lists which
each template may use), ``$$`` for a dollar sign. Grids are written by :func:`.gridtext.grid_text`
in a :class:`~arcjudge.vocabulary.GridFormat`, each in a fenced code block of its own.

Rendering is a pure function of the instances, the task files, the grid format and the
templates: the same inputs give the same bytes.
"""

from __future__ import annotations

import functools
import string
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.grids import GridRejected, to_lists
from arcjudge.harness.core.codecs import expected, sequence
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.core.record import Codec, Record, RecordError, spec
from arcjudge.harness.dimensions.gridtext import pairs_text, read_pairs
from arcjudge.harness.dimensions.records import BUILT_DIMENSION, DimensionInstance, prompt_id
from arcjudge.harness.dimensions.strategies import STRATEGIES
from arcjudge.safetext import json_dumps
from arcjudge.tasks import Task, load_task, task_files
from arcjudge.vocabulary import BUILT_DIMENSIONS, Dimension, GridFormat

__all__ = [
    "GRID_FORMAT_TEXT",
    "PLACEHOLDERS",
    "SYSTEM_TEMPLATE",
    "TEMPLATE_DIR",
    "TEMPLATE_NAMES",
    "Prompt",
    "PromptTemplates",
    "load_templates",
    "model_visible",
    "prompt_lines",
    "prompt_summary",
    "read_prompts",
    "render_messages",
    "render_prompt",
    "render_prompts",
]

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
"""The shipped templates: ``system.txt`` and one ``<dimension>.txt`` per dimension."""

SYSTEM_TEMPLATE = "system"
"""The name of the shared system message's template (``system.txt``)."""

GRID_FORMAT_TEXT: Mapping[GridFormat, str] = {
    GridFormat.DIGITS: (
        "A grid is written as rows of digits, one row per line from top to bottom, with no "
        "separators between cells; each digit 0-9 stands for a colour."
    ),
    GridFormat.JSON: (
        "A grid is written as a JSON list of rows on one line, from top to bottom, each row "
        "a list of integers 0-9 that stand for colours."
    ),
}
"""What ``$grid_format`` says about each grid format."""

_COMMON = frozenset({"demonstrations", "demonstration_count", "grid_format"})

PLACEHOLDERS: Mapping[str, frozenset[str]] = {
    SYSTEM_TEMPLATE: frozenset({"grid_format"}),
    **{d: _COMMON | s.PLACEHOLDERS for d, s in STRATEGIES.items()},
}
"""The placeholders each template may use (by template name: ``system`` or a dimension).

Every grid is rendered in its own fenced code block. ``$demonstrations``: the task's
train pairs as ``Example N`` / ``Input:`` / grid / ``Output:`` / grid, a blank line
between pairs; ``$test_inputs``: ``Test input N:`` then the grid; ``$candidates``:
``Candidate N`` then its input and output; ``$pair`` (Editing): ``Input:`` / grid /
``Output:`` / grid; ``$output`` (Inversion): the grid; ``$avoid``: the pairs a generated
pair must not copy, as ``Pair N`` blocks; ``$avoid_note``: empty when those are the
demonstrations (as every build makes them), else a blank line, a sentence and the pairs
beyond the demonstrations (e.g. those the model had accepted in earlier configurations:
``dimensions prompts --after``), as ``Pair N`` blocks;
``$answer_grids`` (output grid): one ``<output grid for test input N>`` line per test
input in a code block, each labelled ``Test N:`` when there are several; ``$*_count``:
numbers; ``$grid_format``: :data:`GRID_FORMAT_TEXT`. Each dimension's own come from its
strategy (:mod:`.strategies`).
"""

TEMPLATE_NAMES: tuple[str, ...] = (SYSTEM_TEMPLATE, *BUILT_DIMENSIONS)
"""Every template, by name (the file is ``NAME.txt``)."""


# ---------------------------------------------------------------------------- records


def _decode_message(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise expected("object", value)
    message = {}
    for key in ("role", "content"):
        if key not in value:
            raise RecordError("missing", (key,))
        if not isinstance(value[key], str):
            raise expected("str", value[key]).at(key)
        message[key] = value[key]
    return message


def _encode_message(message: Mapping[str, str]) -> dict[str, str]:
    return {"role": message["role"], "content": message["content"]}


_MESSAGE: Codec[Mapping[str, str]] = Codec(
    "chat message", _decode_message, _encode_message, Mapping
)
"""A chat message: ``{"role", "content"}``, both strings (other keys are not kept)."""


@dataclass(frozen=True)
class Prompt(Record):
    """One line of ``prompts.jsonl``: the messages for one instance.

    Attributes:
        id: ``TASK_ID/DIMENSION`` (:func:`.records.prompt_id`); replies name it.
        task_id: The task.
        dimension: The instance's dimension (a built one).
        messages: The chat messages, ``{"role", "content"}`` each: system, then user.
        model_visible: Exactly the data rendered into the messages (demonstrations and
            the dimension's material, grids as lists of lists), to render them again.

    Raises:
        RecordError: The id is not the task's and dimension's, or there is no message.
    """

    id: str
    task_id: str
    dimension: Dimension = field(metadata=spec(codec=BUILT_DIMENSION))
    messages: tuple[Mapping[str, str], ...] = field(metadata=spec(codec=sequence(_MESSAGE)))
    model_visible: Mapping[str, Any]

    def __post_init__(self) -> None:
        super().__post_init__()
        wanted = prompt_id(self.task_id, self.dimension)
        if self.id != wanted:
            raise RecordError(f"{self.id[:80]!r} is not {wanted!r}", ("id",))
        if not self.messages:
            raise RecordError("no message", ("messages",))


def prompt_lines(prompts: Iterable[Prompt]) -> str:
    """The text of ``prompts.jsonl``: one compact JSON object a line, keys sorted."""
    return "".join(
        json_dumps(p.to_json(), sort_keys=True, separators=(",", ":")) + "\n" for p in prompts
    )


def read_prompts(path: Path) -> list[Prompt]:
    """Read a ``prompts.jsonl``.

    Raises:
        InputError: The file cannot be read, a line is not a prompt record (naming the
            file and line), an id repeats, or there is no prompt.
    """
    prompts: list[Prompt] = []
    seen: set[str] = set()
    for number, prompt in read_records(path, Prompt.from_json, "a prompt record"):
        if prompt.id in seen:
            raise InputError(f"{path}:{number}: second prompt {prompt.id!r}")
        seen.add(prompt.id)
        prompts.append(prompt)
    if not prompts:
        raise InputError(f"{path}: no prompts")
    return prompts


# ---------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class PromptTemplates:
    """The templates prompts are rendered with, checked.

    Attributes:
        templates: Template name (``system`` or a dimension) -> template.
        origins: Template name -> the file it was read from (for messages).
    """

    templates: Mapping[str, string.Template]
    origins: Mapping[str, Path]


def _read_template(name: str, path: Path) -> string.Template:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the {name} template ({exc})") from None
    template = string.Template(text)
    if not template.is_valid():
        raise InputError(f"{path}: a '$' that starts no placeholder (write $$ for a dollar sign)")
    unknown = sorted(set(template.get_identifiers()) - PLACEHOLDERS[name])
    if unknown:
        known = ", ".join(f"${p}" for p in sorted(PLACEHOLDERS[name]))
        raise InputError(
            f"{path}: unknown placeholder ${unknown[0]} in the {name} template (known: {known})"
        )
    return template


def load_templates(directory: Path | None = None) -> PromptTemplates:
    """The shipped templates, each overridden by ``directory/NAME.txt`` when that exists.

    Args:
        directory: A directory of ``NAME.txt`` files (``system.txt``, ``editing.txt``...);
            any subset of :data:`TEMPLATE_NAMES` (the others are the shipped ones).

    Raises:
        InputError: The directory is missing or holds a ``*.txt`` file that names no
            template, or a template cannot be read, has a ``$`` that starts no
            placeholder, or uses a placeholder it does not have (:data:`PLACEHOLDERS`).
    """
    origins = {name: TEMPLATE_DIR / f"{name}.txt" for name in TEMPLATE_NAMES}
    if directory is not None:
        if not directory.is_dir():
            raise InputError(f"{directory}: no such directory")
        for path in sorted(directory.glob("*.txt")):
            if path.stem not in origins:
                names = ", ".join(f"{n}.txt" for n in TEMPLATE_NAMES)
                raise InputError(f"{path}: names no template (templates: {names})")
            origins[path.stem] = path
    templates = {name: _read_template(name, path) for name, path in origins.items()}
    return PromptTemplates(templates, origins)


@functools.cache
def _shipped() -> PromptTemplates:
    return load_templates()


# ---------------------------------------------------------------------------- rendering


def model_visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """The data a model is shown for an instance: demonstrations and the dimension's material.

    ``demonstrations``: the task's train pairs; then per dimension ``test_inputs``
    (output grid: the instance's; Definition: the task's test inputs), ``candidates``
    (Classification), ``avoid`` (Generation), ``pair`` (Editing: the pair to repair) or
    ``output`` (Inversion). Grids are lists of lists of ints. The instance's ``key`` is
    never read.

    Args:
        instance: The instance.
        task: Its task (read from the task directory the instances were built from).

    Returns:
        The JSON object.

    Raises:
        InputError: The instance's prompt fields are malformed, or the task file is not
            the one the instance was built from (Definition: another number of pairs).
    """
    name = prompt_id(instance.task_id, instance.dimension)
    demonstrations = [
        {"input": to_lists(p.input), "output": to_lists(p.output)}
        for p in task.train
        if p.output is not None
    ]
    visible: dict[str, Any] = {"demonstrations": demonstrations}
    try:
        visible.update(STRATEGIES[instance.dimension].visible(instance, task))
    except InputError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{name}: the instance's prompt is malformed ({exc})") from None
    return visible


def render_messages(
    dimension: Dimension | str,
    visible: Mapping[str, Any],
    grid_format: GridFormat | str = GridFormat.DIGITS,
    templates: PromptTemplates | None = None,
) -> tuple[dict[str, str], ...]:
    """The system and user messages for a dimension's model-visible data.

    Args:
        dimension: The dimension.
        visible: Its :func:`model_visible` data (e.g. a prompt record's ``model_visible``).
        grid_format: How grids are written.
        templates: The templates (default: the shipped ones).

    Returns:
        ``({"role": "system", ...}, {"role": "user", ...})``.

    Raises:
        InputError: ``visible`` lacks a field the dimension needs or holds a malformed grid.
        ValueError: An unknown dimension or grid format.
    """
    dimension, grid_format = Dimension(dimension), GridFormat(grid_format)
    templates = templates or _shipped()
    try:
        demonstrations = read_pairs(visible["demonstrations"])
        values = {
            "demonstrations": pairs_text(demonstrations, "Example", grid_format),
            "demonstration_count": str(len(demonstrations)),
            "grid_format": GRID_FORMAT_TEXT[grid_format],
            **STRATEGIES[dimension].texts(visible, demonstrations, grid_format),
        }
    except (KeyError, TypeError, GridRejected) as exc:
        raise InputError(f"{dimension} model-visible data is malformed ({exc})") from None
    system = templates.templates[SYSTEM_TEMPLATE].substitute(values)
    user = templates.templates[dimension].substitute(values)
    return (
        {"role": "system", "content": system.strip("\n")},
        {"role": "user", "content": user.strip("\n")},
    )


def render_prompt(
    instance: DimensionInstance,
    task: Task,
    grid_format: GridFormat | str = GridFormat.DIGITS,
    templates: PromptTemplates | None = None,
) -> Prompt:
    """The prompt for one instance.

    Args:
        instance: The instance (its ``key`` is never read).
        task: Its task.
        grid_format: How grids are written.
        templates: The templates (default: the shipped ones).

    Raises:
        InputError: See :func:`model_visible`; also when ``task`` is another task.
    """
    if task.task_id != instance.task_id:
        raise InputError(f"task {task.task_id} given for an instance of {instance.task_id}")
    visible = model_visible(instance, task)
    messages = render_messages(instance.dimension, visible, grid_format, templates)
    return Prompt(
        prompt_id(instance.task_id, instance.dimension),
        instance.task_id,
        instance.dimension,
        messages,
        visible,
    )


def render_prompts(
    instances: Iterable[DimensionInstance],
    tasks_dir: Path,
    grid_format: GridFormat | str = GridFormat.DIGITS,
    templates_dir: Path | None = None,
) -> list[Prompt]:
    """Every instance's prompt, in task order and, per task, in dimension order.

    Args:
        instances: The instances (e.g. :func:`.grading.read_instances`' values).
        tasks_dir: The directory of task files the instances were built from.
        grid_format: How grids are written (``digits`` or ``json``).
        templates_dir: A directory of templates overriding the shipped ones by name.

    Raises:
        InputError: A task the instances name has no file in ``tasks_dir``, a task file or
            template is bad, or an instance is malformed (see :func:`model_visible`).
    """
    grid_format = GridFormat(grid_format)
    templates = load_templates(templates_dir)
    order = {d: i for i, d in enumerate(BUILT_DIMENSIONS)}
    chosen = sorted(instances, key=lambda i: (i.task_id, order[i.dimension]))
    files = {path.stem: path for path in task_files(tasks_dir)}
    missing = sorted({i.task_id for i in chosen} - set(files))
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InputError(
            f"{tasks_dir}: no task file for {len(missing)} task(s) the instances name: {shown}"
        )
    tasks: dict[str, Task] = {}
    prompts = []
    for instance in chosen:
        if instance.task_id not in tasks:
            tasks[instance.task_id] = load_task(files[instance.task_id])
        prompts.append(render_prompt(instance, tasks[instance.task_id], grid_format, templates))
    return prompts


def prompt_summary(prompts: Iterable[Prompt]) -> str:
    """One line: prompts per dimension, in dimension order (``"12 prompts: ..."``)."""
    counts = Counter(p.dimension for p in prompts)
    parts = ", ".join(f"{d} {counts[d]}" for d in BUILT_DIMENSIONS if counts[d])
    return f"{sum(counts.values())} prompts: {parts}" if counts else "0 prompts"
