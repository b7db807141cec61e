"""A seccomp-BPF syscall filter for untrusted programs (standard library only, via ctypes).

Installed in the program's process after its sandbox is set up and before any of its code
loads. It denies (``EPERM``) kernel keyrings, ``ptrace`` and cross-process memory access,
``bpf``, ``perf_event_open``, ``userfaultfd``, ``kexec_*``, every mount call, module loading,
namespace creation (``unshare``, ``setns``, ``clone`` with namespace flags), ``io_uring``
(which could reach sockets around the filter), System V IPC and POSIX message queues, a
list of host-administration calls, and sockets of any family but ``AF_UNIX``. ``clone3``
answers ``ENOSYS`` so that the C library falls back to ``clone``, whose flags can be checked.

It also closes the channels between sandboxes running at the same time that live on the
inodes they share (the standard library, the runtime's files): file locks (``flock``, and
``fcntl``'s record locks, leases and ``F_NOTIFY``), ``inotify``, and the page-cache
residency calls (``mincore``, ``cachestat``, ``preadv2``/``pwritev2`` with ``RWF_NOWAIT``,
``fadvise64``, ``madvise``'s ``MADV_COLD``/``MADV_PAGEOUT``); and it refuses
``sched_setaffinity``, so a program stays on its worker's CPU. ARC programs need none of
these.

Only x86_64 is supported; elsewhere ``install`` returns ``False`` and the supervisor reports
``seccomp_filter`` as missing instead of guessing syscall numbers.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0 = 16  # low 32 bits of args[0] (little-endian); args[k] at 16 + 8 * k

AF_UNIX = 1
CLONE_NAMESPACE_FLAGS = 0x7E020000  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET

# Syscalls denied outright, by name, with their x86_64 numbers.
DENIED_X86_64: dict[str, int] = {
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "pidfd_getfd": 438,
    # Memory no rlimit counts (never mapped, so outside RLIMIT_AS; no cgroup on the process
    # backend, and in a container it is charged to the supervisor's cgroup).
    "memfd_create": 319, "memfd_secret": 447,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320,
    "mount": 165, "umount2": 166, "pivot_root": 155, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "unshare": 272, "setns": 308,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67,
    "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
    "open_by_handle_at": 304, "name_to_handle_at": 303,
    "chroot": 161, "acct": 163, "reboot": 169, "swapon": 167, "swapoff": 168,
    "syslog": 103, "sethostname": 170, "setdomainname": 171, "settimeofday": 164,
    "clock_settime": 227, "adjtimex": 159, "clock_adjtime": 305, "quotactl": 179,
    "personality": 135, "fanotify_init": 300, "iopl": 172, "ioperm": 173, "uselib": 134,
    "lookup_dcookie": 212, "vhangup": 153,
    # Channels through shared inodes and the page cache; a CPU of another worker.
    "flock": 73, "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294,
    "fanotify_mark": 301, "mincore": 27, "cachestat": 451, "fadvise64": 221,
    "sched_setaffinity": 203,
}  # fmt: skip
F_LOCK_COMMANDS = (
    5, 6, 7,  # F_GETLK, F_SETLK, F_SETLKW
    36, 37, 38,  # F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
    1024, 1025, 1026,  # F_SETLEASE, F_GETLEASE, F_NOTIFY
)  # fmt: skip
"""``fcntl`` commands denied: every lock is state on a shared inode another sandbox sees."""
MADV_EVICT = (20, 21)
"""``madvise`` advice denied: ``MADV_COLD`` and ``MADV_PAGEOUT`` evict file pages."""
RWF_NOWAIT = 0x8
"""``preadv2``/``pwritev2`` flag denied: it tells whether a file's page is cached."""
# (syscall, argument, values denied): the argument's low 32 bits (every one is an int).
_DENIED_VALUES_X86_64 = ((72, 1, F_LOCK_COMMANDS), (28, 2, MADV_EVICT))
# (syscall, argument, flags of which any is denied)
_DENIED_FLAGS_X86_64 = ((327, 5, RWF_NOWAIT), (328, 5, RWF_NOWAIT))
_SOCKET_X86_64 = (41, 53)  # socket, socketpair: AF_UNIX only
_CLONE_X86_64 = 56
_CLONE3_X86_64 = 435


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def supported() -> bool:
    """Return whether this machine's architecture has a filter here (x86_64 only)."""
    return platform.machine() in ("x86_64", "AMD64")


def build_x86_64() -> list[tuple[int, int, int, int]]:
    """Return the filter program as ``(code, jt, jf, k)`` instructions.

    Layout: check the architecture (anything else is killed), refuse the x32 ABI, then one
    comparison per denied number, then the argument checks for ``socket``, ``socketpair``,
    ``fcntl``, ``madvise``, ``preadv2``, ``pwritev2`` and ``clone``, then allow.
    """
    deny = _RET_ERRNO | errno.EPERM
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, _OFF_ARCH),
        (_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _OFF_NR),
        (_JGE_K, 0, 1, _X32_SYSCALL_BIT),
        (_RET_K, 0, 0, deny),
    ]
    for number in sorted(set(DENIED_X86_64.values())):
        prog += [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, deny)]
    prog += [(_JEQ_K, 0, 1, _CLONE3_X86_64), (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    for number in _SOCKET_X86_64:
        prog += [
            (_JEQ_K, 0, 4, number),
            (_LD_W_ABS, 0, 0, _OFF_ARG0),
            (_JEQ_K, 0, 1, AF_UNIX),
            (_RET_K, 0, 0, _RET_ALLOW),
            (_RET_K, 0, 0, _RET_ERRNO | errno.EAFNOSUPPORT),
        ]
    for number, arg, values in _DENIED_VALUES_X86_64:
        m = len(values)
        prog += [(_JEQ_K, 0, m + 3, number), (_LD_W_ABS, 0, 0, _OFF_ARG0 + 8 * arg)]
        prog += [(_JEQ_K, m - i, 0, value) for i, value in enumerate(values)]
        prog += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, deny)]
    for number, arg, flags in _DENIED_FLAGS_X86_64:
        prog += [
            (_JEQ_K, 0, 4, number),
            (_LD_W_ABS, 0, 0, _OFF_ARG0 + 8 * arg),
            (_JSET_K, 1, 0, flags),
            (_RET_K, 0, 0, _RET_ALLOW),
            (_RET_K, 0, 0, deny),
        ]
    prog += [
        (_JEQ_K, 0, 3, _CLONE_X86_64),
        (_LD_W_ABS, 0, 0, _OFF_ARG0),
        (_JSET_K, 0, 1, CLONE_NAMESPACE_FLAGS),
        (_RET_K, 0, 0, deny),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return prog


def encode(prog: list[tuple[int, int, int, int]]) -> bytes:
    """Return the instructions as the kernel's ``struct sock_filter`` array."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


_prepared: tuple[ctypes.CDLL, _SockFprog, ctypes.Array[_SockFilter]] | None = None
"""The C library, the ``struct sock_fprog`` and the instruction array it points to (kept
alive with it), once :func:`prepare` has built them."""


def prepare() -> bool:
    """Build the filter and bind the C library once (the zygote does, so programs inherit it).

    Returns:
        Whether a filter exists for this machine.
    """
    global _prepared
    if _prepared is None and supported():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return False
        prog = build_x86_64()
        array = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
        _prepared = (libc, _SockFprog(len(prog), array), array)
    return _prepared is not None


def install() -> bool:
    """Install the filter on the calling thread (sets ``no_new_privs``; irreversible).

    Returns:
        Whether the filter is in force.
    """
    if not prepare():
        return False
    assert _prepared is not None
    libc, fprog, _array = _prepared
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    rc: int = libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    return rc == 0
