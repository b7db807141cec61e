"""What a program process does to itself before its code loads (standard library only).

Runs in the program process forked by the zygote (``program.py``), before its ``ready``
frame: puts its pipes at their descriptors, makes it the OOM killer's first choice, and
sets up its sandbox (namespaces, minimal root, limits, a uid of its own, not dumpable,
syscall filter). Any failure here is the sandbox's (:class:`SetupFailed`), never the
program's.
"""

from __future__ import annotations

import fcntl
import os
import resource
import signal
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from typing import TypedDict

    from . import isolation as iso
    from . import pinned, rootfs, seccomp
    from .framing import JsonObject

    class Settings(TypedDict):
        """What every program's set-up needs and no job changes (see :func:`setup`)."""

        namespaced: bool
        userns: bool
        root_plan: rootfs.RootPlan | None
        seccomp: bool

else:
    import isolation as iso
    import pinned
    import rootfs
    import seccomp

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

RESULT_FD = 3
JOB_FD = 4
MAX_OPEN_FILES = 64
"""Descriptors per process: also what bounds the socket buffers a process can fill."""


def _set_limits(limits: JsonObject, memory_baseline: int) -> None:
    def cap(which: int, value: int) -> None:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            pass

    cap(resource.RLIMIT_AS, memory_baseline + int(limits["memory_bytes"]))
    cap(resource.RLIMIT_NPROC, int(limits["processes"]))
    cap(resource.RLIMIT_FSIZE, int(limits["disk_bytes"]))
    cap(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_CPU, int(limits["total_seconds"]) + 2)
    cap(resource.RLIMIT_MSGQUEUE, 0)
    cap(resource.RLIMIT_MEMLOCK, 0)


def _virtual_size() -> int:
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class SetupFailed(Exception):
    """The sandbox could not be set up for this program (the sandbox's fault, not its)."""


def wire_descriptors(job_r: int, res_w: int, out_w: int) -> None:
    """Put the three pipes at fds 4, 3, 1/2, /dev/null at 0, and close everything else."""
    hi = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in (job_r, res_w, out_w)]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(hi[2], 1)
    os.dup2(hi[2], 2)
    os.dup2(hi[1], RESULT_FD)
    os.dup2(hi[0], JOB_FD)
    os.closerange(JOB_FD + 1, 1 << 16)


def _enter_own_user_namespace(job: JsonObject, namespaced: bool) -> None:
    """Without root: become the job's uid in a user namespace of the program's own.

    Without a minimal root of its own (the host's ``/proc`` is read-only here) the
    program stays root of the supervisor's user namespace, with no capabilities.
    """
    problem = None
    if namespaced:
        iso.prctl(iso.PR_SET_DUMPABLE, 1)  # else /proc/self/uid_map is not ours to write
        problem = iso.enter_nested_user_namespace(int(job["uid"]))
        iso.prctl(iso.PR_SET_DUMPABLE, 0)
    if problem is not None:
        raise SetupFailed(f"could not create the program's user namespace ({problem})")
    if not iso.drop_capabilities():
        raise SetupFailed("could not drop the program's capabilities")


def _drop_privileges(job: JsonObject, userns: bool) -> None:
    uid = job.get("uid")
    if uid is not None and not userns:
        gids = [int(g) for g in job.get("gids", [])]
        os.setgroups(gids)
        os.setresgid(int(uid), int(uid), int(uid))
        os.setresuid(int(uid), int(uid), int(uid))
        if os.getuid() != int(uid) or os.geteuid() != int(uid):
            raise SetupFailed("could not drop privileges")
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)  # cleared by the uid change: set again
    if not iso.prctl(iso.PR_SET_DUMPABLE, 0):
        raise SetupFailed("could not make the program non-dumpable")
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)


def setup(job: JsonObject, settings: Settings) -> str:
    """Set up the sandbox in this process; return the program's working directory.

    ``settings`` is what every program shares (``namespaced``, ``userns``, ``root_plan``,
    ``seccomp``), inherited from the zygote; ``job`` is this program's own.

    In namespaced mode this process is PID 1 of a PID namespace of its own (the zygote
    forked it there); it makes its mount and IPC namespaces and builds its minimal root.
    Without root (``userns``: the supervisor is root of a user namespace that
    maps only its caller) the program then moves into a user namespace of its own, as the
    job's uid, and drops every capability.
    """
    limits = job["limits"]
    workdir = str(job["workdir"])
    userns = bool(settings.get("userns"))
    if settings["namespaced"]:  # the zygote forked us as PID 1 of a PID namespace of ours
        root_plan = settings["root_plan"]
        assert root_plan is not None  # namespaced means the supervisor made a plan
        iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getpid() != 1 or not iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWIPC):
            raise SetupFailed("could not create the program's namespaces")
        try:
            job["module_dirs"] = rootfs.enter_minimal_root(
                root_plan,
                job["module_dirs"],
                int(limits["disk_bytes"]),
                0 if userns else int(job["uid"]),  # userns: the program's id maps to our 0
            )
        except OSError as exc:
            raise SetupFailed(f"could not build the program's root: {exc}") from None
    for sig in (signal.SIGPIPE, signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversize writes raise OSError instead
    if userns:  # first: the process limit then counts this namespace's processes only
        _enter_own_user_namespace(job, settings["namespaced"])
    _set_limits(limits, _virtual_size())
    _drop_privileges(job, userns)
    os.chdir(workdir)
    if settings["seccomp"] and not seccomp.install():
        raise SetupFailed("could not install the syscall filter")
    os.environ.clear()
    os.environ.update({"TMPDIR": workdir, "HOME": workdir})
    return workdir


OOM_SCORE_ADJ = 1000
"""The OOM killer's first choice: a program's processes, never the supervisor or zygote
that share its memory cgroup or container (raising it needs no privilege; lowering does)."""


def first_for_the_oom_killer() -> None:
    """Raise this process's ``oom_score_adj`` (its children inherit it).

    A non-dumpable process's ``/proc/self`` files belong to the host's root: in a user
    namespace the process is made dumpable for the write (no program code has run yet,
    and no other program can see this process).
    """
    iso.prctl(iso.PR_SET_DUMPABLE, 1)
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(OOM_SCORE_ADJ))
    except OSError as exc:
        raise SetupFailed(f"could not raise the program's oom_score_adj ({exc})") from None
    finally:
        iso.prctl(iso.PR_SET_DUMPABLE, 0)
