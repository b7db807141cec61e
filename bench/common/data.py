"""Where the ARC data is, and reading it with the standard library alone.

The data directory holds ``arc-agi-1/training`` (one JSON task per file) and
``arc-gen-100k`` (one JSON list of pairs per task). It comes from ``--data``, else
``$ARCJUDGE_DATA``, else ``../shared/data`` beside the checkout if that exists.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ENV = "ARCJUDGE_DATA"
CHECKOUT = Path(__file__).resolve().parents[2]
CONVENTIONAL = CHECKOUT.parent / "shared" / "data"
TRAINING = Path("arc-agi-1") / "training"
ARCGEN = Path("arc-gen-100k")

Grid = tuple[tuple[int, ...], ...]


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--data DIR`` (default: ``$ARCJUDGE_DATA``, then ``../shared/data``)."""
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"data directory (default: ${ENV}, else {CONVENTIONAL} if it exists)",
    )


def root(given: Path | None) -> Path:
    """The data directory: ``given``, ``$ARCJUDGE_DATA`` or the conventional one.

    Raises:
        SystemExit: With a clear message when none is given and the conventional one
            does not exist.
    """
    if given is not None:
        return given
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    if CONVENTIONAL.is_dir():
        return CONVENTIONAL
    raise SystemExit(
        f"no ARC data directory: pass --data DIR or set ${ENV} (expected {TRAINING} and"
        f" {ARCGEN} under it); {CONVENTIONAL} does not exist"
    )


def training_dir(data: Path) -> Path:
    """The ARC-AGI-1 training tasks under ``data``."""
    return data / TRAINING


def arcgen_dir(data: Path) -> Path:
    """The ARC-GEN pairs under ``data``."""
    return data / ARCGEN


def task_ids(tasks: Path) -> list[str]:
    """The task ids in ``tasks`` (file stems), sorted."""
    return sorted(p.stem for p in tasks.glob("*.json"))


def _grid(value: list) -> Grid:
    return tuple(tuple(row) for row in value)


def task_pairs(tasks_dir: Path, arcgen_dir: Path, task_id: str) -> list[tuple[Grid, Grid]]:
    """Train and test pairs with outputs, then the ARC-GEN pairs (as ``validate`` sees them).

    Standard library only (raw runs also happen in the runtime image's interpreter); the
    harness's own reader checks the data elsewhere.
    """
    task = json.loads((tasks_dir / f"{task_id}.json").read_bytes())
    pairs = [
        (_grid(p["input"]), _grid(p["output"]))
        for p in (*task["train"], *task["test"])
        if "output" in p
    ]
    path = arcgen_dir / f"{task_id}.json"
    arc_gen = json.loads(path.read_bytes()) if path.is_file() else task.get("arc-gen", [])
    pairs += [(_grid(p["input"]), _grid(p["output"])) for p in arc_gen if "output" in p]
    return pairs
