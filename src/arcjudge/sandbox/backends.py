"""Choosing a sandbox by name: ``make_sandbox``, the ``auto`` backend and CLI helpers.

Backends come from the registry (``registry.py``): the built-in ``process`` and
``docker``, ``auto`` (below), and any an installed package adds. ``executor="ray"`` runs
the chosen backend on every node of a Ray cluster (``ray_pool.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from arcjudge.sandbox.interface import Sandbox
from arcjudge.sandbox.registry import (
    AUTO,
    BackendOptions,
    BackendUnavailable,
    backend_factory,
    backend_names,
    sandbox_backend,
)

__all__ = [
    "BACKENDS",
    "EXECUTORS",
    "BackendUnavailable",
    "describe_protections",
    "make_sandbox",
    "sandbox_for",
]

EXECUTORS = ("local", "ray")
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
    from arcjudge.sandbox.docker import (
        DockerSandbox,
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
        executor: ``local`` (a pool on this machine) or ``ray`` (a pool on every node of
            a Ray cluster; ``backend`` and ``workers`` then apply per node).
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
    factory = backend_factory(backend)
    if executor not in EXECUTORS:
        raise BackendUnavailable(
            f"unknown executor {executor!r} (choose from {', '.join(EXECUTORS)})"
        )
    if docker_runtime and backend not in DOCKER_RUNTIME_BACKENDS:
        raise BackendUnavailable(
            f"OCI runtime {docker_runtime!r} given: only the docker backend has one "
            f"(this is the {backend} backend)"
        )
    if executor == "ray":
        from arcjudge.sandbox.docker import requested_runtime
        from arcjudge.sandbox.ray_pool import RaySandbox

        on_nodes = requested_runtime(docker_runtime) if backend in DOCKER_RUNTIME_BACKENDS else None
        return RaySandbox(
            backend, ray_address, module_dirs=module_dirs, workers_per_node=workers,
            report=report, docker_runtime=on_nodes,
        )  # fmt: skip
    return factory(BackendOptions(workers, tuple(module_dirs), warn, docker_runtime))


def describe_protections(name: str, protections: dict[str, bool]) -> str:
    """Return one line saying which isolation measures are active and which are missing."""
    active = [k for k, v in protections.items() if v]
    missing = [k for k, v in protections.items() if not v]
    line = f"{name} sandbox: active: {', '.join(active) or 'none'}"
    if missing:
        line += f"; missing: {', '.join(missing)}"
    return line


def sandbox_for(
    args: object,
    *,
    module_dirs: tuple[str, ...] = (),
    warn: Callable[[str], None] | None = None,
) -> Sandbox:
    """:func:`make_sandbox` from parsed command-line options.

    Args:
        args: An ``argparse.Namespace`` with ``backend`` and ``workers``, and optionally
            ``executor``, ``ray_address`` and ``docker_runtime``.
        module_dirs: Directories programs may import from.
        warn: Receives one-line warnings.

    Returns:
        The sandbox (with ``ray``, per-node summary lines are printed when it closes).
    """
    return make_sandbox(
        getattr(args, "backend", "auto"),
        getattr(args, "workers", None),
        module_dirs=module_dirs,
        warn=warn,
        executor=getattr(args, "executor", "local"),
        ray_address=getattr(args, "ray_address", None),
        report=print,
        docker_runtime=getattr(args, "docker_runtime", None),
    )


BACKENDS: tuple[str, ...] = backend_names()
"""Every backend's name when this module was imported (``backend_names()``: as of now)."""
