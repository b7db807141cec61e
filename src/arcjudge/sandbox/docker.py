"""The ``docker`` backend: each worker is a warm container running the trusted supervisor.

Every container runs ``runtime/runner.py`` (mounted read-only, so changing arcjudge never
needs an image rebuild) as a long-lived supervisor that forks a fresh child per program.
Containers have no network, a read-only root, size-capped tmpfs scratch (scrubbed between
programs), memory limit equal to memory+swap, a pids limit, all capabilities dropped but
the six a root supervisor needs to give every program a uid of its own
(``SUPERVISOR_CAPABILITIES``), no-new-privileges, one CPU, an empty environment and no host
paths but the read-only runtime and module directories (each behind a directory only its
own group may enter). They carry labels naming the run and the
owning process, and are removed on close, at interpreter exit and by
``arcjudge sandbox prune``.
"""

from __future__ import annotations

import atexit
import os
import socket
import struct
import subprocess
import uuid
import weakref
from pathlib import Path
from typing import Any

from arcjudge.sandbox.base import PooledSandbox, WorkerLost
from arcjudge.sandbox.process import RUNTIME_DIR, FrameWorker, supervisor_environment
from arcjudge.sandbox.runtime import framing
from arcjudge.sandbox.types import Program

IMAGE_REPO = "arcjudge-runtime"
IMAGES_DIR = Path(__file__).resolve().parents[3] / "images"
LABEL = "arcjudge"
SUPERVISOR_USER = "0:0"  # root in the container, with only the capabilities below
SUPERVISOR_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL")
MODULE_GROUP_BASE = 0x7A000000  # module directory k is readable by group BASE + k only
CONTAINER_RUNTIME = "/opt/arcjudge/runtime"
CONTAINER_MODULES = "/opt/arcjudge/modules"
SCRUB = "/tmp:/dev/shm:/dev/mqueue"
_HEADER = struct.Struct(">BxxxL")
ZYGOTE_NAME = "arcjudge-zygote"


class DockerUnavailable(RuntimeError):
    """Docker cannot be used here; the message says why and what to do."""


def expected_image() -> str:
    """Return the image reference this version of arcjudge runs in.

    ``$ARCJUDGE_IMAGE`` wins; otherwise the content tag that ``images/build-rootfs.sh``
    computes from the image's inputs.

    Raises:
        DockerUnavailable: If neither is available.
    """
    if os.environ.get("ARCJUDGE_IMAGE"):
        return os.environ["ARCJUDGE_IMAGE"]
    script = IMAGES_DIR / "build-rootfs.sh"
    if not script.is_file():
        raise DockerUnavailable(
            "cannot tell which runtime image to use: set ARCJUDGE_IMAGE, or run from a "
            "checkout that has images/build-rootfs.sh"
        )
    proc = subprocess.run(
        ["bash", str(script), "--print-tag"], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise DockerUnavailable(f"images/build-rootfs.sh --print-tag failed: {proc.stderr.strip()}")
    return proc.stdout.strip().splitlines()[-1]


def docker_client() -> Any:
    """Return a connected docker client.

    Raises:
        DockerUnavailable: If the SDK is missing or the daemon does not answer.
    """
    try:
        import docker
    except ImportError:
        raise DockerUnavailable("the docker Python package is not installed") from None
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:  # the SDK raises many kinds; all mean "not usable"
        raise DockerUnavailable(f"the Docker daemon does not answer ({exc})") from None
    return client


def check_image(client: Any, image: str) -> None:
    """Raise ``DockerUnavailable`` naming the build command if ``image`` is missing."""
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        raise DockerUnavailable(
            f"runtime image {image} not found (missing or stale); build it with: "
            "arcjudge image build"
        ) from None


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


def container_protections(attrs: dict[str, Any]) -> dict[str, bool]:
    """Read back from a container's inspect data which protections are in force."""
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
    }


def _create_container(client: Any, image: str, argv: list[str], options: dict) -> Any:
    """``client.containers.create`` with ``StdinOnce`` set (the SDK has no option for it)."""
    from docker.models.containers import _create_container_args

    kwargs = _create_container_args(
        {**options, "image": image, "command": argv, "version": client.api._version}
    )
    config = client.api.create_container_config(**kwargs)
    config["StdinOnce"] = True
    created = client.api.create_container_from_config(config)
    return client.containers.get(created["Id"])


class DockerWorker(FrameWorker):
    """A container whose supervisor is reached over the attached stdin/stdout stream."""

    def __init__(self, client: Any, image: str, options: dict[str, Any], argv: list[str]) -> None:
        super().__init__()
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
            self.protections.update(container_protections(self.container.attrs))
            self.runtime["image"] = str(self.container.attrs.get("Image", "?"))
        except Exception:
            self.close()
            raise

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


_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for sandbox in list(_LIVE):
        sandbox.close()


class DockerSandbox(PooledSandbox):
    """Warm containers, one per worker (default: one per core).

    Args:
        workers: Number of containers.
        image: Image reference (default: ``expected_image()``).
        module_dirs: Host directories programs may import from; each is mounted read-only
            and a program's ``module_dirs`` must be among them.
        memory_bytes: Container memory (and memory+swap) limit, supervisor included.
        pids: Container pids limit.
        tmpfs_bytes: Size of the container's ``/tmp``.
        preload: Modules the supervisor imports once before forking programs.
    """

    name = "docker"
    strong_protections = CONTAINER_PROTECTIONS

    def __init__(
        self,
        workers: int | None = None,
        *,
        image: str | None = None,
        module_dirs: tuple[str, ...] = (),
        memory_bytes: int = (1 << 30) + (512 << 20),
        pids: int = 128,
        tmpfs_bytes: int = 256 << 20,
        preload: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(workers)
        self.client = docker_client()
        self.image = image or expected_image()
        check_image(self.client, self.image)
        self.run_id = uuid.uuid4().hex[:12]
        self.mounts = {
            os.path.realpath(d): f"{CONTAINER_MODULES}/g{k}/m" for k, d in enumerate(module_dirs)
        }
        self.memory_bytes = memory_bytes
        self.pids = pids
        self.tmpfs_bytes = tmpfs_bytes
        self.preload = preload
        _LIVE.add(self)

    def labels(self) -> dict[str, str]:
        """Labels on every container of this sandbox."""
        return {
            LABEL: "1",
            f"{LABEL}.run": self.run_id,
            f"{LABEL}.owner": f"{socket.gethostname()}:{os.getpid()}",
        }

    def _spawn_worker(self) -> DockerWorker:
        volumes = {str(RUNTIME_DIR): {"bind": CONTAINER_RUNTIME, "mode": "ro"}}
        tmpfs = {
            "/tmp": f"size={self.tmpfs_bytes},mode=0755",
            "/dev/shm": "size=1m,mode=0755",
        }
        for k, (host, inside) in enumerate(self.mounts.items()):
            # Each module directory sits in a directory only its group may enter; a
            # program gets the groups of its own module directories and no others.
            tmpfs[os.path.dirname(inside)] = f"size=64k,mode=0750,uid=0,gid={MODULE_GROUP_BASE + k}"
            volumes[host] = {"bind": inside, "mode": "ro"}
        options = {
            "stdin_open": True,
            # With StdinOnce (set in DockerWorker), when the attached client goes away (its
            # process killed, e.g. a Ray actor) stdin closes, the supervisor (PID 1) reads
            # EOF and exits, and the container removes itself: none outlives its owner.
            "auto_remove": True,
            "network_mode": "none",
            "read_only": True,
            "tmpfs": tmpfs,
            "mem_limit": self.memory_bytes,
            "memswap_limit": self.memory_bytes,
            "pids_limit": self.pids,
            "cap_drop": ["ALL"],
            "cap_add": list(SUPERVISOR_CAPABILITIES),
            "security_opt": ["no-new-privileges"],
            "user": SUPERVISOR_USER,
            "nano_cpus": 1_000_000_000,
            "environment": {**supervisor_environment(), "HOME": "/tmp"},
            "volumes": volumes,
            "working_dir": "/tmp",
            "labels": self.labels(),
            "ipc_mode": "private",
        }
        argv = ["python3", "-s", "-B", "-P", f"{CONTAINER_RUNTIME}/runner.py", "--scrub", SCRUB]
        if self.preload is not None:
            argv += ["--preload", ",".join(self.preload)]
        try:
            return DockerWorker(self.client, self.image, options, argv)
        except WorkerLost:
            raise
        except Exception as exc:
            raise WorkerLost(f"could not start a container: {exc}") from None

    def _prepare(self, program: Program) -> Program:
        if not program.module_dirs:
            return program
        inside = []
        for directory in program.module_dirs:
            real = os.path.realpath(directory)
            if real not in self.mounts:
                raise ValueError(
                    f"module directory {directory} is not mounted: pass it in "
                    "DockerSandbox(module_dirs=...)"
                )
            inside.append(self.mounts[real])
        return Program(
            program.source, program.entry_points, tuple(inside), program.input_format, program.name
        )

    def stray_processes(self) -> int:
        """Count processes in the containers besides each supervisor and its zygote."""
        count = 0
        for worker in list(self._all):
            try:
                top = worker.container.top(ps_args="-o pid,comm")
            except Exception:  # a container that is gone has no strays
                continue
            rows = top.get("Processes") or []
            others = [r for r in rows if r and r[-1] != ZYGOTE_NAME]
            count += max(0, len(others) - 1)
        return count

    def leftover_containers(self) -> list[str]:
        """Names of this sandbox's containers that still exist."""
        found = self.client.containers.list(
            all=True, filters={"label": f"{LABEL}.run={self.run_id}"}
        )
        return [c.name for c in found]

    def close(self) -> None:
        """Remove every container of this sandbox."""
        super().close()
        _LIVE.discard(self)


def prune(client: Any, everything: bool = False) -> list[str]:
    """Remove containers left by crashed runs.

    Args:
        client: A docker client.
        everything: Remove all arcjudge containers, not only those whose owner is gone.

    Returns:
        Names of the containers removed.
    """
    removed = []
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        owner = container.labels.get(f"{LABEL}.owner", "")
        owner_host, _, pid = owner.partition(":")
        alive = owner_host == host and pid.isdigit() and _pid_alive(int(pid))
        if everything or not alive:
            container.remove(force=True)
            removed.append(container.name)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
