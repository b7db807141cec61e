"""Small helpers shared by tests (``from tests.support.helpers import ...``)."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path


def default_sigint() -> None:
    """``preexec_fn`` for a child the test interrupts: SIGINT back to its default.

    A test run started in the background by a non-interactive shell inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler in the child.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block after ``seconds`` (SIGALRM; main thread only).

    For reads that once blocked for ever (a FIFO opened for reading): a regression then
    fails the test instead of hanging the suite.
    """

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def cached_rows(path: Path) -> int:
    """Rows in a result store's ``results`` table (0 while it does not exist yet)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def grids_in(value: object) -> Iterator[list[list[int]]]:
    """Every grid anywhere in a JSON-like value, as lists of lists.

    A grid is a non-empty list (or tuple) of non-empty lists (or tuples) of ints; lists,
    tuples and dict values are searched. Used by the prompt leak checks
    (``tests/harness/dimensions/test_prompts.py``, ``tests/support/oracle_pipeline.py``).
    """
    if isinstance(value, list | tuple):
        if value and all(
            isinstance(row, list | tuple) and row and all(type(c) is int for c in row)
            for row in value
        ):
            yield [list(row) for row in value]
            return
        for item in value:
            yield from grids_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from grids_in(item)


def strings_in(value: object) -> Iterator[str]:
    """Every string anywhere in a JSON-like value (labels, kinds, mutant ids, digests...).

    Strings in lists, tuples and dict values are found (dict keys are field names, not
    values, and are left out).
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
