"""Instances of three sample tasks, hand-written prompts for them, canned model replies.

Shared by tests/harness/dimensions/test_reply_grader.py and
tests/integrations/test_inspect_task.py. The instances come from a real ``validate`` +
``dimensions build`` over three bundled sample tasks with module verifiers (as in
tests/harness/dimensions/test_records.py), so generation, editing and inversion replies are
graded by real verifier calls in the sandbox. Replies are raw text in the formats models
write (candidate lines, labelled grids, JSON, code blocks):

* an *oracle* reply is built from the instance's hidden key (the test outputs, the
  labels, the reference pair or edit, the true input; for Definition the task's validated
  verifier as the program) and passes by the rules;
* a *wrong* reply fails by the rules whatever the verifier says: every judgment flipped,
  a copy of a demonstration, the corrupted pair left unedited (the build confirmed it
  invalid), the identity as the program, or no grid at all.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from arcjudge import cli
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.vocabulary import BUILT_DIMENSIONS

TASKS = ("1e0a9b12", "67a3c6ac", "74dd1130")
REPLY_DIMENSIONS = tuple(str(d) for d in BUILT_DIMENSIONS)
# the module verifiers (the sample's 67a3c6ac is wrong on purpose: a right one instead),
# also the oracle Definition programs
PROGRAMS = {t: (sample_dir() / "module" / f"{t}.py").read_text() for t in TASKS}
PROGRAMS["67a3c6ac"] = "def transform(g):\n    return [r[::-1] for r in g]\n"


def build_instances(root: Path) -> Path:
    """Validate and build three sample tasks under ``root``; the instances file."""
    sample = sample_dir()
    (root / "tasks").mkdir()
    (root / "module").mkdir()
    for task_id in TASKS:
        shutil.copy(sample / "tasks" / f"{task_id}.json", root / "tasks")
        (root / "module" / f"{task_id}.py").write_text(PROGRAMS[task_id])
    (root / "neighbours.jsonl").write_text(
        '{"task_id": "67a3c6ac", "neighbour_task_ids": ["74dd1130"]}\n'
    )
    common = ("--backend", "process", "--no-progress")
    assert cli.main(["validate", "--tasks", str(root / "tasks"), "--source",
                     f"module=module:{root / 'module'}", "--out", str(root / "val"),
                     *common]) == 0  # fmt: skip
    assert cli.main(["dimensions", "build", "--tasks", str(root / "tasks"), "--manifest",
                     str(root / "val"), "--neighbours", str(root / "neighbours.jsonl"),
                     "--out", str(root / "built"), *common]) == 0  # fmt: skip
    return root / "built" / "instances.jsonl"


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reply_id(record: dict[str, Any]) -> str:
    return f"{record['task_id']}/{record['dimension']}"


def write_prompts(instances: Path, path: Path, dimensions=REPLY_DIMENSIONS) -> list[str]:
    """A hand-written prompts file for the instances of ``dimensions``; the ids, in order.

    Each user message names its prompt id (the canned model finds its reply by it) and
    shows the instance's model-visible part; never its key.
    """
    ids, lines = [], []
    for record in read_records(instances):
        if record["dimension"] not in dimensions:
            continue
        ids.append(reply_id(record))
        lines.append(json.dumps({
            "id": reply_id(record), "task_id": record["task_id"],
            "dimension": record["dimension"],
            "messages": [
                {"role": "system", "content": "You solve ARC puzzles."},
                {"role": "user", "content": f"[{reply_id(record)}] {json.dumps(record['prompt'])}"},
            ],
            "model_visible": record["prompt"],
        }) + "\n")  # fmt: skip
    path.write_text("".join(lines))
    return ids


def rows(grid: list[list[int]]) -> str:
    return "\n".join(" ".join(str(v) for v in row) for row in grid)


def oracle_reply(record: dict[str, Any]) -> str | None:
    """A reply that passes, from the key; ``None`` when the key has no answer to give."""
    dim, key = record["dimension"], record["key"]
    if dim == "output_grid":
        grids = [f"Test {i}:\n```\n{rows(g)}\n```" for i, g in enumerate(key["test_outputs"], 1)]
        return "\n\n".join(grids)
    if dim == "definition":
        return f"```python\n{PROGRAMS[record['task_id']]}```\n"
    if dim == "classification":
        lines = [f"Candidate {i}: {label}" for i, label in enumerate(key["labels"], 1)]
        return "Let me check each pair.\n" + "\n".join(lines)
    if dim == "generation":
        pair = key["reference"]
        if pair is None:
            return None
        return f"Input:\n{rows(pair['input'])}\n\nOutput:\n{rows(pair['output'])}\n"
    if dim == "editing":
        edit = key["reference_edit"]
        return None if edit is None else "Repaired:\n" + json.dumps(edit)
    if dim == "inversion":
        return f"The input was:\n```\n{rows(key['input'])}\n```\n"
    raise ValueError(dim)


def wrong_reply(record: dict[str, Any]) -> str:
    """A reply that fails by the rules."""
    dim, prompt, key = record["dimension"], record["prompt"], record["key"]
    if dim == "output_grid":
        return "I am not sure what the rule is."
    if dim == "definition":
        return "```python\ndef transform(grid):\n    return grid\n```\n"
    if dim == "classification":
        flipped = ["invalid" if label == "valid" else "valid" for label in key["labels"]]
        return json.dumps(flipped)
    if dim == "generation":  # a copy of the first demonstration
        pair = prompt["avoid"][0]
        return f"Input:\n{rows(pair['input'])}\nOutput:\n{rows(pair['output'])}\n"
    if dim == "editing":  # the corrupted pair, unedited
        return f"Input:\n{rows(prompt['input'])}\nOutput:\n{rows(prompt['output'])}\n"
    if dim == "inversion":
        return "I cannot tell which input this came from."
    raise ValueError(dim)


def expected_passes(records: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Dimension -> (instances with an oracle reply, instances), over ``records``."""
    counts: dict[str, list[int]] = {}
    for record in records:
        entry = counts.setdefault(record["dimension"], [0, 0])
        entry[0] += oracle_reply(record) is not None
        entry[1] += 1
    return {d: (p, n) for d, (p, n) in counts.items()}
