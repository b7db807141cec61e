"""Isolation and execution of untrusted programs.

Callers type against the ``Sandbox`` interface (``interface.py``): it runs a ``Program``
over a batch of input grids with ``Limits`` and returns a ``ProgramResult``
(``run_variants``: many variants of one program as one job). Backends are
looked up by name in a registry (``registry.py``; ``make_sandbox`` in ``backends.py``):
``process`` (local, the embedded default), ``docker`` (containers, the security boundary),
``auto``, and any that an installed package registers; ``ray`` runs one of them on every
node of a cluster. The built-in backends share one pool (``pool.py``) over a transport
that says where the workers run.

Pool internals (``LocalPool`` in ``pool.py``; ``Transport``, ``WorkerLost`` in
``transport.py``) are not part of this surface: import them from there to write a pooled
backend of your own.

The names below are imported from their modules when first used, not when this package
is: the value layer (``arcjudge.grids``) imports the runtime's canonicalizer, which makes
Python import this package first, and the sandbox's modules import the value layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arcjudge.lazy_names import lazy_names

if TYPE_CHECKING:
    from arcjudge.sandbox.backends import SandboxOptions, describe_protections, make_sandbox
    from arcjudge.sandbox.interface import Job, Sandbox, VariantSandbox, run_variants
    from arcjudge.sandbox.policy import PolicyMode
    from arcjudge.sandbox.pool import PooledSandbox
    from arcjudge.sandbox.registry import (
        ENTRY_POINT_GROUP,
        BackendOptions,
        BackendUnavailable,
        ExecutorOptions,
        backend_names,
        executor_names,
        sandbox_backend,
        sandbox_executor,
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
    "ExecutorOptions",
    "GeneratorCall",
    "Grid",
    "Job",
    "Limits",
    "PolicyMode",
    "PooledSandbox",
    "Program",
    "ProgramResult",
    "ProgramStatus",
    "RunResult",
    "Sandbox",
    "SandboxOptions",
    "Status",
    "VariantSandbox",
    "backend_names",
    "changed_shared_state",
    "describe_protections",
    "executor_names",
    "make_sandbox",
    "run_variants",
    "sandbox_backend",
    "sandbox_executor",
]

_HOMES = {
    **dict.fromkeys(("Job", "Sandbox", "VariantSandbox", "run_variants"), "interface"),
    "PolicyMode": "policy",
    **dict.fromkeys(("SandboxOptions", "describe_protections", "make_sandbox"), "backends"),
    "PooledSandbox": "pool",
    **dict.fromkeys(
        (
            "ENTRY_POINT_GROUP",
            "BackendOptions",
            "BackendUnavailable",
            "ExecutorOptions",
            "backend_names",
            "executor_names",
            "sandbox_backend",
            "sandbox_executor",
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


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals(), __all__)
