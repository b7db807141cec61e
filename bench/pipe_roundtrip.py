"""Pipe round trips between two processes, on one CPU or left to the kernel.

Usage::

    python bench/pipe_roundtrip.py [--trips 50000]

A parent and a forked child echo a 120-byte message over two pipes (``os.write``,
``select``, ``os.read``: what a supervisor and its program do once per input), first
with both placed by the kernel, then with both pinned to one CPU (``sched_setaffinity``,
as the local sandbox pools pin their supervisors). Prints each way's wall time and the
CPU time of either side per round trip (Linux only).
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import time


def trips(n: int, cpu: int | None) -> tuple[float, float, float]:
    """Wall, parent CPU and child CPU seconds per round trip, pinned to ``cpu`` or not."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    pid = os.fork()
    if pid == 0:
        os.close(a_w)
        os.close(b_r)
        while data := os.read(a_r, 65536):
            os.write(b_w, data)
        os._exit(0)
    os.close(a_r)
    os.close(b_w)
    message = b"x" * 120
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(n):
        os.write(a_w, message)
        select.select([b_r], [], [], 5.0)
        os.read(b_r, 65536)
    wall, own = time.perf_counter() - start, time.process_time() - cpu_start
    os.close(a_w)
    os.waitpid(pid, 0)
    os.close(b_r)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    os.sched_setaffinity(0, before)
    return wall / n, own / n, child / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trips", type=int, default=50000)
    args = parser.parse_args()
    first = min(os.sched_getaffinity(0))
    for label, cpu in (("placed by the kernel", None), (f"both on CPU {first}", first)):
        wall, parent, child = trips(args.trips, cpu)
        print(f"{label:22} wall {wall * 1e6:6.1f} us, CPU parent {parent * 1e6:5.1f} us, "
              f"child {child * 1e6:5.1f} us per round trip")  # fmt: skip


if __name__ == "__main__":
    main()
