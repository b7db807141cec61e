"""The syscall filter itself: every denied call is refused, everyday calls still work."""

from __future__ import annotations

import ctypes
import errno
import os
import socket

import pytest

from arcjudge.sandbox.runtime import seccomp

pytestmark = pytest.mark.skipif(not seccomp.supported(), reason="filter is x86_64 only")


def _in_filtered_child(check) -> int:
    """Fork, install the filter, run ``check()``; its return value is the exit code."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = 98 if not seccomp.install() else int(check())
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("name", sorted(seccomp.DENIED_X86_64))
def test_denied_syscall_fails_with_eperm(name):
    number = seccomp.DENIED_X86_64[name]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def check() -> int:
        ctypes.set_errno(0)
        result = libc.syscall(number, 0, 0, 0, 0, 0, 0)
        return 0 if result == -1 and ctypes.get_errno() == errno.EPERM else 1

    assert _in_filtered_child(check) == 0, name


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6, 40, 16, 17])
def test_sockets_other_than_unix_are_refused(family):
    def check() -> int:
        try:
            socket.socket(family, socket.SOCK_DGRAM).close()
        except OSError as exc:
            return 0 if exc.errno == errno.EAFNOSUPPORT else 2
        return 1

    assert _in_filtered_child(check) == 0


def test_namespace_flags_of_clone_are_refused_and_plain_fork_works():
    libc = ctypes.CDLL(None, use_errno=True)

    def check() -> int:
        if libc.unshare(0x10000000) != -1:  # CLONE_NEWUSER
            return 1
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 7:
            return 2
        a, b = socket.socketpair()
        a.sendall(b"x")
        if b.recv(1) != b"x":
            return 3
        import threading

        seen = []
        thread = threading.Thread(target=seen.append, args=(1,))
        thread.start()
        thread.join()
        return 0 if seen == [1] else 4

    assert _in_filtered_child(check) == 0


def test_filter_program_is_well_formed():
    prog = seccomp.build_x86_64()
    assert len(prog) < 4096
    for index, (code, jt, jf, _k) in enumerate(prog):
        if code in (0x15, 0x35, 0x45):  # conditional jumps stay inside the program
            assert index + 1 + max(jt, jf) < len(prog)
    assert prog[-1] == (0x06, 0, 0, 0x7FFF0000)  # the default is allow


def test_file_locks_on_shared_inodes_are_refused_and_other_fcntl_calls_work():
    """Record locks, OFD locks, ``flock``, leases and ``F_NOTIFY`` carry data between sandboxes."""
    import fcntl
    import struct

    def check() -> int:
        fd = os.open(os.__file__, os.O_RDONLY)  # a file every sandbox shares
        lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 1234, 1, 0)  # struct flock
        for cmd in (fcntl.F_SETLK, fcntl.F_GETLK, 37, 36, 1024, 1025, 1026):
            try:
                fcntl.fcntl(fd, cmd, lock if cmd in (fcntl.F_SETLK, fcntl.F_GETLK, 36, 37) else 0)
                return 10 + cmd % 100
            except OSError as exc:
                if exc.errno != errno.EPERM:
                    return 20
        for call in (
            lambda: fcntl.flock(fd, fcntl.LOCK_SH),
            lambda: fcntl.lockf(fd, fcntl.LOCK_SH),
        ):
            try:
                call()
                return 30
            except OSError as exc:
                if exc.errno != errno.EPERM:
                    return 31
        if fcntl.fcntl(fd, fcntl.F_GETFD) & ~fcntl.FD_CLOEXEC:  # everyday commands still work
            return 40
        fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
        os.set_blocking(fd, False)  # F_GETFL / F_SETFL
        dup = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(dup)
        return 0

    assert _in_filtered_child(check) == 0


def test_inotify_and_page_cache_probes_are_refused():
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def refused(result: int) -> bool:
        return result == -1 and ctypes.get_errno() == errno.EPERM

    def check() -> int:
        if not refused(libc.syscall(294, 0)):  # inotify_init1
            return 1
        fd = os.open(os.__file__, os.O_RDONLY)
        size = os.fstat(fd).st_size
        view = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        address = ctypes.addressof(ctypes.c_char.from_buffer_copy(b"x"))  # any address
        vec = ctypes.create_string_buffer(64)
        if not refused(libc.syscall(27, ctypes.c_void_p(address & ~4095), 4096, vec)):  # mincore
            return 2
        buf = bytearray(16)
        try:
            os.preadv(fd, [buf], 0, 0x8)  # RWF_NOWAIT: is the page cached?
            return 3
        except OSError as exc:
            if exc.errno != errno.EPERM:
                return 4
        if os.preadv(fd, [buf], 0, 0) != 16:  # without the flag it reads
            return 5
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            return 6
        except OSError as exc:
            if exc.errno != errno.EPERM:
                return 7
        try:
            view.madvise(21)  # MADV_PAGEOUT
            return 8
        except OSError as exc:
            if exc.errno != errno.EPERM:
                return 9
        view.madvise(mmap.MADV_DONTNEED)  # what allocators do still works
        view.close()
        return 0

    assert _in_filtered_child(check) == 0


def test_cpu_affinity_cannot_be_widened():
    def check() -> int:
        before = os.sched_getaffinity(0)
        try:
            os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
            return 1
        except OSError as exc:
            if exc.errno != errno.EPERM:
                return 2
        return 0 if os.sched_getaffinity(0) == before else 3

    assert _in_filtered_child(check) == 0
