"""Choosing a sandbox backend by name: ``auto``, ``process`` or ``docker``."""

from __future__ import annotations

from arcjudge.sandbox.base import STRONG_PROTECTIONS, PooledSandbox

BACKENDS = ("auto", "process", "docker")


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; the message says why and what to do."""


def make_sandbox(backend: str = "auto", workers: int | None = None) -> PooledSandbox:
    """Build (but do not start) a sandbox.

    Args:
        backend: ``auto`` picks docker when usable, else ``process``; or a backend name.
        workers: Pool size (default: one per core).

    Returns:
        The sandbox; use it as a context manager.

    Raises:
        BackendUnavailable: For an unknown backend or one that cannot run here.
    """
    if backend not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if backend == "docker":
        raise BackendUnavailable("the docker backend is not built yet; use --backend process")
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


def missing_strong_protections(protections: dict[str, bool]) -> list[str]:
    """Return the important protections that are not active."""
    return [k for k in STRONG_PROTECTIONS if not protections.get(k, False)]
