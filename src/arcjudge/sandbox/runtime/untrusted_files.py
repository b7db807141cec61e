"""One rule for opening a path that untrusted parties chose (standard library only).

Source directories, task files, generator directories and embeddings come from third
parties, and so do the names in them: a ``leak.py`` may be a symlink to any file of the
host, a ``task.json`` may be a FIFO that blocks forever, ``/dev/zero`` reads without end.
Trusted code (the harness, and the supervisor, which is root) opens such a path only
through :func:`open_regular`:

- with ``within``, the path, resolved (every symlink followed), must lie inside that
  directory, resolved too: a symlink may point elsewhere in its own directory, never out;
- the last component is opened with ``O_NOFOLLOW`` (no symlink swapped in after the
  check) and ``O_NONBLOCK`` (a FIFO never blocks the open), then ``fstat`` must say a
  regular file: no FIFO, socket, device or directory;
- with ``max_bytes``, a larger file is refused before anything is read;
- with ``others_may_read``, a file its permission bits do not open to every user is
  refused (what the supervisor, root with ``CAP_DAC_OVERRIDE``, may hand a program).

Anything else raises :class:`RefusedPath` (an ``OSError``) with a reason a person can act
on; callers turn it into a per-file or per-task problem. Used by the supervisor
(``modcode.py``), so nothing here may import arcjudge.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class RefusedPath(OSError):
    """A path trusted code will not read; ``reason`` says why, ``path`` which one."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(errno.EPERM, reason, path)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` equals ``root`` or lies below it (both absolute and resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_within(path: str, within: str) -> str:
    """``path`` with every symlink resolved, checked to lie inside ``within``.

    Raises:
        RefusedPath: If it resolves outside the directory (a symlink pointing out).
    """
    real = os.path.realpath(path)
    root = os.path.realpath(within)
    if not is_within(real, root):
        raise RefusedPath(path, f"a symlink out of its directory (to {real})")
    return real


def open_regular(
    path: str,
    *,
    within: str | None = None,
    max_bytes: int | None = None,
    others_may_read: bool = False,
) -> BinaryIO:
    """Open an untrusted path for reading, by the rule above; the caller closes it.

    Args:
        path: The path as found (in a listing, a file name, a task set).
        within: The directory it must stay inside once resolved (``None``: not checked).
        max_bytes: The largest size accepted (``None``: no cap; stream the file then).
        others_may_read: Refuse a file whose mode lacks the read bit for others.

    Returns:
        A binary file object of a regular file, positioned at its start.

    Raises:
        RefusedPath: A symlink out of ``within``, not a regular file, too large, or not
            readable by others when asked.
        OSError: As ``open`` raises it (missing, permission denied, ...).
    """
    target = resolve_within(path, within) if within is not None else path
    try:
        fd = os.open(target, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last component is a symlink (no ``within``)
            raise RefusedPath(path, "a symlink (not followed)") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedPath(path, f"not a regular file ({_kind(info.st_mode)})")
        if max_bytes is not None and info.st_size > max_bytes:
            raise RefusedPath(path, f"larger than {max_bytes:,} bytes ({info.st_size:,})")
        if others_may_read and not info.st_mode & stat.S_IROTH:
            raise RefusedPath(path, "not readable by every user")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: str,
    *,
    within: str | None = None,
    max_bytes: int,
    others_may_read: bool = False,
) -> bytes:
    """The whole content of an untrusted path, by the rule above (see :func:`open_regular`).

    Reads at most ``max_bytes + 1`` bytes, so a file that grows while read is refused too.

    Raises:
        RefusedPath: As :func:`open_regular`, or the file grew past ``max_bytes``.
        OSError: As ``open`` and ``read`` raise it.
    """
    with open_regular(
        path, within=within, max_bytes=max_bytes, others_may_read=others_may_read
    ) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RefusedPath(path, f"larger than {max_bytes:,} bytes")
    return data


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "of an unknown kind"
