"""Sandbox backends by name: registered with a decorator or by an installed package.

A backend is a factory: a callable that takes :class:`BackendOptions` and returns a
:class:`~arcjudge.sandbox.interface.Sandbox` (built, not started). The built-in ones
(``process``, ``docker`` and ``auto``) register themselves with
:func:`sandbox_backend`; a third party adds one by installing a package that declares an
entry point in the ``arcjudge.sandboxes`` group, named after the backend::

    # pyproject.toml of the package
    [project.entry-points."arcjudge.sandboxes"]
    firecracker = "arcjudge_firecracker:make"

    # arcjudge_firecracker/__init__.py
    def make(options: BackendOptions) -> Sandbox:
        return FirecrackerSandbox(options.workers, module_dirs=options.module_dirs)

after which ``--backend firecracker`` works everywhere ``--backend`` does (including on
every Ray node that has the package). An entry point's object is loaded only when its
backend is asked for; a name already registered is not replaced.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from arcjudge.sandbox.interface import Sandbox

ENTRY_POINT_GROUP = "arcjudge.sandboxes"
AUTO = "auto"
_BUILTIN_MODULES = (
    "arcjudge.sandbox.process",
    "arcjudge.sandbox.docker",
    "arcjudge.sandbox.backends",
    "arcjudge.sandbox.ray_pool",
)
log = logging.getLogger("arcjudge.sandbox")


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; the message says why and what to do."""


@dataclass(frozen=True)
class BackendOptions:
    """What every backend factory is given (``make_sandbox``'s arguments).

    Attributes:
        workers: Pool size (``None``: the backend's default, usually one per core).
        module_dirs: Directories programs may import from (e.g. mounted into containers).
        warn: Receives one-line warnings (e.g. ``auto`` falling back to ``process``).
        docker_runtime: The OCI runtime asked for with ``--docker-runtime`` (``None``:
            not asked for; the docker backend then reads ``$ARCJUDGE_DOCKER_RUNTIME``).
    """

    workers: int | None = None
    module_dirs: tuple[str, ...] = ()
    warn: Callable[[str], None] | None = None
    docker_runtime: str | None = None


BackendFactory = Callable[[BackendOptions], "Sandbox"]
"""Builds a sandbox; raises ``BackendUnavailable`` when it cannot run here."""
FactoryT = TypeVar("FactoryT", bound=BackendFactory)

_registry: dict[str, BackendFactory] = {}
_lock = threading.RLock()
_builtins_loaded = False


def sandbox_backend(name: str) -> Callable[[FactoryT], FactoryT]:
    """Register the decorated factory as the backend ``name``.

    Args:
        name: The backend's name, as given to ``--backend`` and ``make_sandbox``.

    Returns:
        A decorator that registers its argument and returns it unchanged.

    Raises:
        ValueError: If ``name`` is empty or already taken by another factory.
    """
    if not name or not name.strip() or name != name.strip():
        raise ValueError(f"backend name {name!r}: expected a non-empty word")

    def register(factory: FactoryT) -> FactoryT:
        _add(_registry, "backend", name, factory)
        return factory

    return register


def _add(table: dict[str, Any], kind: str, name: str, factory: object) -> None:
    """Put ``factory`` in ``table`` as ``name``, unless another factory has that name."""
    with _lock:
        known = table.get(name)
        if known is not None and known is not factory:
            raise ValueError(f"{kind} {name!r} is already registered ({_describe(known)})")
        table[name] = factory


def unregister(name: str) -> None:
    """Forget the backend ``name`` (for tests); unknown names are ignored."""
    with _lock:
        _registry.pop(name, None)


def _describe(factory: object) -> str:
    module = getattr(factory, "__module__", "?")
    return f"{module}.{getattr(factory, '__qualname__', type(factory).__name__)}"


def _load_builtins() -> None:
    global _builtins_loaded
    with _lock:
        if _builtins_loaded:
            return
        _builtins_loaded = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)


def _entry_points() -> list[metadata.EntryPoint]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def backend_names() -> tuple[str, ...]:
    """Every backend's name: ``auto`` first, the other built-ins, then installed ones.

    Installed backends (entry points) are listed without importing them.
    """
    _load_builtins()
    with _lock:
        names = list(_registry)
    names += sorted({ep.name for ep in _entry_points()} - set(names))
    return tuple(sorted(names, key=lambda n: n != AUTO))


def backend_factory(name: str) -> BackendFactory:
    """Return the factory of the backend ``name``, loading its entry point if need be.

    Raises:
        BackendUnavailable: If no backend has that name, or its package's entry point
            cannot be loaded or is not callable.
    """
    _load_builtins()
    with _lock:
        factory = _registry.get(name)
    if factory is not None:
        return factory
    for ep in _entry_points():
        if ep.name != name:
            continue
        try:
            loaded = ep.load()
        except Exception as exc:  # a broken third-party package: say which and why
            raise BackendUnavailable(
                f"backend {name!r} (entry point {ep.value}) cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not callable(loaded):
            raise BackendUnavailable(
                f"backend {name!r} (entry point {ep.value}) is not a factory: {loaded!r}"[:300]
            )
        with _lock:  # importing it may have registered it with the decorator already
            return _registry.setdefault(name, loaded)
    choices = ", ".join(backend_names())
    raise BackendUnavailable(f"unknown backend {name!r} (choose from {choices})")


@dataclass(frozen=True)
class ExecutorOptions:
    """Where a backend's pool runs, besides the backend's own options.

    Attributes:
        backend: The backend's name (an executor such as ``ray`` builds it on each node).
        address: The cluster to join (``ray``: ``auto``, ``ray://...``, ``host:port``,
            ``local``; ``None``: the executor's default).
        report: Receives one summary line per node when the sandbox closes.
    """

    backend: str = AUTO
    address: str | None = None
    report: Callable[[str], None] | None = None


ExecutorFactory = Callable[[ExecutorOptions, BackendOptions], "Sandbox"]
"""Builds a sandbox that runs a backend somewhere (here, on a cluster's nodes)."""
ExecutorT = TypeVar("ExecutorT", bound=ExecutorFactory)
_executors: dict[str, ExecutorFactory] = {}


def sandbox_executor(name: str) -> Callable[[ExecutorT], ExecutorT]:
    """Register the decorated factory as the executor ``name`` (``local``, ``ray``).

    Raises:
        ValueError: If ``name`` is already taken by another factory.
    """

    def register(factory: ExecutorT) -> ExecutorT:
        _add(_executors, "executor", name, factory)
        return factory

    return register


def executor_names() -> tuple[str, ...]:
    """Every executor's name, ``local`` first."""
    _load_builtins()
    with _lock:
        return tuple(sorted(_executors, key=lambda n: (n != "local", n)))


def executor_factory(name: str) -> ExecutorFactory:
    """Return the factory of the executor ``name``.

    Raises:
        BackendUnavailable: If no executor has that name.
    """
    _load_builtins()
    with _lock:
        factory = _executors.get(name)
    if factory is None:
        raise BackendUnavailable(
            f"unknown executor {name!r} (choose from {', '.join(executor_names())})"
        )
    return factory
