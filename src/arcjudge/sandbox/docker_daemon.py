"""The Docker daemon as the ``docker`` backend finds it: client, image, OCI runtime.

Before any container starts (``docker.py``): a client that answers, the runtime image this
version runs in (``$ARCJUDGE_IMAGE``, else the content tag of the package's image inputs)
and that it exists, and the OCI runtime containers run under (``runtime=`` /
``$ARCJUDGE_DOCKER_RUNTIME``, else the daemon's default) and whether it is gVisor. What
cannot be had is :class:`DockerUnavailable`, with what to do.
"""

from __future__ import annotations

import os
from typing import Any

from arcjudge.sandbox import image as runtime_image

RUNTIME_ENV = "ARCJUDGE_DOCKER_RUNTIME"
GVISOR_RUNTIME = "runsc"


class DockerUnavailable(RuntimeError):
    """Docker cannot be used here; the message says why and what to do."""


class UnknownRuntime(DockerUnavailable):
    """The OCI runtime asked for is not registered with the Docker daemon (bad input)."""


def requested_runtime(runtime: str | None) -> str | None:
    """Return the OCI runtime to run containers under, ``None`` for the daemon's default.

    The argument (``--docker-runtime``) wins over ``$ARCJUDGE_DOCKER_RUNTIME``; an empty
    value means the default.
    """
    chosen = runtime if runtime is not None else os.environ.get(RUNTIME_ENV, "")
    return chosen.strip() or None


def check_runtime(client: Any, runtime: str | None) -> tuple[str, dict[str, Any]]:
    """Return the runtime containers will run under and the daemon's registered runtimes.

    Args:
        client: A docker client.
        runtime: The OCI runtime asked for, or ``None`` for the daemon's default.

    Returns:
        The runtime's name (``runtime``, or the daemon's ``DefaultRuntime``) and
        ``client.info()["Runtimes"]``.

    Raises:
        UnknownRuntime: If ``runtime`` is given and the daemon does not know it; the
            message names the registered runtimes (and, for ``runsc``, how to register it).
        DockerUnavailable: If the daemon does not answer.
    """
    try:
        info = client.info()
    except Exception as exc:  # the SDK raises many kinds; all mean "not usable"
        raise DockerUnavailable(f"the Docker daemon does not answer ({exc})") from None
    runtimes = dict(info.get("Runtimes") or {})
    if runtime is not None and runtime not in runtimes:
        known = ", ".join(sorted(runtimes)) or "none"
        hint = ""
        if runtime == GVISOR_RUNTIME:
            hint = (
                '; register gVisor in dockerd\'s daemon.json ("runtimes": {"runsc": {"path": '
                '"/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}) and restart dockerd or '
                "send it SIGHUP (see docs/docker.md)"
            )
        raise UnknownRuntime(
            f"OCI runtime {runtime!r} is not registered with the Docker daemon "
            f"(registered: {known}){hint}"
        )
    return runtime or str(info.get("DefaultRuntime") or "runc"), runtimes


def expected_image() -> str:
    """Return the image reference this version of arcjudge runs in.

    ``$ARCJUDGE_IMAGE`` wins; otherwise the content tag of the image inputs shipped in the
    package (``sandbox/images/``), what ``arcjudge image build`` builds.

    Raises:
        DockerUnavailable: If neither is available.
    """
    if os.environ.get(runtime_image.IMAGE_ENV):
        return os.environ[runtime_image.IMAGE_ENV]
    try:
        return runtime_image.image_reference()
    except runtime_image.ImageError as exc:
        raise DockerUnavailable(
            f"cannot tell which runtime image to use (set ARCJUDGE_IMAGE): {exc}"
        ) from None


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


def container_runtime(attrs: dict[str, Any]) -> str:
    """The OCI runtime a container runs under, read back from its inspect data."""
    return str((attrs.get("HostConfig") or {}).get("Runtime") or "?")


def is_gvisor(runtime: str, runtimes: dict[str, Any]) -> bool:
    """Whether the daemon's ``runtime`` is gVisor: registered with a ``runsc`` binary."""
    entry = runtimes.get(runtime)
    path = str(entry.get("path") or "") if isinstance(entry, dict) else ""
    return os.path.basename(path) == GVISOR_RUNTIME
