"""The trusted supervisor that runs untrusted programs (standard library only).

Started by a sandbox backend as ``python -I runner.py [--preload a,b] [--no-isolation]``
with an empty environment. It talks to the harness over stdin/stdout in length-prefixed
JSON frames (see ``framing.py``) and never receives expected outputs.

For each ``run`` request the supervisor forks a fresh child for the program, so nothing a
program does to its interpreter survives into the next one. The child compiles the source
(as bytes, warnings silenced), calls the entry point on a fresh copy of each input and
sends each result back over a pipe that the supervisor parses strictly with a size cap.
The supervisor enforces every deadline from outside the child and kills the child's whole
process tree on timeout, so a program that disarms SIGALRM, swallows BaseException or
loops inside a C call is still stopped on time.

When started as root on Linux the supervisor also puts itself in fresh network, IPC and
mount namespaces (no network at all; the whole file tree read-only) and gives each
program a fresh PID namespace, a private tmpfs as its only writable directory, and an
unprivileged uid. Whatever cannot be set up is reported in the ``hello`` frame.
"""

from __future__ import annotations

import base64
import builtins
import errno
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
import types
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import canonical  # noqa: E402
import framing  # noqa: E402
import isolation as iso  # noqa: E402

del sys.path[0]

PROTOCOL = 1
ERROR_CHARS = 2000
OUTPUT_KEEP = 4096
CHILD_STATUSES = ("ok", "invalid_output", "error", "memory")
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
SCRATCH = "/tmp"
RESULT_FD = 3

_now = time.monotonic


class Isolation:
    """What the supervisor managed to set up, decided once at start."""

    def __init__(self, enabled: bool) -> None:
        self.root = os.geteuid() == 0
        self.protections: dict[str, bool] = {
            "fresh_process_per_program": True,
            "rlimits": True,
            "subreaper": iso.prctl(iso.PR_SET_CHILD_SUBREAPER, 1),
            "network_namespace": False,
            "mount_namespace": False,
            "read_only_root": False,
            "private_tmp": False,
            "pid_namespace": False,
            "privilege_drop": False,
        }
        self.uid = 100000 + os.getpid()
        if self.root:
            self.protections["privilege_drop"] = True
        else:  # programs share our uid: make sure they cannot ptrace or read our memory
            self.protections["supervisor_not_dumpable"] = iso.prctl(iso.PR_SET_DUMPABLE, 0)
        if not (self.root and enabled):
            return
        flags = iso.CLONE_NEWNS | iso.CLONE_NEWNET | iso.CLONE_NEWIPC | iso.CLONE_NEWUTS
        if iso.unshare(flags):
            self.protections["network_namespace"] = True
            if iso.mount("none", "/", None, iso.MS_REC | iso.MS_PRIVATE, None):
                self.protections["mount_namespace"] = True
                self.protections["read_only_root"] = iso.make_tree_read_only("/")
        if self.protections["mount_namespace"]:
            self.protections["pid_namespace"] = self._probe_pid_namespace()
            self.protections["private_tmp"] = self.protections["pid_namespace"]

    @staticmethod
    def _probe_pid_namespace() -> bool:
        pid = os.fork()
        if pid == 0:
            ok = iso.unshare(iso.CLONE_NEWPID | iso.CLONE_NEWNS)
            if ok:
                inner = os.fork()
                if inner == 0:
                    os._exit(0 if os.getpid() == 1 else 1)
                _, status = os.waitpid(inner, 0)
                ok = os.waitstatus_to_exitcode(status) == 0
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0

    @property
    def namespaced(self) -> bool:
        """Whether programs get their own PID and mount namespaces."""
        return self.protections["pid_namespace"]


# --------------------------------------------------------------------------------------
# Child side: runs the untrusted program. Everything below `_child_main` may be poisoned
# by the program; it can only corrupt its own results, which the supervisor checks.
# --------------------------------------------------------------------------------------


_RUNNER_FILE = os.path.abspath(__file__)


def _describe(exc: BaseException) -> str:
    """The exception as text, without the runner's own frames (they differ per backend)."""
    try:
        report = traceback.TracebackException.from_exception(exc, limit=-8)
        report.stack = traceback.StackSummary.from_list(
            [f for f in report.stack if os.path.abspath(f.filename) != _RUNNER_FILE]
        )
        text = "".join(report.format())
    except BaseException:
        text = f"{type(exc).__name__} (could not format the exception)"
    return text[-ERROR_CHARS:]


def _out_of_memory(exc: MemoryError, index: int) -> dict:
    """Free what the failed call held (its frames), then describe it."""
    traceback.clear_frames(exc.__traceback__)
    exc.__traceback__ = None
    return {"k": "out", "i": index, "s": "memory", "e": f"MemoryError: {exc}"[:ERROR_CHARS]}


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # a closed or replaced stream is the program's own loss
            pass


def _fresh_input(grid: list, fmt: str) -> object:
    if fmt == "tuple":
        return tuple(tuple(row) for row in grid)
    return [list(row) for row in grid]


def _generate_one(fn: object, call: dict, index: int) -> dict:
    """Seed ``random`` and call a generator; its pair must be two grids."""
    import random

    random.seed(call["seed"])
    value = fn(**call.get("kwargs", {}))
    if type(value) is not dict or "input" not in value or "output" not in value:
        return {"k": "out", "i": index, "s": "invalid_output", "e": "not an {input, output} dict"}
    grid_in, reason_in = canonical.canonicalize(value["input"])
    grid_out, reason_out = canonical.canonicalize(value["output"])
    if grid_in is None or grid_out is None:
        reason = f"input: {reason_in}" if grid_in is None else f"output: {reason_out}"
        return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
    return {
        "k": "out",
        "i": index,
        "s": "ok",
        "g": [list(r) for r in grid_in],
        "o": [list(r) for r in grid_out],
    }


def _child_main(job: dict, first: int, workdir: str, module_paths: list[str]) -> None:
    """Load the program and run inputs ``first..`` (never returns)."""
    send = framing.write_frame
    fd = RESULT_FD
    try:
        warnings.simplefilter("ignore")
        os.chdir(workdir)
        sys.path[:0] = module_paths
        sys.argv = ["program.py"]
        source = base64.b64decode(job["source"])
        module = types.ModuleType("program")
        module.__dict__["__builtins__"] = builtins
        module.__dict__["__file__"] = os.path.join(workdir, "program.py")
        sys.modules["program"] = module
        entry_name = None
        try:
            code = compile(source, "program.py", "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException as exc:
            send(fd, {"k": "load", "ok": False, "error": _describe(exc)})
            os._exit(0)
        for name in job["entry_points"]:
            if callable(module.__dict__.get(name)):
                entry_name = name
                break
        if entry_name is None:
            tried = ", ".join(job["entry_points"])
            send(
                fd, {"k": "load", "ok": False, "error": f"no entry point defined (tried: {tried})"}
            )
            os._exit(0)
        fn = module.__dict__[entry_name]
        _flush_output()
        send(fd, {"k": "load", "ok": True, "entry": entry_name})
        fmt = job["input_format"]
        inputs = job["inputs"]
        generate = job.get("mode") == "generate"
        for index in range(first, len(inputs)):
            try:
                if generate:
                    msg = _generate_one(fn, inputs[index], index)
                else:
                    value = fn(_fresh_input(inputs[index], fmt))
                    grid, reason = canonical.canonicalize(value)
                    if grid is None:
                        msg = {"k": "out", "i": index, "s": "invalid_output", "e": reason}
                    else:
                        msg = {"k": "out", "i": index, "s": "ok", "g": [list(r) for r in grid]}
            except MemoryError as exc:
                msg = _out_of_memory(exc, index)
            except BaseException as exc:  # SystemExit and friends are errors too
                msg = {"k": "out", "i": index, "s": "error", "e": _describe(exc)}
            _flush_output()
            send(fd, msg)
        send(fd, {"k": "done"})
    except BaseException:
        pass
    os._exit(0)


def _set_limits(limits: dict, memory_baseline: int) -> None:
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
    cap(resource.RLIMIT_NOFILE, 256)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_CPU, int(limits["total_seconds"]) + 2)


def _virtual_size() -> int:
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _prepare_child(res_w: int, out_w: int, limits: dict, drop_to: int | None) -> None:
    """Wire descriptors, set limits and drop privileges in a freshly forked child."""
    os.dup2(res_w, RESULT_FD)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.closerange(RESULT_FD + 1, 1 << 16)
    for sig in (signal.SIGPIPE, signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversize writes raise OSError instead
    _set_limits(limits, _virtual_size())
    if drop_to is not None:
        os.setgroups([])
        os.setgid(drop_to)
        os.setuid(drop_to)
        iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
    else:
        iso.prctl(iso.PR_SET_DUMPABLE, 1)  # the supervisor is not; the program may be
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)
    os.environ.clear()


def _copy_readable(source: str, target: str) -> None:
    """Copy a directory the program's uid could not read, readable but root-owned."""
    import shutil

    shutil.copytree(source, target, symlinks=True)
    for root, _dirs, files in os.walk(target):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)


def _mount_program_tree(iso_state: Isolation, job: dict, limits: dict) -> list[str]:
    """In a fresh mount namespace: private tmpfs scratch and visible module directories.

    Returns:
        The module directories as the program will see them.
    """
    needed = [p for p in sys.path if p and os.path.isdir(p)]
    handles = {p: os.open(p, os.O_PATH) for p in needed}
    module_fds = []
    for path in job["module_dirs"]:
        try:
            module_fds.append(os.open(path, os.O_PATH | os.O_DIRECTORY))
        except OSError:
            module_fds.append(None)
    size = int(limits["disk_bytes"])
    if not iso.mount(
        "tmpfs", SCRATCH, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV, f"size={size},mode=0755"
    ):
        raise OSError("could not mount the scratch tmpfs")
    work = os.path.join(SCRATCH, "work")
    os.mkdir(work, 0o700)
    os.chown(work, iso_state.uid, iso_state.uid)
    hidden: set[str] = set()
    for path in needed:
        closed = iso.first_closed_ancestor(path)
        if closed and not iso.is_within(closed, SCRATCH) and closed not in hidden:
            iso.mount("tmpfs", closed, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV, "size=1m,mode=0755")
            hidden.add(closed)
    for path, handle in handles.items():
        if iso.is_within(path, SCRATCH) or any(iso.is_within(path, h) for h in hidden):
            os.makedirs(path, 0o755, exist_ok=True)
            iso.mount(f"/proc/self/fd/{handle}", path, None, iso.MS_BIND | iso.MS_REC, None)
        os.close(handle)
    visible = []
    for k, handle in enumerate(module_fds):
        if handle is None:
            continue
        target = os.path.join(SCRATCH, "modules", str(k))
        if not iso.world_readable_dir(f"/proc/self/fd/{handle}"):
            _copy_readable(f"/proc/self/fd/{handle}", target)
            visible.append(target)
            os.close(handle)
            continue
        os.makedirs(target, 0o755)
        if iso.mount(f"/proc/self/fd/{handle}", target, None, iso.MS_BIND | iso.MS_REC, None):
            iso.mount("none", target, None, iso.MS_REMOUNT | iso.MS_BIND | iso.MS_RDONLY, None)
            visible.append(target)
        os.close(handle)
    return visible


def _spawn(iso_state: Isolation, job: dict, first: int) -> tuple[int, int, int, str | None]:
    """Fork the program's process tree.

    Returns:
        (pid of the direct child, result read fd, output read fd, scratch dir to remove)
    """
    limits = job["limits"]
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe()
    scratch = None
    if not iso_state.namespaced:
        import tempfile

        scratch = tempfile.mkdtemp(prefix="arcjudge-")
        if iso_state.root:
            os.chown(scratch, iso_state.uid, iso_state.uid)
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(res_r)
            os.close(out_r)
            os.setsid()
            if iso_state.namespaced:
                iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
                if not iso.unshare(iso.CLONE_NEWPID | iso.CLONE_NEWNS | iso.CLONE_NEWIPC):
                    os._exit(70)
                modules = _mount_program_tree(iso_state, job, limits)
                inner = os.fork()
                if inner != 0:  # the middle process mirrors the program's fate
                    os.close(res_w)
                    os.close(out_w)
                    _, status = os.waitpid(inner, 0)
                    if os.WIFSIGNALED(status):
                        sig = os.WTERMSIG(status)
                        signal.signal(sig, signal.SIG_DFL)
                        os.kill(os.getpid(), sig)
                    os._exit(os.waitstatus_to_exitcode(status) & 0x7F)
                workdir = os.path.join(SCRATCH, "work")
            else:
                modules = list(job["module_dirs"])
                workdir = scratch
            _prepare_child(res_w, out_w, limits, iso_state.uid if iso_state.root else None)
            _child_main(job, first, workdir, modules)
        except BaseException:
            pass
        os._exit(71)
    os.close(res_w)
    os.close(out_w)
    for fd in (res_r, out_r):
        os.set_blocking(fd, False)
    return pid, res_r, out_r, scratch


class _Child:
    """The supervisor's view of one running program process tree."""

    def __init__(self, iso_state: Isolation, job: dict, first: int, max_frame: int) -> None:
        self.iso = iso_state
        self.pid, self.res_fd, self.out_fd, self.scratch = _spawn(iso_state, job, first)
        self.reader = framing.FrameReader(max_frame)
        self.pending: list[object] = []
        self.status: int | None = None

    def kill(self) -> None:
        """Kill the whole tree, reap it and release its resources."""
        for target in (-self.pid, self.pid):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        if self.status is None:
            try:
                _, self.status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.status = 0
        if self.iso.namespaced:
            _reap_orphans(2.0)  # the namespace's first process, handed to us as subreaper
        else:
            _reap_strays(self.iso)
        for fd in (self.res_fd, self.out_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.res_fd = self.out_fd = -1
        if self.scratch:
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the direct child to exit on its own."""
        end = _now() + seconds
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                break
            if _now() >= end:
                return None
            time.sleep(0.005)
        return self.status


def _reap_orphans(seconds: float) -> None:
    """Reap every child we have (all are dying); kill them after ``seconds``."""
    end = _now() + seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        if _now() >= end:
            for entry in os.listdir("/proc"):
                if entry.isdigit() and _parent_of(entry) == os.getpid():
                    try:
                        os.kill(int(entry), signal.SIGKILL)
                    except OSError:
                        pass
            end = _now() + seconds
        time.sleep(0.001)


def _parent_of(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return int(data[data.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError):
        return -1


def _reap_strays(iso_state: Isolation) -> None:
    """Kill processes that escaped the program's process group and were reparented to us."""
    me = os.getpid()
    for _ in range(50):
        found = False
        try:
            entries = os.listdir("/proc")
        except OSError:
            return
        for entry in entries:
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    data = fh.read()
                fields = data[data.rindex(b")") + 2 :].split()
                ppid = int(fields[1])
                uid = os.stat(f"/proc/{entry}").st_uid
            except (OSError, ValueError):
                continue
            if ppid == me or (iso_state.root and uid == iso_state.uid):
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
        if not found:
            return
        time.sleep(0.002)


class _Event:
    def __init__(self, kind: str, value: object = None) -> None:
        self.kind = kind
        self.value = value


class Supervisor:
    """Serves ``run`` requests from the harness, one program at a time."""

    def __init__(
        self, chan_in: int, chan_out: int, isolation: bool, scrub: tuple[str, ...] = ()
    ) -> None:
        self.chan_in = chan_in
        self.chan_out = chan_out
        self.iso = Isolation(isolation)
        self.scrub = scrub
        if scrub:
            self.iso.protections["scrub_between_programs"] = True
        self.harness_gone = False

    def serve(self) -> None:
        """Answer requests until the harness closes the channel or asks us to exit."""
        framing.write_frame(
            self.chan_out,
            {
                "op": "hello",
                "protocol": PROTOCOL,
                "pid": os.getpid(),
                "python": sys.version.split()[0],
                "protections": self.iso.protections,
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
            elif msg.get("op") == "run":
                try:
                    reply = self.run(msg)
                except Exception:  # report, never die silently
                    reply = {"op": "result", "status": "infra", "error": traceback.format_exc()}
                finally:
                    _scrub(self.scrub)
                    if not self.iso.namespaced:
                        iso.remove_sysv_ipc(self.iso.uid if self.iso.root else os.getuid())
                reply["id"] = msg.get("id")
                framing.write_frame(self.chan_out, reply)
            else:
                framing.write_frame(self.chan_out, {"op": "error", "error": "unknown op"})

    # ----------------------------------------------------------------------------------

    def _pump(self, child: _Child, deadline: float, output: dict) -> _Event:
        """Wait for the next frame from the child, enforcing the deadline."""
        if child.pending:
            return _Event("msg", child.pending.pop(0))
        while True:
            remaining = deadline - _now()
            if remaining <= 0:
                return _Event("timeout")
            fds = [child.res_fd, self.chan_in]
            if child.out_fd >= 0:
                fds.append(child.out_fd)
            try:
                ready, _, _ = select.select(fds, [], [], remaining)
            except InterruptedError:
                continue
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
    def _drain_output(child: _Child, output: dict) -> None:
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
        if code == 70:
            return "infra", "could not create the program's namespaces"
        return "error", f"the program exited (code {code}) before returning"

    def run(self, job: dict) -> dict:
        """Run one program over its inputs and return the result frame."""
        limits = job["limits"]
        wall = float(limits["wall_seconds"])
        start = _now()
        budget_end = start + float(limits["total_seconds"])
        inputs = job["inputs"]
        n = len(inputs)
        results: list[dict | None] = [None] * n
        output = {"total": 0, "kept": b"", "limit": int(limits["output_bytes"])}
        max_frame = int(limits["output_bytes"]) + 65536
        entry = None
        loaded = False
        next_i = 0

        def finish(status: str, error: str | None = None) -> dict:
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
            child = _Child(self.iso, job, next_i, max_frame)
            try:
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
                    if error is None:
                        error = "the program ended while loading: " + self._fate(child)[1]
                    if not loaded:
                        return finish("load_error", error)
                    for i in range(next_i, n):
                        results[i] = {"s": "crashed", "e": f"reload failed: {error}", "t": 0.0}
                    break
                if not load.get("ok"):
                    err = str(load.get("error", ""))[:ERROR_CHARS]
                    if not loaded:
                        return finish("load_error", err)
                    for i in range(next_i, n):
                        results[i] = {"s": "crashed", "e": f"reload failed: {err}", "t": 0.0}
                    break
                loaded = True
                entry = str(load.get("entry"))[:100]
                t_prev = _now()
                output["total"] = 0  # the output cap applies to each call
                while next_i < n:
                    ev = self._pump(child, min(t_prev + wall, budget_end), output)
                    now = _now()
                    record = self._record(ev, next_i, wall, now >= budget_end, child)
                    record["t"] = round(now - t_prev, 6)
                    results[next_i] = record
                    next_i += 1
                    t_prev = now
                    output["total"] = 0
                    if ev.kind != "msg" or record.get("bad"):
                        record.pop("bad", None)
                        break
                if ev.kind == "harness_gone":
                    return finish("infra", "harness went away")
            finally:
                self._drain_output(child, output)
                child.kill()
        return finish("loaded")

    def _record(
        self, ev: _Event, index: int, wall: float, over_budget: bool, child: _Child
    ) -> dict:
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
            status, error = self._fate(child)
            return {"s": status, "e": error}
        msg = ev.value
        if not (isinstance(msg, dict) and msg.get("k") == "out" and msg.get("i") == index):
            return {
                "s": "invalid_output",
                "e": "corrupted result channel: unexpected frame",
                "bad": 1,
            }
        status = msg.get("s")
        if status not in CHILD_STATUSES:
            return {"s": "invalid_output", "e": "corrupted result channel: bad status", "bad": 1}
        if status == "ok":
            grid, reason = canonical.validate_plain(msg.get("g"))
            if grid is None:
                return {"s": "invalid_output", "e": f"corrupted result channel: {reason}", "bad": 1}
            record = {"s": "ok", "g": [list(r) for r in grid]}
            if "o" in msg:
                other, reason = canonical.validate_plain(msg.get("o"))
                if other is None:
                    return {"s": "invalid_output", "e": f"corrupted channel: {reason}", "bad": 1}
                record["o"] = [list(r) for r in other]
            return record
        error = msg.get("e")
        return {"s": status, "e": error[:ERROR_CHARS] if isinstance(error, str) else None}


def _scrub(directories: tuple[str, ...]) -> None:
    """Delete everything inside the writable directories, so the next program sees none of it."""
    import shutil

    def force(func: object, path: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
        except OSError:
            pass
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass

    for directory in directories:
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(directory, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, onerror=force)
            else:
                try:
                    os.unlink(path)
                except OSError:
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


def main(argv: list[str]) -> int:
    """Entry point: ``runner.py [--preload a,b,c] [--no-isolation] [--scrub /tmp:/dev/shm]``."""
    preload = list(DEFAULT_PRELOAD)
    isolation = True
    scrub: tuple[str, ...] = ()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--preload":
            preload = [p for p in args.pop(0).split(",") if p]
        elif arg == "--no-isolation":
            isolation = False
        elif arg == "--scrub":
            scrub = tuple(p for p in args.pop(0).split(":") if p)
    chan_out = os.dup(1)
    os.dup2(2, 1)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    _preload(preload)
    json.dumps({})  # warm the encoder before forking
    supervisor = Supervisor(0, chan_out, isolation, scrub)
    try:
        supervisor.serve()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
