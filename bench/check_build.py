"""Check that a `dimensions build` output has the distribution the reference study describes.

Run by hand:  python bench/check_build.py BUILD_DIR [--tasks DIR] [--editing-kinds a,b,c]

Reads `BUILD_DIR/instances.jsonl` and `BUILD_DIR/build.json` and the task files (the
build's `inputs.tasks`, or `--tasks`) with the standard library only (no arcjudge code, so
it checks the build independently), and checks:

* every Editing pair is of one of the study's three types (human error, corrupted
  verifier, color flip; `--editing-kinds` names others);
* no candidate (Classification slot of any type, Editing pair) shows a demonstration's
  input (a train input of its task);
* when the build recorded a generator (`inputs.generator`), every valid Classification
  candidate and every Inversion instance is a generator sample (`split` "generator", with
  `seed` = the build seed + `index`), except on tasks whose `valid_source` in build.json
  says the generator gave no usable sample (listed; `--strict` fails on them).

Prints the counts it checked and every violation; exit status 0 when all hold, 1
otherwise. `tests/harness/dimensions/test_faithful.py` runs it on the bundled sample's build;
`bench/dimensions_full.py` on the 400 training tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

STUDY_EDITING_KINDS = ("human_error", "corrupted_verifier", "color_flip")


def _grid_key(grid: Any) -> str:
    return json.dumps(grid, separators=(",", ":"))


def _train_inputs(tasks_dir: Path, task_id: str) -> set[str]:
    task = json.loads((tasks_dir / f"{task_id}.json").read_text(encoding="utf-8"))
    return {_grid_key(pair["input"]) for pair in task["train"]}


def check(
    build_dir: Path,
    tasks_dir: Path | None = None,
    editing_kinds: tuple[str, ...] = STUDY_EDITING_KINDS,
    strict: bool = False,
) -> tuple[list[str], dict[str, Any]]:
    """The violations found in a build, and what was counted."""
    summary = json.loads((build_dir / "build.json").read_text(encoding="utf-8"))
    tasks_dir = tasks_dir or Path(summary["inputs"]["tasks"])
    generator = summary["inputs"].get("generator")
    seed = summary["seed"]
    fallback = sorted(
        t for t, info in summary["tasks"].items() if info.get("valid_source") != "generator"
    )
    problems: list[str] = []
    counts: Counter[str] = Counter()
    shown: dict[str, set[str]] = {}
    for number, line in enumerate(
        (build_dir / "instances.jsonl").read_text(encoding="utf-8").splitlines(), 1
    ):
        if not line.strip():
            continue
        record = json.loads(line)
        task_id, dimension = record["task_id"], record["dimension"]
        where = f"line {number} ({task_id} {dimension})"
        if task_id not in shown:
            shown[task_id] = _train_inputs(tasks_dir, task_id)
        demos = shown[task_id]
        key, prompt = record["key"], record["prompt"]
        if dimension == "editing":
            counts[f"editing {key['kind']}"] += 1
            if key["kind"] not in editing_kinds:
                problems.append(f"{where}: editing pair of type {key['kind']}")
            if _grid_key(prompt["input"]) in demos:
                problems.append(f"{where}: the editing pair shows a demonstration input")
        elif dimension == "classification":
            for slot, (pair, kind, origin) in enumerate(
                zip(prompt["candidates"], key["kinds"], key["provenance"], strict=True), 1
            ):
                counts[f"classification {kind}"] += 1
                if _grid_key(pair["input"]) in demos:
                    problems.append(f"{where}: candidate {slot} ({kind}) shows a demo input")
                if kind == "valid" and generator and task_id not in fallback:
                    if origin.get("split") != "generator":
                        problems.append(f"{where}: valid candidate {slot} is {origin.get('split')}")
                    elif origin.get("seed") != seed + origin.get("index", -1):
                        problems.append(f"{where}: valid candidate {slot}: seed != seed + index")
                    else:
                        counts["valid candidates from the generator"] += 1
        elif dimension == "inversion" and generator and task_id not in fallback:
            if key.get("split") != "generator":
                problems.append(f"{where}: the inversion instance is {key.get('split')}")
    if generator and fallback:
        note = f"tasks without a usable generator sample (valid pairs from ARC-GEN): {fallback}"
        if strict:
            problems.append(note)
        else:
            print(f"note {note}")
    counts["tasks"] = len(shown)
    return problems, dict(sorted(counts.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="a dimensions build --out directory")
    parser.add_argument("--tasks", type=Path, help="task directory (default: the build's)")
    parser.add_argument(
        "--editing-kinds",
        default=",".join(STUDY_EDITING_KINDS),
        help="the Editing types allowed (default: the study's three)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail on tasks the generator gave no sample for"
    )
    args = parser.parse_args()
    kinds = tuple(k.strip() for k in args.editing_kinds.split(",") if k.strip())
    problems, counts = check(args.build, args.tasks, kinds, args.strict)
    for name, n in counts.items():
        print(f"{name}: {n}")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{len(problems)} problem(s)" if problems else "all checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
