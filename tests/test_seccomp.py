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
