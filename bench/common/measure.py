"""Measuring: the code state, CPU time, wall time, peak memory and machine load.

Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]

now = time.perf_counter  # wall clock for intervals


def code_state() -> str:
    """The commit and uncommitted ``src/`` changes the numbers were taken with."""

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=CHECKOUT, capture_output=True, check=False)
        return proc.stdout.decode(errors="replace") if proc.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    changed = [line for line in git("status", "--porcelain", "--", "src").splitlines() if line]
    if not changed:
        return f"code: {head}, src/ clean"
    digest = hashlib.sha256(git("diff", "HEAD", "--", "src").encode()).hexdigest()[:10]
    return f"code: {head} + {len(changed)} uncommitted src/ changes (diff {digest})"


def load_average() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def load_note() -> str:
    """The 1- and 5-minute load averages and the core count, as one phrase."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} cores"


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """User + system CPU seconds of this process (all threads) or its reaped children.

    Programs in a PID namespace are not reaped through their supervisor, so
    ``RUSAGE_CHILDREN`` can miss much of a sandbox's CPU time.
    """
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's reaped children."""
    return cpu_seconds(resource.RUSAGE_CHILDREN)


def peak_rss_bytes(who: int = resource.RUSAGE_SELF) -> int:
    """Peak resident set size (``ru_maxrss``) of this process or its largest child."""
    return resource.getrusage(who).ru_maxrss * 1024


def children_peak_rss_bytes() -> int:
    """Peak resident set size of the largest of this process's reaped children."""
    return peak_rss_bytes(resource.RUSAGE_CHILDREN)


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent busy since boot (from /proc/stat); includes others' load."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def container_cpu_seconds(container_id: str) -> float | None:
    """CPU seconds a running container has used (cgroup v1 or v2), or ``None``."""
    v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage")
    v2 = Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat")
    try:
        if v1.is_file():
            return int(v1.read_text()) / 1e9
        if v2.is_file():
            for line in v2.read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError):
        pass
    return None


def mib(n: float) -> str:
    """``n`` bytes as whole MiB."""
    return f"{n / (1 << 20):.0f} MiB"
