"""Running ``python -m arcjudge.cli ARGV`` and reading the harness process's own usage.

The harness process (the driver: it decodes replies, compares answers, writes the store)
reports its CPU seconds (all threads) and peak RSS at exit, apart from its children (the
sandbox's supervisors and programs), into a file named by ``ARCJUDGE_BENCH_USAGE``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from common.measure import now

# Peak RSS from /proc/self/status's VmHWM (this process image's own): ``ru_maxrss`` keeps
# the peak of the image before exec, so a child of a big bench process (score_full.py's
# raw run) reported the bench's peak, not its own.
WRAPPER = """
import json, os, resource, sys
from arcjudge.cli import main
def peak():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:
    code = main(sys.argv[1:])
finally:
    u = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.environ["ARCJUDGE_BENCH_USAGE"], "w") as fh:
        json.dump({"cpu": u.ru_utime + u.ru_stime, "rss": peak(),
                   "children": c.ru_utime + c.ru_stime}, fh)
sys.exit(code)
"""


@dataclass(frozen=True)
class Usage:
    """One command: its standard output, wall seconds, own CPU seconds and peak RSS bytes.

    ``children_cpu``: the CPU seconds of the processes it started and waited for (the
    local sandbox's supervisors, and through them the programs), when it exits.
    """

    stdout: str
    seconds: float
    cpu: float
    rss: int
    children_cpu: float = 0.0


def arcjudge_usage(argv: list[str]) -> Usage:
    """Run the command line with ``argv``; on a failure print its output's ends and exit 1."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage.json"
        env = {**os.environ, "ARCJUDGE_BENCH_USAGE": str(report)}
        start = now()
        proc = subprocess.run(
            [sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env,
            check=False,
        )  # fmt: skip
        seconds = now() - start
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            raise SystemExit(1)
        data = json.loads(report.read_text())
    return Usage(
        proc.stdout, seconds, float(data["cpu"]), int(data["rss"]), float(data["children"])
    )


def store_bytes(path: Path) -> int:
    """Bytes of a result store on disk, its ``-wal`` file included (checkpointed or not)."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
