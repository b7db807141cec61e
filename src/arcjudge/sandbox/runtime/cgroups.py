"""Limits per program, not per process: each worker's cgroups (standard library only).

``RLIMIT_AS`` bounds one process: a program that forks holds the limit once per process,
and memory the kernel keeps for it (data queued in socket and pipe buffers) is in no
process's address space at all. A memory cgroup counts all of it. At start the supervisor
makes, below the cgroups it was started in (``/proc/self/cgroup``), one group per worker:

- ``memory``: ``arcjudge-PID`` holds the zygote and so every program it forks (children
  inherit their cgroup: no program is ever moved, which costs nothing per program); its
  limit is set for each job to the job's ``memory_bytes`` plus ``ZYGOTE_BYTES``. Programs
  raise their own ``oom_score_adj`` to 1000 before their code loads, so the OOM killer
  picks a program's process, never the zygote. The supervisor stays outside the group.
- ``cpu``: ``arcjudge-PID`` holds the supervisor, ``arcjudge-PID/programs`` the zygote
  and the programs. Every worker's group has the same weight, however many processes a
  program starts, and the supervisor keeps half of its own share against its program.
- ``cpuset``: ``arcjudge-PID`` holds the whole worker, restricted to the CPU the worker is
  pinned to (``startup.pin_to_slot``): affinity cannot be widened past it.

cgroup v1 (one hierarchy per controller) and v2 (one hierarchy; the groups are made below
its root, whose processes it allows, or below our own group where it is delegated to us)
are both handled. As root this always works where the controllers are mounted; without
root only where the groups we are in are ours to write (a delegated subtree). Where it
does not, :func:`make` says why and how to get one, and programs keep their rlimits only.

The groups are removed by the harness once the supervisor has exited (``remove``); groups
of supervisors that died without that are removed by the next supervisor that starts
beside them (``_remove_stale``).
"""

from __future__ import annotations

import errno
import os
import time

PREFIX = "arcjudge-"
ZYGOTE_BYTES = 64 << 20
"""What the programs' group may hold beyond a job's ``memory_bytes``: the zygote's own
pages and its page cache (small), so that a program gets its whole allowance."""
PROGRAMS = "programs"
SUPERVISOR = "supervisor"
CONTROLLERS = ("memory", "cpu", "cpuset")
HINT = (
    "run the harness as root, or from a cgroup delegated to its user (cgroup v2: "
    "systemd-run --user --scope -p Delegate=yes arcjudge ...; cgroup v1: a directory in "
    "each of the memory, cpu and cpuset hierarchies owned by that user, with the harness "
    "in it); or use the docker backend, whose container has a memory limit"
)


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read().strip()


def _mounts() -> dict[str, tuple[str, str]]:
    """Mounted hierarchies: ``{controller or "unified": (mount point, its root)}``."""
    found: dict[str, tuple[str, str]] = {}
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            sep = fields.index("-")
            fstype, options = fields[sep + 1], fields[sep + 3].split(",")
            root, point = fields[3], fields[4]
            if fstype == "cgroup2":
                found.setdefault("unified", (point, root))
            elif fstype == "cgroup":
                for option in options:
                    if option in CONTROLLERS:
                        found.setdefault(option, (point, root))
    return found


def _own_groups() -> dict[str, str]:
    """The groups this process is in: ``{controller or "unified": path in its hierarchy}``."""
    own: dict[str, str] = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, names, path = line.rstrip("\n").split(":", 2)
            if not names:
                own["unified"] = path
            for name in names.split(","):
                if name in CONTROLLERS:
                    own[name] = path
    return own


def _where(mount: tuple[str, str], path: str) -> str:
    """The directory of group ``path`` under a mount whose root is ``mount[1]``."""
    point, root = mount
    relative = path[len(root) :] if root != "/" and path.startswith(root) else path
    return os.path.join(point, relative.lstrip("/"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_stale(parent: str) -> None:
    """Remove the groups of supervisors that are gone (their processes are gone too)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = name[len(PREFIX) :]
        if name.startswith(PREFIX) and pid.isdigit() and not _alive(int(pid)):
            remove([os.path.join(parent, name)], wait_seconds=0.0)


def remove(paths: list[str], wait_seconds: float = 2.0) -> list[str]:
    """Remove groups and the groups below them, deepest first; never raises.

    Args:
        paths: Group directories (only ``arcjudge-*`` groups and their children are
            touched: a path without that component is left alone).
        wait_seconds: How long to retry a group whose processes are still exiting.

    Returns:
        The directories that could not be removed.
    """
    order: list[str] = []
    for path in paths:
        if PREFIX not in path:
            continue
        for top, dirs, _files in os.walk(path, topdown=False):
            order.extend(os.path.join(top, d) for d in dirs)
        order.append(path)
    left: list[str] = []
    end = time.monotonic() + wait_seconds
    for path in order:
        while True:
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() >= end:
                    left.append(path)
                    break
                time.sleep(0.02)
    return left


class WorkerGroups:
    """One worker's cgroups (see the module's text); made by :func:`make`."""

    def __init__(
        self,
        v2: bool,
        made: list[str],
        memory: str,
        worker_cpu: list[str],
        programs: list[str],
        mount_points: list[str],
    ) -> None:
        self.v2 = v2
        self.made = made  # top-level groups we made (what ``remove`` takes)
        self.mount_points = mount_points  # the hierarchies' mounts (kept writable for us)
        self.memory = memory  # the programs' memory group
        self.worker = worker_cpu  # groups the supervisor joins (cpu, cpuset)
        self.programs = programs  # groups the zygote joins (memory, cpu)
        self._limit: int | None = None

    @property
    def paths(self) -> list[str]:
        """The top-level directories to remove once the supervisor is gone."""
        return list(self.made)

    def join_worker(self) -> None:
        """Move this process (the supervisor, before it forks the zygote) into its groups."""
        for path in self.worker:
            _write(os.path.join(path, "cgroup.procs"), "0")

    def adopt_programs(self, pid: int) -> None:
        """Move the zygote (``pid``) into the programs' groups, before it forks any."""
        for path in self.programs:
            _write(os.path.join(path, "cgroup.procs"), str(pid))

    def set_memory(self, memory_bytes: int) -> None:
        """Limit the programs' group to ``memory_bytes`` (plus ``ZYGOTE_BYTES``).

        Raises:
            OSError: If the kernel refuses the limit.
        """
        limit = memory_bytes + ZYGOTE_BYTES
        if limit == self._limit:
            return
        if self.v2:
            _write(os.path.join(self.memory, "memory.max"), str(limit))
            swap = os.path.join(self.memory, "memory.swap.max")
            if os.path.exists(swap):
                _write(swap, "0")
        else:
            memsw = os.path.join(self.memory, "memory.memsw.limit_in_bytes")
            plain = os.path.join(self.memory, "memory.limit_in_bytes")
            # memory+swap may never be below memory: raise it first, lower it last (a new
            # group starts unlimited: every first limit lowers it)
            raising = self._limit is not None and limit > self._limit
            order = [memsw, plain] if raising else [plain, memsw]
            for path in order:
                if os.path.exists(path):
                    _write(path, str(limit))
        self._limit = limit


def make(cpu: int | None) -> tuple[WorkerGroups | None, str | None]:
    """Make this worker's groups and move this process into its own.

    Args:
        cpu: The CPU the worker is pinned to (``None``: not pinned; the cpuset then is
            its parent's).

    Returns:
        The groups, or ``None`` and why not (with how to get them).
    """
    try:
        mounts = _mounts()
        own = _own_groups()
    except (OSError, ValueError, IndexError) as exc:
        return None, f"cannot read this process's cgroups ({exc}); {HINT}"
    name = f"{PREFIX}{os.getpid()}"
    made: list[str] = []
    try:
        if all(c in mounts and c in own for c in CONTROLLERS):
            groups = _make_v1(mounts, own, name, cpu, made)
        elif "unified" in mounts and "unified" in own:
            groups = _make_v2(mounts["unified"], own["unified"], name, cpu, made)
        else:
            return None, f"no memory, cpu and cpuset cgroup controllers are mounted; {HINT}"
        groups.join_worker()
    except OSError as exc:
        remove(made, wait_seconds=0.0)
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        return None, f"cannot make this worker's cgroups: {reason}{where}; {HINT}"
    return groups, None


def _cpus_of(path: str, cpu: int | None) -> str:
    """The cpuset a worker gets: its pinned CPU, else what its parent has."""
    if cpu is not None:
        return str(cpu)
    for name in ("cpuset.cpus.effective", "cpuset.effective_cpus", "cpuset.cpus"):
        try:
            return _read(os.path.join(path, name))
        except OSError:
            continue
    raise OSError(errno.ENOENT, "no cpuset.cpus", path)


def _make_v1(
    mounts: dict[str, tuple[str, str]],
    own: dict[str, str],
    name: str,
    cpu: int | None,
    made: list[str],
) -> WorkerGroups:
    parents = {c: _where(mounts[c], own[c]) for c in CONTROLLERS}
    tops = {}
    for controller, parent in parents.items():
        _remove_stale(parent)
        top = os.path.join(parent, name)
        os.mkdir(top)
        made.append(top)
        tops[controller] = top
    cpuset = tops["cpuset"]
    _write(
        os.path.join(cpuset, "cpuset.mems"), _read(os.path.join(parents["cpuset"], "cpuset.mems"))
    )
    _write(os.path.join(cpuset, "cpuset.cpus"), _cpus_of(parents["cpuset"], cpu))
    programs_cpu = os.path.join(tops["cpu"], PROGRAMS)
    os.mkdir(programs_cpu)
    return WorkerGroups(
        False,
        made,
        memory=tops["memory"],
        worker_cpu=[tops["cpu"], cpuset],
        programs=[tops["memory"], programs_cpu],
        mount_points=sorted({mounts[c][0] for c in CONTROLLERS}),
    )


def _make_v2(
    mount: tuple[str, str], own: str, name: str, cpu: int | None, made: list[str]
) -> WorkerGroups:
    point = mount[0]
    # Controllers can be handed down only by a group without processes of its own, or by
    # the root: as root, below the root; else below our own group, if it is delegated.
    parent = point if os.geteuid() == 0 else _where(mount, own)
    wanted = " ".join(f"+{c}" for c in CONTROLLERS)
    enabled = set(_read(os.path.join(parent, "cgroup.subtree_control")).split())
    if not set(CONTROLLERS) <= enabled:
        _write(os.path.join(parent, "cgroup.subtree_control"), wanted)
    _remove_stale(parent)
    top = os.path.join(parent, name)
    os.mkdir(top)
    made.append(top)
    _write(os.path.join(top, "cgroup.subtree_control"), wanted)
    _write(os.path.join(top, "cpuset.cpus"), _cpus_of(parent, cpu))
    supervisor = os.path.join(top, SUPERVISOR)
    programs = os.path.join(top, PROGRAMS)
    os.mkdir(supervisor)
    os.mkdir(programs)
    return WorkerGroups(
        True, made, memory=programs, worker_cpu=[supervisor], programs=[programs],
        mount_points=[point],
    )  # fmt: skip
