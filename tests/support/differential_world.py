"""The differential analysis's world: one task, a faulty generator, four sources.

Shared by ``tests/harness/validate/test_differential.py`` (suspects, disputes, quarantine)
and ``test_records.py`` (the records' round trip).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.harness.validate.validator import ValidateConfig, Validator
from arcjudge.sandbox.types import Limits
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource, training_ids

TASK = "1e0a9b12"  # gravity; the faulty generator breaks the rule when seed % 7 == 3
FAULTY = {3, 10, 17}  # seeds 0..19
GRAVITY = (
    "def transform(g):\n    h, w = len(g), len(g[0])\n    out = [[0] * w for _ in range(h)]\n"
    "    for c in range(w):\n        col = [g[r][c] for r in range(h) if g[r][c]]\n"
    "        for k, v in enumerate(reversed(col)):\n            out[h - 1 - k][c] = v\n"
    "    return out\n"
)


def make_world(base: Path) -> Path:
    """One task, a faulty generator and four sources (one wrong off the trusted splits)."""
    root = sample_dir()
    (base / "tasks").mkdir()
    shutil.copy(root / "tasks" / f"{TASK}.json", base / "tasks")
    golf = base / "golf"
    golf.mkdir()
    number = training_ids().index(TASK) + 1
    (golf / f"task{number:03d}.py").write_text(GRAVITY.replace("def transform", "def p"))
    odd = base / "odd"  # right on the trusted splits, wrong when the cell sum is 6 mod 8
    odd.mkdir()
    (odd / f"{TASK}.py").write_text(
        GRAVITY.replace("    return out\n", "    if sum(map(sum, g)) % 8 == 6:\n"
                        "        out[0][0] = 9\n    return out\n")
    )  # fmt: skip
    return base


def run(world, sandbox, tmp_path, **extra):
    root = sample_dir()
    sources = (
        VerifierSource("re-arc", "re-arc", root / "re-arc"),
        VerifierSource("module", "module", root / "module"),
        VerifierSource("golf", "golf", world / "golf"),
        VerifierSource("odd", "module", world / "odd"),
    )
    config = ValidateConfig(
        tasks_dir=world / "tasks",
        sources=sources,
        generator=GeneratorSource("arc-gen", "tests/fixtures/generator_faulty"),
        samples=20,
        seed=0,
        limits=Limits(wall_seconds=2.0, total_seconds=60.0),
        **extra,
    )
    store = ResultStore(tmp_path / "s.sqlite")
    try:
        validator = Validator(config, sandbox, store)
        validator.run()
    finally:
        store.close()
    return validator
