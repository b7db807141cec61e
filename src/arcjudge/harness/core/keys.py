"""Result-store keys: what decides a stored answer, hashed.

Each input's result is keyed by 32 bytes (:func:`result_key`): the first 16 of
``sha256(program key)``, then the first 16 of the input's digest (:func:`input_digest`:
``sha256`` of its canonical text, computed once per task and shared by its candidates). A
program's rows are so neighbours in the store's table, ordered by key. The program key
(:func:`program_key`) covers everything that can change an answer: the program (its source,
entry points, module directories and input format), a fingerprint of the files in those
module directories (:func:`module_fingerprint`), the mode (transform or generate), the
limits, the policy mode, the runtime the sandbox runs programs on
(``Sandbox.runtime_fingerprint()``: backend, Python and numpy versions, image) and a
fingerprint of arcjudge's own sandbox code (:func:`sandbox_code_fingerprint`: the
supervisor that runs programs and the policy that rejects them, with RestrictedPython's
version), so results from one setting never answer for another.

A right answer is stored as a 16-byte digest of its grid (:func:`grid_digest`, BLAKE2b of
the compact text ``width:digits``, :func:`wire_text`).

These values key results already stored: they must not change for the same inputs
(``tests/test_store_keys.py`` pins them), or every store answers nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import arcjudge.sandbox
from arcjudge.grids import Grid, WireGrid, compact
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, open_regular
from arcjudge.sandbox.types import GeneratorCall, Limits, Program

__all__ = [
    "PART",
    "grid_digest",
    "input_digest",
    "input_text",
    "module_fingerprint",
    "program_key",
    "program_part",
    "result_key",
    "result_keys",
    "sandbox_code_fingerprint",
    "wire_text",
]

PART = 16
"""Bytes of a result key taken from the program key's digest, then from the input's."""


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def wire_text(wire: WireGrid) -> str:
    """A grid's compact form as text (as digested and stored): ``width:digits``."""
    return f"{wire[0]}:{wire[1]}"


def grid_digest(wire: WireGrid) -> bytes:
    """The 16-byte digest a right answer is stored as (of its ``wire_text``)."""
    return hashlib.blake2b(wire_text(wire).encode(), digest_size=16).digest()


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


def program_part(prog_key: str) -> bytes:
    """The first half of a program's result keys (shared by all its rows)."""
    return hashlib.sha256(prog_key.encode()).digest()[:PART]


def result_key(prog_key: str, digest: bytes) -> bytes:
    """Key of one input's result, from its program key and its ``input_digest``."""
    return program_part(prog_key) + digest[:PART]


def result_keys(prog_key: str, digests: Iterable[bytes]) -> list[bytes]:
    """``result_key`` of each input digest (the program key hashed once)."""
    head = program_part(prog_key)
    return [head + digest[:PART] for digest in digests]


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
