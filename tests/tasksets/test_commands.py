"""Every command on task sets that are not ARC JSON directories.

A P-ARC-format export of our own (tests/fixtures/parc_export.py: four tasks, plus rows that
are wrong in one way each) validates, builds and scores end to end, as CSV and as Parquet,
its stable samples acting as the ARC-GEN split; and the bundled task-folder example set
(src/arcjudge/data/tasksets/example) goes through validate, mutate, dimensions build,
prompts and score, and score.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.harness.score.records import ScoreSummary
from arcjudge.safetext import json_dumps
from tests.support.canned import oracle_reply, wrong_reply

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures"))
import parc_export

EXAMPLE = Path(str(resources.files("arcjudge.data").joinpath("tasksets/example")))
COMMON = ("--backend", "process", "--no-progress")
GOOD = ("p1", "p2", "p3", "p4")
BUILT = ("p1", "p2", "p3")  # p4 has no generator: valid_unsampled, so not built
BAD = ("bad-entry", "bad-grid", "bad-json", "bad-verifier", "p2")

# Definition programs of our own: right for each task, and the identity (wrong everywhere)
RIGHT = {
    "p1": "def transform(g):\n    return g[::-1]\n",
    "p2": "def transform(g):\n    return [list(c) for c in zip(*g)]\n",
    "p3": "def transform(g):\n    return [[{3: 4, 4: 3}.get(c, c) for c in r] for r in g]\n",
    "p4": "def transform(g):\n    return [r + r for r in g]\n",
    "mirror": "def transform(g):\n    return [r[::-1] for r in g]\n",
    "recolor": "def transform(g):\n    return [[2 if c == 1 else c for c in r] for r in g]\n",
    "frame": "def transform(g):\n    w = len(g[0]) + 2\n"
    "    return [[8] * w] + [[8] + r + [8] for r in g] + [[8] * w]\n",
}
IDENTITY = "def transform(g):\n    return g\n"


def run(*argv: str) -> None:
    assert cli.main([*argv, *COMMON]) == 0, argv


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_programs(path: Path, tasks) -> Path:
    lines = []
    for task in tasks:
        for name, code in (("right", RIGHT[task]), ("identity", IDENTITY)):
            lines.append({"id": f"{task}-{name}", "model": name, "task_id": task, "code": code})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_replies(instances: Path, path: Path) -> Path:
    """Model ``oracle`` answers every instance from its key; ``wrong`` fails every one."""
    lines = []
    for record in records(instances):
        rid = f"{record['task_id']}/{record['dimension']}"
        if record["dimension"] == "definition":
            right = f"```python\n{RIGHT[record['task_id']]}```\n"
        else:
            right = oracle_reply(record)
        if right is not None:
            lines.append({"id": rid, "model": "oracle", "run": "1", "reply": right})
        lines.append({"id": rid, "model": "wrong", "run": "1", "reply": wrong_reply(record)})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def check_scored(scored: Path, tasks) -> None:
    items = records(scored / "items.jsonl")
    assert {i["task_id"] for i in items} == set(tasks)
    by_model: dict[str, list[bool]] = {}
    for item in items:
        by_model.setdefault(item["model"], []).append(item["passed"])
    assert by_model["oracle"] and all(by_model["oracle"])
    assert not any(by_model["wrong"])


def check_program_scores(out: Path, tasks) -> None:
    results = {r["id"]: r for r in records(out / "results.jsonl")}
    for task in tasks:
        right, identity = results[f"{task}-right"], results[f"{task}-identity"]
        assert right["verdict"] == "pass", right
        assert identity["verdict"] == "fail" and identity["failure"] == "rule", identity


@pytest.fixture(scope="module")
def parc(tmp_path_factory) -> dict[str, Path]:
    """The CSV export (good and malformed rows) through validate, build, score."""
    root = tmp_path_factory.mktemp("parc-commands")
    export = parc_export.write_csv(
        root / "p-arc.csv", parc_export.good_rows() + parc_export.malformed_rows()
    )
    run("validate", "--tasks", str(export), "--out", str(root / "val"))
    run("dimensions", "build", "--tasks", str(export), "--manifest", str(root / "val"),
        "--out", str(root / "built"))  # fmt: skip
    programs = write_programs(root / "programs.jsonl", GOOD)
    run("score", "--programs", str(programs), "--tasks", str(export), "--samples", "20",
        "--out", str(root / "score"))  # fmt: skip
    replies = write_replies(root / "built" / "instances.jsonl", root / "replies.jsonl")
    run("dimensions", "score", "--instances", str(root / "built" / "instances.jsonl"),
        "--replies", str(replies), "--out", str(root / "scored"))  # fmt: skip
    return {"root": root, "export": export}


def test_a_parc_export_validates_with_its_own_verifiers_and_stable_pairs(parc):
    manifest = json.loads((parc["root"] / "val" / "manifest.json").read_text())
    assert [s["name"] for s in manifest["sources"]] == ["taskset"]
    assert manifest["generator"]["kind"] == "arc-gen"
    task_set = manifest["task_set"]
    assert task_set["format"] == "p-arc-csv" and task_set["path"] == str(parc["export"])
    assert sorted(i["task_id"] for i in task_set["left_out"]) == sorted(BAD)
    assert set(task_set["defaults"]) == {"source", "generator"}
    verdicts = {r["task_id"]: r for r in records(parc["root"] / "val" / "verdicts.jsonl")}
    assert sorted(verdicts) == sorted({*GOOD, "loads-badly"})
    for task in GOOD:
        # p4 has no generator: right on every input it had, but not valid without its
        # generator samples (the study's rule)
        expected = "valid_unsampled" if task == "p4" else "valid"
        assert verdicts[task]["verdict"] == expected, verdicts[task]
        assert verdicts[task]["splits"]["arc-gen"] == [50, 50]  # the stable bundle
        assert verdicts[task]["splits"]["train"] == [3, 3]
    assert {t: verdicts[t]["splits"].get("generator") for t in GOOD} == {
        "p1": [50, 50],
        "p2": [50, 50],
        "p3": [50, 50],
        "p4": None,
    }
    # parses, but fails to load in the sandbox: reported per task, the others unaffected
    assert verdicts["loads-badly"]["verdict"] == "load_error"
    assert "a_module_that_does_not_exist" in verdicts["loads-badly"]["error"]
    assert manifest["tasks"]["p4"]["generator"] == {"missing": True}


def test_rows_left_out_are_warned_about_and_reported_beside_the_set(parc, tmp_path, capsys):
    run("validate", "--tasks", str(parc["export"]), "--out", str(parc["root"] / "val"))
    captured = capsys.readouterr()
    warned = [line for line in captured.err.splitlines() if "left out" in line]
    assert len(warned) == len(BAD)
    assert any(
        "row 5 (task bad-json): train_demonstrations_json: not valid JSON" in w for w in warned
    )
    assert "using the task set's source: --source taskset=module:" in captured.out
    (root,) = (parc["root"] / "val" / "taskset").iterdir()
    description = json.loads((root / "taskset.json").read_text())
    assert [i["where"] for i in description["left_out"]] == [
        "row 5",
        "row 6",
        "row 7",
        "row 8",
        "row 10",
    ]


def test_a_parc_export_builds_with_stable_pairs_as_the_arcgen_split(parc):
    build = json.loads((parc["root"] / "built" / "build.json").read_text())
    assert set(build["task_set"]["defaults"]) == {"generator"}
    # loads-badly: no valid verifier; p4: right on what it had, but without its samples
    assert sorted(build["tasks"]) == list(BUILT)
    sources = {t: build["tasks"][t]["valid_source"] for t in BUILT}
    assert sources == {"p1": "generator", "p2": "generator", "p3": "generator"}
    # a P-ARC export without --mixture: the study's P-ARC weights, drawn by the default rule
    assert build["mixture"]["name"] == "p-arc"
    assert build["mixture_rule"] == "without-replacement"
    instances = records(parc["root"] / "built" / "instances.jsonl")
    assert {(r["task_id"], r["dimension"]) for r in instances} == {
        (t, d)
        for t in BUILT
        for d in (
            "output_grid",
            "definition",
            "classification",
            "generation",
            "editing",
            "inversion",
        )
    }


def test_a_parc_export_scores_programs_and_replies(parc):
    check_program_scores(parc["root"] / "score", GOOD)
    results = {r["id"]: r for r in records(parc["root"] / "score" / "results.jsonl")}
    assert results["p4-right"]["splits"]["arc-gen"] == [50, 50]
    assert results["p1-right"]["splits"]["generator"] == [20, 20]
    text = (parc["root"] / "score" / "summary.json").read_text(encoding="utf-8")
    summary = json.loads(text)
    assert summary["task_set"]["format"] == "p-arc-csv"
    record = ScoreSummary.from_json(summary)  # the task set is the record's own field
    assert record.task_set == summary["task_set"]
    assert json_dumps(record.to_json(), sort_keys=True, indent=1) + "\n" == text
    check_scored(parc["root"] / "scored", BUILT)


def test_the_parquet_export_validates_as_the_csv_does(parc, tmp_path):
    export = parc_export.write_parquet(
        tmp_path / "p-arc.parquet", parc_export.good_rows() + parc_export.malformed_rows()
    )
    run("validate", "--tasks", str(export), "--out", str(tmp_path / "val"))

    def verdicts(out: Path) -> dict:
        return {
            r["task_id"]: (r["verdict"], r.get("splits")) for r in records(out / "verdicts.jsonl")
        }

    assert verdicts(tmp_path / "val") == verdicts(parc["root"] / "val")
    manifest = json.loads((tmp_path / "val" / "manifest.json").read_text())
    assert manifest["task_set"]["format"] == "p-arc-parquet"
    assert len(manifest["task_set"]["left_out"]) == len(BAD)


def test_a_set_with_no_usable_row_is_an_error(tmp_path, capsys):
    export = parc_export.write_csv(tmp_path / "bad.csv", parc_export.malformed_rows()[:4])
    assert (
        cli.main(["validate", "--tasks", str(export), "--out", str(tmp_path / "v"), *COMMON]) == 2
    )
    assert "no usable task (4 left out)" in capsys.readouterr().err


def test_the_example_task_folders_go_through_every_command(tmp_path, capsys):
    tasks = ("frame", "mirror", "recolor")
    run("validate", "--tasks", str(EXAMPLE), "--out", str(tmp_path / "val"))
    verdicts = {r["task_id"]: r for r in records(tmp_path / "val" / "verdicts.jsonl")}
    assert {t: v["verdict"] for t, v in verdicts.items()} == dict.fromkeys(tasks, "valid")
    assert verdicts["frame"]["splits"]["arc-gen"] == [10, 10]  # task.json's own arc-gen key
    # every operator: the study's two find nothing to mutate in these small verifiers
    run("mutate", "--tasks", str(EXAMPLE), "--manifest", str(tmp_path / "val"),
        "--operators", "all", "--out", str(tmp_path / "mut"))  # fmt: skip
    mutate = json.loads((tmp_path / "mut" / "summary.json").read_text())
    assert mutate["task_set"]["defaults"] == {
        "source": f"taskset=module:{mutate['task_set']['materialized']}/verifiers"
    }
    corruptions = records(tmp_path / "mut" / "corruptions.jsonl")
    assert {c["task_id"] for c in corruptions} == set(tasks)
    run("dimensions", "build", "--tasks", str(EXAMPLE), "--manifest", str(tmp_path / "val"),
        "--corruptions", str(tmp_path / "mut" / "corruptions.jsonl"),
        "--out", str(tmp_path / "built"))  # fmt: skip
    build = json.loads((tmp_path / "built" / "build.json").read_text())
    assert set(build["task_set"]["defaults"]) == {"generator", "human_errors"}
    assert build["inputs"]["human_errors"] == build["task_set"]["defaults"]["human_errors"]
    assert build["mixture"]["name"] == "arc-agi-1"  # task folders are no P-ARC export
    assert {t: build["tasks"][t]["confirmed"].get("human_error", 0) for t in tasks} == {
        "frame": 0,
        "mirror": 2,
        "recolor": 2,
    }
    instances = tmp_path / "built" / "instances.jsonl"
    prompts = tmp_path / "prompts" / "prompts.jsonl"
    (tmp_path / "prompts").mkdir()
    assert cli.main(["dimensions", "prompts", "--instances", str(instances), "--tasks",
                     str(EXAMPLE), "--out", str(prompts)]) == 0  # fmt: skip
    assert len(records(prompts)) == 18
    programs = write_programs(tmp_path / "programs.jsonl", tasks)
    run("score", "--programs", str(programs), "--tasks", str(EXAMPLE),
        "--out", str(tmp_path / "score"))  # fmt: skip
    check_program_scores(tmp_path / "score", tasks)
    replies = write_replies(instances, tmp_path / "replies.jsonl")
    run("dimensions", "score", "--instances", str(instances), "--replies", str(replies),
        "--out", str(tmp_path / "scored"))  # fmt: skip
    check_scored(tmp_path / "scored", tasks)
    out = capsys.readouterr().out
    assert "--tasks " + str(EXAMPLE) + ": task-folders, 3 task(s)" in out
