"""The local ``process`` backend: supervisors as local subprocesses.

Each worker is ``python runner.py`` started with an empty environment (plus a fixed hash
seed and single-threaded math libraries), in its own session, with ``/`` as working
directory. As root on Linux the supervisor adds namespaces, a read-only file tree, private
scratch space and an unprivileged uid per program (see ``runtime/runner.py``); otherwise it
falls back to rlimits, process groups and a subreaper, and says so in ``protections()``.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from arcjudge.sandbox.pool import LocalPool
from arcjudge.sandbox.registry import BackendOptions, sandbox_backend
from arcjudge.sandbox.runtime import cgroups, framing
from arcjudge.sandbox.transport import WorkerLost
from arcjudge.sandbox.wire import Frame

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"
RUNNER = RUNTIME_DIR / "runner.py"
HELLO_TIMEOUT = 60.0
MAX_REPLY_BYTES = 256 << 20
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def supervisor_environment() -> dict[str, str]:
    """Return the complete environment a supervisor starts with (nothing of the harness)."""
    env = {
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
    }
    for name in PASSTHROUGH_ENV:  # needed by this machine's OpenBLAS to compute correctly
        if name in os.environ:
            env[name] = os.environ[name]
    return env


class FrameWorker:
    """A supervisor reached over a byte stream; subclasses provide the transport.

    Subclasses set ``protections`` via ``_handshake()`` and implement ``_fileno()``,
    ``_read_chunk()``, ``_send()`` and ``close()``.
    """

    protections: dict[str, bool]
    runtime: dict[str, str]
    hints: dict[str, str]

    def __init__(self) -> None:
        self.cgroups: list[str] = []
        """The cgroups the supervisor made (``runtime/cgroups.py``), removed once it is gone."""
        self._reader = framing.FrameReader(MAX_REPLY_BYTES)
        self._frames: list[object] = []

    def _fileno(self) -> int:
        raise NotImplementedError

    def _read_chunk(self) -> bytes | None:
        """Return received bytes, ``b""`` at end of stream, ``None`` if nothing yet."""
        raise NotImplementedError

    def _send(self, data: bytes) -> None:
        raise NotImplementedError

    def _gone(self) -> str:
        return "supervisor exited"

    def _handshake(self) -> None:
        hello = self._receive(HELLO_TIMEOUT)
        if not isinstance(hello, dict) or hello.get("op") != "hello":
            raise WorkerLost(f"supervisor did not say hello: {hello!r}"[:300])
        self.pid = int(hello.get("pid", 0))
        self.protections = {str(k): bool(v) for k, v in dict(hello["protections"]).items()}
        self.hints = {str(k)[:60]: str(v)[:400] for k, v in dict(hello.get("hints", {})).items()}
        self.runtime = {
            "python": str(hello.get("python", "?"))[:40],
            "numpy": str(hello.get("numpy", "none"))[:40],
        }
        made = hello.get("cgroups")
        self.cgroups = (
            [str(p) for p in made if isinstance(p, str)] if isinstance(made, list) else []
        )

    def _receive(self, timeout: float) -> object:
        deadline = time.monotonic() + timeout
        while not self._frames:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost(f"supervisor gave no answer within {timeout:.0f} s")
            ready, _, _ = select.select([self._fileno()], [], [], remaining)
            if not ready:
                continue
            data = self._read_chunk()
            if data is None:
                continue
            if not data:
                raise WorkerLost(self._gone())
            try:
                self._frames.extend(self._reader.feed(data))
            except framing.FrameError as exc:
                raise WorkerLost(f"supervisor sent a bad frame: {exc}") from None
        return self._frames.pop(0)

    def request(self, message: Frame, timeout: float) -> Frame:
        """Send one request and wait for its reply."""
        try:
            self._send(framing.encode(message))
        except OSError as exc:
            raise WorkerLost(f"supervisor is gone: {exc}") from None
        reply = self._receive(timeout)
        if not isinstance(reply, dict) or reply.get("op") != "result":
            raise WorkerLost("supervisor sent an unexpected frame")
        return reply

    def close(self) -> None:
        """Stop the supervisor and release everything it holds."""
        raise NotImplementedError


class PipeWorker(FrameWorker):
    """A supervisor reached over a local subprocess's stdin/stdout."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        super().__init__()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
            close_fds=True,
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        try:
            self._handshake()
        except WorkerLost:
            self.close()
            raise

    def _fileno(self) -> int:
        return self._out

    def _read_chunk(self) -> bytes | None:
        try:
            return os.read(self._out, 1 << 20)
        except BlockingIOError:
            return None

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view) :]

    def _gone(self) -> str:
        return f"supervisor exited (code {self.proc.poll()})"

    def close(self) -> None:
        """Ask the supervisor to exit, then make sure it and its session are gone."""
        if self.proc.poll() is None:
            try:
                framing.write_frame(self._in, {"op": "exit"})
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        cgroups.remove(self.cgroups)  # its zygote and programs die with it (PDEATHSIG)


class ProcessSandbox(LocalPool):
    """Warm local supervisors, one per worker (default: one per core).

    Args:
        workers: Number of supervisors (default: ``os.cpu_count()``).
        preload: Modules each supervisor imports once, before forking programs.
        isolation: Set ``False`` to skip namespaces and privilege dropping (for tests of
            the fallback path and for debugging).
        python: The interpreter that runs the supervisors.
        pin_cpus: Pin each supervisor (and so its programs) to a CPU of its own (see
            ``LocalPool``; default: yes unless ``$ARCJUDGE_PIN_CPUS`` is ``0``).
        program_packages: The installed packages programs may import, each with its
            bundled libraries (default ``runtime/rootfs.py``'s ``PROGRAM_PACKAGES``:
            numpy and scipy); nothing else of the interpreter's package directories is
            in a program's view. List a package's dependencies too.
    """

    name = "process"

    def __init__(
        self,
        workers: int | None = None,
        *,
        preload: tuple[str, ...] | None = None,
        isolation: bool = True,
        python: str = sys.executable,
        pin_cpus: bool | None = None,
        program_packages: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(workers, pin_cpus=pin_cpus)
        self.preload = preload
        self.isolation = isolation
        self.python = python
        self.program_packages = program_packages

    def _spawn_worker(self, cpu_slot: int | None) -> PipeWorker:
        argv = [self.python, "-s", "-B", "-P", str(RUNNER)]
        if self.preload is not None:
            argv += ["--preload", ",".join(self.preload)]
        if not self.isolation:
            argv.append("--no-isolation")
        if cpu_slot is not None:
            argv += ["--cpu-slot", str(cpu_slot)]
        if self.program_packages is not None:
            argv += ["--packages", ",".join(self.program_packages)]
        return PipeWorker(argv, supervisor_environment())


@sandbox_backend("process")
def process_backend(options: BackendOptions) -> ProcessSandbox:
    """The ``process`` backend: local supervisors, isolated as far as this host allows."""
    return ProcessSandbox(options.workers)
