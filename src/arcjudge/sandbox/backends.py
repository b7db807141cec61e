"""Choosing a sandbox backend by name: ``auto``, ``process`` or ``docker``."""

from __future__ import annotations

from collections.abc import Callable

from arcjudge.sandbox.base import PooledSandbox

BACKENDS = ("auto", "process", "docker")
EXECUTORS = ("local", "ray")


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; the message says why and what to do."""


def make_sandbox(
    backend: str = "auto",
    workers: int | None = None,
    *,
    module_dirs: tuple[str, ...] = (),
    warn: Callable[[str], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    report: Callable[[str], None] | None = None,
    docker_runtime: str | None = None,
) -> PooledSandbox:
    """Build (but do not start) a sandbox.

    Args:
        backend: ``auto`` picks docker when the daemon answers and the image exists, else
            ``process`` (calling ``warn`` with what isolation is missing); or a backend name.
        workers: Pool size (default: one per core).
        module_dirs: Directories programs may import from (mounted into containers).
        warn: Receives the one-line warning when ``auto`` falls back to ``process``.
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
        BackendUnavailable: For an unknown backend or one that cannot run here, an OCI
            runtime the Docker daemon does not know, or ``docker_runtime`` given with the
            ``process`` backend.
    """
    if backend not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if executor not in EXECUTORS:
        raise BackendUnavailable(
            f"unknown executor {executor!r} (choose from {', '.join(EXECUTORS)})"
        )
    if backend == "process" and docker_runtime:
        raise BackendUnavailable(
            f"OCI runtime {docker_runtime!r} given: only the docker backend has one "
            "(this is the process backend)"
        )
    from arcjudge.sandbox.docker import requested_runtime

    oci_runtime = requested_runtime(docker_runtime) if backend != "process" else None
    if executor == "ray":
        from arcjudge.sandbox.ray_pool import RaySandbox, RayUnavailable

        try:
            return RaySandbox(
                backend, ray_address, module_dirs=module_dirs, workers_per_node=workers,
                report=report, docker_runtime=oci_runtime,
            )  # fmt: skip
        except RayUnavailable as exc:
            raise BackendUnavailable(str(exc)) from None
    if backend in ("docker", "auto"):
        from arcjudge.sandbox.docker import DockerSandbox, DockerUnavailable, UnknownRuntime

        try:
            return DockerSandbox(workers, module_dirs=module_dirs, runtime=oci_runtime or "")
        except UnknownRuntime as exc:  # asked for by name: never a silent fallback
            raise BackendUnavailable(f"docker backend unusable: {exc}") from None
        except DockerUnavailable as exc:
            if backend == "docker":
                raise BackendUnavailable(f"docker backend unusable: {exc}") from None
            if warn is not None:
                under = f" (nor its {oci_runtime} runtime)" if oci_runtime else ""
                warn(
                    f"docker unavailable ({exc}); using the process backend, which does not "
                    f"confine programs to a container{under}"
                )
    from arcjudge.sandbox.process import ProcessSandbox

    return ProcessSandbox(workers)


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
) -> PooledSandbox:
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
