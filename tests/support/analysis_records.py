"""Synthetic ``dimensions analyze`` inputs: instances, items, a full build, written as JSONL.

Shared by ``tests/harness/analyze/test_analyze.py`` (every table) and ``test_budget.py``
(Section 3.1's matched budget). No sandbox: the records are written, never produced.
"""

from __future__ import annotations

import json
from pathlib import Path

from arcjudge.harness.analyze.inputs import AnalysisInputs
from arcjudge.harness.dimensions.records import DimensionInstance, DimensionItem
from arcjudge.harness.score.records import ScoreResult
from arcjudge.vocabulary import BUILT_DIMENSIONS

# --------------------------------------------------------------- synthetic data

VERIFIER = {"source": "s", "kind": "module", "path": "/nowhere"}
PAIR = {"input": [[0]], "output": [[1]]}


def instance(task: str, dim: str, kinds: list[str] | None = None, digests=()) -> dict:
    prompt: dict = {}
    key: dict = {}
    if dim == "output_grid":
        prompt, key = {"test_inputs": [[[0]]]}, {"test_outputs": [[[1]]]}
    elif dim == "classification":
        kinds = kinds or ["valid", "color_flip", "valid", "instance_mismatch", "retrieval"]
        labels = ["valid" if k == "valid" else "invalid" for k in kinds]
        prompt = {"candidates": [PAIR] * 5}
        key = {"labels": labels, "kinds": kinds}
    elif dim == "generation":
        prompt, key = {"avoid": [PAIR]}, {"arcgen_digests": list(digests)}
    elif dim == "editing":
        prompt = dict(PAIR)
    elif dim == "inversion":
        prompt = {"output": [[1]]}
    return {
        "task_id": task,
        "dimension": dim,
        "seed": 77,
        "verifier": VERIFIER,
        "prompt": prompt,
        "key": key,
    }


def item(model, run, task, dim, passed, detail=None, consistency=None) -> dict:
    data = {
        "model": model,
        "run": str(run),
        "task_id": task,
        "dimension": dim,
        "passed": passed,
        "reason": None if passed else "wrong",
        "detail": detail or {},
    }
    if consistency is not None:
        data["consistency"] = consistency
    return data


def inputs_of(
    instances: list[dict],
    items: list[dict],
    definitions=None,
    exclude=(),
    full_task_over: str = "every-task",
    skipped: dict[str, str] | None = None,
):
    read = {}
    for record in instances:
        inst = DimensionInstance.from_json(record)
        read[(inst.task_id, inst.dimension)] = inst
    found = AnalysisInputs(
        tuple(DimensionItem.from_json(i) for i in items),
        read,
        None if definitions is None else tuple(ScoreResult.from_json(d) for d in definitions),
        tuple(exclude),
        full_task_over=full_task_over,
        skipped=skipped or {},
    )
    found.check()
    return found


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def full_build(tasks: list[str], missing=()) -> list[dict]:
    """Every built dimension per task, but the ``(task, dimension)`` in ``missing``."""
    return [instance(t, d) for t in tasks for d in BUILT_DIMENSIONS if (t, d) not in missing]
