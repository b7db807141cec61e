"""The result store: a SQLite cache of sandbox results, so reruns redo only what is missing.

Rows are keyed as :mod:`~arcjudge.harness.core.keys` says: 32 bytes, a program part then
an input part, so a program's rows are neighbours in the table, ordered by key: a chunk's
inserts and lookups touch a few pages instead of one page per row, and a program with no
row at all (every input of a cold run) is found with one probe. A program that cannot load
is stored once under its program key, and so are a program's policy findings: a fully
cached rerun reports them as the first run did. Rows are committed at most a second apart
and when the store is closed (which the commands do on Ctrl-C too), so a killed run loses
at most its last second of results.

A right answer is stored as its status and a 16-byte digest of its grid
(``keys.grid_digest``), a wrong one with the grid itself (as ``width:digits``) and its error
text, in the same row of the one table (clustered by key: one B-tree insert per row): about
65 bytes per right answer on disk. Rows are read back as
:class:`~arcjudge.harness.core.results.StoredResult` values, to be resolved against the
expected output of the moment. Generator samples (no expected output) are stored with both
grids.

The store records its schema version (SQLite's ``user_version``); a store written with
another key scheme or row format is refused (``StoreError``) instead of being mixed with
this one (its rows cannot be converted: they are keyed by inputs the store does not hold).

Texts (error messages) are stored through ``clean_text``: a program's message with a lone
surrogate is stored with it escaped instead of making SQLite raise. The database file (and
so SQLite's ``-wal`` and ``-shm`` files, which take its mode) is created with mode 0600.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.grids import WireGrid
from arcjudge.harness.core.keys import PART, wire_text
from arcjudge.harness.core.outputs import create_private_file, make_private_dir
from arcjudge.harness.core.results import StoredProgram, StoredResult
from arcjudge.safetext import clean_text
from arcjudge.vocabulary import ProgramStatus, Status

__all__ = ["CACHE_KIB", "SCHEMA_VERSION", "ResultStore", "StoreError"]

COMMIT_SECONDS = 1.0
_STATUSES = {s.value: s for s in Status}
SCHEMA_VERSION = 4
# 1 (unversioned, user_version 0): keys without the policy, no findings
# 2: hex text keys over the input's JSON, every grid stored as JSON
# 3: 32-byte keys over the input's digest; right answers as a digest of their grid, grids
#    and error texts in a table of their own
# 4: keys are a program part then an input part (a program's rows are neighbours); one
#    table, grids and error texts in the result's row
CACHE_KIB = 65536
"""SQLite's page cache per store connection, in KiB (64 MiB; the default is 2 MiB)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key BLOB PRIMARY KEY, status TEXT NOT NULL, digest BLOB, grid TEXT, output TEXT, error TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS programs (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, error TEXT, findings TEXT NOT NULL
);
"""


class StoreError(InputError):
    """A file that is not a result store of this version (the message says which)."""


def _wire(text: str | None) -> WireGrid | None:
    """A stored ``wire_text`` read back (``None`` stays ``None``)."""
    if text is None:
        return None
    width, _, digits = text.partition(":")
    return int(width), digits


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
                f"keys and stores results by schema {SCHEMA_VERSION} only (another schema's "
                "keys or rows would answer wrongly, and its rows cannot be converted); "
                "delete the file or use another store"
            )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Keys are digests, so rows land all over the trees: with SQLite's default 2 MB page
        # cache most inserts re-read pages (bench/README.md, issue 18). At most this much.
        self._db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
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

    def _has_program(self, part: bytes) -> bool:
        """Whether any row's key starts with a program part (one probe of the tree)."""
        row = self._db.execute(
            "SELECT 1 FROM results WHERE key >= ? AND key < ? LIMIT 1",
            (part, part + b"\xff" * (PART + 1)),
        ).fetchone()
        return row is not None

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, StoredResult]:
        """Return the stored results among ``keys`` (to be ``resolve``d when judged).

        Keys of programs with no row at all (a cold run's) are answered by one probe each.
        """
        parts = {key[:PART] for key in keys if type(key) is bytes}
        absent = {part for part in parts if not self._has_program(part)}
        if absent:
            keys = [key for key in keys if key[:PART] not in absent]
        found: dict[bytes, StoredResult] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                "SELECT key, status, digest, grid, output, error FROM results "
                f"WHERE key IN ({marks})",
                batch,
            )
            for key, status, digest, grid, output, error in rows:
                found[key] = StoredResult(
                    _STATUSES[status], None, None, error,
                    wire=None if digest is not None else _wire(grid),
                    output_wire=_wire(output), digest=digest,
                )  # fmt: skip
        return found

    def put_many(self, rows: Iterable[tuple[bytes, StoredResult]]) -> None:
        """Store results: right answers as a digest, others in full (one row each)."""
        results = []
        for key, r in rows:
            digest = r.digest if r.right and r.digest is not None else None
            grid = None if digest is not None or r.wire is None else wire_text(r.wire)
            output = None if r.output_wire is None else wire_text(r.output_wire)
            error = None if r.error is None else clean_text(r.error)
            results.append((key, r.status.value, digest, grid, output, error))
        results.sort(key=itemgetter(0))  # in key order: neighbours are inserted one after another
        self._db.executemany(
            "INSERT OR REPLACE INTO results (key, status, digest, grid, output, error) "
            "VALUES (?,?,?,?,?,?)",
            results,
        )
        self._maybe_commit()
