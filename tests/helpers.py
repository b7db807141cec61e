"""Small helpers shared by tests (importable: pytest puts this folder on sys.path)."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path


def default_sigint() -> None:
    """``preexec_fn`` for a child the test interrupts: SIGINT back to its default.

    A test run started in the background by a non-interactive shell inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler in the child.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cached_rows(path: Path) -> int:
    """Rows in a result store's ``results`` table (0 while it does not exist yet)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0
