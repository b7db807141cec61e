"""The result store: a SQLite cache of sandbox results, so reruns redo only what is missing.

Each input's result is keyed by 32 bytes: the first 16 of ``sha256(program key)``, then the
first 16 of the input's digest (``sha256`` of its canonical text, computed once per task and
shared by its candidates). A program's rows are so neighbours in the table, ordered by key:
a chunk's inserts and lookups touch a few pages instead of one page per row, and a program
with no row at all (every input of a cold run) is found with one probe. The program key covers
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

A right answer is stored as its status and a 16-byte digest of its grid (BLAKE2b of the
compact form ``width:digits``), a wrong one with the grid itself (as ``width:digits``) and
its error text, in the same row of the one table (clustered by key: one B-tree insert per
row): about 65 bytes per right answer on disk. Whether an answer is right depends on the
expected output, which the key does not cover, so a read result is resolved against the
expected output of the moment (``StoredResult.resolve``): a stored grid is compared
with it; a stored digest equal to the expected output's digest is a right answer (its
grid is the expected output); any other digest is a miss, and the input runs again.
Generator samples (no expected output) are stored with both grids.

The store records its schema version (SQLite's ``user_version``); a store written with
another key scheme or row format is refused (``StoreError``) instead of being mixed with
this one (its rows cannot be converted: they are keyed by inputs the store does not hold).

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
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import arcjudge.sandbox
from arcjudge.errors import InputError
from arcjudge.harness.core.outputs import create_private_file, make_private_dir
from arcjudge.safetext import clean_text
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, open_regular
from arcjudge.sandbox.types import (
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramStatus,
    RunResult,
    Status,
    WireGrid,
    compact,
    grid_of,
    wire_of,
)

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


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def input_text(item: Grid | GeneratorCall) -> str:
    """Canonical text of an input grid (``width:digits``) or a generator call (JSON)."""
    if isinstance(item, GeneratorCall):
        return json.dumps({"seed": item.seed, "kwargs": dict(item.kwargs)}, sort_keys=True)
    wire = compact(item)
    if wire is None:  # not a grid of 0..9 (never a task's): its JSON, which starts with "["
        return json.dumps(item, separators=(",", ":"))
    return wire_text(wire)


def input_digest(item: Grid | GeneratorCall, wire: list[Any] | None = None) -> bytes:
    """The digest of an input that result keys are made from (see ``result_key``).

    Args:
        item: The input.
        wire: The grid's ``input_wire`` when it is made already (not encoded again).
    """
    if wire is not None and len(wire) == 2 and type(wire[0]) is int and type(wire[1]) is str:
        text = f"{wire[0]}:{wire[1]}"  # input_text of a grid of 0..9
    else:
        text = input_text(item)
    return hashlib.sha256(text.encode()).digest()


PART = 16
"""Bytes of a result key taken from the program key's digest, then from the input's."""


def program_part(prog_key: str) -> bytes:
    """The first half of a program's result keys (shared by all its rows)."""
    return hashlib.sha256(prog_key.encode()).digest()[:PART]


def result_key(prog_key: str, digest: bytes) -> bytes:
    """Key of one input's result, from its program key and its ``input_digest``."""
    return program_part(prog_key) + digest[:PART]


def wire_text(wire: WireGrid) -> str:
    """A grid's compact form as stored: ``width:digits``."""
    return f"{wire[0]}:{wire[1]}"


def _wire(text: str | None) -> WireGrid | None:
    if text is None:
        return None
    width, _, digits = text.partition(":")
    return int(width), digits


def grid_digest(wire: WireGrid) -> bytes:
    """The 16-byte digest a right answer is stored as (of its ``wire_text``)."""
    return hashlib.blake2b(wire_text(wire).encode(), digest_size=16).digest()


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


_CHUNK = 1 << 20
"""Bytes read at a time when a module file is hashed (files are streamed, not capped)."""


def _hash_entry(h: Any, path: str) -> None:
    """Feed one directory entry to ``h`` without following it or blocking on it.

    A regular file is its content, streamed; a symlink is its target's text (never
    followed: ``/dev/zero`` is not read); a FIFO, socket or device is its kind only
    (never opened); a file that cannot be read counts as such.
    """
    try:
        info = os.lstat(path)
    except OSError:
        h.update(b"unreadable\0")
        return
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        h.update(b"\0symlink\0" + os.fsencode(target) + b"\0")
        return
    if not stat.S_ISREG(info.st_mode):
        h.update(b"\0" + _special_kind(info.st_mode) + b"\0")
        return
    try:
        with open_regular(path) as fh:  # O_NOFOLLOW | O_NONBLOCK: a swapped-in FIFO is refused
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    except RefusedPath as exc:
        h.update(b"\0refused\0" + exc.reason.encode("utf-8", "surrogateescape") + b"\0")
        return
    except OSError:
        h.update(b"unreadable\0")
        return
    h.update(b"\0")


def _special_kind(mode: int) -> bytes:
    """What a non-regular file is: ``fifo``, ``socket``, ``device`` (or ``other``)."""
    if stat.S_ISFIFO(mode):
        return b"fifo"
    if stat.S_ISSOCK(mode):
        return b"socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return b"device"
    return b"other"


def module_fingerprint(directories: Sequence[str]) -> str:
    """Hash of every file under each directory, in order (what a program could import).

    Hidden entries (``.git``) and ``__pycache__`` directories are left out, and a file
    that cannot be read counts as such. The directories come from third parties, so
    nothing in them is followed or opened in a way that could block: a symlink (to a
    file or a directory) counts as its target's text, a FIFO, socket or device as its
    kind, and a regular file's content is streamed (any size, in constant memory).
    Ordinary directories (regular files only) hash as they always did.
    """
    h = hashlib.sha256()
    for number, directory in enumerate(directories):
        h.update(f"dir {number}\0".encode())
        for top, dirs, files in os.walk(directory):
            visible = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            linked = [d for d in visible if os.path.islink(os.path.join(top, d))]
            dirs[:] = [d for d in visible if d not in linked]  # os.walk never follows them
            for name in sorted([f for f in files if not f.startswith(".")] + linked):
                path = os.path.join(top, name)
                h.update(Path(path).relative_to(directory).as_posix().encode() + b"\0")
                _hash_entry(h, path)
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


class Expected:
    """An expected output as the engine compares answers with it (built once per input).

    Attributes:
        grid: The expected grid (what a right answer's ``grid`` is).
        wire: Its compact form, ``None`` when it is not a grid of 0..9 (nothing equals it).
    """

    __slots__ = ("_digest", "grid", "wire")

    def __init__(self, grid: Grid, wire: WireGrid | None = None) -> None:
        """Judge answers against ``grid``.

        Args:
            grid: The expected grid.
            wire: Its compact form when the caller made it already, else ``None``.
        """
        self.grid = grid
        self.wire: WireGrid | None = compact(grid) if wire is None else wire
        self._digest: bytes | None = None

    @property
    def digest(self) -> bytes | None:
        """``grid_digest`` of the grid (computed when first needed)."""
        if self._digest is None and self.wire is not None:
            self._digest = grid_digest(self.wire)
        return self._digest


class StoredResult:
    """One per-input result: from a run, or from the store (see ``resolve``).

    ``grid`` is decoded from ``wire`` only when read; a right answer's ``grid`` is the
    expected output itself. ``right`` is ``True`` or ``False`` once the result was compared
    with an expected output (by the engine), ``None`` when it was not.
    """

    __slots__ = ("_grid", "_output", "_output_wire", "digest", "error", "right", "status", "wire")

    def __init__(
        self,
        status: Status,
        grid: Grid | None = None,
        output: Grid | None = None,
        error: str | None = None,
        *,
        wire: WireGrid | None = None,
        output_wire: WireGrid | None = None,
        digest: bytes | None = None,
        right: bool | None = None,
    ) -> None:
        self.status = status
        self._grid = grid
        self._output = output
        self.error = error
        self.wire = wire if wire is not None or grid is None else wire_of(grid)
        self._output_wire = output_wire
        self.digest = digest
        self.right = right

    @property
    def grid(self) -> Grid | None:
        """The output grid (``None`` when the call returned none)."""
        if self._grid is None and self.wire is not None:
            self._grid = grid_of(self.wire)
        return self._grid

    @property
    def output(self) -> Grid | None:
        """A generator sample's output grid."""
        if self._output is None and self._output_wire is not None:
            self._output = grid_of(self._output_wire)
        return self._output

    @property
    def output_wire(self) -> WireGrid | None:
        """``output`` in its compact form."""
        if self._output_wire is None and self._output is not None:
            self._output_wire = wire_of(self._output)
        return self._output_wire

    @classmethod
    def judged(cls, result: RunResult, expected: Expected) -> StoredResult:
        """A fresh run's result, compared (in compact form) with the expected output."""
        wire = result.wire
        if result.status is Status.OK and wire is not None and wire == expected.wire:
            return cls(Status.OK, expected.grid, wire=wire, digest=expected.digest, right=True)
        return cls(result.status, None, None, result.error, wire=wire, right=False)

    def resolve(self, expected: Expected) -> StoredResult | None:
        """A stored result judged against the expected output; ``None`` for a miss.

        A stored grid is compared with ``expected``; a stored digest (a right answer when
        it was written) is a right answer if it is ``expected``'s digest, else a miss.
        """
        if self.status is not Status.OK:
            self.right = False
        elif self.wire is not None:
            self.right = self.wire == expected.wire
            if self.right:
                self._grid = expected.grid
        elif self.digest is not None and self.digest == expected.digest:
            self.right = True
            self.wire = expected.wire
            self._grid = expected.grid
        else:
            return None
        return self


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

    @staticmethod
    def input_key(prog_key: str, item: Grid | GeneratorCall) -> bytes:
        """Key of one input's result."""
        return result_key(prog_key, input_digest(item))

    @staticmethod
    def result_keys(prog_key: str, digests: Iterable[bytes]) -> list[bytes]:
        """``result_key`` of each input digest (the program key hashed once)."""
        head = program_part(prog_key)
        return [head + digest[:PART] for digest in digests]

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
