"""Linux isolation primitives for the supervisor (standard library only, via ctypes).

Everything here degrades: each function reports whether it worked instead of raising, so
the supervisor can say which protections are active. Used only by ``runner.py``.
"""

from __future__ import annotations

import ctypes
import os
import stat

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
MNT_DETACH = 2
_SYS_PIVOT_ROOT = 155  # x86_64

_SYS_MOUNT_SETATTR = 442
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1

try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - non-glibc platforms
    _libc = None


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _ok(result: int) -> bool:
    return result == 0


PR_SET_NAME = 15


def set_name(name: str) -> bool:
    """Set this process's name (``/proc/self/comm``, 15 bytes at most)."""
    if _libc is None:
        return False
    return _ok(_libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0))


def unshare(flags: int) -> bool:
    """Move the calling process into new namespaces; return whether it worked."""
    return _libc is not None and _ok(_libc.unshare(flags))


def prctl(option: int, value: int) -> bool:
    """Set a process attribute (prctl); return whether it worked."""
    return _libc is not None and _ok(_libc.prctl(option, value, 0, 0, 0))


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> bool:
    """Mount a filesystem; return whether it worked."""
    if _libc is None:
        return False
    return _ok(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        )
    )


def pivot_root(new_root: str, put_old: str) -> bool:
    """Make ``new_root`` the root of this mount namespace (x86_64 syscall number)."""
    if _libc is None or os.uname().machine != "x86_64":
        return False
    _libc.syscall.restype = ctypes.c_long
    return _ok(_libc.syscall(_SYS_PIVOT_ROOT, new_root.encode(), put_old.encode()))


def umount(target: str, flags: int = 0) -> bool:
    """Unmount ``target`` (umount2); return whether it worked."""
    return _libc is not None and _ok(_libc.umount2(target.encode(), flags))


def make_tree_read_only(path: str = "/") -> bool:
    """Make every mount under ``path`` read-only (mount_setattr, Linux >= 5.12)."""
    if _libc is None:
        return False
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    _libc.syscall.restype = ctypes.c_long
    result = _libc.syscall(
        _SYS_MOUNT_SETATTR,
        _AT_FDCWD,
        path.encode(),
        _AT_RECURSIVE,
        ctypes.byref(attr),
        ctypes.sizeof(attr),
    )
    return _ok(result)


def is_within(path: str, root: str) -> bool:
    """Return whether ``path`` equals ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def world_readable_dir(path: str) -> bool:
    """Return whether any user may list and enter the directory at ``path``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return mode & (stat.S_IROTH | stat.S_IXOTH) == (stat.S_IROTH | stat.S_IXOTH)


_IPC_RMID = 0
_SYSV_REMOVERS = (
    ("shm", "shmid", "shmctl"),
    ("msg", "msqid", "msgctl"),
    ("sem", "semid", "semctl"),
)


def remove_sysv_ipc(uid: int | None) -> int:
    """Remove the System V shared memory, queues and semaphores owned by ``uid``.

    ``None`` means every object not owned by the caller (programs run under uids of
    their own).

    Programs of one supervisor share an IPC namespace when no per-program namespace can
    be made; this keeps one program's segments from reaching the next.

    Returns:
        How many objects were removed.
    """
    if _libc is None:
        return 0
    removed = 0
    for kind, id_name, call in _SYSV_REMOVERS:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                header = fh.readline().split()
                rows = [line.split() for line in fh]
        except OSError:
            continue
        id_col, uid_col = header.index(id_name), header.index("uid")
        for row in rows:
            owner = int(row[uid_col])
            if (uid is None and owner == os.getuid()) or (uid is not None and owner != uid):
                continue
            func = getattr(_libc, call)
            ipc_id = int(row[id_col])
            args = (ipc_id, 0, _IPC_RMID, None) if kind == "sem" else (ipc_id, _IPC_RMID, None)
            if func(*args) == 0:
                removed += 1
    return removed
