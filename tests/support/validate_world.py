"""``validate``'s small world: two tasks, five sources of every verdict kind, a generator.

Shared by ``tests/harness/validate/test_validate.py`` (the verdicts), ``test_flow.py`` (the
order work is done in) and ``test_records.py`` (the records' round trip).
"""

from __future__ import annotations

import json
from pathlib import Path

from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.validator import ValidateConfig, Validator
from arcjudge.sandbox.types import Limits
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource, training_ids

# Two real training ids (so the golf numbering applies) carrying our own synthetic tasks.
FLIP, RECOLOR = training_ids()[0], training_ids()[1]  # task001, task002


def flip(g):
    return [list(r) for r in g[::-1]]


def recolor(g):
    return [[5 if c else 0 for c in r] for r in g]


def pairs(rule, grids):
    return [{"input": g, "output": rule(g)} for g in grids]


TRAIN = [[[1, 2], [3, 4]], [[0, 1, 0], [2, 2, 2]], [[3, 3], [0, 3], [4, 4]]]
ARC_GEN = [
    [[1, 1], [2, 2]],
    [[4, 5, 6]],
    [[9, 1], [2, 3]],
    [[6], [4], [8]],
]  # 1-row; starts with 9; no 7


def write_task(root: Path, task_id: str, rule) -> None:
    data = {"train": pairs(rule, TRAIN[:2]), "test": pairs(rule, TRAIN[2:])}
    (root / "tasks").mkdir(exist_ok=True)
    (root / "tasks" / f"{task_id}.json").write_text(json.dumps(data))
    (root / "arcgen").mkdir(exist_ok=True)
    (root / "arcgen" / f"{task_id}.json").write_text(json.dumps(pairs(rule, ARC_GEN)))


def make_world(tmp_path: Path) -> Path:
    """Two tasks, five sources (every verdict kind), a generator; see the comments."""
    write_task(tmp_path, FLIP, flip)
    write_task(tmp_path, RECOLOR, recolor)
    # re-arc style: our own DSL and straight-line verifiers.
    rearc = tmp_path / "rearc"
    rearc.mkdir()
    (rearc / "dsl.py").write_text(
        "def vmirror(g):\n    return g[::-1]\n\n"
        "def recolor_all(g, c):\n    return tuple(tuple(c if v else 0 for v in r) for r in g)\n\n"
        "FIVE = 5\n"
    )
    (rearc / "verifiers.py").write_text(
        "from dsl import *\n\n\n"
        f"def verify_{FLIP}(I):\n    x0 = vmirror(I)\n    return x0\n\n\n"
        f"def verify_{RECOLOR}(I):\n    x0 = recolor_all(I, FIVE)\n    return x0\n"
    )
    # golf style: task001 wrong only on 1-row grids (an ARC-GEN-only failure), task002 absent.
    golf = tmp_path / "golf"
    golf.mkdir()
    (golf / "task001.py").write_text("p=lambda g:g[::-1]if len(g)>1else[[0]]\n")
    # module style: FLIP times out on grids starting with 9; RECOLOR has a syntax error.
    module = tmp_path / "module"
    module.mkdir()
    (module / f"{FLIP}.py").write_text(
        "def transform(g):\n    while g[0][0] == 9:\n        pass\n    return g[::-1]\n"
    )
    (module / f"{RECOLOR}.py").write_text("def transform(g)\n    return g\n")
    # crash style: every call raises.
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / f"{FLIP}.py").write_text("def transform(g):\n    raise RuntimeError('boom')\n")
    # generator in the ARC-GEN format: sometimes colour 7, which the demos never show.
    gen = tmp_path / "gen"
    (gen / "tasks").mkdir(parents=True)
    (gen / "common.py").write_text(
        "import random\n\ndef grid(colors):\n"
        "    h, w = random.randint(2, 4), random.randint(2, 4)\n"
        "    return [[random.choice(colors) for _ in range(w)] for _ in range(h)]\n"
    )
    (gen / "tasks" / f"task_{FLIP}.py").write_text(
        "import common\n\ndef generate():\n    g = common.grid([0, 1, 2, 7])\n"
        "    return {'input': g, 'output': g[::-1]}\n"
    )
    (gen / "tasks" / f"task_{RECOLOR}.py").write_text(
        "import common\n\ndef generate():\n    g = common.grid([0, 3, 7])\n"
        "    return {'input': g, 'output': [[5 if c else 0 for c in r] for r in g]}\n"
    )
    # a verifier that is right on demos and ARC-GEN but maps 7 wrongly (generator-only).
    seven = tmp_path / "seven"
    seven.mkdir()
    (seven / f"{RECOLOR}.py").write_text(
        "def transform(g):\n    return [[5 if c and c != 7 else 0 for c in r] for r in g]\n"
    )
    return tmp_path


def run_validate(world, sandbox, out_name="store.sqlite", samples=8):
    sources = (
        VerifierSource("rearc", "re-arc", world / "rearc"),
        VerifierSource("golf", "golf", world / "golf"),
        VerifierSource("module", "module", world / "module"),
        VerifierSource("crash", "module", world / "crash"),
        VerifierSource("seven", "module", world / "seven"),
    )
    config = ValidateConfig(
        tasks_dir=world / "tasks",
        sources=sources,
        arcgen_dir=world / "arcgen",
        generator=GeneratorSource("arc-gen", world / "gen"),
        samples=samples,
        seed=0,
        chunk=3,
        limits=Limits(wall_seconds=1.0, total_seconds=30.0),
    )
    store = ResultStore(world / out_name)
    try:
        validator = Validator(config, sandbox, store)
        validator.run()
    finally:
        store.close()
    return validator
