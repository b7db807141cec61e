"""One ``docker`` worker: a container whose supervisor is reached over its attached stream.

A container is created with ``StdinOnce`` (it removes itself when its owner goes away),
its stdin and stdout attached as one socket carrying docker's multiplexed stream (the
supervisor's frames on stdout; stderr is not attached), and read back after it started:
which protections are in force (:func:`container_protections`) and which OCI runtime it
runs under. A container killed for memory while a program ran is that program's failure
(:func:`out_of_memory`), read from the daemon's OOM events.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from arcjudge.sandbox.docker_daemon import container_runtime, is_gvisor
from arcjudge.sandbox.process import FrameWorker
from arcjudge.sandbox.runtime import framing
from arcjudge.sandbox.transport import WorkerLost
from arcjudge.sandbox.wire import Frame

SUPERVISOR_USER = "0:0"  # root in the container, with only the capabilities below
SUPERVISOR_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL")
_HEADER = struct.Struct(">BxxxL")


OOM_EVENT_SECONDS = 1.0
"""How long after a lost container its OOM event may still reach the daemon's log."""
OUT_OF_MEMORY = (
    "the container ran out of memory while this program ran: its processes together, "
    "kernel memory included, filled the container's limit"
)


def out_of_memory(job: Frame) -> Frame:
    """The reply a program gets whose allocations killed its container (every input)."""
    inputs = job.get("inputs")
    n = len(inputs) if isinstance(inputs, list) else 0
    return {
        "op": "result",
        "status": "loaded",
        "error": None,
        "entry": None,
        "results": [{"s": "memory", "e": OUT_OF_MEMORY, "t": 0.0} for _ in range(n)],
        "output": "",
        "seconds": 0.0,
    }


CONTAINER_PROTECTIONS = (
    "container_no_network",
    "container_read_only_root",
    "container_minimal_capabilities",
    "container_no_new_privileges",
    "container_memory_limit",
    "container_pids_limit",
    "container_no_docker_socket",
    "privilege_drop",
    "uid_per_program",
    "programs_not_dumpable",
    "seccomp_filter",
    "clean_fork_point",
    "kill_all_after_program",
)


def container_protections(
    attrs: dict[str, Any], runtimes: dict[str, Any] | None = None
) -> dict[str, bool]:
    """Read back from a container's inspect data which protections are in force.

    Args:
        attrs: The container's inspect data (``container.attrs``, after ``reload``).
        runtimes: The daemon's registered runtimes (``client.info()["Runtimes"]``), to
            tell whether the runtime read back is gVisor.
    """
    host = attrs.get("HostConfig", {})
    config = attrs.get("Config", {})
    mounts = attrs.get("Mounts", [])
    added = {str(c).upper().removeprefix("CAP_") for c in host.get("CapAdd") or []}
    return {
        "container_no_network": host.get("NetworkMode") == "none",
        "container_read_only_root": bool(host.get("ReadonlyRootfs")),
        "container_minimal_capabilities": "ALL" in (host.get("CapDrop") or [])
        and added <= set(SUPERVISOR_CAPABILITIES),
        "container_no_new_privileges": "no-new-privileges" in (host.get("SecurityOpt") or []),
        "container_user": str(config.get("User") or "") == SUPERVISOR_USER,
        "container_memory_limit": bool(host.get("Memory"))
        and host.get("Memory") == host.get("MemorySwap"),
        "container_pids_limit": bool(host.get("PidsLimit")),
        "container_no_docker_socket": not any("docker.sock" in str(m.get("Source")) for m in mounts)
        and all(m.get("RW") is False for m in mounts),
        "gvisor_kernel": is_gvisor(container_runtime(attrs), runtimes or {}),
    }


def _create_container(client: Any, image: str, argv: list[str], options: dict[str, Any]) -> Any:
    """``client.containers.create`` with ``StdinOnce`` set (the SDK has no option for it)."""
    from docker.models.containers import _create_container_args  # type: ignore[attr-defined]

    kwargs = _create_container_args(
        {**options, "image": image, "command": argv, "version": client.api._version}
    )
    config = client.api.create_container_config(**kwargs)
    config["StdinOnce"] = True
    created = client.api.create_container_from_config(config)
    return client.containers.get(created["Id"])


class DockerWorker(FrameWorker):
    """A container whose supervisor is reached over the attached stdin/stdout stream."""

    def __init__(
        self,
        client: Any,
        image: str,
        options: dict[str, Any],
        argv: list[str],
        runtimes: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.container = _create_container(client, image, argv, options)
        self._raw = b""
        try:
            attached = client.api.attach_socket(
                self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 0, "stream": 1}
            )
            self._sock: socket.socket = getattr(attached, "_sock", attached)
            self._attached = attached
            self.container.start()
            self.container.reload()
            self._sock.setblocking(False)
            self._handshake()
            self.protections.update(container_protections(self.container.attrs, runtimes))
            self.runtime["image"] = str(self.container.attrs.get("Image", "?"))
            self.runtime["oci_runtime"] = container_runtime(self.container.attrs)
        except Exception:
            self.close()
            raise

    def request(self, message: Frame, timeout: float) -> Frame:
        """Send one request and wait for its reply (see ``FrameWorker.request``).

        Raises:
            WorkerLost: If the container's supervisor is gone. When the container was
                killed for memory while a program ran (gVisor's sandbox is killed whole:
                it holds the programs' memory), that is the program's failure: the error
                carries a reply with every input ``memory`` (``WorkerLost.outcome``).
        """
        started = time.time()
        try:
            return super().request(message, timeout)
        except WorkerLost as exc:
            if message.get("op") == "run" and self.killed_for_memory(started):
                raise WorkerLost(
                    f"{exc}: the container ran out of memory", outcome=out_of_memory(message)
                ) from None
            raise

    def killed_for_memory(self, since: float) -> bool:
        """Whether the container's memory cgroup ran out since ``since`` (docker's events).

        The daemon keeps a container's events after it is gone (auto-removed).
        """
        try:
            events = self.client.events(
                since=since - 1.0,
                until=time.time() + OOM_EVENT_SECONDS,
                filters={"container": self.container.id, "event": "oom"},
                decode=True,
            )
            return any(True for _ in events)
        except Exception:  # the daemon cannot tell: not the program's fault then
            return False

    def _fileno(self) -> int:
        return self._sock.fileno()

    def _read_chunk(self) -> bytes | None:
        try:
            data = self._sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""
        if not data:
            return b""
        self._raw += data
        out = bytearray()
        while len(self._raw) >= _HEADER.size:
            stream, size = _HEADER.unpack_from(self._raw)
            if len(self._raw) < _HEADER.size + size:
                break
            if stream == 1:
                out += self._raw[_HEADER.size : _HEADER.size + size]
            self._raw = self._raw[_HEADER.size + size :]
        return bytes(out) if out else None

    def _send(self, data: bytes) -> None:
        self._sock.setblocking(True)
        try:
            self._sock.sendall(data)
        finally:
            self._sock.setblocking(False)

    def _gone(self) -> str:
        return "container's supervisor exited"

    def close(self) -> None:
        """Ask the supervisor to exit and remove the container."""
        try:
            self._send(framing.encode({"op": "exit"}))
        except (OSError, AttributeError):
            pass
        try:
            self.container.remove(force=True)
        except Exception:  # already gone is fine
            pass
        for closable in (getattr(self, "_attached", None), getattr(self, "_sock", None)):
            try:
                if closable is not None:
                    closable.close()
            except OSError:
                pass
