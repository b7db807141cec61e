"""Writing a command's output files: all at the end, each atomically, readable by the owner.

Outputs and stores can hold untrusted programs' texts and the harness's inputs, so every
file a command creates is mode 0600 and every directory it creates is mode 0700. A
directory that already exists keeps its mode (it is the user's).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from arcjudge.safetext import encode_utf8, json_dumps

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents, each with mode 0700.

    Directories that already exist are left as they are.

    Args:
        path: The directory.
    """
    missing = []
    current = Path(path)
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # created meanwhile by someone else: not ours to change
        os.chmod(directory, DIR_MODE)  # whatever the umask


def create_private_file(path: Path) -> bool:
    """Create an empty file with mode 0600 unless it exists.

    Args:
        path: The file.

    Returns:
        Whether it was created (an existing file is left as it is).
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return True


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` (replacing a stale one) with mode 0600."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_atomic(out_dir: Path, files: dict[str, str]) -> None:
    """Write each file to a temporary name, then rename it into place.

    An interrupted run therefore never leaves a half-written output behind. Files are
    created with mode 0600 (a missing ``out_dir`` with 0700), and text that is not valid
    UTF-8 (lone surrogates) is written with its surrogates escaped, never raising.

    Args:
        out_dir: The output directory (created if missing).
        files: File name -> text.
    """
    make_private_dir(out_dir)
    for name, text in files.items():
        tmp = out_dir / f".{name}.tmp-{os.getpid()}"
        write_private(tmp, encode_utf8(text))
        os.replace(tmp, out_dir / name)


def runtime_json(runtime: dict[str, str]) -> str:
    """The text of a command's ``runtime.json``: ``{"runtime": sandbox.runtime()}``.

    It is a file of its own, next to the manifest or summary, so that those stay
    byte-identical across backends and executors while the runtime (which is part of every
    result-store key) is still recorded.
    """
    return json_dumps({"runtime": runtime}, sort_keys=True, indent=1) + "\n"
