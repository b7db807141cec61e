"""Generated programs: ``score_full.py``'s candidates and ``mutation_speed.py``'s source.

All our own code: the candidate bodies are files in ``bench/synthetic/score/``, the
mutation source is drawn here from made-up DSL names.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

BODIES = Path(__file__).resolve().parents[1] / "synthetic" / "score"


def score_bodies() -> list[str]:
    """The candidate bodies (``def transform(g)``), in file-name order."""
    return [path.read_text() for path in sorted(BODIES.glob("*.py"))]


def write_score_programs(path: Path, n: int, task_ids: list[str]) -> None:
    """``n`` candidates as ``arcjudge score`` JSON lines, round-robin over tasks and bodies."""
    bodies = score_bodies()
    with path.open("w") as fh:
        for k in range(n):
            body = bodies[k % len(bodies)] + f"# program {k}\n"
            line = {"id": f"p{k}", "task_id": task_ids[k % len(task_ids)],
                    "model": f"m{k % 4}", "code": body}  # fmt: skip
            fh.write(json.dumps(line) + "\n")


def read_score_programs(path: Path) -> list[dict]:
    """The candidates of ``path`` (JSON lines)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


CONSTANTS = (
    "ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN",
    "ORIGIN", "UNITY", "DOWN", "RIGHT", "T", "F",
)  # fmt: skip
REAL_NAMES = ("vmirror", "hmirror", "hconcat", "first", "argmax", "fill", "height")


def mutation_verifiers(functions: int, assignments: int, seed: int) -> tuple[str, list[str]]:
    """A RE-ARC-style source with ``functions`` chains and about ``assignments`` lines.

    ``from dsl import *`` and ``verify_<8 hex>(I)`` functions, each a straight-line chain
    ``xK = fnNN(a, b, c)`` of calls to made-up DSL names with 1-3 arguments drawn from the
    last few bound names and the DSL's constants; a few real DSL names are mixed in so
    every default mutation operator has sites.

    Returns:
        The source and the function names.
    """
    rng = random.Random(seed)
    made_up = [f"fn{i:02d}" for i in range(60)]
    per_function = assignments / functions
    lines = ["from dsl import *\n"]
    names: list[str] = []
    for _ in range(functions):
        name = f"verify_{rng.getrandbits(32):08x}"
        names.append(name)
        count = max(1, round(per_function + rng.uniform(-0.6, 0.6) * per_function))
        lines.append(f"\n\ndef {name}(I):\n")
        bound = ["I"]
        for j in range(count):
            args = []
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.65:
                    args.append(rng.choice(bound[-4:]))
                else:
                    args.append(rng.choice(CONSTANTS))
            func = rng.choice(REAL_NAMES) if rng.random() < 0.1 else rng.choice(made_up)
            lines.append(f"    x{j} = {func}({', '.join(args)})\n")
            bound.append(f"x{j}")
        lines.append(f"    return x{count - 1}\n")
    return "".join(lines), names
