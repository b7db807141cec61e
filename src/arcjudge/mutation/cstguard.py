"""libcst's native parser, run so that no source can crash the harness with it.

libcst parses with native code that recurses on the C stack without a limit: a valid
verifier of 8,000 ``x and x and ...`` terms overflowed the main thread's 8 MiB stack and
killed the harness with SIGSEGV, where CPython's own parser (``ast.parse``) is fine. So
:func:`guarded_parse` parses a source from a third party in three steps:

1. ``ast.parse`` first, in a thread with a :data:`MIN_STACK` stack: a source Python
   itself refuses (a syntax error, or nesting too deep for CPython's parser, which has
   limits of its own: nested calls, attributes, unary operators, ``elif`` chains and
   lambdas stop near 3,000 levels) is refused here, before libcst sees it;
2. the stack libcst may need is bounded from the size of the largest top-level
   statement (libcst's recursion stays inside one statement: 100,000 top-level
   statements, or a function of 100,000 statements, parse on a 1 MiB stack): at most
   :data:`STACK_PER_BYTE` per byte of it, and at least :data:`MIN_STACK`;
3. libcst parses in a thread with that stack (the same thread as step 1 when
   :data:`MIN_STACK` is enough, as for every ordinary verifier), or, when the bound is above
   :data:`MAX_STACK` (a top-level statement over 256 KiB), first in a forked child with
   a :data:`MAX_STACK` thread: if the child dies of a signal, the source is refused
   (:data:`CRASHED`), else the harness parses it the same way the child did.

Measured with libcst 1.0.1 on x86_64 (the smallest thread stack each source parsed in):
``import a.a.a...`` (dotted names are one string to ``ast``, a nested ``Attribute`` to
libcst) 63 MiB for 80 KiB, 826 bytes of stack per source byte, the most found; 30,000
``and`` terms 39 MiB for 176 KiB (227 per byte); 99 nested blocks, the tokenizer's
limit, 3 MiB (567 per byte); the deepest nesting ``ast`` accepts (2,500 levels of
attributes, subscripts, calls or unary minus) at most 8 MiB. A thread's stack is address
space reserved, not memory: only the pages the parse touches are used.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import os
import resource
import signal
import threading
import warnings
from collections.abc import Callable
from typing import TypeVar

import libcst as cst

__all__ = [
    "CRASHED",
    "MAX_STACK",
    "MIN_STACK",
    "STACK_PER_BYTE",
    "SourceRefused",
    "guarded_parse",
    "stack_needed",
]

MIN_STACK = 64 << 20
"""The smallest stack libcst parses on (64 MiB: a top-level statement up to 32 KiB)."""

STACK_PER_BYTE = 2 << 10
"""Stack allowed per byte of the largest top-level statement (2.5x the most measured)."""

MAX_STACK = 512 << 20
"""The largest thread stack used; a source that may need more is tried in a child first."""

CRASHED = "libcst's parser crashed on this source (nested too deeply)"
"""Why a source is refused when libcst's parser killed the child that tried it."""

T = TypeVar("T")
R = TypeVar("R")

_STACK_SIZE_LOCK = threading.Lock()
_PR_SET_DUMPABLE = 4


class SourceRefused(ValueError):
    """A source the guard will not give libcst's parser; the message says why."""


def in_thread(function: Callable[[T], R], argument: T, stack: int) -> R:
    """``function(argument)`` in a new thread with a ``stack``-byte stack.

    The thread stack size is process-wide in Python, so it is set, the thread started
    and the size put back under a lock. An exception of ``function`` is raised here.
    """
    return _thread_call(function, argument, stack, _STACK_SIZE_LOCK)


def _thread_call(
    function: Callable[[T], R],
    argument: T,
    stack: int,
    lock: contextlib.AbstractContextManager[object],
) -> R:
    """:func:`in_thread`, the stack size set under ``lock`` (a forked child: none)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = function(argument)
        except BaseException as exc:  # handed to the caller, which raises it
            box["error"] = exc

    with lock:
        old = threading.stack_size(stack)
        try:
            thread = threading.Thread(target=run, name="arcjudge-parse", daemon=True)
            thread.start()
        finally:
            threading.stack_size(old)
    thread.join()
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    return box["value"]  # type: ignore[return-value]


def _line_starts(data: bytes) -> list[int]:
    """Offset of the start of each line (1-based line ``n`` starts at ``[n - 1]``)."""
    starts = [0]
    for line in data.splitlines(keepends=True):  # \n, \r\n and \r: the tokenizer's
        starts.append(starts[-1] + len(line))
    return starts


def stack_needed(source: str | bytes) -> int:
    """The thread stack libcst is given for ``source`` (see the module docstring).

    Raises:
        SourceRefused: ``ast.parse`` refuses the source (the reason in the message).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except SyntaxError as exc:  # also IndentationError
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise SourceRefused(f"does not parse ({where}{exc.msg})") from None
    except (ValueError, UnicodeDecodeError) as exc:  # null bytes, a bad coding line
        raise SourceRefused(f"does not parse ({exc})") from None
    except (RecursionError, MemoryError):
        raise SourceRefused("does not parse (nested too deeply for Python's parser)") from None
    data = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    starts = _line_starts(data)
    largest = 0
    for stmt in tree.body:
        decorators = getattr(stmt, "decorator_list", [])
        first = min([stmt.lineno] + [d.lineno for d in decorators])
        last = min(stmt.end_lineno or stmt.lineno, len(starts) - 1)
        largest = max(largest, starts[last] - starts[min(first, last) - 1])
    return max(MIN_STACK, largest * STACK_PER_BYTE)


def _parse(source: str | bytes) -> cst.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cst.parse_module(source)


def _parse_if_small(source: str | bytes) -> cst.Module | int:
    """On a :data:`MIN_STACK` thread: the module if that stack is enough, else the stack needed.

    The common case (every top-level statement under 32 KiB) takes one thread, not two.
    """
    stack = stack_needed(source)
    return _parse(source) if stack <= MIN_STACK else stack


def _parse_quietly(source: str | bytes) -> None:
    """Parse and drop the result; exceptions are the parent's to see (in the child)."""
    with contextlib.suppress(Exception):
        _parse(source)


def _no_core_dump() -> None:
    """This process dumps no core, to a file or to a pipe (``PR_SET_DUMPABLE`` 0)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def crashes_in_child(source: str | bytes, stack: int = MAX_STACK) -> bool:
    """Whether libcst's parser, on a ``stack``-byte thread stack, kills a forked child.

    The child dumps no core and leaves without running exit handlers.
    """
    pid = os.fork()
    if pid == 0:  # the child: parse, then leave at once
        try:
            _no_core_dump()
            _thread_call(_parse_quietly, source, stack, contextlib.nullcontext())
        finally:
            os._exit(0)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C while waiting: the child goes too
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    return os.WIFSIGNALED(status)


def guarded_parse(source: str | bytes) -> cst.Module:
    """``libcst.parse_module(source)``, where its recursion cannot crash this process.

    Args:
        source: Python source from a third party; bytes honour a coding declaration.

    Returns:
        The parsed module.

    Raises:
        SourceRefused: ``ast.parse`` refuses it, or libcst's parser crashed on it in a
            child (:data:`CRASHED`).
        libcst.ParserSyntaxError: libcst's parser refuses it; and whatever else libcst
            raises.
    """
    first = in_thread(_parse_if_small, source, MIN_STACK)
    if isinstance(first, cst.Module):
        return first
    stack = first
    if stack > MAX_STACK:
        if crashes_in_child(source, MAX_STACK):
            raise SourceRefused(CRASHED)
        stack = MAX_STACK
    return in_thread(_parse, source, stack)
