"""One program process tree as the supervisor sees it, and the frames that carry inputs.

A :class:`Child` is spawned by the zygote with three pipes (its job, its results, its
output); the supervisor sends it the job frame, then inputs one at a time
(:func:`input_bytes`: a grid as a digit string, built without JSON).
"""

from __future__ import annotations

import base64
import itertools
import os
import select
import signal
import struct
import sys
from typing import TYPE_CHECKING

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
# As in runner.py: at run time this directory is sys.path[0] and siblings are imported by
# bare name (nothing here may import arcjudge); mypy resolves them through the package.
if TYPE_CHECKING:
    from typing import TypedDict

    from . import framing, rootfs
    from .framing import JsonObject
    from .removal import remove_tree
    from .runner import Supervisor

    class Output(TypedDict):
        """What a program printed: bytes in its current call, the first bytes, the cap."""

        total: int
        kept: bytes
        limit: int
else:
    import framing
    import rootfs
    from removal import remove_tree

del sys.path[0]

OUTPUT_KEEP = 4096
"""The first bytes a program printed that a result keeps (the rest is only counted)."""


class Event:
    """What waiting on a program gave: a frame, its end, a timeout, too much output."""

    def __init__(self, kind: str, value: object = None) -> None:
        self.kind = kind
        self.value = value


class Child:
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
                frame["gids"] = module_groups(frame["module_dirs"])
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
            remove_tree(self.scratch)
            self.scratch = None
        return left

    def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the program's first process to end on its own."""
        if self.status is None:
            self.status = self.sup.zygote.exit_status(self.pid, seconds)
        return self.status


def answers(msg: object, index: int) -> bool:
    """Whether a frame is the program's answer to input ``index`` (checked in full later)."""
    return isinstance(msg, dict) and msg.get("k") == "out" and msg.get("i") == index


_TO_DIGITS = bytes.maketrans(bytes(range(10)), b"0123456789")


def input_frame(index: int, item: object, mode: str | None) -> dict[str, object]:
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


def input_bytes(index: int, item: object, mode: str | None) -> bytes:
    """The encoded frame of :func:`input_frame` (the same bytes), built without JSON.

    A grid's wire form ``[width, digits]`` is formatted directly; anything else is
    encoded as JSON.
    """
    if mode != "generate" and type(item) is list and len(item) == 2:
        width, digits = item
        if type(width) is int and type(digits) is str and digits.isascii() and digits.isdigit():
            payload = _INPUT_FRAME % (index, width, digits.encode("ascii"))
            return _pack_header(len(payload)) + payload
    return framing.encode(input_frame(index, item, mode))


def module_groups(module_dirs: list[str]) -> list[int]:
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


def drain_output(child: Child, output: Output) -> None:
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


def drain_output_nowait(child: Child | None, output: Output) -> None:
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
