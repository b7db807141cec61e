"""The raw baselines of ``validate_full.py``: the verifiers called in-process, no sandbox.

``run_raw`` and ``raw_child`` are standard library only: ``--raw-in-image`` runs them in
the runtime image's interpreter (``validate_full.py --raw-child SPEC``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import containers
from common.data import Grid, task_pairs
from common.measure import now as _now
from common.verifier_source import Plan, golf_numbers, write_source

SCRIPT = Path(__file__).resolve().parents[1] / "validate_full.py"
CALIBRATION_PAIRS = 8  # ARC-GEN inputs per task used to calibrate the cost per call


def usable_arcgen(arcgen_dir: Path, work: Path, task_ids: Sequence[str]) -> tuple[Path, dict]:
    """The ARC-GEN directory the harness can read, and what had to be left out.

    ``load_arcgen_pairs`` rejects a whole file when one grid breaks the ARC rules (e.g.
    more than 30 rows), which stops ``validate``. Files that load are linked as they are;
    the others are copied without their unreadable pairs (counted in the report).
    """
    from arcjudge.grids import validate_plain
    from arcjudge.tasks import TaskFormatError, load_arcgen_pairs

    dropped: dict[str, tuple[int, int]] = {}
    total = 0
    target = work / "arc-gen"
    for task_id in task_ids:
        path = arcgen_dir / f"{task_id}.json"
        if not path.is_file():
            continue
        try:
            total += len(load_arcgen_pairs(path))
            continue
        except TaskFormatError:
            pass
        raw = json.loads(path.read_bytes())
        keep = [
            p
            for p in raw
            if validate_plain(p.get("input"))[0] is not None
            and validate_plain(p.get("output"))[0] is not None
        ]
        dropped[task_id] = (len(raw) - len(keep), len(raw))
        total += len(keep)
        target.mkdir(exist_ok=True)
        (target / path.name).write_text(json.dumps(keep))
    if not dropped:
        return arcgen_dir, {"pairs": total, "dropped": {}}
    for task_id in task_ids:
        path = arcgen_dir / f"{task_id}.json"
        link = target / path.name
        if path.is_file() and task_id not in dropped and not link.exists():
            link.symlink_to(path.resolve())
    return target, {"pairs": total, "dropped": dropped}


def load_functions(
    source_dir: Path, kind: str, task_ids: Sequence[str], numbers: dict[str, int]
) -> dict[str, object]:
    """Import the source once: task id -> its verifier function (golf: by file number)."""
    if kind == "re-arc":
        for name in ("dsl", "verifiers"):
            sys.modules.pop(name, None)
        sys.path.insert(0, str(source_dir))
        importlib.invalidate_caches()
        try:
            import verifiers  # type: ignore[import-not-found]
        finally:
            sys.path.remove(str(source_dir))
        return {t: getattr(verifiers, f"verify_{t}") for t in task_ids}
    fns = {}
    for t in task_ids:
        path = source_dir / f"task{numbers[t]:03d}.py"
        namespace: dict[str, object] = {"__name__": path.stem}
        exec(compile(path.read_bytes(), str(path), "exec"), namespace)
        fns[t] = namespace["p"]
    return fns


@dataclass
class RawResult:
    seconds: float = 0.0  # calls and comparisons only
    cpu_seconds: float = 0.0  # CPU time of the same (well below ``seconds``: contention)
    load_seconds: float = 0.0  # reading task and ARC-GEN files
    import_seconds: float = 0.0
    calls: int = 0
    verdicts: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    per_task: dict[str, tuple[int, float]] = field(default_factory=dict)


def run_raw(
    source_dir: Path,
    kind: str,
    task_ids: Sequence[str],
    tasks_dir: Path,
    arcgen_dir: Path,
    numbers: dict[str, int],
    preloaded: dict[str, list[tuple[Grid, Grid]]] | None = None,
) -> RawResult:
    """Call every verifier on every input of its task, in this process, one core.

    ``preloaded`` (task id -> pairs) replaces reading the data (for calibration samples).
    """
    res = RawResult()
    t0 = _now()
    fns = load_functions(source_dir, kind, task_ids, numbers)
    res.import_seconds = _now() - t0
    copy = (
        (lambda g: tuple(tuple(r) for r in g))
        if kind == "re-arc"
        else (lambda g: [list(r) for r in g])
    )
    for task_id in task_ids:
        t0 = _now()
        if preloaded is not None:
            pairs = preloaded[task_id]
        else:
            pairs = task_pairs(tasks_dir, arcgen_dir, task_id)
        res.load_seconds += _now() - t0
        fn = fns[task_id]
        right = 0
        c0 = time.process_time()
        t0 = _now()
        for grid, expected in pairs:
            try:
                out = fn(copy(grid))
            except Exception:
                res.statuses["error"] += 1
                continue
            res.statuses["ok"] += 1
            if type(out) is not tuple or (out and type(out[0]) is not tuple):
                try:
                    out = tuple(tuple(r) for r in out)
                except TypeError:
                    continue
            right += out == expected
        seconds = _now() - t0
        res.cpu_seconds += time.process_time() - c0
        res.seconds += seconds
        res.calls += len(pairs)
        res.per_task[task_id] = (len(pairs), seconds)
        res.verdicts["valid" if right == len(pairs) else "invalid"] += 1
    return res


def raw_to_json(res: RawResult) -> dict:
    return {
        "seconds": res.seconds,
        "cpu_seconds": res.cpu_seconds,
        "load_seconds": res.load_seconds,
        "import_seconds": res.import_seconds,
        "calls": res.calls,
        "verdicts": dict(res.verdicts),
        "statuses": dict(res.statuses),
        "python": sys.version.split()[0],
    }


def raw_child(spec: dict) -> dict:
    """A raw run over ``spec['task_ids']`` (standard library only: runs in the image too)."""
    res = run_raw(
        Path(spec["source_dir"]),
        spec["kind"],
        spec["task_ids"],
        Path(spec["tasks_dir"]),
        Path(spec["arcgen_dir"]),
        spec["numbers"],
    )
    return raw_to_json(res)


def _child_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def balanced_shares(cost: dict[str, float], n: int) -> list[list[str]]:
    """Split tasks into ``n`` shares of about equal cost (longest first, to the lightest)."""
    shares: list[list[str]] = [[] for _ in range(n)]
    load = [0.0] * n
    for task_id in sorted(cost, key=lambda t: -cost[t]):
        k = load.index(min(load))
        shares[k].append(task_id)
        load[k] += cost[task_id]
    return [sorted(share) for share in shares]


def run_raw_parallel(spec: dict, work: Path, cost: dict[str, float], n: int) -> dict:
    """``n`` raw runs at once on shares of equal raw cost: what ``n`` cores give at best."""
    procs = []
    t0 = _now()
    for k, share in enumerate(balanced_shares(cost, n)):
        path = work / f"raw-{k}.json"
        path.write_text(json.dumps({**spec, "task_ids": share}))
        procs.append(
            subprocess.Popen(
                [sys.executable, str(SCRIPT), "--raw-child", str(path)],
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    outs = [_child_json(proc.communicate()[0]) for proc in procs]
    wall = _now() - t0
    return {
        "wall": wall,
        "seconds": [o["seconds"] for o in outs],
        "cpu_seconds": [o["cpu_seconds"] for o in outs],
        "calls": sum(o["calls"] for o in outs),
    }


def run_raw_in_image(spec: dict, work: Path, image: str, mounts: Sequence[Path]) -> dict:
    """The raw run inside one container of the runtime image (its interpreter, one core)."""
    path = work / "raw-image.json"
    path.write_text(json.dumps(spec))
    dirs = sorted({str(Path(m).resolve()) for m in (*mounts, SCRIPT.parent, work)})
    volumes = [a for d in dirs for a in ("-v", f"{d}:{d}:ro")]
    name = f"arcjudge-bench-raw-{os.getpid()}"
    user = ("--user", f"{os.getuid()}:{os.getgid()}")  # to read the (private) work directory
    argv = containers.run_argv(image, name, "raw", *volumes, *user)
    argv += ["python3", "-s", "-B", str(SCRIPT), "--raw-child", str(path)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        containers.remove(name)
        raise RuntimeError(
            f"raw in the image failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    return _child_json(proc.stdout)


def calibrate(
    plans: Sequence[Plan],
    kind: str,
    work: Path,
    tasks_dir: Path,
    arcgen_dir: Path,
    target_ms: float,
) -> tuple[float, list[str]]:
    """Find the smoothing scale whose mean cost per call is ``target_ms`` (on a sample)."""
    ids = [p.task_id for p in plans]
    lines = []
    # The ARC-GEN end of each task's inputs: what dominates a full run.
    sample = {t: task_pairs(tasks_dir, arcgen_dir, t)[-CALIBRATION_PAIRS:] for t in ids}

    def mean_ms(scale: float) -> float:
        write_source(work, kind, plans, scale)
        raw = run_raw(work, kind, ids, tasks_dir, arcgen_dir, golf_numbers(), sample)
        ms = 1000 * raw.seconds / max(1, raw.calls)
        lines.append(f"scale {scale:.3f}: {ms:.3f} ms per call ({raw.calls} calls)")
        return ms

    # The cost is about linear in the scale but lumpy (a few big grids weigh a lot), so
    # bracket the target and narrow the bracket (false position, bisecting when stuck).
    lo, a = 0.0, mean_ms(0.0)
    if a >= target_ms:
        return 0.0, lines
    hi, b = 2.0, mean_ms(2.0)
    while b < target_ms and hi < 1000:
        lo, a = hi, b
        hi *= 2
        b = mean_ms(hi)
    best = (abs(b - target_ms), hi)
    for step in range(6):
        if best[0] <= 0.03 * target_ms:
            break
        guess = lo + (target_ms - a) * (hi - lo) / (b - a)
        if step % 2 or not lo < guess < hi:  # every other step, bisect
            guess = (lo + hi) / 2
        got = mean_ms(guess)
        best = min(best, (abs(got - target_ms), guess))
        if got < target_ms:
            lo, a = guess, got
        else:
            hi, b = guess, got
    return best[1], lines
