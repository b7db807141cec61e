"""The zygote: a clean fork point for programs (standard library only).

The supervisor forks the zygote at start, after importing what programs commonly need and
before reading its first request, so the zygote has never held any job's request, input,
output or reply, and never will: it receives only "fork now" with three pipe ends (as
``SCM_RIGHTS``), never data. Every program is forked from it; the program then reads its
own job from its own pipe. Whatever a program finds in its memory is therefore the
zygote's clean state plus its own job, nothing of any earlier job, generator or verifier.

The zygote is also the programs' subreaper and their undertaker: ``clean`` kills every
process a program started, however deep or detached, and reaps until none is left. In a
container where the supervisor is PID 1 it does so with ``kill(-1, SIGKILL)`` (every
process of the container but PID 1 and itself); with a PID namespace per program, the
namespace dies with its first process; otherwise it kills its children until none are left.
Where the kernel refuses ``PR_SET_CHILD_SUBREAPER`` (gVisor's, for one) orphans go to PID 1
instead: in a container ``clean`` then sends ``kill(-1)`` until ``/proc`` shows no live
process but PID 1 and itself ``QUIET_SCANS`` times in a row, and the supervisor (PID 1) reaps
the dead (``Client.clean``); before each spawn it looks again, so no program starts beside
a survivor.

Messages are JSON over a ``SOCK_SEQPACKET`` pair. Supervisor -> zygote: ``{"op": "spawn"}``
with fds [job read end, result write end, output write end]; ``{"op": "clean", "pid",
"kill_all"}``. Zygote -> supervisor: ``{"pid"}`` (spawned), ``{"exit", "status"}`` (a
program's first process ended), ``{"clean", "left"}``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from . import isolation as iso
    from . import program, seccomp
    from .framing import JsonObject
    from .program_setup import Settings
else:
    import isolation as iso
    import program
    import seccomp

CLEAN_SECONDS = 5.0
SCAN_SECONDS = 0.02
QUIET_SCANS = 3
"""Empty scans in a row that end ``kill(-1)`` rounds without a subreaper (see ``_kill_orphans``)."""
QUIET_PAUSE_SECONDS = 0.002
"""The pause before the n-th empty scan is n times this (a fork in flight gets to finish)."""
NAME = "arcjudge-zygote"  # its /proc/PID/comm, so tools can tell it from a program
_MAX_MSG = 4096


def _send(sock: socket.socket, obj: dict[str, object]) -> None:
    sock.send(json.dumps(obj).encode())


def _children_of(pid: int) -> list[int]:
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                data = fh.read()
            if int(data[data.rindex(b")") + 2 :].split()[1]) == pid:
                found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


class _Server:
    def __init__(self, sock: socket.socket, pid1_mode: bool, settings: Settings) -> None:
        self.sock = sock
        self.settings = settings
        self.pid1_mode = pid1_mode and os.getppid() == 1
        self.subreaper = True  # set by start(): False where the kernel refuses it
        self.spawned: set[int] = set()
        # Namespaced: each program is forked straight into a PID namespace of its own (as
        # its PID 1), and our own is restored for the next one.
        namespaced = settings["namespaced"]
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if namespaced else -1

    def fork_program(self) -> int:
        """Fork a program's first process (PID 1 of a new PID namespace when namespaced)."""
        if self.own_pid_ns < 0:
            return os.fork()
        if not iso.unshare(iso.CLONE_NEWPID):
            raise OSError("could not create the program's PID namespace")
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid != 0 and not iso.setns(self.own_pid_ns, iso.CLONE_NEWPID):
            os._exit(1)  # never fork a later program into this one's namespace
        if pid < 0:
            raise OSError("could not fork the program")
        return pid

    def reap(self) -> None:
        """Reap every dead child; report the end of a program's first process."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            if pid in self.spawned:
                self.spawned.discard(pid)
                _send(self.sock, {"exit": pid, "status": status})

    def kill_everything(self, target: int | None, scan: bool) -> None:
        """Kill the program's tree; with ``scan``, also every child we have (strays)."""
        if self.pid1_mode:
            try:
                os.kill(-1, signal.SIGKILL)  # all but PID 1 (the supervisor) and ourselves
            except OSError:
                pass
            return
        victims = set(_children_of(os.getpid())) if scan else set()
        if target:
            victims.add(target)
            try:
                os.killpg(target, signal.SIGKILL)
            except OSError:
                pass
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def clean(self, target: int | None) -> int:
        """Kill and reap until this process has no child left; return how many are left.

        The program's own tree goes first; every ``SCAN_SECONDS`` without an end, every
        child of ours is killed too (orphans reparented to us, the subreaper).
        """
        start = time.monotonic()
        end = start + CLEAN_SECONDS
        last_scan = start
        self.kill_everything(target, scan=False)
        while True:
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    return self._kill_orphans(end)
                if not pid:
                    break
                if pid in self.spawned:
                    self.spawned.discard(pid)
                    _send(self.sock, {"exit": pid, "status": status})
            now = time.monotonic()
            if now >= end:
                return max(1, len(_children_of(os.getpid())))
            if self.pid1_mode or now - last_scan >= SCAN_SECONDS:
                self.kill_everything(target, scan=True)
                last_scan = now
            time.sleep(0.0005)

    def _kill_orphans(self, end: float) -> int:
        """Without a subreaper, in a container: ``kill(-1)`` until no orphan is alive.

        Orphans are then PID 1's children (the supervisor reaps them), not ours. Returns
        how many are still alive at ``end`` (0 with a subreaper: they were our children).
        """
        if self.subreaper or not self.pid1_mode:
            return 0
        quiet = 0
        while True:
            left = _live_others()
            if left and time.monotonic() >= end:
                return left
            quiet = 0 if left else quiet + 1
            if quiet >= QUIET_SCANS:
                return 0
            # A scan lists /proc, then reads each entry: a process that forks and exits in
            # between hides its child, and a process killed inside fork() may still finish
            # it (gVisor). So kill again even after an empty scan, and believe only
            # QUIET_SCANS empty scans in a row, each after a kill and a pause.
            self.kill_everything(None, scan=True)
            time.sleep(0.0005 if left else QUIET_PAUSE_SECONDS * quiet)

    def serve(self) -> None:
        while True:
            ready, _, _ = select.select([self.sock], [], [], 0.05)
            self.reap()
            if not ready:
                continue
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.sock, _MAX_MSG, 3)
            except OSError:
                data, fds = b"", []
            if not data:
                self.clean(None)
                return
            msg = json.loads(data)
            if msg.get("op") == "spawn" and len(fds) == 3:
                if not self.subreaper and self.pid1_mode and _live_others():
                    # Something outlived the last clean: no program runs beside it. If it
                    # cannot be killed, stop: the supervisor, left without its zygote, is
                    # replaced (and its container with everything in it).
                    if self._kill_orphans(time.monotonic() + CLEAN_SECONDS):
                        return
                pid = self.fork_program()
                if pid == 0:
                    iso.set_name("arcjudge-prog")
                    self.sock.close()
                    job_r, res_w, out_w = fds
                    program.child_entry(job_r, res_w, out_w, self.settings)
                    os._exit(0)
                self.spawned.add(pid)
                _send(self.sock, {"pid": pid})
            elif msg.get("op") == "clean":
                left = self.clean(int(msg.get("pid") or 0) or None)
                _send(self.sock, {"clean": True, "left": left})
            for fd in fds:
                os.close(fd)


def _live_others() -> int:
    """Count live processes but PID 1 and this one (a zombie is dead: its parent reaps it)."""
    me = os.getpid()
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit() or int(entry) in (1, me):
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue  # gone meanwhile
        if data[data.rindex(b")") + 2 :][:1] not in (b"Z", b"X"):
            count += 1
    return count


def start(keep: tuple[int, ...], pid1_mode: bool, settings: Settings) -> tuple[int, socket.socket]:
    """Fork the zygote (before any job has been read); return its pid and our socket end.

    Args:
        keep: Descriptors the zygote must close (the supervisor's harness channels).
        pid1_mode: Whether the supervisor is PID 1 of a namespace of its own (a container),
            so that ``kill(-1)`` reaches exactly the programs' processes.
        settings: The set-up every program shares (``program.child_entry``); fixed at
            supervisor start, never anything of a job.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    if settings["namespaced"] and settings.get("userns"):
        # The zygote returns to its own PID namespace after forking each program into a
        # new one; without root that needs a namespace our user namespace owns: its own.
        if not iso.unshare(iso.CLONE_NEWPID):
            raise OSError("could not create the zygote's PID namespace")
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            for fd in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_IGN)
            iso.set_name(NAME)
            subreaper = iso.prctl(iso.PR_SET_CHILD_SUBREAPER, 1)
            iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
            server = _Server(theirs, pid1_mode, settings)  # opens /proc/self/ns/pid: first
            server.subreaper = subreaper
            iso.prctl(iso.PR_SET_DUMPABLE, 0)
            if settings.get("seccomp"):
                seccomp.prepare()  # built once here, inherited by every program
            _send(theirs, {"started": True, "subreaper": subreaper})
            server.serve()
        except BaseException:
            pass
        os._exit(0)
    theirs.close()
    return pid, ours


class ZygoteGone(Exception):
    """The zygote stopped answering (the supervisor cannot run programs any more)."""


class Client:
    """The supervisor's handle on its zygote."""

    def __init__(self, keep: tuple[int, ...], pid1_mode: bool, settings: Settings) -> None:
        self.pid, self.sock = start(keep, pid1_mode, settings)
        self.exits: dict[int, int] = {}
        started = self._until("started", 30.0)
        self.subreaper = started.get("subreaper") is True  # checked, not assumed
        self.pid1_mode = pid1_mode

    def fileno(self) -> int:
        """The socket to select on for exit notices."""
        return self.sock.fileno()

    def _receive(self, timeout: float | None) -> JsonObject | None:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return None
        data = self.sock.recv(_MAX_MSG)
        if not data:
            raise ZygoteGone("the zygote exited")
        msg: JsonObject = json.loads(data)
        if "exit" in msg:
            self.exits[int(msg["exit"])] = int(msg["status"])
        return msg

    def _until(self, key: str, timeout: float) -> JsonObject:
        end = time.monotonic() + timeout
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise ZygoteGone(f"the zygote did not answer ({key})")
            msg = self._receive(remaining)
            if msg is not None and key in msg:
                return msg

    def spawn(self, fds: tuple[int, int, int]) -> int:
        """Fork a program process that will use the three pipe ends; return its pid."""
        try:
            socket.send_fds(self.sock, [json.dumps({"op": "spawn"}).encode()], list(fds))
        except OSError as exc:
            raise ZygoteGone(f"the zygote is gone: {exc}") from None
        return int(self._until("pid", 10.0)["pid"])

    def poll(self) -> None:
        """Collect pending exit notices without waiting."""
        while self._receive(0) is not None:
            pass

    def exit_status(self, pid: int, timeout: float) -> int | None:
        """Wait up to ``timeout`` for the program process ``pid`` to end; its wait status."""
        end = time.monotonic() + timeout
        while pid not in self.exits:
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            self._receive(remaining)
        return self.exits[pid]

    def clean(self, pid: int) -> int:
        """Kill everything the program started and reap it; return how many are left."""
        try:
            self.sock.send(json.dumps({"op": "clean", "pid": pid}).encode())
        except OSError as exc:
            raise ZygoteGone(f"the zygote is gone: {exc}") from None
        left = int(self._until("clean", CLEAN_SECONDS + 10.0)["left"])
        self.exits.pop(pid, None)
        if self.pid1_mode and not self.subreaper:
            self._reap_orphans()
        return left

    def _reap_orphans(self) -> None:
        """Reap the dead orphans a program left to us, PID 1 (never the zygote)."""
        for child in _children_of(os.getpid()):
            if child != self.pid:
                try:
                    os.waitpid(child, os.WNOHANG)
                except ChildProcessError:
                    pass

    def close(self) -> None:
        """Close the socket (the zygote cleans up and exits) and reap it."""
        self.sock.close()
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
