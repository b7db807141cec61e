"""The old home of the sandbox interface and pool, kept so old imports still work.

Import from :mod:`arcjudge.sandbox` instead (``Sandbox``, ``Job``, ``PooledSandbox``,
``WorkerLost``); the pieces now live in ``interface.py``, ``pool.py`` and ``wire.py``.
"""

from arcjudge.sandbox.interface import Job, Sandbox
from arcjudge.sandbox.pool import (
    RESPONSE_SLACK_SECONDS,
    STRONG_PROTECTIONS,
    LocalPool,
    PooledSandbox,
    Worker,
    WorkerLost,
)
from arcjudge.sandbox.wire import decode_result, encode_job

__all__ = [
    "RESPONSE_SLACK_SECONDS",
    "STRONG_PROTECTIONS",
    "Job",
    "LocalPool",
    "PooledSandbox",
    "Sandbox",
    "Worker",
    "WorkerLost",
    "decode_result",
    "encode_job",
]
