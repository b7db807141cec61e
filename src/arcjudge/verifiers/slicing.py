"""Cut one function out of a many-function source file, keeping everything it may need.

RE-ARC's ``verifiers.py`` and ``generators.py`` define one function per task (400 in all)
after ``from dsl import *``. Loading the whole file for every task costs far more than a
call, so a task's program is the file with the *other tasks'* functions removed: every
import, constant and helper stays, in the original text, so behaviour is unchanged as long
as task functions do not call each other (they do not in RE-ARC; if one does, the program
fails to load rather than silently changing).
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class FunctionIndex:
    """Where the per-task functions of a source file are.

    Attributes:
        names: Function name -> (first line, last line), 1-based inclusive, decorators included.
        error: Why the file could not be parsed, if it could not.
        referenced: Names each indexed function uses; key ``""`` holds the names used by
            everything else in the file.
    """

    names: dict[str, tuple[int, int]]
    error: str | None = None
    referenced: dict[str, set[str]] | None = None


def index_functions(source: bytes, prefix: str) -> FunctionIndex:
    """Find the top-level functions whose names start with ``prefix``.

    Args:
        source: The file's bytes (parsed as bytes, so coding lines are honoured).
        prefix: For example ``verify_`` or ``generate_``.

    Returns:
        The index; ``error`` is set (and ``names`` empty) when the file does not parse.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return FunctionIndex({}, f"{type(exc).__name__}: {exc}")
    names = {}
    referenced: dict[str, set[str]] = {}
    for node in tree.body:
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            prefix
        ):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            names[node.name] = (first, node.end_lineno or node.lineno)
            referenced[node.name] = used
        else:
            referenced.setdefault("", set()).update(used)
    return FunctionIndex(names, None, referenced)


def slice_function(source: bytes, index: FunctionIndex, keep: str) -> bytes:
    """Return ``source`` without the indexed functions other than ``keep``.

    Lines of removed functions become empty lines, so line numbers in tracebacks still
    match the original file. When the rest of the file or the kept function refers to a
    function that would be removed, the whole source is returned unchanged.

    Args:
        source: The file's bytes.
        index: Its function index (from ``index_functions``).
        keep: The function to keep.

    Returns:
        The reduced source.
    """
    drop = {name: span for name, span in index.names.items() if name != keep}
    refs = index.referenced or {}
    needed = refs.get("", set()) | refs.get(keep, set())
    if not drop or needed & drop.keys():  # something refers to another task's function
        return source
    lines = source.splitlines(keepends=True)
    for first, last in drop.values():
        for i in range(first - 1, min(last, len(lines))):
            lines[i] = b"\n"
    return b"".join(lines)


_TASK_ID = re.compile(r"^[0-9a-f]{8}$")


def is_task_id(text: str) -> bool:
    """Return whether ``text`` looks like an ARC task id (8 hex digits)."""
    return bool(_TASK_ID.match(text))
