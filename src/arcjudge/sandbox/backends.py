"""Choosing a sandbox by name: ``make_sandbox``, ``SandboxOptions``, the ``auto`` backend.

Backends come from the registry (``registry.py``): the built-in ``process`` and
``docker``, ``auto`` (below), and any an installed package adds. Executors say where a
backend's pool runs, also by name: ``local`` (below) and ``ray`` (``ray_pool.py``
registers it: a pool on every node of a Ray cluster), so neither module imports the other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from arcjudge.sandbox.interface import Sandbox
from arcjudge.sandbox.registry import (
    AUTO,
    BackendOptions,
    BackendUnavailable,
    ExecutorOptions,
    backend_factory,
    backend_names,
    executor_factory,
    sandbox_backend,
    sandbox_executor,
)

__all__ = [
    "BACKENDS",
    "EXECUTORS",
    "BackendUnavailable",
    "SandboxOptions",
    "describe_protections",
    "make_sandbox",
]

EXECUTORS = ("local", "ray")
"""The built-in executors (``executor_names()`` lists every registered one)."""
DOCKER_RUNTIME_BACKENDS = ("docker", AUTO)
"""The backends ``--docker-runtime`` applies to."""


@sandbox_backend(AUTO)
def auto_backend(options: BackendOptions) -> Sandbox:
    """``docker`` when the daemon answers and the image exists, else ``process``.

    Falling back calls ``options.warn`` with what isolation is missing. An OCI runtime
    asked for by name that the daemon does not know is an error, never a fallback.

    Raises:
        BackendUnavailable: For an unknown OCI runtime.
    """
    from arcjudge.sandbox.docker import DockerSandbox
    from arcjudge.sandbox.docker_daemon import (
        DockerUnavailable,
        UnknownRuntime,
        requested_runtime,
    )

    runtime = requested_runtime(options.docker_runtime)
    try:
        return DockerSandbox(
            options.workers, module_dirs=options.module_dirs, runtime=runtime or ""
        )
    except UnknownRuntime as exc:  # asked for by name: never a silent fallback
        raise BackendUnavailable(f"docker backend unusable: {exc}") from None
    except DockerUnavailable as exc:
        if options.warn is not None:
            under = f" (nor its {runtime} runtime)" if runtime else ""
            options.warn(
                f"docker unavailable ({exc}); using the process backend, which does not "
                f"confine programs to a container{under}"
            )
    return backend_factory("process")(dataclasses.replace(options, docker_runtime=None))


@sandbox_executor("local")
def local_executor(executor: ExecutorOptions, options: BackendOptions) -> Sandbox:
    """The backend's pool on this machine."""
    return backend_factory(executor.backend)(options)


def make_sandbox(
    backend: str = AUTO,
    workers: int | None = None,
    *,
    module_dirs: tuple[str, ...] = (),
    warn: Callable[[str], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    report: Callable[[str], None] | None = None,
    docker_runtime: str | None = None,
) -> Sandbox:
    """Build (but do not start) a sandbox.

    Args:
        backend: A registered backend's name (``backend_names()``): ``auto`` picks
            docker when the daemon answers and the image exists, else ``process``
            (calling ``warn`` with what isolation is missing).
        workers: Pool size (default: one per core).
        module_dirs: Directories programs may import from (mounted into containers).
        warn: Receives one-line warnings, e.g. when ``auto`` falls back to ``process``.
        executor: A registered executor's name (``executor_names()``): ``local`` (a pool
            on this machine) or ``ray`` (a pool on every node of a Ray cluster;
            ``backend`` and ``workers`` then apply per node).
        ray_address: The cluster to join with ``ray`` (default: ``auto`` when
            ``RAY_ADDRESS`` is set, else a Ray instance started on this machine).
        report: With ``ray``, receives one summary line per node when the sandbox closes.
        docker_runtime: The OCI runtime of the docker backend's containers (e.g. ``runsc``
            for gVisor; default ``$ARCJUDGE_DOCKER_RUNTIME``, else the daemon's default).
            One the daemon does not know is an error, also with ``auto``.

    Returns:
        The sandbox; use it as a context manager.

    Raises:
        BackendUnavailable: For an unknown backend or executor or one that cannot run
            here, an OCI runtime the Docker daemon does not know, or ``docker_runtime``
            given with a backend other than ``docker`` and ``auto``.
    """
    backend_factory(backend)  # an unknown backend is named before an unknown executor
    build = executor_factory(executor)
    if docker_runtime and backend not in DOCKER_RUNTIME_BACKENDS:
        raise BackendUnavailable(
            f"OCI runtime {docker_runtime!r} given: only the docker backend has one "
            f"(this is the {backend} backend)"
        )
    options = BackendOptions(workers, tuple(module_dirs), warn, docker_runtime)
    return build(ExecutorOptions(backend, ray_address, report), options)


@dataclass(frozen=True)
class SandboxOptions:
    """Which sandbox a command runs its programs in: ``make_sandbox``'s choices as a value.

    Attributes:
        backend: A registered backend's name (``auto``: docker if usable, else process).
        workers: Pool size (``None``: one per core; per node with ``ray``).
        executor: ``local`` or ``ray`` (a registered executor's name).
        ray_address: The Ray cluster to join (``None``: the executor's default).
        docker_runtime: The docker backend's OCI runtime (``None``: the default).
    """

    backend: str = AUTO
    workers: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    docker_runtime: str | None = None

    def make(
        self,
        module_dirs: tuple[str, ...] = (),
        *,
        warn: Callable[[str], None] | None = None,
        report: Callable[[str], None] | None = None,
    ) -> Sandbox:
        """Build (but do not start) the sandbox these options choose (:func:`make_sandbox`)."""
        return make_sandbox(
            self.backend,
            self.workers,
            module_dirs=module_dirs,
            warn=warn,
            executor=self.executor,
            ray_address=self.ray_address,
            report=report,
            docker_runtime=self.docker_runtime,
        )


def describe_protections(name: str, protections: dict[str, bool]) -> str:
    """Return one line saying which isolation measures are active and which are missing."""
    active = [k for k, v in protections.items() if v]
    missing = [k for k, v in protections.items() if not v]
    line = f"{name} sandbox: active: {', '.join(active) or 'none'}"
    if missing:
        line += f"; missing: {', '.join(missing)}"
    return line


BACKENDS: tuple[str, ...] = backend_names()
"""Every backend's name when this module was imported (``backend_names()``: as of now)."""
