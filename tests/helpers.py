"""Small helpers shared by tests (importable: pytest puts this folder on sys.path)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def cached_rows(path: Path) -> int:
    """Rows in a result store's ``results`` table (0 while it does not exist yet)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0
