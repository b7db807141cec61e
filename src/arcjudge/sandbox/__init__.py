"""Isolation and execution of untrusted programs.

Callers type against the ``Sandbox`` interface (``interface.py``): it runs a ``Program``
over a batch of input grids with ``Limits`` and returns a ``ProgramResult``
(``run_variants``: many variants of one program as one job). Backends are
looked up by name in a registry (``registry.py``; ``make_sandbox`` in ``backends.py``):
``process`` (local, the embedded default), ``docker`` (containers, the security boundary),
``auto``, and any that an installed package registers; ``ray`` runs one of them on every
node of a cluster. The built-in backends share one pool (``pool.py``) over a transport
that says where the workers run.

The names below are imported from their modules when first used, not when this package
is: the value layer (``arcjudge.grids``) imports the runtime's canonicalizer, which makes
Python import this package first, and the sandbox's modules import the value layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arcjudge.sandbox.interface import Job, Sandbox, VariantSandbox, run_variants
    from arcjudge.sandbox.policy import PolicyMode
    from arcjudge.sandbox.pool import LocalPool, PooledSandbox, Transport, WorkerLost
    from arcjudge.sandbox.registry import (
        ENTRY_POINT_GROUP,
        BackendOptions,
        BackendUnavailable,
        backend_names,
        sandbox_backend,
    )
    from arcjudge.sandbox.types import (
        DEFINITION_LIMITS,
        SHARED_STATE_ERROR,
        VERIFIER_LIMITS,
        GeneratorCall,
        Grid,
        Limits,
        Program,
        ProgramResult,
        ProgramStatus,
        RunResult,
        Status,
        changed_shared_state,
    )

__all__ = [
    "DEFINITION_LIMITS",
    "ENTRY_POINT_GROUP",
    "SHARED_STATE_ERROR",
    "VERIFIER_LIMITS",
    "BackendOptions",
    "BackendUnavailable",
    "GeneratorCall",
    "Grid",
    "Job",
    "Limits",
    "LocalPool",
    "PolicyMode",
    "PooledSandbox",
    "Program",
    "ProgramResult",
    "ProgramStatus",
    "RunResult",
    "Sandbox",
    "Status",
    "Transport",
    "VariantSandbox",
    "WorkerLost",
    "backend_names",
    "changed_shared_state",
    "run_variants",
    "sandbox_backend",
]

_HOMES = {
    **dict.fromkeys(("Job", "Sandbox", "VariantSandbox", "run_variants"), "interface"),
    "PolicyMode": "policy",
    **dict.fromkeys(("LocalPool", "PooledSandbox", "Transport", "WorkerLost"), "pool"),
    **dict.fromkeys(
        (
            "ENTRY_POINT_GROUP",
            "BackendOptions",
            "BackendUnavailable",
            "backend_names",
            "sandbox_backend",
        ),
        "registry",
    ),
    **dict.fromkeys(
        (
            "DEFINITION_LIMITS",
            "SHARED_STATE_ERROR",
            "VERIFIER_LIMITS",
            "GeneratorCall",
            "Grid",
            "Limits",
            "Program",
            "ProgramResult",
            "ProgramStatus",
            "RunResult",
            "Status",
            "changed_shared_state",
        ),
        "types",
    ),
}
"""The module each public name lives in."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
