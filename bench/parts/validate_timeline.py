"""The CPU timeline of a ``validate_full.py`` run: what the workers and the machine did when.

``Timeline.install`` wraps a pooled sandbox's ``exchange`` (one job on one worker, what
``run``, ``generate`` and ``map`` all end in) to record each job's start, end, mode
(``generate``: generator samples; ``transform``: verifiers) and task, and samples the
machine's busy CPU from ``/proc/stat`` twice a second. ``timeline_lines`` turns that into
per-bucket busy workers (by kind) and machine CPU, the overlap of sampling and verifying,
and when the slowest generator's task had its samples and its verifiers.
"""

from __future__ import annotations

import threading
from typing import Any

from common.measure import machine_busy_seconds
from common.measure import now as _now

TICK = 0.5  # seconds between /proc/stat readings


class Timeline:
    """Records jobs and machine CPU from ``start()`` on (see the module docstring)."""

    def __init__(self) -> None:
        self.t0 = _now()
        self.jobs: list[tuple[float, float, str, str]] = []  # start, end, mode, task
        self.cpu: list[tuple[float, float]] = []  # time, busy CPU seconds since boot
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def install(self, sandbox: Any) -> None:
        inner = sandbox.exchange

        def exchange(program, inputs, limits, mode):  # type: ignore[no-untyped-def]
            start = _now()
            try:
                return inner(program, inputs, limits, mode)
            finally:
                end = _now()
                with self._lock:
                    task = program.name.rpartition(":")[2]
                    self.jobs.append((start - self.t0, end - self.t0, mode, task))

        sandbox.exchange = exchange

    def start(self) -> None:
        self.t0 = _now()
        self.cpu.append((0.0, machine_busy_seconds()))
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(TICK):
            self.cpu.append((_now() - self.t0, machine_busy_seconds()))

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        self.cpu.append((_now() - self.t0, machine_busy_seconds()))
        return {"jobs": self.jobs, "cpu": self.cpu, "wall": _now() - self.t0}


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def timeline_lines(data: dict, workers: int, buckets: int = 20) -> list[str]:
    """The timeline as text lines (see the module docstring)."""
    jobs = data["jobs"]
    wall = data["wall"]
    if not jobs or wall <= 0:
        return ["(no jobs recorded)"]
    width = wall / buckets
    digits = 0 if width >= 5 else 1
    lines = [
        f"{'seconds':>13}  {'busy workers':>12} {'(samples':>8} {'verify)':>7}  {'machine CPU':>11}"
    ]
    cpu = data["cpu"]
    for k in range(buckets):
        b0, b1 = k * width, (k + 1) * width
        busy = {"generate": 0.0, "transform": 0.0}
        for start, end, mode, _ in jobs:
            busy[mode] = busy.get(mode, 0.0) + _overlap(start, end, b0, b1)
        gen, ver = busy["generate"] / width, busy["transform"] / width
        before = [r for r in cpu if r[0] <= b0] or cpu[:1]  # the readings around the bucket
        after = [r for r in cpu if r[0] >= b1] or cpu[-1:]
        (ta, ca), (tb, cb) = before[-1], after[0]
        machine = f"{100 * (cb - ca) / (tb - ta) / workers:.0f}%" if tb > ta else "-"
        bar = "#" * round(4 * gen) + "=" * round(4 * ver)
        lines.append(
            f"{b0:>6.{digits}f}-{b1:<6.{digits}f}  {gen + ver:>12.2f} {gen:>8.2f} {ver:>7.2f}"
            f"  {machine:>11}  {bar}"
        )
    gens = [j for j in jobs if j[2] == "generate"]
    vers = [j for j in jobs if j[2] == "transform"]
    total = sum(e - s for s, e, _, _ in jobs)
    lines.append(
        f"workers busy {total / (workers * wall):.0%} of the run ({total:.1f} of"
        f" {workers * wall:.1f} worker-seconds); bars: # samples, = verifiers, 4 marks a"
        " busy worker; machine CPU: all processes (others' too), 100% = every core busy"
    )
    if gens and vers:
        last_sample = max(e for _, e, _, _ in gens)
        first_verify = min(s for s, _, _, _ in vers)
        before = sum(_overlap(s, e, 0.0, last_sample) for s, e, _, _ in vers)
        verify_total = sum(e - s for s, e, _, _ in vers)
        lines.append(
            f"samples: {len(gens)} jobs, {min(s for s, _, _, _ in gens):.1f}-{last_sample:.1f} s;"
            f" verifiers: {len(vers)} jobs from {first_verify:.1f} s;"
            f" {before / verify_total:.0%} of the verifier time ran before the last sample"
        )
        per_task: dict[str, float] = {}
        for s, e, _, task in gens:
            per_task[task] = per_task.get(task, 0.0) + e - s
        slow = max(per_task, key=lambda t: per_task[t])
        own_g = [j for j in gens if j[3] == slow]
        own_v = [j for j in vers if j[3] == slow]
        text = (
            f"slowest generator: {slow}, {per_task[slow]:.1f} s in {len(own_g)} jobs,"
            f" samples {min(j[0] for j in own_g):.1f}-{max(j[1] for j in own_g):.1f} s"
        )
        if own_v:
            text += (
                f", its verifiers {min(j[0] for j in own_v):.1f}-{max(j[1] for j in own_v):.1f} s"
            )
        lines.append(text)
    return lines
