"""Isolation and execution of untrusted programs.

Callers type against the ``Sandbox`` interface (``interface.py``): it runs a ``Program``
over a batch of input grids with ``Limits`` and returns a ``ProgramResult``
(``run_variants``: many variants of one program as one job). Backends are
looked up by name in a registry (``registry.py``; ``make_sandbox`` in ``backends.py``):
``process`` (local, the embedded default), ``docker`` (containers, the security boundary),
``auto``, and any that an installed package registers; ``ray`` runs one of them on every
node of a cluster. The built-in backends share one pool (``pool.py``) over a transport
that says where the workers run.
"""

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
