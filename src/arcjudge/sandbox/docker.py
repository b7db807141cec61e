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

They run under the daemon's default OCI runtime, or the one named by ``runtime=`` /
``$ARCJUDGE_DOCKER_RUNTIME`` (e.g. ``runsc``: gVisor); the runtime is read back from each
container (``protections()["gvisor_kernel"]``, ``runtime()["oci_runtime"]``).

What the daemon offers (client, image, OCI runtime) is found in ``docker_daemon.py``; one
container, its stream and what it is read back to have, is ``docker_worker.py``.
"""

from __future__ import annotations

import atexit
import os
import socket
import uuid
import weakref
from typing import Any

from arcjudge.sandbox.docker_daemon import (
    DockerUnavailable,
    check_image,
    check_runtime,
    docker_client,
    expected_image,
    is_gvisor,
    requested_runtime,
)
from arcjudge.sandbox.docker_worker import (
    CONTAINER_PROTECTIONS,
    SUPERVISOR_CAPABILITIES,
    SUPERVISOR_USER,
    DockerWorker,
)
from arcjudge.sandbox.pool import LocalPool
from arcjudge.sandbox.process import RUNTIME_DIR, supervisor_environment
from arcjudge.sandbox.registry import BackendOptions, BackendUnavailable, sandbox_backend
from arcjudge.sandbox.transport import WorkerLost
from arcjudge.sandbox.types import Program

IMAGE_REPO = "arcjudge-runtime"
LABEL = "arcjudge"
MODULE_GROUP_BASE = 0x7A000000  # module directory k is readable by group BASE + k only
CONTAINER_RUNTIME = "/opt/arcjudge/runtime"
CONTAINER_MODULES = "/opt/arcjudge/modules"
SCRUB = "/tmp:/dev/shm:/dev/mqueue"
ZYGOTE_NAME = "arcjudge-zygote"
# Run inside a container: the names of its processes but this one, one a line.
_LIST_PROCESSES = (
    "import os\n"
    "for p in os.listdir('/proc'):\n"
    "    if p.isdigit() and int(p) != os.getpid():\n"
    "        try:\n"
    "            print(open('/proc/%s/comm' % p).read().strip())\n"
    "        except OSError:\n"
    "            pass\n"
)


# Files and directories a program may leave in /tmp: bounds the scrub after it.
SCRATCH_INODES = 32768
RUNC_PIDS = 128
# Under gVisor the pids cgroup counts the sandbox kernel's host threads (about 40, plus
# about 5 per guest task on the ptrace platform), not the container's processes; those are
# bounded by each program's RLIMIT_NPROC, which gVisor enforces (threads included).
GVISOR_PIDS = 1024


_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for sandbox in list(_LIVE):
        sandbox.close()


class DockerSandbox(LocalPool):
    """Warm containers, one per worker (default: one per core).

    Args:
        workers: Number of containers.
        image: Image reference (default: ``expected_image()``).
        module_dirs: Host directories programs may import from; each is mounted read-only
            and a program's ``module_dirs`` must be among them.
        memory_bytes: Container memory (and memory+swap) limit, supervisor included.
        pids: Container pids limit (default 128; under gVisor 1024, since there it
            counts the sandbox kernel's host threads, see ``GVISOR_PIDS``).
        tmpfs_bytes: Size of the container's ``/tmp``.
        preload: Modules the supervisor imports once before forking programs.
        runtime: The OCI runtime containers run under (docker's ``--runtime``, e.g.
            ``runsc`` for gVisor); default ``$ARCJUDGE_DOCKER_RUNTIME``, else the
            daemon's default runtime.
        pin_cpus: Pin each container's supervisor (and so its programs) to a CPU of its
            own (see ``LocalPool``; default: yes unless ``$ARCJUDGE_PIN_CPUS`` is ``0``).

    Raises:
        DockerUnavailable: If the daemon does not answer or the image is missing.
        UnknownRuntime: If ``runtime`` is not registered with the daemon.
    """

    name = "docker"
    strong_protections: tuple[str, ...] = CONTAINER_PROTECTIONS

    def __init__(
        self,
        workers: int | None = None,
        *,
        image: str | None = None,
        module_dirs: tuple[str, ...] = (),
        memory_bytes: int = (1 << 30) + (512 << 20),
        pids: int | None = None,
        tmpfs_bytes: int = 256 << 20,
        preload: tuple[str, ...] | None = None,
        runtime: str | None = None,
        pin_cpus: bool | None = None,
    ) -> None:
        super().__init__(workers, pin_cpus=pin_cpus)
        self.client = docker_client()
        self.image = image or expected_image()
        check_image(self.client, self.image)
        self.oci_runtime = requested_runtime(runtime)
        expected, self.runtimes = check_runtime(self.client, self.oci_runtime)
        self.gvisor = is_gvisor(expected, self.runtimes)
        if self.gvisor:  # say so when the container's runtime read back is not gVisor
            self.strong_protections = (*CONTAINER_PROTECTIONS, "gvisor_kernel")
        self.run_id = uuid.uuid4().hex[:12]
        self.mounts = {
            os.path.realpath(d): f"{CONTAINER_MODULES}/g{k}/m" for k, d in enumerate(module_dirs)
        }
        self.memory_bytes = memory_bytes
        self.pids = pids if pids is not None else (GVISOR_PIDS if self.gvisor else RUNC_PIDS)
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

    def _spawn_worker(self, cpu_slot: int | None) -> DockerWorker:
        volumes = {str(RUNTIME_DIR): {"bind": CONTAINER_RUNTIME, "mode": "ro"}}
        tmpfs = {
            "/tmp": f"size={self.tmpfs_bytes},mode=0755,nr_inodes={SCRATCH_INODES}",
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
        if self.oci_runtime is not None:
            options["runtime"] = self.oci_runtime
        argv = ["python3", "-s", "-B", "-P", f"{CONTAINER_RUNTIME}/runner.py", "--scrub", SCRUB]
        if self.preload is not None:
            argv += ["--preload", ",".join(self.preload)]
        if cpu_slot is not None:
            argv += ["--cpu-slot", str(cpu_slot)]
        try:
            return DockerWorker(self.client, self.image, options, argv, self.runtimes)
        except WorkerLost:
            raise
        except Exception as exc:
            hint = ""
            if self.gvisor and "network" in str(exc):
                hint = (
                    ' (runsc needs runtimeArgs ["--network=none"] in dockerd\'s daemon.json: '
                    "see docs/docker.md)"
                )
            raise WorkerLost(f"could not start a container: {exc}{hint}") from None

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
        for worker in self.docker_workers():
            try:
                names = self._process_names(worker)
            except Exception:  # a container that is gone has no strays
                continue
            if names is None:  # alive, but its processes could not be listed: say so
                count += 1
                continue
            others = [name for name in names if name != ZYGOTE_NAME]
            count += max(0, len(others) - 1)
        return count

    def docker_workers(self) -> list[DockerWorker]:
        """The live workers (containers)."""
        return [w for w in self.workers if isinstance(w, DockerWorker)]

    def _process_names(self, worker: DockerWorker) -> list[str] | None:
        """The names of the processes in a worker's container (``None``: not listable).

        ``docker top`` lists host processes; under gVisor the container's processes are
        not host processes (the daemon matches the sandbox's own pids against the host's
        ``ps``), so there they are listed from inside, by a short process run as root in
        the container that leaves itself out.
        """
        if not worker.protections.get("gvisor_kernel"):
            top = worker.container.top(ps_args="-o pid,comm")
            return [str(row[-1]) for row in top.get("Processes") or [] if row]
        reply = worker.container.exec_run(
            ["python3", "-I", "-S", "-c", _LIST_PROCESSES], user=SUPERVISOR_USER, stderr=False
        )
        if reply.exit_code != 0:
            return None
        text: str = reply.output.decode(errors="replace")
        return text.splitlines()

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


@sandbox_backend("docker")
def docker_backend(options: BackendOptions) -> DockerSandbox:
    """The ``docker`` backend: one warm container per worker (the security boundary).

    Raises:
        BackendUnavailable: If the daemon does not answer, the image is missing or the
            OCI runtime asked for (``--docker-runtime``, ``$ARCJUDGE_DOCKER_RUNTIME``) is
            not registered with the daemon.
    """
    runtime = requested_runtime(options.docker_runtime)
    try:
        return DockerSandbox(
            options.workers, module_dirs=options.module_dirs, runtime=runtime or ""
        )
    except DockerUnavailable as exc:
        raise BackendUnavailable(f"docker backend unusable: {exc}") from None


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
