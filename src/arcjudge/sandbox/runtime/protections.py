"""What a supervisor sets up once, and which protections that gives its programs.

:class:`Isolation` decides at start, by trying each step (in throwaway children where a
step cannot be undone), which protections this environment gives: namespaces, a minimal
root, cgroups, seccomp, a user namespace without root. ``runner.py``'s supervisor reports
them and hands the per-program part to the zygote (:meth:`Isolation.program_settings`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
# As in runner.py: at run time this directory is sys.path[0] and siblings are imported by
# bare name (nothing here may import arcjudge); mypy resolves them through the package.
if TYPE_CHECKING:
    from collections.abc import Callable

    from . import cgroups, rootfs, seccomp
    from . import isolation as iso
    from .program_setup import Settings
else:
    import cgroups
    import isolation as iso
    import rootfs
    import seccomp

del sys.path[0]

UID_RANGE = (1 << 20, 1 << 30)
"""The uids programs run as (one each, fresh) when the supervisor is root."""


def _probe(test: Callable[[], object]) -> bool:
    """Run ``test()`` in a throwaway child; return whether it exited 0."""
    pid = os.fork()
    if pid == 0:
        try:
            ok = bool(test())
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _seccomp_works() -> bool:
    import ctypes
    import socket

    if not seccomp.install():
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    add_key = seccomp.DENIED_X86_64["add_key"]
    if libc.syscall(add_key, b"user", b"probe", b"x", 1, -3) != -1:
        return False
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
        return False
    except OSError:
        pass
    socket.socketpair()[0].close()
    return True


class Isolation:
    """What the supervisor managed to set up, decided once at start.

    Args:
        enabled: Whether to isolate at all (``--no-isolation``: off).
        cpu: The CPU this supervisor is pinned to (``None``: not pinned).
        packages: The installed packages programs may import (``rootfs.plan``).
    """

    def __init__(
        self,
        enabled: bool,
        cpu: int | None = None,
        packages: tuple[str, ...] = rootfs.PROGRAM_PACKAGES,
    ) -> None:
        self.userns = False
        self.hints: dict[str, str] = {}
        self.groups: cgroups.WorkerGroups | None = None
        self.cgroup_paths: list[str] = []  # what the harness removes once we are gone
        cgroup_problem: str | None = "isolation is off"
        if enabled and os.getpid() != 1:  # a container's supervisor has its container's
            # first, as the caller: a delegated cgroup is the caller's, not a namespace's
            self.groups, cgroup_problem = cgroups.make(cpu)
            self.cgroup_paths = self.groups.paths if self.groups is not None else []
        if enabled and os.geteuid() != 0:  # without root: root of a user namespace of ours
            problem = iso.enter_user_namespace()
            self.userns = problem is None
            if problem is not None:
                self.hints["user_namespace"] = problem
        self.root = os.geteuid() == 0
        self.pid1 = os.getpid() == 1
        self.protections: dict[str, bool] = {
            "fresh_process_per_program": True,
            "clean_fork_point": True,
            "inputs_one_at_a_time": True,
            "rlimits": True,
            "subreaper": True,
            "network_namespace": False,
            "mount_namespace": False,
            "read_only_root": False,
            "private_tmp": False,
            "pid_namespace": False,
            "fresh_proc": False,
            "minimal_root": False,
            "privilege_drop": self.root,
            "uid_per_program": self.root and not self.userns,
            "programs_not_dumpable": True,
            "kill_all_after_program": self.pid1,
            "supervisor_ignores_signals": True,
        }
        if not self.pid1:
            self.protections["memory_cgroup"] = self.groups is not None
            self.protections["cpu_cgroup"] = self.groups is not None
            if cgroup_problem is not None:
                self.hints["memory_cgroup"] = cgroup_problem
        if enabled and not self.pid1 and (self.userns or not self.root):
            self.protections["user_namespace"] = self.userns
        self.protections["seccomp_filter"] = _probe(_seccomp_works)
        self.root_plan: rootfs.RootPlan | None = None
        if not self.root:  # programs share our uid: make sure they cannot ptrace or read us
            self.protections["supervisor_not_dumpable"] = iso.prctl(iso.PR_SET_DUMPABLE, 0)
        if not (self.root and enabled):
            return
        flags = iso.CLONE_NEWNS | iso.CLONE_NEWNET | iso.CLONE_NEWIPC | iso.CLONE_NEWUTS
        if iso.unshare(flags):
            self.protections["network_namespace"] = True
            if iso.mount("none", "/", None, iso.MS_REC | iso.MS_PRIVATE, None):
                self.protections["mount_namespace"] = True
                self.protections["read_only_root"] = iso.make_tree_read_only("/")
                # /proc stays writable: a program raises its own oom_score_adj there
                # before its code loads (only a process's own files are a non-root's)
                iso.make_mount_writable("/proc")
                self._keep_cgroups_writable()
        if self.protections["mount_namespace"] and self._probe_pid_namespace():
            self.root_plan = rootfs.plan(_HERE, packages)
            ok = self._probe_minimal_root(self.root_plan)
            for key in ("pid_namespace", "private_tmp", "fresh_proc", "minimal_root"):
                self.protections[key] = ok
            self.protections["kill_all_after_program"] = ok
            if not ok:
                self.root_plan = None
                self.hints["minimal_root"] = "the probe of the per-program namespaces failed"
        if self.userns:  # each program: a user namespace of its own, no capabilities
            self.protections["user_namespace_per_program"] = self.namespaced
            # Programs are our uid on the host: never ptrace-able or readable by them (last:
            # the probes above write their own id maps, which needs us dumpable).
            self.protections["supervisor_not_dumpable"] = iso.prctl(iso.PR_SET_DUMPABLE, 0)

    def _keep_cgroups_writable(self) -> None:
        """Our cgroups' mounts stay writable in our mount namespace (limits per job).

        Programs never see them (their root is minimal) or cannot write them (their
        files are ours, and a program's uid is not).
        """
        if self.groups is not None and not all(
            iso.make_mount_writable(point) for point in self.groups.mount_points
        ):
            self.lose_cgroups("could not keep the cgroup mounts writable")

    def lose_cgroups(self, why: str) -> None:
        """Give up the cgroups (a step failed); say so in the protections."""
        if self.groups is not None:
            self.groups = None
            self.protections["memory_cgroup"] = self.protections["cpu_cgroup"] = False
            self.hints["memory_cgroup"] = f"{why}; {cgroups.HINT}"

    @staticmethod
    def _probe_pid_namespace() -> bool:
        def test() -> bool:
            if not iso.unshare(iso.CLONE_NEWPID | iso.CLONE_NEWNS):
                return False
            inner = os.fork()
            if inner == 0:
                os._exit(0 if os.getpid() == 1 else 1)
            _, status = os.waitpid(inner, 0)
            return os.waitstatus_to_exitcode(status) == 0

        return _probe(test)

    def _probe_minimal_root(self, plan: rootfs.RootPlan) -> bool:
        userns = self.userns

        def test() -> bool:
            if not iso.unshare(iso.CLONE_NEWPID | iso.CLONE_NEWNS | iso.CLONE_NEWIPC):
                return False
            inner = os.fork()
            if inner == 0:
                try:
                    rootfs.enter_minimal_root(plan, [], 1 << 20, 0)
                    ok = os.listdir("/proc").count("1") == 1 and os.path.isdir(rootfs.WORKDIR)
                    if userns:
                        ok = ok and iso.enter_nested_user_namespace(UID_RANGE[0]) is None
                        ok = ok and iso.drop_capabilities()
                except BaseException:
                    ok = False
                os._exit(0 if ok else 1)
            _, status = os.waitpid(inner, 0)
            return os.waitstatus_to_exitcode(status) == 0

        return _probe(test)

    def program_settings(self) -> Settings:
        """What every program's set-up needs and no job changes (given to the zygote once)."""
        return {
            "namespaced": self.namespaced,
            "userns": self.userns,
            "root_plan": self.root_plan,
            "seccomp": self.protections["seccomp_filter"],
        }

    @property
    def namespaced(self) -> bool:
        """Whether programs get their own PID and mount namespaces and minimal root."""
        return self.root_plan is not None
