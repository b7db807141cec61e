"""Linux isolation primitives for the supervisor (standard library only, via ctypes).

Everything here degrades: each function reports whether it worked instead of raising, so
the supervisor can say which protections are active. Used only by ``runner.py``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
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
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522
_LAST_CAP = 63
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


def setns(fd: int, nstype: int) -> bool:
    """Join the namespace ``fd`` refers to (for PID: the one new children are made in)."""
    return _libc is not None and _ok(_libc.setns(fd, nstype))


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


def make_mount_writable(path: str) -> bool:
    """Clear the read-only flag of the one mount at ``path`` (mount_setattr)."""
    if _libc is None:
        return False
    attr = _MountAttr(0, _MOUNT_ATTR_RDONLY, 0, 0)
    _libc.syscall.restype = ctypes.c_long
    result = _libc.syscall(
        _SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), 0, ctypes.byref(attr), ctypes.sizeof(attr)
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


def _write_proc(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _sysctl(name: str) -> str | None:
    try:
        with open("/proc/sys/" + name.replace(".", "/")) as fh:
            return fh.read().strip()
    except OSError:
        return None


def user_namespace_hint(err: int) -> str:
    """Why an unprivileged user namespace was refused, and how to allow it.

    Args:
        err: The errno ``unshare(CLONE_NEWUSER)`` or writing the id maps failed with.

    Returns:
        One sentence naming the setting that refused it and the command that enables it.
    """
    if _sysctl("kernel.unprivileged_userns_clone") == "0":
        return (
            "kernel.unprivileged_userns_clone is 0; enable with "
            "'sysctl -w kernel.unprivileged_userns_clone=1' (as root)"
        )
    if _sysctl("user.max_user_namespaces") == "0":
        return (
            "user.max_user_namespaces is 0; enable with "
            "'sysctl -w user.max_user_namespaces=15000' (as root)"
        )
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns=1); allow them with "
            "'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0' or an AppArmor "
            "profile with 'userns,' for this Python (as root)"
        )
    if err == errno.EINVAL:
        return "the supervisor was not single-threaded (a preloaded module started threads)"
    if err == errno.EPERM:
        return (
            "refused (EPERM): a container's seccomp profile or a security module forbids "
            "user namespaces here; run arcjudge as root or on the docker backend"
        )
    return f"refused ({errno.errorcode.get(err, err)})"


def enter_user_namespace() -> str | None:
    """Make this process root of a new user namespace mapping only its own uid and gid.

    Must be called while the process is single-threaded. Inside, the process has every
    capability over the namespaces it creates from then on, and none on the host.

    Returns:
        ``None`` on success, else why not and how to allow it (``user_namespace_hint``).
    """
    if _libc is None:
        return "no C library to call unshare with"
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER) != 0:
        return user_namespace_hint(ctypes.get_errno())
    try:
        _write_proc("/proc/self/setgroups", "deny")
        _write_proc("/proc/self/uid_map", f"0 {uid} 1")
        _write_proc("/proc/self/gid_map", f"0 {gid} 1")
    except OSError as exc:
        return user_namespace_hint(exc.errno or 0)
    return None


def enter_nested_user_namespace(inside_id: int) -> str | None:
    """Move into a child user namespace where this process is ``inside_id`` (uid and gid).

    The parent-side id is this process's own (root of the supervisor's user namespace), so
    no privilege is needed; the new namespace owns nothing and the process keeps none of
    its capabilities once ``drop_capabilities`` has run.

    Returns:
        ``None`` when the namespace was made and this process's ids are ``inside_id``,
        else what failed.
    """
    if _libc is None:
        return "no C library"
    outer_uid, outer_gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    try:
        try:
            _write_proc("/proc/self/setgroups", "deny")
        except OSError:
            pass  # already denied by the parent namespace
        _write_proc("/proc/self/uid_map", f"{inside_id} {outer_uid} 1")
        _write_proc("/proc/self/gid_map", f"{inside_id} {outer_gid} 1")
    except OSError as exc:
        return f"id maps: {exc}"
    if os.getuid() != inside_id or os.getgid() != inside_id:
        return "ids not mapped"
    return None


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> bool:
    """Drop every capability: bounding set, ambient set, then effective/permitted/inheritable.

    Returns:
        Whether ``/proc/self/status`` then shows no effective, permitted or bounding
        capability.
    """
    if _libc is None:
        return False
    for cap in range(_LAST_CAP + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last cap
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        return False
    try:
        with open("/proc/self/status") as fh:
            fields = dict(line.split(":", 1) for line in fh if line.startswith("Cap"))
    except OSError:
        return False
    return all(int(fields[k].strip(), 16) == 0 for k in ("CapEff", "CapPrm", "CapBnd"))
