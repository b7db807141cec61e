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
import json
import os
import random
import select
import signal
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
    from . import framing, modcode, rootfs, zygote
    from . import isolation as iso
    from .call_records import ERROR_CHARS, call_record, child_fate
    from .child import (
        OUTPUT_KEEP,
        Child,
        Event,
        Output,
        answers,
        drain_output,
        input_bytes,
    )
    from .framing import JsonObject
    from .protections import UID_RANGE, Isolation
    from .startup import DEFAULT_PRELOAD, pin_to_slot, preload, scrub
    from .variant_batches import run_variants

else:
    import framing
    import isolation as iso
    import modcode
    import rootfs
    import zygote
    from call_records import ERROR_CHARS, call_record, child_fate
    from child import (
        OUTPUT_KEEP,
        Child,
        Event,
        answers,
        drain_output,
        input_bytes,
    )
    from protections import UID_RANGE, Isolation
    from startup import DEFAULT_PRELOAD, pin_to_slot, preload, scrub
    from variant_batches import run_variants

del sys.path[0]

PROTOCOL = 3
SETUP_SECONDS = 30.0
_now = time.monotonic


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
                    scrub(self.scrub)
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

    def pump(self, child: Child, deadline: float, output: Output) -> Event:
        """Wait for the next frame from the child, writing what is queued for it."""
        if child.pending:
            return Event("msg", child.pending.pop(0))
        while True:
            remaining = deadline - _now()
            if remaining <= 0:
                return Event("timeout")
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
                return Event("harness_gone")
            if child.res_fd in ready:  # results first: a fast program prints right after
                try:
                    data = os.read(child.res_fd, 65536)
                except BlockingIOError:
                    data = None
                if data == b"":
                    return Event("eof")
                if data:
                    try:
                        frames = child.reader.feed(data)
                    except framing.FrameError as exc:
                        return Event("bad_frame", str(exc))
                    if frames:
                        child.pending.extend(frames[1:])
                        return Event("msg", frames[0])
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
                        return Event("output_limit")

    def await_ready(self, child: Child, output: Output) -> str | None:
        """Wait for the program's ``ready``; return why set-up failed, or ``None``."""
        ev = self.pump(child, _now() + SETUP_SECONDS, output)
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
        output: Output = {"total": 0, "kept": b"", "limit": int(limits["output_bytes"])}
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
            child = Child(self, job, max_frame)
            try:
                problem = self.await_ready(child, output)
                if problem is not None:
                    return finish("infra", problem)
                t0 = _now()
                ev = self.pump(child, min(t0 + wall, budget_end), output)
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
                        error = "the program ended while loading: " + child_fate(child)[1]
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
                child.send_bytes(input_bytes(next_i, inputs[next_i], mode))
                while next_i < n:
                    output["total"] = 0  # the output cap applies to each call
                    ev = self.pump(child, min(sent + wall, budget_end), output)
                    now = _now()
                    answered = ev.kind == "msg" and answers(ev.value, next_i)
                    if answered and next_i + 1 < n:  # the next input goes out right after
                        child.send_bytes(input_bytes(next_i + 1, inputs[next_i + 1], mode))
                    record = call_record(ev, next_i, wall, now >= budget_end, child, mode)
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
                drain_output(child, output)
                if child.kill():
                    self.harness_gone = True  # processes we could not kill: be replaced
        return finish("loaded")

    def run_variants(self, job: JsonObject) -> dict[str, object]:
        """Run a batch of variants of one base program (``variant_batches.run_variants``)."""
        return run_variants(self, job)


def main(argv: list[str]) -> int:
    """Entry point of the supervisor.

    ``runner.py [--preload a,b] [--no-isolation] [--scrub DIRS] [--cpu-slot K]
    [--packages a,b]``.
    """
    modules = list(DEFAULT_PRELOAD)
    isolation = True
    scrub: tuple[str, ...] = ()
    cpu: int | None = None
    packages: tuple[str, ...] = rootfs.PROGRAM_PACKAGES
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--preload":
            modules = [p for p in args.pop(0).split(",") if p]
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
    preload(modules)
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
