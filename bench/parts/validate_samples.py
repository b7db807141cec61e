"""Generator samples for ``validate_full.py --samples N``: our own generators, their raw cost.

``write_generators`` writes one ARC-GEN-layout generator per task (``tasks/task_<id>.py``,
``generate()``): it spins a calibrated busy loop, then returns one of the task's last
``GEN_PAIRS`` ARC-GEN pairs picked with the seeded ``random`` (so every sample is a real
input of the task and the verifier's work on it is like its work on ARC-GEN). The pairs
are imported from ``pairs_<id>.py`` beside ``tasks/``, so the program the harness checks
stays small, like a real generator importing ``common``. The cost per sample is seeded
log-normal around ``--gen-ms``, and one task (a seeded pick) costs ``--slow-gen-ms`` per
sample, like the real generator that took 56 s for 50 samples.

``raw_samples`` is the single-core baseline of the same work: in this process, per task
and sample ``i``, ``random.seed(seed + i)``, the generator, then the task's verifier on the
sample's input, compared with its output (added to raw's time, so every ratio covers it).
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common.data import task_pairs
from common.measure import now as _now

GEN_PAIRS = 8  # pairs each generator picks from
SEED = 77  # validate's default seed


def spins_per_ms() -> float:
    """Iterations of the generators' busy loop per millisecond, in this interpreter."""
    n = 200_000
    t0 = time.perf_counter()
    x = 0
    for _ in range(n):
        x = (x * 31 + 7) % 1000003
    return n / (1000 * (time.perf_counter() - t0))


def generator_costs(
    task_ids: Sequence[str], seed: int, gen_ms: float, slow_ms: float
) -> dict[str, float]:
    """Milliseconds per sample of each task's generator (one slow task, a seeded pick)."""
    rng = random.Random(seed + 1)
    costs = {t: gen_ms * rng.lognormvariate(0.0, 0.8) / math.exp(0.32) for t in task_ids}
    if slow_ms > 0 and task_ids:
        costs[rng.choice(list(task_ids))] = slow_ms
    return costs


def write_generators(
    gen_dir: Path, task_ids: Sequence[str], tasks_dir: Path, arcgen_dir: Path, costs: dict
) -> None:
    """Write ``gen_dir/tasks/task_<id>.py`` per task (see the module docstring)."""
    rate = spins_per_ms()
    (gen_dir / "tasks").mkdir(parents=True, exist_ok=True)
    for task_id in task_ids:
        pairs = [
            ([list(r) for r in g], [list(r) for r in o])
            for g, o in task_pairs(tasks_dir, arcgen_dir, task_id)[-GEN_PAIRS:]
        ]
        spins = max(0, round(costs[task_id] * rate))
        (gen_dir / f"pairs_{task_id}.py").write_text(f"PAIRS = {json.dumps(pairs)}\n")
        (gen_dir / "tasks" / f"task_{task_id}.py").write_text(
            "import random\n\n"
            f"from pairs_{task_id} import PAIRS\n\n"
            f"SPINS = {spins}\n\n\n"
            "def generate():\n"
            "    x = 0\n"
            "    for _ in range(SPINS):\n"
            "        x = (x * 31 + 7) % 1000003\n"
            "    g, o = PAIRS[random.randrange(len(PAIRS))]\n"
            "    return {'input': [list(r) for r in g], 'output': [list(r) for r in o]}\n"
        )


def raw_samples(
    gen_dir: Path,
    fns: dict[str, Callable],
    kind: str,
    task_ids: Sequence[str],
    samples: int,
    seed: int = SEED,
) -> dict:
    """Draw and verify every task's samples in this process; seconds of each half.

    ``cpu_seconds`` includes loading the generators (not in either half).
    """
    copy = (
        (lambda g: tuple(tuple(r) for r in g))
        if kind == "re-arc"
        else (lambda g: [list(r) for r in g])
    )
    gen_seconds = verify_seconds = 0.0
    per_task: dict[str, float] = {}
    c0 = time.process_time()
    sys.path.insert(0, str(gen_dir))
    for task_id in task_ids:
        path = gen_dir / "tasks" / f"task_{task_id}.py"
        namespace: dict[str, object] = {"__name__": path.stem}
        exec(compile(path.read_bytes(), str(path), "exec"), namespace)
        generate = namespace["generate"]
        fn = fns[task_id]
        t0 = _now()
        drawn = []
        for i in range(samples):
            random.seed(seed + i)
            drawn.append(generate())  # type: ignore[operator]
        t1 = _now()
        for pair in drawn:
            try:
                out = fn(copy(pair["input"]))
            except Exception:
                continue
            if type(out) is not tuple or (out and type(out[0]) is not tuple):
                try:
                    out = tuple(tuple(r) for r in out)
                except TypeError:
                    continue
            _ = out == tuple(tuple(r) for r in pair["output"])
        t2 = _now()
        gen_seconds += t1 - t0
        verify_seconds += t2 - t1
        per_task[task_id] = t1 - t0
    sys.path.remove(str(gen_dir))
    return {
        "cpu_seconds": time.process_time() - c0,
        "gen_seconds": gen_seconds,
        "verify_seconds": verify_seconds,
        "calls": samples * len(task_ids),
        "slowest": max(per_task.items(), key=lambda kv: kv[1]) if per_task else None,
    }
