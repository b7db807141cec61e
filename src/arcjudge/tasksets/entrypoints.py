"""A verifier's or generator's entry point, found statically (parsed, never run).

A task set ships each task's verifier and generator as a whole module. The sandbox calls
a module by name (a ``module`` verifier: ``verify``, ``transform``, ``solve``, ``p``; an
``arc-gen`` generator: ``generate``), so the entry point is found here without running
anything: a top-level binding of one of those names, else the module's only public
top-level function (a ``def`` whose name does not start with ``_``). In the second case
the source is given one line more, ``<expected name> = <that function>``, so that the
workflows find it under the name they already try.

Sources are untrusted: they are parsed with :mod:`ast` (which executes nothing), with a
size cap, and parse failures of every kind (syntax errors, null bytes, nesting too deep
for the parser) are an :class:`EntryPointError` saying so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from arcjudge.errors import InputError

__all__ = [
    "BY_NAME",
    "MAX_SOURCE_BYTES",
    "ONLY_PUBLIC_FUNCTION",
    "EntryPoint",
    "EntryPointError",
    "expose_entry_point",
    "find_entry_point",
]

MAX_SOURCE_BYTES = 4 << 20
"""The largest source parsed (4 MiB): a task's verifier or generator is far smaller."""

BY_NAME = "by name"
"""How an entry point bound at top level under an expected name was found."""

ONLY_PUBLIC_FUNCTION = "only public function"
"""How an entry point that is the module's only public top-level function was found."""


class EntryPointError(InputError):
    """A source does not parse, is too large, or has no entry point the rules can find."""


@dataclass(frozen=True)
class EntryPoint:
    """Where a module's entry point is.

    Attributes:
        function: The top-level name the entry point is defined under.
        exposed_as: The name the sandbox calls (``function`` itself when found by name).
        how: :data:`BY_NAME` or :data:`ONLY_PUBLIC_FUNCTION`.
    """

    function: str
    exposed_as: str
    how: str

    def to_json(self) -> dict[str, str]:
        """``{"function", "exposed_as", "how"}``."""
        return {"function": self.function, "exposed_as": self.exposed_as, "how": self.how}


def _parse(source: bytes) -> ast.Module:
    if len(source) > MAX_SOURCE_BYTES:
        raise EntryPointError(f"too large to read ({len(source):,} bytes; at most "
                              f"{MAX_SOURCE_BYTES:,})")  # fmt: skip
    try:
        return ast.parse(source)
    except SyntaxError as exc:  # also IndentationError, and null bytes on 3.12+
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise EntryPointError(f"does not parse ({where}{exc.msg})") from None
    except ValueError as exc:  # null bytes (3.11)
        raise EntryPointError(f"does not parse ({exc})") from None
    except (RecursionError, MemoryError):
        raise EntryPointError("does not parse (nested too deeply for the parser)") from None


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the module's top-level statements bind (definitions, assignments, imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def find_entry_point(source: bytes, names: tuple[str, ...]) -> EntryPoint:
    """Find a module's entry point without running it.

    Args:
        source: The module's source.
        names: The names the sandbox tries, in order (the first is the one an entry point
            found otherwise is exposed as).

    Returns:
        The first of ``names`` bound at top level, else the module's only public top-level
        function (to be exposed as ``names[0]``).

    Raises:
        EntryPointError: The source is too large or does not parse, or it binds none of
            ``names`` and has no public top-level function or several (named).
    """
    tree = _parse(source)
    bound = _bound_names(tree)
    for name in names:
        if name in bound:
            return EntryPoint(name, name, BY_NAME)
    public = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]
    tried = ", ".join(names)
    if len(set(public)) == 1:
        return EntryPoint(public[0], names[0], ONLY_PUBLIC_FUNCTION)
    if not public:
        raise EntryPointError(f"no entry point: defines none of {tried} and no public function")
    several = ", ".join(dict.fromkeys(public))
    raise EntryPointError(
        f"no entry point: defines none of {tried} and several public functions ({several}); "
        f"name the entry point {names[0]} or make the others private (_name)"
    )


def expose_entry_point(source: bytes, entry: EntryPoint) -> bytes:
    """The source with its entry point bound under ``entry.exposed_as`` (one line added).

    Args:
        source: The module's source.
        entry: What :func:`find_entry_point` found in it.

    Returns:
        ``source`` itself when the entry point was found by name, else ``source`` with
        ``<exposed_as> = <function>`` appended.
    """
    if entry.function == entry.exposed_as:
        return source
    newline = b"" if source.endswith(b"\n") else b"\n"
    alias = f"\n\n# arcjudge: the entry point\n{entry.exposed_as} = {entry.function}\n"
    return source + newline + alias.encode("ascii")
