"""The process backend with its supervisors run as an unprivileged uid (for ``throughput.py``).

The harness stays this process (root); each supervisor starts through
``tests/support/unprivileged.py``'s wrapper, so it is an unprivileged user's supervisor exactly:
it makes its own user namespace and isolates programs as a non-root user's would.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arcjudge.sandbox.process import RUNNER, PipeWorker, ProcessSandbox, supervisor_environment

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.support
from tests.support import unprivileged

del sys.path[0]


class UnprivilegedProcessSandbox(ProcessSandbox):
    """``ProcessSandbox`` whose supervisors run as an unprivileged uid (needs root here)."""

    def __init__(self, workers: int | None = None) -> None:
        problem = unprivileged.unavailable()
        if problem is not None:
            raise RuntimeError(f"cannot run supervisors as nobody: {problem}")
        super().__init__(workers)

    def _spawn_worker(self, cpu_slot: int | None) -> PipeWorker:
        argv = [self.python, "-s", "-B", "-P", str(RUNNER)]
        if cpu_slot is not None:
            argv += ["--cpu-slot", str(cpu_slot)]
        return PipeWorker(
            unprivileged.command(argv, supervisor_environment()), {"PATH": "/usr/bin:/bin"}
        )
