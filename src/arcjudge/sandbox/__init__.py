"""Isolation and execution of untrusted programs.

The ``Sandbox`` interface (``base.py``) runs a ``Program`` over a batch of input grids with
``Limits`` and returns a ``ProgramResult``. Backends: ``process`` (local, the embedded
default) and ``docker`` (containers, the security boundary).
"""

from arcjudge.sandbox.base import Job, PooledSandbox, Sandbox, WorkerLost
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import (
    DEFINITION_LIMITS,
    VERIFIER_LIMITS,
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
)

__all__ = [
    "DEFINITION_LIMITS",
    "VERIFIER_LIMITS",
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
    "Status",
    "WorkerLost",
]
