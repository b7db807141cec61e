"""A mutant, its id, and the list of mutants of one source."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from arcjudge.mutation.anchors import escape_id_part, unescape_id_part
from arcjudge.mutation.diffing import splice_diff


def mutant_id(
    task_id: str, source_name: str, operator: str, anchor: str, variant: str | None
) -> str:
    """``{task_id}:{source}:{operator}:{anchor}[:{variant}]``, each part escaped.

    Args:
        task_id: The task (``007bbfb7``).
        source_name: Which source of the task (``re-arc``, ``golf``...).
        operator: Operator name (``stmt.drop_assign_rewire``).
        anchor: Content-based site anchor (``x3``, ``a+b#0``).
        variant: Variant of the change at the site, if any.

    Returns:
        The id; ``:`` inside a part is written ``%3A`` so the id splits unambiguously.
    """
    parts = [task_id, source_name, operator, anchor]
    if variant is not None:
        parts.append(variant)
    return ":".join(escape_id_part(p) for p in parts)


def parse_mutant_id(text: str) -> tuple[str, str, str, str, str | None]:
    """Split an id made by :func:`mutant_id` back into its parts.

    Args:
        text: A mutant id.

    Returns:
        ``(task_id, source_name, operator, anchor, variant)``.

    Raises:
        ValueError: ``text`` does not have 4 or 5 parts.
    """
    parts = [unescape_id_part(p) for p in text.split(":")]
    if len(parts) == 4:
        return parts[0], parts[1], parts[2], parts[3], None
    if len(parts) == 5:
        return parts[0], parts[1], parts[2], parts[3], parts[4]
    raise ValueError(f"not a mutant id: {text!r}")


@dataclass(frozen=True)
class Splice:
    """The mutant's text as a change of one region of the original text.

    Attributes:
        original: The whole original source text (shared by all mutants of a source).
        start: Start of the replaced region (a line start).
        end: End of the replaced region.
        replacement: New text of the region (the mutated function or statement).
    """

    original: str = field(repr=False)
    start: int
    end: int
    replacement: str = field(repr=False)

    def apply(self) -> str:
        """The full mutated text."""
        return self.original[: self.start] + self.replacement + self.original[self.end :]


@dataclass(frozen=True, eq=False)
class Mutant:
    """One corrupted version of a source.

    ``source`` and ``diff`` are computed on first use (and then cached), so
    enumerating many mutants of a large file never builds their full texts.

    Attributes:
        id: ``{task_id}:{source}:{operator}:{anchor}[:{variant}]`` (see :func:`mutant_id`).
        task_id: The task.
        source_name: Which source of the task.
        operator: Name of the operator that made it.
        anchor: Content-based name of the changed place.
        variant: Which change at that place, if the operator has several.
        function: The function mutated, when the engine was restricted to one.
        splice: Where the change is in the original text.
    """

    id: str
    task_id: str
    source_name: str
    operator: str
    anchor: str
    variant: str | None
    function: str | None
    splice: Splice = field(repr=False)

    @cached_property
    def source(self) -> str:
        """The mutated source text."""
        return self.splice.apply()

    @cached_property
    def diff(self) -> str:
        """Unified diff against the original (``a/<source>`` -> ``b/<source>``)."""
        s = self.splice
        name = f"{self.source_name}/{self.task_id}"
        return splice_diff(s.original, s.start, s.end, s.replacement, f"a/{name}", f"b/{name}")

    @property
    def snippet(self) -> str:
        """The mutated region only (the whole mutated function in function mode)."""
        return self.splice.replacement


class MutantSet(list[Mutant]):
    """The mutants of one source, plus what happened while making them.

    A plain list of :class:`Mutant` with extra attributes; on failure it is empty and
    ``error`` says why (callers report it per task and carry on).

    Attributes:
        task_id: The task.
        source_name: Which source of the task.
        function: The function restricted to, if any.
        error: Why nothing could be enumerated (parse error, unknown function), else ``None``.
        original: The original source text ("" when it could not be parsed).
        stats: Counters: ``sites``, ``identical`` (rendered like the original),
            ``duplicate``, ``invalid`` (mutant does not compile) and ``failed``
            (operator raised; details in ``failures``).
        failures: ``"operator anchor: error"`` lines for operators that raised.
    """

    def __init__(
        self,
        task_id: str,
        source_name: str,
        function: str | None = None,
        error: str | None = None,
        original: str = "",
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.source_name = source_name
        self.function = function
        self.error = error
        self.original = original
        self.stats: dict[str, int] = dict.fromkeys(
            ("sites", "identical", "duplicate", "invalid", "failed"), 0
        )
        self.failures: list[str] = []

    @property
    def ok(self) -> bool:
        """``True`` unless enumeration failed as a whole."""
        return self.error is None

    def by_id(self) -> dict[str, Mutant]:
        """The mutants keyed by id."""
        return {m.id: m for m in self}
