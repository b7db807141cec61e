"""The result store: a SQLite cache of sandbox results, so reruns redo only what is missing.

Each input's result is keyed by ``sha256(program key | input)``. The program key covers
everything that can change an answer: the program (its source, entry points, module
directories and input format), a fingerprint of the files in those module directories,
the mode (transform or generate), the limits, the policy mode, the runtime the sandbox
runs programs on (``Sandbox.runtime_fingerprint()``: backend, Python and numpy
versions, image) and a fingerprint of arcjudge's own sandbox code (the supervisor that
runs programs and the policy that rejects them, with RestrictedPython's version), so
results from one setting never answer for another. A program that cannot load is stored
once under its program key, and so are a program's policy findings: a fully cached rerun
reports them as the first run did. Rows are committed at most a second apart and when the
store is closed (which the commands do on Ctrl-C too), so a killed run loses at most its
last second of results.

The store records its schema version (SQLite's ``user_version``); a store written with
another key scheme is refused (``StoreError``) instead of being mixed with this one.

Texts (error messages) are stored through ``clean_text``: a program's message with a lone
surrogate is stored with it escaped instead of making SQLite raise. The database file (and
so SQLite's ``-wal`` and ``-shm`` files, which take its mode) is created with mode 0600.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import arcjudge.sandbox
from arcjudge.errors import InputError
from arcjudge.harness.core.outputs import create_private_file, make_private_dir
from arcjudge.safetext import clean_text
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import GeneratorCall, Grid, Limits, Program, ProgramStatus, Status

COMMIT_SECONDS = 1.0
SCHEMA_VERSION = 2  # 1 (unversioned, user_version 0): keys without the policy, no findings
SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, grid TEXT, output TEXT, error TEXT
);
CREATE TABLE IF NOT EXISTS programs (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT, findings TEXT NOT NULL
);
"""


class StoreError(InputError):
    """A file that is not a result store of this version (the message says which)."""


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


def program_key(
    program: Program,
    fingerprint: str,
    mode: str,
    limits: Limits,
    runtime: str,
    *,
    policy: PolicyMode,
) -> str:
    """Key of everything that decides how a program behaves on any input.

    Args:
        program: The program (its ``sha256`` covers source, entry points, module
            directories, input format).
        fingerprint: ``module_fingerprint`` of its module directories ("" for none).
        mode: ``transform`` or ``generate``.
        limits: The limits it runs with.
        runtime: The sandbox's ``runtime_fingerprint()``.
        policy: The policy mode it is checked with (decides rejections and findings).

    Returns:
        The hex key.
    """
    return _digest(
        program.sha256,
        fingerprint,
        mode,
        limits.key(),
        PolicyMode(policy).value,
        runtime,
        sandbox_code_fingerprint(),
    )


@functools.cache
def sandbox_code_fingerprint() -> str:
    """Hash of arcjudge's sandbox code and RestrictedPython's version (computed once).

    The supervisor, the result decoding and the policy rules live in ``arcjudge.sandbox``;
    a change to any of them can change a stored answer, so it is part of every key.
    """
    root = Path(arcjudge.sandbox.__file__).parent
    h = hashlib.sha256(importlib.metadata.version("RestrictedPython").encode() + b"\0")
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def module_fingerprint(directories: Sequence[str]) -> str:
    """Hash of every file under each directory, in order (what a program could import).

    Hidden entries (``.git``) and ``__pycache__`` directories are left out, symlinked
    directories are not followed, and a file that cannot be read counts as such.
    """
    h = hashlib.sha256()
    for number, directory in enumerate(directories):
        h.update(f"dir {number}\0".encode())
        for top, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(f for f in files if not f.startswith(".")):
                path = Path(top, name)
                rel = path.relative_to(directory).as_posix().encode()
                try:
                    h.update(rel + b"\0" + path.read_bytes() + b"\0")
                except OSError:
                    h.update(rel + b"\0unreadable\0")
    return h.hexdigest()


@dataclass(frozen=True)
class StoredProgram:
    """What is stored for a program: how it loaded and its policy findings."""

    status: ProgramStatus
    error: str | None
    findings: tuple[str, ...] = ()

    @property
    def failure(self) -> tuple[ProgramStatus, str | None] | None:
        """``(status, error)`` when the program did not load, else ``None``."""
        return None if self.status is ProgramStatus.LOADED else (self.status, self.error)


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
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise
        self._last_commit = time.monotonic()

    def _open(self) -> None:
        """Check the schema version (a fresh file gets this one), then set up the tables."""
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a result store ({exc})") from None
        if tables and version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: a result store of schema {version or 1}, and this arcjudge "
                f"keys results by schema {SCHEMA_VERSION} only (keys that leave out the "
                "policy mode and stores without policy findings would answer wrongly); "
                "delete the file or use another store"
            )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Tables and version in one transaction: a concurrent opener sees both or neither.
        self._db.executescript(f"BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")

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

    def program(self, prog_key: str) -> StoredProgram | None:
        """Return what is stored for a program (a failure, or its findings), if anything."""
        row = self._db.execute(
            "SELECT status, error, findings FROM programs WHERE key = ?", (prog_key,)
        ).fetchone()
        if row is None:
            return None
        return StoredProgram(ProgramStatus(row[0]), row[1], tuple(json.loads(row[2])))

    def get_program(self, prog_key: str) -> tuple[ProgramStatus, str | None] | None:
        """Return a stored program-level failure, if any."""
        stored = self.program(prog_key)
        return None if stored is None else stored.failure

    def put_program(
        self,
        prog_key: str,
        status: ProgramStatus,
        error: str | None,
        findings: Sequence[str] = (),
    ) -> None:
        """Store how a program loaded (a failure, or ``loaded``) and its policy findings."""
        self._db.execute(
            "INSERT OR REPLACE INTO programs (key, status, error, findings) VALUES (?, ?, ?, ?)",
            (
                prog_key,
                status.value,
                None if error is None else clean_text(error),
                json.dumps(list(findings)),  # ASCII JSON: lone surrogates round-trip
            ),
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
