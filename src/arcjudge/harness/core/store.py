"""The result store: a SQLite cache of sandbox results, so reruns redo only what is missing.

Each input's result is keyed by ``sha256(program key | input)``, where the program key
covers the program's source, entry points, input format, a fingerprint of the module
directories it imports from, the mode, the limits and the runtime the sandbox runs programs
on (``Sandbox.runtime_fingerprint()``: backend, Python and numpy versions, image), so
results from one runtime never answer for another. A program that cannot load is stored
once under its program key. Rows are committed at most a second apart and when the store is
closed (which the commands do on Ctrl-C too), so a killed run loses at most its last second
of results.

Texts (error messages) are stored through ``clean_text``: a program's message with a lone
surrogate is stored with it escaped instead of making SQLite raise. The database file (and
so SQLite's ``-wal`` and ``-shm`` files, which take its mode) is created with mode 0600.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from arcjudge.harness.core.outputs import create_private_file, make_private_dir
from arcjudge.safetext import clean_text
from arcjudge.sandbox.types import GeneratorCall, Grid, Limits, Program, ProgramStatus, Status

COMMIT_SECONDS = 1.0
SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, grid TEXT, output TEXT, error TEXT
);
CREATE TABLE IF NOT EXISTS programs (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT, entry_point TEXT
);
"""


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def input_text(item: Grid | GeneratorCall) -> str:
    """Canonical text of an input grid or a generator call."""
    if isinstance(item, GeneratorCall):
        return json.dumps({"seed": item.seed, "kwargs": dict(item.kwargs)}, sort_keys=True)
    return json.dumps(item, separators=(",", ":"))


def program_key(program: Program, fingerprint: str, mode: str, limits: Limits, runtime: str) -> str:
    """Key of everything that decides how a program behaves on any input.

    Args:
        program: The program (its ``sha256`` covers source, entry points, input format).
        fingerprint: ``module_fingerprint`` of its module directories ("" for none).
        mode: ``transform`` or ``generate``.
        limits: The limits it runs with.
        runtime: The sandbox's ``runtime_fingerprint()``.

    Returns:
        The hex key.
    """
    return _digest(program.sha256, fingerprint, mode, limits.key(), runtime)


def module_fingerprint(directories: Sequence[str]) -> str:
    """Hash of the ``*.py`` files directly in each directory (what ``import`` would read)."""
    h = hashlib.sha256()
    for directory in directories:
        for path in sorted(Path(directory).glob("*.py")):
            try:
                h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
            except OSError:
                h.update(path.name.encode() + b"\0unreadable\0")
    return h.hexdigest()


class StoredResult:
    """One cached per-input result."""

    __slots__ = ("error", "grid", "output", "status")

    def __init__(
        self, status: Status, grid: Grid | None, output: Grid | None, error: str | None
    ) -> None:
        self.status = status
        self.grid = grid
        self.output = output
        self.error = error


def _grid(text: str | None) -> Grid | None:
    return None if text is None else tuple(tuple(row) for row in json.loads(text))


class ResultStore:
    """SQLite-backed cache; use one per harness process (not thread-safe).

    Args:
        path: Database file (created if missing).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        make_private_dir(self.path.parent)
        create_private_file(self.path)  # before SQLite creates it (and its -wal, -shm)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._last_commit = time.monotonic()

    def close(self) -> None:
        """Commit and close the database."""
        self._db.commit()
        self._db.close()

    def _maybe_commit(self) -> None:
        now = time.monotonic()
        if now - self._last_commit >= COMMIT_SECONDS:
            self._db.commit()
            self._last_commit = now

    @staticmethod
    def input_key(prog_key: str, item: Grid | GeneratorCall) -> str:
        """Key of one input's result."""
        return _digest(prog_key, input_text(item))

    @staticmethod
    def text_key(prog_key: str, text: str) -> str:
        """``input_key`` from the input's ``input_text`` (computed once, used per program)."""
        return _digest(prog_key, text)

    def get_program(self, prog_key: str) -> tuple[ProgramStatus, str | None] | None:
        """Return a stored program-level failure, if any."""
        row = self._db.execute(
            "SELECT status, error FROM programs WHERE key = ?", (prog_key,)
        ).fetchone()
        return None if row is None else (ProgramStatus(row[0]), row[1])

    def put_program(self, prog_key: str, status: ProgramStatus, error: str | None) -> None:
        """Store a program-level failure (load error, policy rejection)."""
        self._db.execute(
            "INSERT OR REPLACE INTO programs (key, status, error) VALUES (?, ?, ?)",
            (prog_key, status.value, None if error is None else clean_text(error)),
        )
        self._maybe_commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, StoredResult]:
        """Return the stored results among ``keys``."""
        found: dict[str, StoredResult] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT key, status, grid, output, error FROM results WHERE key IN ({marks})",
                batch,
            )
            for key, status, grid, output, error in rows:
                found[key] = StoredResult(Status(status), _grid(grid), _grid(output), error)
        return found

    def put_many(self, rows: Iterable[tuple[str, StoredResult]]) -> None:
        """Store results (one transaction)."""
        self._db.executemany(
            "INSERT OR REPLACE INTO results (key, status, grid, output, error) VALUES (?,?,?,?,?)",
            [
                (
                    key,
                    r.status.value,
                    None if r.grid is None else json.dumps(r.grid, separators=(",", ":")),
                    None if r.output is None else json.dumps(r.output, separators=(",", ":")),
                    None if r.error is None else clean_text(r.error),
                )
                for key, r in rows
            ],
        )
        self._maybe_commit()
