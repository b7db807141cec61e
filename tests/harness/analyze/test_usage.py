"""Appendix F (``token_usage``, ``tables/appendix_f.*``): token usage against an independent count.

Synthetic items (``tests/support/analysis_records.py``) with a seeded usage on some, reasoning
tokens on some of those, settings for one model and nothing for another; the totals and means
are counted here from the records written and compared with ``analysis.json`` and the CSV.
"""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from arcjudge import cli
from arcjudge.harness.analyze.study import analyze
from tests.support.analysis_records import full_build, inputs_of, item, write_jsonl

TASKS = [f"t{i}" for i in range(5)]
SETTINGS = {"reasoning_effort": "low", "temperature": 1.0}


@pytest.fixture(scope="module")
def records() -> tuple[list[dict], list[dict]]:
    rng = random.Random(11)
    instances = full_build(TASKS)
    items = []
    for model in ("thinker", "plain", "silent"):
        for run in (1, 2):
            for record in instances:
                data = item(model, run, record["task_id"], record["dimension"], rng.random() < 0.5)
                if model != "silent" and rng.random() < 0.8:
                    usage = {"input": rng.randrange(50, 500), "output": rng.randrange(1, 900)}
                    if model == "thinker" and rng.random() < 0.7:
                        usage["reasoning"] = rng.randrange(0, 5000)
                    data["usage"] = usage
                if model == "thinker":
                    data["settings"] = SETTINGS
                items.append(data)
    return instances, items


def expected(items: list[dict], model: str) -> dict | None:
    """The model's totals, counted from the item records."""
    mine = [i for i in items if i["model"] == model]
    used = [i["usage"] for i in mine if "usage" in i]
    if not used and not any("settings" in i for i in mine):
        return None
    reasoning = [u["reasoning"] for u in used if "reasoning" in u]
    total_in, total_out = sum(u["input"] for u in used), sum(u["output"] for u in used)
    return {
        "items": len(mine),
        "replies": len(used),
        "input": total_in,
        "output": total_out,
        "reasoning": sum(reasoning) if reasoning else None,
        "reasoning_replies": len(reasoning),
        "mean_input": round(total_in / len(used), 6) if used else None,
        "mean_output": round(total_out / len(used), 6) if used else None,
        "mean_reasoning": round(sum(reasoning) / len(reasoning), 6) if reasoning else None,
        "settings": [SETTINGS] if any("settings" in i for i in mine) else [],
    }


def test_appendix_f_is_what_an_independent_count_gives(records, tmp_path):
    instances, items = records
    directory = tmp_path / "built"
    directory.mkdir()
    inst = write_jsonl(directory / "instances.jsonl", instances)
    (directory / "build.json").write_text(
        json.dumps({"inputs": {"tasks": "/data/ARC-AGI-1", "manifest": "val"}})
    )
    its = write_jsonl(tmp_path / "items.jsonl", items)
    out = tmp_path / "analysis"
    assert cli.main(["dimensions", "analyze", "--items", str(its), "--instances", str(inst),
                     "--out", str(out)]) == 0  # fmt: skip
    data = json.loads((out / "analysis.json").read_text())["token_usage"]
    assert data["dataset"] == "ARC-AGI-1" and data["recorded"] is True
    assert data["models"] == {m: expected(items, m) for m in ("plain", "silent", "thinker")}
    assert data["models"]["thinker"]["reasoning_replies"] > 0
    assert data["models"]["plain"]["reasoning"] is None

    text = (out / "tables" / "appendix_f.csv").read_text()
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(text))}
    for model in ("plain", "thinker"):
        want = expected(items, model)
        assert want is not None
        row = rows[model]
        assert (row["dataset"], int(row["items"]), int(row["replies"])) == (
            "ARC-AGI-1",
            want["items"],
            want["replies"],
        )
        assert (int(row["input"]), int(row["output"])) == (want["input"], want["output"])
        assert float(row["mean_output"]) == pytest.approx(want["mean_output"], abs=1e-6)
        if want["reasoning"] is None:
            assert row["reasoning"] == row["mean_reasoning"] == ""
        else:
            assert int(row["reasoning"]) == want["reasoning"]
            assert float(row["mean_reasoning"]) == pytest.approx(want["mean_reasoning"], abs=1e-6)
    assert rows["thinker"]["settings"] == "reasoning_effort=low, temperature=1.0"
    assert rows["plain"]["settings"] == ""
    assert (rows["silent"]["replies"], rows["silent"]["output"]) == ("0", "")
    assert "Appendix F" in (out / "tables" / "appendix_f.md").read_text()


def test_without_usage_the_table_says_so(records):
    instances, items = records
    bare = [{k: v for k, v in i.items() if k not in ("usage", "settings")} for i in items]
    section = next(s for s in analyze(inputs_of(instances, bare)).sections
                   if s.key == "token_usage")  # fmt: skip
    assert section.data == {
        "dataset": None,
        "recorded": False,
        "models": {"plain": None, "silent": None, "thinker": None},
    }
    (table,) = section.tables
    assert [row[:4] for row in table.rows] == [
        (m, None, len(TASKS) * 6 * 2, 0) for m in ("plain", "silent", "thinker")
    ]
    assert table.note.endswith("No reply of these items recorded its usage.")
