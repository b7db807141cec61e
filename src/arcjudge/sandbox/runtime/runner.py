"""The trusted supervisor that runs untrusted programs (standard library only).

Started by a sandbox backend as ``python -I runner.py [--preload a,b] [--no-isolation]
[--scrub DIRS]`` with an empty environment. It talks to the harness over stdin/stdout in
length-prefixed JSON frames (see ``framing.py``) and never receives expected outputs.

At start the supervisor imports what programs commonly need and forks the *zygote*
(``zygote.py``) before reading any request: every program is forked from that clean
process, never from the supervisor, so no program can find an earlier job's request,
inputs or replies in its memory. For each ``run`` request the supervisor asks the zygote
for a fresh program process, sends it its job over its own pipe, waits for the
program's ``ready`` (its sandbox is set up: every failure before it is ``infra``, every
failure after it is the program's), then sends one input at a time, each with its own
deadline from when it is sent. Deadlines are enforced from outside with SIGKILL, and after
every program the zygote kills and reaps every process the program started.

When started as root on Linux the supervisor also puts itself in fresh network, IPC and
mount namespaces (no network at all; the whole file tree read-only), and gives each
program a fresh PID namespace with its own ``/proc``, a minimal root (``rootfs.py``), a
private tmpfs as its only writable directory and a uid of its own. Every program, root or
not, is non-dumpable and runs under a seccomp syscall filter (``seccomp.py``). Whatever
cannot be set up is reported in the ``hello`` frame. The supervisor ignores SIGINT,
SIGTERM, SIGHUP and SIGPIPE.
"""

from __future__ import annotations

import base64
import errno
import itertools
import json
import os
import random
import select
import signal
import struct
import sys
import time
import traceback
from typing import TYPE_CHECKING

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
# mypy resolves the sibling modules through the package; at run time this directory is
# sys.path[0] (inserted above) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypedDict

    from . import canonical, cgroups, framing, modcode, rootfs, seccomp, zygote
    from . import isolation as iso
    from .framing import JsonObject
    from .program import Settings

    class _Output(TypedDict):
        """What a program printed: bytes in its current call, the first bytes, the cap."""

        total: int
        kept: bytes
        limit: int

else:
    import canonical
    import cgroups
    import framing
    import isolation as iso
    import modcode
    import rootfs
    import seccomp
    import zygote

del sys.path[0]

PROTOCOL = 3
ERROR_CHARS = 2000
OUTPUT_KEEP = 4096
SETUP_SECONDS = 30.0
CHILD_STATUSES = ("ok", "invalid_output", "error", "memory")
SAME = "same"
"""A variant's answer "what the base answered" (``splitstream.SAME``), on marked inputs."""
DEFAULT_PRELOAD = (
    "re",
    "math",
    "itertools",
    "functools",
    "collections",
    "copy",
    "random",
    "heapq",
    "bisect",
    "operator",
    "string",
    "typing",
    "dataclasses",
    "fractions",
    "numpy",
)
UID_RANGE = (1 << 20, 1 << 30)

_now = time.monotonic


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


class _Event:
    def __init__(self, kind: str, value: object = None) -> None:
        self.kind = kind
        self.value = value


class _Child:
    """The supervisor's view of one program process tree."""

    def __init__(self, sup: Supervisor, job: JsonObject, max_frame: int) -> None:
        self.sup = sup
        self.scratch: str | None = None
        job_r, self.job_fd = os.pipe()
        self.res_fd, res_w = os.pipe()
        self.out_fd, out_w = os.pipe()
        try:
            self.pid = sup.zygote.spawn((job_r, res_w, out_w))
        finally:
            for fd in (job_r, res_w, out_w):
                os.close(fd)
        for fd in (self.res_fd, self.out_fd, self.job_fd):
            os.set_blocking(fd, False)
        self.reader = framing.FrameReader(max_frame)
        self.pending: list[object] = []
        self.outgoing = bytearray()
        self.status: int | None = None
        self.setup = self._job_frame(job)
        self.send(self.setup)

    def _job_frame(self, job: JsonObject) -> dict[str, object]:
        iso_state = self.sup.iso
        uid = self.sup.new_uid() if iso_state.root else None
        frame = {
            "source": job["source"],
            "entry_points": job["entry_points"],
            "input_format": job["input_format"],
            "mode": job.get("mode", "transform"),
            "module_dirs": list(job["module_dirs"]),
            "limits": job["limits"],
            "uid": uid,
            "gids": [],
        }
        if job.get("op") == "variants":
            frame["variants"] = True
        module_dirs = frame["module_dirs"]
        if module_dirs:  # where the program will see them: see rootfs.enter_minimal_root
            visible = [
                f"{rootfs.MODULES}/{k}" if iso_state.namespaced else path
                for k, path in enumerate(module_dirs)
            ]
            frame["module_code"] = self.sup.module_code.for_job(
                base64.b64decode(str(job["source"])), module_dirs, visible
            )
        if iso_state.namespaced:
            frame["workdir"] = rootfs.WORKDIR
        else:
            import tempfile

            self.scratch = tempfile.mkdtemp(prefix="arcjudge-")
            if uid is not None and not iso_state.userns:
                os.chown(self.scratch, uid, uid)
                frame["gids"] = _module_groups(frame["module_dirs"])
            frame["workdir"] = self.scratch
        return frame

    def send(self, obj: object) -> None:
        """Queue a frame for the program (written while waiting for its answer)."""
        self.send_bytes(framing.encode(obj))

    def send_bytes(self, frames: bytes) -> None:
        """Queue frames already encoded (``framing.encode``) and write what the pipe takes."""
        self.outgoing += frames
        self.flush()

    def flush(self) -> None:
        """Write as much of the queued bytes as the pipe takes."""
        while self.outgoing and self.job_fd >= 0:
            try:
                n = os.write(self.job_fd, self.outgoing)
            except BlockingIOError:
                return
            except OSError:  # the program is gone; its fate says why
                self.outgoing.clear()
                return
            del self.outgoing[:n]

    def kill(self) -> int:
        """Kill the whole tree, reap it and release its resources; return processes left."""
        for target in (-self.pid, self.pid):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        left = self.sup.zygote.clean(self.pid)
        for fd in (self.res_fd, self.out_fd, self.job_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.res_fd = self.out_fd = self.job_fd = -1
        if self.scratch:
            _remove_tree(self.scratch)
            self.scratch = None
        return left

    def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the program's first process to end on its own."""
        if self.status is None:
            self.status = self.sup.zygote.exit_status(self.pid, seconds)
        return self.status


def _answers(msg: object, index: int) -> bool:
    """Whether a frame is the program's answer to input ``index`` (checked in full later)."""
    return isinstance(msg, dict) and msg.get("k") == "out" and msg.get("i") == index


_TO_DIGITS = bytes.maketrans(bytes(range(10)), b"0123456789")


def _input_frame(index: int, item: object, mode: str | None) -> dict[str, object]:
    """The frame carrying one input; grids of cells 0..9 travel as a digit string.

    The harness sends grids in their wire form ``[width, digits]`` (``canonical.to_wire``)
    and anything else (generator calls, grids outside 0..9) as plain JSON.
    """
    if mode != "generate" and type(item) is list and len(item) == 2 and type(item[0]) is int:
        return {"i": index, "w": item[0], "c": item[1]}
    if mode != "generate" and isinstance(item, list) and item and isinstance(item[0], list):
        width = len(item[0])
        try:
            flat = bytes(itertools.chain.from_iterable(item))
        except (TypeError, ValueError):
            flat = None
        if (
            flat is not None
            and width
            and len(flat) == width * len(item)
            and all(len(row) == width for row in item)
            and max(flat) <= 9
        ):
            return {"i": index, "w": width, "c": flat.translate(_TO_DIGITS).decode("ascii")}
    return {"i": index, "x": item}


_INPUT_FRAME = b'{"i":%d,"w":%d,"c":"%s"}'
_pack_header = struct.Struct(">I").pack


def _input_bytes(index: int, item: object, mode: str | None) -> bytes:
    """The encoded frame of :func:`_input_frame` (the same bytes), built without JSON.

    A grid's wire form ``[width, digits]`` is formatted directly; anything else is
    encoded as JSON.
    """
    if mode != "generate" and type(item) is list and len(item) == 2:
        width, digits = item
        if type(width) is int and type(digits) is str and digits.isascii() and digits.isdigit():
            payload = _INPUT_FRAME % (index, width, digits.encode("ascii"))
            return _pack_header(len(payload)) + payload
    return framing.encode(_input_frame(index, item, mode))


def _module_groups(module_dirs: list[str]) -> list[int]:
    """Groups that open the module directories to a program: each one's closed parent's."""
    gids = set()
    for path in module_dirs:
        try:
            st = os.stat(os.path.dirname(os.path.abspath(path)))
        except OSError:
            continue
        if not st.st_mode & 0o001 and st.st_mode & 0o010 and st.st_gid:
            gids.add(st.st_gid)
    return sorted(gids)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
REMOVE_SECONDS = 30.0


def _remove_tree(path: str) -> None:
    """Delete a directory tree a program left, however deep; never raises.

    Iterative and descriptor-relative, holding one directory open at a time (a program can
    make trees deeper than the recursion limit and longer than ``PATH_MAX``); symlinks are
    removed, never followed. Gives up on what it cannot remove within ``REMOVE_SECONDS``.
    """
    try:
        parent = os.open(os.path.dirname(os.path.abspath(path)), _DIR_FLAGS)
    except OSError:
        return
    try:
        _remove_below(parent, os.path.basename(path), _now() + REMOVE_SECONDS)
    except Exception:  # nothing a program left may stop the supervisor
        pass
    finally:
        os.close(parent)


def _remove_below(parent: int, name: str, deadline: float) -> None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return
    names: list[str] = []  # the directories below ``name`` that ``fd`` is in, top first
    stuck: set[tuple[int, str]] = set()  # (depth, name) of directories we cannot enter
    try:
        while _now() < deadline:
            try:
                os.fchmod(fd, 0o700)
            except OSError:
                pass
            child = None
            with os.scandir(fd) as entries:
                listed = list(entries)
            for entry in listed:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if (len(names), entry.name) not in stuck:
                            child = entry.name
                            break
                    else:
                        os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    pass
            if child is not None:
                try:
                    below = os.open(child, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    stuck.add((len(names), child))
                    continue
                os.close(fd)
                fd = below
                names.append(child)
                continue
            if not names:
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            done = names.pop()
            try:
                os.rmdir(done, dir_fd=fd)
            except OSError:
                stuck.add((len(names), done))
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass


class Supervisor:
    """Serves ``run`` requests from the harness, one program at a time."""

    def __init__(
        self,
        chan_in: int,
        chan_out: int,
        isolation: bool,
        scrub: tuple[str, ...] = (),
        cpu: int | None = None,
        packages: tuple[str, ...] = rootfs.PROGRAM_PACKAGES,
    ) -> None:
        self.chan_in = chan_in
        self.chan_out = chan_out
        self.iso = Isolation(isolation, cpu, packages)
        self.scrub = scrub
        if scrub:
            self.iso.protections["scrub_between_programs"] = True
        self.harness_gone = False
        self._uids: set[int] = set()
        self._rng = random.SystemRandom()
        self.module_code = modcode.ModuleCode()
        self.zygote = zygote.Client((chan_in, chan_out), self.iso.pid1, self.iso.program_settings())
        self.iso.protections["subreaper"] = self.zygote.subreaper
        if self.iso.groups is not None:
            try:  # the zygote, so every program, in the programs' groups: none forked yet
                self.iso.groups.adopt_programs(self.zygote.pid)
            except OSError as exc:
                self.iso.lose_cgroups(f"could not move the zygote into its cgroups ({exc})")

    def new_uid(self) -> int:
        """A uid no program of this supervisor has had (random, so not across runs either)."""
        while True:
            uid = self._rng.randrange(*UID_RANGE)
            if uid not in self._uids:
                self._uids.add(uid)
                return uid

    def serve(self) -> None:
        """Answer requests until the harness closes the channel or asks us to exit."""
        framing.write_frame(
            self.chan_out,
            {
                "op": "hello",
                "protocol": PROTOCOL,
                "pid": os.getpid(),
                "python": sys.version.split()[0],
                "numpy": getattr(sys.modules.get("numpy"), "__version__", "none"),
                "protections": self.iso.protections,
                "hints": self.iso.hints,
                "cgroups": self.iso.cgroup_paths,
            },
        )
        while not self.harness_gone:
            try:
                msg = framing.read_frame(self.chan_in, 1 << 30)
            except framing.FrameError:
                return
            if msg is None or not isinstance(msg, dict) or msg.get("op") == "exit":
                return
            if msg.get("op") == "ping":
                framing.write_frame(self.chan_out, {"op": "pong"})
            elif msg.get("op") in ("run", "variants"):
                try:
                    self._limit_memory(msg)
                    reply = self.run(msg) if msg["op"] == "run" else self.run_variants(msg)
                except zygote.ZygoteGone as exc:
                    reply = {"op": "result", "status": "infra", "error": str(exc)}
                    self.harness_gone = True  # we cannot run programs any more: be replaced
                except OSError as exc:  # a set-up step of ours (the memory limit) failed
                    reply = {"op": "result", "status": "infra", "error": str(exc)}
                except Exception:  # report, never die silently
                    reply = {"op": "result", "status": "infra", "error": traceback.format_exc()}
                finally:
                    _scrub(self.scrub)
                    if not self.iso.namespaced:
                        iso.remove_sysv_ipc(None if self.iso.root else os.getuid())
                reply["id"] = msg.get("id")
                framing.write_frame(self.chan_out, reply)
            else:
                framing.write_frame(self.chan_out, {"op": "error", "error": "unknown op"})

    def _limit_memory(self, job: JsonObject) -> None:
        """Set the programs' memory group to the job's limit (all its processes together).

        Raises:
            OSError: If the kernel refuses it (the job is then ``infra``).
        """
        if self.iso.groups is not None:
            try:
                self.iso.groups.set_memory(int(job["limits"]["memory_bytes"]))
            except OSError as exc:
                raise OSError(f"could not set the programs' memory limit: {exc}") from None

    # ----------------------------------------------------------------------------------

    def _pump(self, child: _Child, deadline: float, output: _Output) -> _Event:
        """Wait for the next frame from the child, writing what is queued for it."""
        if child.pending:
            return _Event("msg", child.pending.pop(0))
        while True:
            remaining = deadline - _now()
            if remaining <= 0:
                return _Event("timeout")
            fds = [child.res_fd, self.chan_in]
            if child.out_fd >= 0:
                fds.append(child.out_fd)
            writers = [child.job_fd] if child.outgoing and child.job_fd >= 0 else []
            try:
                ready, writable, _ = select.select(fds, writers, [], remaining)
            except InterruptedError:
                continue
            if writable:
                child.flush()
            if self.chan_in in ready:
                self.harness_gone = True
                return _Event("harness_gone")
            if child.res_fd in ready:  # results first: a fast program prints right after
                try:
                    data = os.read(child.res_fd, 65536)
                except BlockingIOError:
                    data = None
                if data == b"":
                    return _Event("eof")
                if data:
                    try:
                        frames = child.reader.feed(data)
                    except framing.FrameError as exc:
                        return _Event("bad_frame", str(exc))
                    if frames:
                        child.pending.extend(frames[1:])
                        return _Event("msg", frames[0])
            if child.out_fd in ready:
                try:
                    data = os.read(child.out_fd, 65536)
                except BlockingIOError:
                    data = None
                if data == b"":
                    os.close(child.out_fd)
                    child.out_fd = -1
                elif data:
                    output["total"] += len(data)
                    keep = OUTPUT_KEEP - len(output["kept"])
                    if keep > 0:
                        output["kept"] += data[:keep]
                    if output["total"] > output["limit"]:
                        return _Event("output_limit")

    @staticmethod
    def _drain_output(child: _Child, output: _Output) -> None:
        """Collect what the program printed but the supervisor has not read yet."""
        while child.out_fd >= 0 and len(output["kept"]) < OUTPUT_KEEP:
            try:
                data = os.read(child.out_fd, 65536)
            except OSError:
                return
            if not data:
                return
            output["total"] += len(data)
            output["kept"] += data[: OUTPUT_KEEP - len(output["kept"])]

    def _fate(self, child: _Child) -> tuple[str, str]:
        """After EOF: how did the child end? Returns (status, error)."""
        status = child.wait_exit(1.0)
        if status is None:
            return "error", "the program closed its result channel"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = (
                signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            )
            if sig == signal.SIGXCPU:
                return "timeout", "CPU time limit exceeded (SIGXCPU)"
            if sig == signal.SIGKILL:
                return "memory", "killed by SIGKILL (out of memory)"
            return "crashed", f"killed by signal {name}"
        code = os.waitstatus_to_exitcode(status)
        return "error", f"the program exited (code {code}) before returning"

    def _await_ready(self, child: _Child, output: _Output) -> str | None:
        """Wait for the program's ``ready``; return why set-up failed, or ``None``."""
        ev = self._pump(child, _now() + SETUP_SECONDS, output)
        msg = ev.value if ev.kind == "msg" else None
        if isinstance(msg, dict) and msg.get("k") == "ready":
            return None
        if isinstance(msg, dict) and msg.get("k") == "setup_failed":
            return f"sandbox set-up failed: {str(msg.get('e'))[:ERROR_CHARS]}"
        if ev.kind == "harness_gone":
            return "harness went away"
        return f"sandbox set-up failed ({ev.kind})"

    def run(self, job: JsonObject) -> dict[str, object]:
        """Run one program over its inputs and return the result frame."""
        limits = job["limits"]
        wall = float(limits["wall_seconds"])
        start = _now()
        budget_end = start + float(limits["total_seconds"])
        inputs = job["inputs"]
        n = len(inputs)
        results: list[dict[str, object] | None] = [None] * n
        output: _Output = {"total": 0, "kept": b"", "limit": int(limits["output_bytes"])}
        max_frame = int(limits["output_bytes"]) + 65536
        entry = None
        loaded = False
        next_i = 0

        def finish(status: str, error: str | None = None) -> dict[str, object]:
            kept = output["kept"].decode("utf-8", "replace")
            return {
                "op": "result",
                "status": status,
                "error": error,
                "entry": entry,
                "results": results if status == "loaded" else [],
                "output": kept,
                "seconds": _now() - start,
            }

        while not loaded or next_i < n:
            if _now() >= budget_end:
                for i in range(next_i, n):
                    results[i] = {"s": "timeout", "e": "not run: total budget exhausted", "t": 0.0}
                break
            child = _Child(self, job, max_frame)
            try:
                problem = self._await_ready(child, output)
                if problem is not None:
                    return finish("infra", problem)
                t0 = _now()
                ev = self._pump(child, min(t0 + wall, budget_end), output)
                load = ev.value if ev.kind == "msg" else None
                if not (isinstance(load, dict) and load.get("k") == "load"):
                    error = {
                        "timeout": f"loading took longer than {wall:g} s",
                        "output_limit": "printed more than the output limit while loading",
                        "bad_frame": f"corrupted result channel while loading: {ev.value}",
                        "harness_gone": "harness went away",
                    }.get(ev.kind)
                    if ev.kind == "harness_gone":
                        return finish("infra", error)
                    if error is None:
                        error = "the program ended while loading: " + self._fate(child)[1]
                    if not loaded:
                        return finish("load_error", error)
                    for i in range(next_i, n):
                        results[i] = {"s": "crashed", "e": f"reload failed: {error}", "t": 0.0}
                    break
                if load.get("ok") and load.get("entry") not in job["entry_points"]:
                    load = {"ok": False, "error": "corrupted result channel: unknown entry point"}
                if not load.get("ok"):
                    err = str(load.get("error", ""))[:ERROR_CHARS]
                    if not loaded:
                        return finish("load_error", err)
                    for i in range(next_i, n):
                        results[i] = {"s": "crashed", "e": f"reload failed: {err}", "t": 0.0}
                    break
                loaded = True
                entry = str(load.get("entry"))[:100]
                mode = job.get("mode")
                sent = _now()
                child.send_bytes(_input_bytes(next_i, inputs[next_i], mode))
                while next_i < n:
                    output["total"] = 0  # the output cap applies to each call
                    ev = self._pump(child, min(sent + wall, budget_end), output)
                    now = _now()
                    answered = ev.kind == "msg" and _answers(ev.value, next_i)
                    if answered and next_i + 1 < n:  # the next input goes out right after
                        child.send_bytes(_input_bytes(next_i + 1, inputs[next_i + 1], mode))
                    record = self._record(ev, next_i, wall, now >= budget_end, child, mode)
                    record["t"] = round(now - sent, 6)
                    results[next_i] = record
                    next_i += 1
                    sent = now
                    if ev.kind != "msg" or record.get("bad"):
                        record.pop("bad", None)
                        break
                if ev.kind == "harness_gone":
                    return finish("infra", "harness went away")
            finally:
                self._drain_output(child, output)
                if child.kill():
                    self.harness_gone = True  # processes we could not kill: be replaced
        return finish("loaded")

    def _variant_child(
        self, job: JsonObject, max_frame: int, output: _Output
    ) -> tuple[_Child | None, str | None]:
        """A fresh child with the batch's base program loaded (never called)."""
        child = _Child(self, job, max_frame)
        problem = self._await_ready(child, output)
        if problem is None:
            wall = float(job["limits"]["wall_seconds"])
            ev = self._pump(child, _now() + wall, output)
            load = ev.value if ev.kind == "msg" else None
            if ev.kind == "harness_gone":
                problem = "harness went away"
            elif not (isinstance(load, dict) and load.get("k") == "load" and load.get("ok")):
                problem = f"the base program did not load ({ev.kind})"
        if problem is not None:
            self._drain_output(child, output)
            if child.kill():
                self.harness_gone = True
            return None, problem
        return child, None

    def run_variants(self, job: JsonObject) -> dict[str, object]:
        """Run a batch of variants of one base program, each over every input.

        A child loads the base program once (the imports every variant shares), then
        runs the variants one after another, each in a fresh module namespace, one call
        at a time with a deadline of ``call_seconds`` each. After a variant that timed out
        (its remaining inputs are not run), crashed, exited, printed too much or corrupted
        the channel, or that changed the modules the variants share, the child is
        replaced; a crash or exit mid-variant continues that variant in the fresh child,
        as ``run`` does. The reply holds one result frame per variant (``run``'s fields).

        Unlike ``run``'s, a variant's inputs go out together once it has loaded (the
        variants of a batch are trusted not to be adversarial: one could read ahead);
        each call's deadline runs from the answer before it. On the inputs in the job's
        ``same`` a variant may answer ``same`` (``splitstream``: what the base answered,
        which the harness fills in); anywhere else that is a corrupted channel.
        """
        limits = job["limits"]
        wall = float(limits["wall_seconds"])
        call = min(wall, float(job.get("call_seconds") or wall))
        total = float(limits["total_seconds"])
        inputs = job["inputs"]
        n = len(inputs)
        max_frame = int(limits["output_bytes"]) + 65536
        shareable = {i for i in job.get("same") or () if type(i) is int and 0 <= i < n}
        frames = []
        for i in range(n):
            frame = _input_frame(i, inputs[i], "transform")
            if i in shareable:
                frame["m"] = 1  # the variant may answer "same as the base" (splitstream)
            frames.append(framing.encode(frame))
        start = _now()
        replies: list[dict[str, object]] = []
        child: _Child | None = None
        born = 0.0

        def drop() -> None:
            nonlocal child
            if child is not None:
                if child.kill():
                    self.harness_gone = True  # processes we could not kill: be replaced
                child = None

        try:
            for number, source in enumerate(job["variants"]):
                v_start = _now()
                budget_end = v_start + total
                output: _Output = {"total": 0, "kept": b"", "limit": int(limits["output_bytes"])}
                results: list[dict[str, object] | None] = [None] * n
                status, error, entry, shared = "loaded", None, None, None
                loaded = False
                next_i = 0
                while next_i < n or not loaded:
                    if child is not None and _now() - born > total / 2:
                        drop()  # its CPU limit counts every variant it ran: recycle it
                    if child is None:
                        child, problem = self._variant_child(job, max_frame, output)
                        born = _now()
                        if child is None:
                            if self.harness_gone:
                                return {"op": "result", "status": "infra", "error": problem}
                            status, error = "infra", problem
                            break
                    child.send({"v": number, "s": source})
                    ev = self._pump(child, min(_now() + wall, budget_end), output)
                    load = ev.value if ev.kind == "msg" else None
                    problem = None
                    if ev.kind == "harness_gone":
                        return {"op": "result", "status": "infra", "error": "harness went away"}
                    if not (isinstance(load, dict) and load.get("k") == "load"):
                        problem = {
                            "timeout": f"loading took longer than {wall:g} s",
                            "output_limit": "printed more than the output limit while loading",
                            "bad_frame": f"corrupted result channel while loading: {ev.value}",
                        }.get(ev.kind)
                        if problem is None:
                            problem = "the program ended while loading: " + self._fate(child)[1]
                        drop()
                    elif load.get("v") != number or (
                        load.get("ok") and load.get("entry") not in job["entry_points"]
                    ):
                        problem = "corrupted result channel: unknown entry point"
                        drop()
                    elif not load.get("ok"):
                        problem = str(load.get("error", ""))[:ERROR_CHARS]
                    if problem is not None:
                        if not loaded:
                            status, error = "load_error", problem
                        else:
                            for i in range(next_i, n):
                                results[i] = {"s": "crashed", "e": f"reload failed: {problem}",
                                              "t": 0.0}  # fmt: skip
                        next_i = n
                        break
                    assert isinstance(load, dict)
                    loaded = True
                    entry = str(load.get("entry"))[:100]
                    sent = _now()
                    if next_i < n:  # all at once: each answer's wait is the next call's time
                        child.send_bytes(b"".join(frames[next_i:]))
                    while next_i < n:
                        output["total"] = 0  # the output cap applies to each call
                        ev = self._pump(child, min(sent + call, budget_end), output)
                        now = _now()
                        record = self._record(ev, next_i, call, now >= budget_end, child, None,
                                              same=next_i in shareable)  # fmt: skip
                        record["t"] = round(now - sent, 6)
                        results[next_i] = record
                        next_i += 1
                        sent = now
                        if ev.kind == "harness_gone":
                            return {"op": "result", "status": "infra",
                                    "error": "harness went away"}  # fmt: skip
                        if ev.kind != "msg" or record.get("bad"):
                            record.pop("bad", None)
                            drop()
                            if ev.kind == "timeout":  # a variant stops at its first timeout
                                skipped = "not run: an earlier call timed out"
                                for i in range(next_i, n):
                                    results[i] = {"s": "timeout", "e": skipped, "t": 0.0}
                                next_i = n
                            break
                if child is not None:
                    child.send({"end": number})
                    ev = self._pump(child, _now() + wall, output)
                    end = ev.value if ev.kind == "msg" else None
                    if not (isinstance(end, dict) and end.get("k") == "end" and end.get("clean")):
                        shared = (
                            str(end.get("e"))[:ERROR_CHARS]
                            if isinstance(end, dict) and end.get("k") == "end"
                            else f"no state check after the variant ({ev.kind})"
                        )
                        drop()
                    self._drain_output_nowait(child, output)
                kept = output["kept"].decode("utf-8", "replace")
                replies.append({
                    "status": status, "error": error, "entry": entry,
                    "results": results if status == "loaded" else [], "output": kept,
                    "seconds": _now() - v_start, "shared_state": shared,
                })  # fmt: skip
        finally:
            drop()
        return {"op": "result", "status": "loaded", "variants": replies, "seconds": _now() - start}

    @staticmethod
    def _drain_output_nowait(child: _Child | None, output: _Output) -> None:
        """Collect what a live child printed so far, without waiting for more."""
        if child is None or child.out_fd < 0:
            return
        while len(output["kept"]) < OUTPUT_KEEP:
            ready, _, _ = select.select([child.out_fd], [], [], 0)
            if not ready:
                return
            try:
                data = os.read(child.out_fd, 65536)
            except OSError:
                return
            if not data:
                return
            output["total"] += len(data)
            output["kept"] += data[: OUTPUT_KEEP - len(output["kept"])]

    def _record(
        self,
        ev: _Event,
        index: int,
        wall: float,
        over_budget: bool,
        child: _Child,
        mode: str | None,
        *,
        same: bool = False,
    ) -> dict[str, object]:
        """The record of one call from what the program sent (or why it sent nothing).

        ``same``: the input is one where a variant may answer ``same`` (its base's
        answer, filled in by the harness); anywhere else that answer is a corrupted
        channel.
        """
        if ev.kind == "timeout":
            if over_budget:
                return {"s": "timeout", "e": "total budget exhausted"}
            return {"s": "timeout", "e": f"no result within {wall:g} s"}
        if ev.kind == "output_limit":
            return {"s": "output_limit", "e": "printed more than the output limit"}
        if ev.kind == "bad_frame":
            return {"s": "invalid_output", "e": f"corrupted result channel: {ev.value}"}
        if ev.kind == "harness_gone":
            return {"s": "infra", "e": "harness went away"}
        if ev.kind == "eof":
            fate, why = self._fate(child)
            return {"s": fate, "e": why}
        msg = ev.value
        if not (isinstance(msg, dict) and msg.get("k") == "out" and msg.get("i") == index):
            return {
                "s": "invalid_output",
                "e": "corrupted result channel: unexpected frame",
                "bad": 1,
            }
        status = msg.get("s")
        if status == SAME and same:
            return {"s": SAME}
        if status not in CHILD_STATUSES:
            return {"s": "invalid_output", "e": "corrupted result channel: bad status", "bad": 1}
        if status == "ok":
            grid, reason = canonical.check_wire(msg.get("g"))  # checked, never decoded here
            if grid is None:
                return {"s": "invalid_output", "e": f"corrupted result channel: {reason}", "bad": 1}
            record: dict[str, object] = {
                "s": "ok",
                "g": msg["g"],
            }  # checked: passed on in its wire form
            if ("o" in msg) != (mode == "generate"):  # a pair only, and always, from generators
                return {
                    "s": "invalid_output",
                    "e": "corrupted result channel: bad fields",
                    "bad": 1,
                }
            if "o" in msg:
                other, reason = canonical.check_wire(msg.get("o"))
                if other is None:
                    return {"s": "invalid_output", "e": f"corrupted channel: {reason}", "bad": 1}
                record["o"] = msg["o"]
            return record
        error = msg.get("e")
        return {"s": status, "e": error[:ERROR_CHARS] if isinstance(error, str) else None}


def _scrub(directories: tuple[str, ...]) -> None:
    """Delete everything inside the writable directories, so the next program sees none of it.

    Never raises: what a program left must not stop the supervisor.
    """
    for directory in directories:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(directory, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    _remove_tree(path)
                else:
                    os.unlink(path)
            except Exception:
                pass


def _preload(names: list[str]) -> list[str]:
    loaded = []
    for name in names:
        try:
            __import__(name)
            loaded.append(name)
        except Exception:
            continue
    return loaded


def pin_to_slot(slot: int) -> int | None:
    """Pin this process to the ``slot``-th CPU (modulo) of those it may use.

    Called first thing, before any import starts a thread and before the zygote is
    forked, so every thread and program after it inherits the CPU.

    Returns:
        The CPU, or ``None`` where affinity cannot be set (not Linux, or refused).
    """
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        allowed = sorted(os.sched_getaffinity(0))
        cpu = allowed[slot % len(allowed)]
        os.sched_setaffinity(0, {cpu})
    except (OSError, ValueError, IndexError):
        return None
    return cpu


def main(argv: list[str]) -> int:
    """Entry point of the supervisor.

    ``runner.py [--preload a,b] [--no-isolation] [--scrub DIRS] [--cpu-slot K]
    [--packages a,b]``.
    """
    preload = list(DEFAULT_PRELOAD)
    isolation = True
    scrub: tuple[str, ...] = ()
    cpu: int | None = None
    packages: tuple[str, ...] = rootfs.PROGRAM_PACKAGES
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--preload":
            preload = [p for p in args.pop(0).split(",") if p]
        elif arg == "--no-isolation":
            isolation = False
        elif arg == "--scrub":
            scrub = tuple(p for p in args.pop(0).split(":") if p)
        elif arg == "--cpu-slot":
            cpu = pin_to_slot(int(args.pop(0)))
        elif arg == "--packages":
            packages = tuple(p for p in args.pop(0).split(",") if p)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    chan_out = os.dup(1)
    os.dup2(2, 1)
    _preload(preload)
    json.dumps({})  # warm the encoder before forking
    base64.b64decode(b"")
    supervisor = Supervisor(0, chan_out, isolation, scrub, cpu, packages)
    try:
        supervisor.serve()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
    finally:
        supervisor.zygote.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
