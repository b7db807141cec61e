"""End to end: build instances from the sample, then score synthetic answerers.

An *oracle* built from the verifier (run in the sandbox) must pass every dimension on
every task; an answerer that always says "valid" must get the Classification score the
drawn labels and the mixture predict; a random answerer must score near zero.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.grids import hamming_distance, to_grid, to_lists
from arcjudge.harness.dimensions.build import DEFAULT_MIN_DISTANCE
from arcjudge.harness.dimensions.mixture import load_mixture
from arcjudge.harness.dimensions.records import BuildInfo
from arcjudge.harness.dimensions.summary import DimensionScoreSummary
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.safetext import json_dumps
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import VERIFIER_LIMITS, ProgramStatus, Status
from arcjudge.tasks import load_task
from arcjudge.verifiers.sources import VerifierSource
from arcjudge.vocabulary import BUILT_DIMENSIONS, DIMENSIONS
from tests.support.helpers import deadline

SAMPLE = sample_dir()
SOURCES = [
    f"re-arc=re-arc:{SAMPLE / 're-arc'}",
    f"golf=golf:{SAMPLE / 'golf'}",
    f"module=module:{SAMPLE / 'module'}",
]


def run_cli(*argv: str) -> None:
    code = cli.main([*argv, "--backend", "process", "--no-progress"])
    assert code == 0, argv


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """validate + mutate on the sample, an H-ARC CSV and a neighbours file of our own."""
    root = tmp_path_factory.mktemp("dims")
    args = [x for s in SOURCES for x in ("--source", s)]
    run_cli("validate", "--tasks", str(SAMPLE / "tasks"), *args, "--out", str(root / "val"))
    run_cli(
        "mutate",
        "--tasks",
        str(SAMPLE / "tasks"),
        *args,
        "--manifest",
        str(root / "val"),
        "--out",
        str(root / "mut"),
    )
    harc = root / "incorrect_submissions.csv"
    harc.write_text(
        "task_name,task_type,test_output_grid,count\n"
        "0d3d703e.json,training,|123|123|123|,3\n"
        "0d3d703e.json,training,|999|999|999|,1\n"
        "c8f0f002.json,training,|10|01|,2\n"
        "aabf363d.json,training,|not a grid|,1\n"
    )
    neighbours = root / "neighbours.jsonl"
    neighbours.write_text(
        '{"task_id": "0d3d703e", "neighbour_task_ids": ["c8f0f002", "74dd1130"]}\n'
        '{"task_id": "3c9b0459", "neighbour_task_ids": ["67a3c6ac"]}\n'
    )
    return {
        "root": root,
        "manifest": root / "val",
        "corruptions": root / "mut" / "corruptions.jsonl",
        "harc": harc,
        "neighbours": neighbours,
    }


def build(
    inputs: dict[str, Path],
    out: Path,
    *extra: str,
    tasks: Path = SAMPLE / "tasks",
    neighbours: bool = True,
) -> Path:
    given = ["--neighbours", str(inputs["neighbours"])] if neighbours else []
    run_cli(
        "dimensions",
        "build",
        "--tasks",
        str(tasks),
        "--manifest",
        str(inputs["manifest"]),
        "--corruptions",
        str(inputs["corruptions"]),
        "--human-errors",
        str(inputs["harc"]),
        *given,
        "--out",
        str(out),
        *extra,
    )
    return out


@pytest.fixture(scope="module")
def built(inputs) -> Path:
    return build(inputs, inputs["root"] / "dims")


def test_build_writes_every_dimension_for_every_task(built):
    records = read_jsonl(built / "instances.jsonl")
    tasks = sorted({r["task_id"] for r in records})
    assert len(tasks) == 10
    for task in tasks:
        assert [r["dimension"] for r in records if r["task_id"] == task] == list(BUILT_DIMENSIONS)
    summary = json.loads((built / "build.json").read_text())
    assert summary["seed"] == 77 and summary["mixture"]["name"] == "arc-agi-1"
    assert summary["skipped"] == {}
    # Types without candidates: their weight moved, and it is recorded.
    info = summary["tasks"]["1e0a9b12"]
    assert "human_error" in info["redistributed"] and "retrieval" in info["redistributed"]
    assert summary["tasks"]["0d3d703e"]["confirmed"]["human_error"] == 2
    assert any("not a grid" in s for s in summary["human_error_rows_skipped"])


def test_candidates_are_confirmed_invalid_by_the_verifier(built, sandbox):
    records = read_jsonl(built / "instances.jsonl")
    checked = 0
    for record in records:
        if record["dimension"] not in ("classification", "editing"):
            continue
        if record["dimension"] == "classification":
            pairs = record["prompt"]["candidates"]
            labels = record["key"]["labels"]
        else:
            pairs, labels = [record["prompt"]], ["invalid"]
        outputs = verifier_outputs(sandbox, record, [p["input"] for p in pairs])
        for pair, label, produced in zip(pairs, labels, outputs, strict=True):
            assert (produced == to_grid(pair["output"])) is (label == "valid")
            checked += 1
    assert checked == 60


def test_classification_weights_follow_redistribution(built):
    mixture = load_mixture("arc-agi-1")
    for record in read_jsonl(built / "instances.jsonl"):
        if record["dimension"] != "classification":
            continue
        key = record["key"]
        assert sum(key["weights"].values()) == pytest.approx(1.0)
        assert key["weights"]["valid"] == 0.25
        assert set(key["kinds"]) <= set(key["weights"])
        assert set(key["redistributed"]).isdisjoint(key["weights"])
        expected = {k: mixture.weight(k) for k in key["weights"] if k != "valid"}
        scale = 0.75 / sum(expected.values())
        for kind, weight in expected.items():
            assert key["weights"][kind] == pytest.approx(weight * scale)


def test_same_seed_same_bytes_other_seed_other_instances(inputs, built):
    again = build(inputs, inputs["root"] / "again")
    assert (again / "instances.jsonl").read_bytes() == (built / "instances.jsonl").read_bytes()
    assert (again / "build.json").read_bytes() == (built / "build.json").read_bytes()
    other = build(inputs, inputs["root"] / "seed78", "--seed", "78")
    assert (other / "instances.jsonl").read_bytes() != (built / "instances.jsonl").read_bytes()


def test_human_errors_json_builds_what_the_csv_builds_and_answers_later_tests(
    inputs, built, tmp_path
):
    # the H-ARC CSV of the fixture, as human_errors.json (the unparsable row left out)
    errors = tmp_path / "human_errors.json"
    errors.write_text(json.dumps({
        "0d3d703e": [{"output": [[1, 2, 3]] * 3, "count": 3}, {"output": [[9, 9, 9]] * 3}],
        "c8f0f002": [{"output": [[1, 0], [0, 1]], "count": 2}],
    }))  # fmt: skip
    store = str(built / "cache.sqlite")
    same = build(inputs, tmp_path / "json", "--human-errors", str(errors), "--store", store)

    def without_task_type(path: Path) -> str:  # H-ARC's CSV has a task type, the JSON none
        text = path.read_text()
        assert text.count('"task_type":"training"') == text.count('"task_type":')
        return text.replace('"task_type":"training"', '"task_type":null')

    csv_built = (built / "instances.jsonl").read_text()
    assert '"task_type":"training"' in csv_built
    assert (same / "instances.jsonl").read_text() == without_task_type(built / "instances.jsonl")
    # a second test input, and a wrong answer to it: candidates pair that input
    tasks = tmp_path / "tasks"
    shutil.copytree(SAMPLE / "tasks", tasks)
    task = json.loads((tasks / "0d3d703e.json").read_text())
    task["test"].append({"input": [[1, 2, 3]], "output": [[5, 6, 4]]})
    (tasks / "0d3d703e.json").write_text(json.dumps(task))
    errors.write_text(json.dumps({"0d3d703e": [{"output": [[5, 6, 3]], "test_index": 1}]}))
    argv = ["--human-errors", str(errors), "--store", store]
    out = build(inputs, tmp_path / "second", *argv, tasks=tasks)
    found = [
        (pair, provenance)
        for record in read_jsonl(out / "instances.jsonl")
        if record["task_id"] == "0d3d703e" and record["dimension"] == "classification"
        for pair, kind, provenance in zip(record["prompt"]["candidates"], record["key"]["kinds"],
                                          record["key"]["provenance"], strict=True)
        if kind == "human_error"
    ]  # fmt: skip
    summary = json.loads((out / "build.json").read_text())
    assert summary["tasks"]["0d3d703e"]["confirmed"]["human_error"] == 1
    for pair, provenance in found:
        assert pair == {"input": [[1, 2, 3]], "output": [[5, 6, 3]]}
        assert provenance["test_index"] == 1


def retrieval_candidates(out: Path) -> dict[str, set[str]]:
    """Task -> the neighbour tasks its retrieval candidates come from."""
    found: dict[str, set[str]] = {}
    for record in read_jsonl(out / "instances.jsonl"):
        if record["dimension"] != "classification":
            continue
        for kind, provenance in zip(record["key"]["kinds"], record["key"]["provenance"],
                                    strict=True):  # fmt: skip
            if kind == "retrieval":
                found.setdefault(record["task_id"], set()).add(provenance["neighbour_task_id"])
    return found


def test_without_neighbours_retrieval_comes_from_the_baseline_embedding(inputs, built, capsys):
    from arcjudge.harness.dimensions.embeddings import baseline_embeddings, nearest_neighbours

    store = str(built / "cache.sqlite")
    capsys.readouterr()
    out = build(inputs, inputs["root"] / "baseline", "--store", store, neighbours=False)
    assert "retrieval neighbours: baseline embedding (k=5, 10 tasks)" in capsys.readouterr().out
    summary = json.loads((out / "build.json").read_text())
    assert summary["retrieval"]["source"] == "baseline embedding"
    assert summary["retrieval"]["k"] == 5 and summary["retrieval"]["tasks"] == 10
    tasks = {p.stem: load_task(p).train for p in sorted((SAMPLE / "tasks").glob("*.json"))}
    expected = nearest_neighbours(baseline_embeddings(tasks), 5)
    found = retrieval_candidates(out)
    confirmed = {t for t, info in summary["tasks"].items() if info["confirmed"].get("retrieval")}
    assert confirmed and set(found) <= confirmed
    for task, neighbours in found.items():
        assert neighbours <= set(expected[task]), task
    # none without: and given embeddings decide the neighbours
    none = build(inputs, inputs["root"] / "none", "--store", store, "--no-baseline-retrieval",
                 neighbours=False)  # fmt: skip
    assert json.loads((none / "build.json").read_text())["retrieval"] == {"source": "none"}
    assert retrieval_candidates(none) == {}
    ids = sorted(tasks)
    embeddings = inputs["root"] / "embeddings.jsonl"  # a ring: each task's neighbour is the next
    embeddings.write_text("".join(
        json.dumps({"task_id": t, "embedding": [math.cos(i * 0.6), math.sin(i * 0.6)]}) + "\n"
        for i, t in enumerate(ids)
    ) + json.dumps({"task_id": "not_in_the_set", "embedding": [1, 0]}) + "\n")  # fmt: skip
    given = build(inputs, inputs["root"] / "given", "--store", store, "--embeddings",
                  str(embeddings), "--neighbours-k", "1", neighbours=False)  # fmt: skip
    summary = json.loads((given / "build.json").read_text())["retrieval"]
    assert summary["source"] == "embeddings" and summary["embedded"] == 11
    assert summary["tasks"] == 10 and summary["k"] == 1
    ring = nearest_neighbours(
        {t: [math.cos(i * 0.6), math.sin(i * 0.6)] for i, t in enumerate(ids)}, 1
    )
    for task, neighbours in retrieval_candidates(given).items():
        assert neighbours == set(ring[task])
    both = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
            str(inputs["manifest"]), "--neighbours", str(inputs["neighbours"]), "--embeddings",
            str(embeddings), "--out", str(inputs["root"] / "both")]  # fmt: skip
    assert cli.main(both) == 2
    assert "not both" in capsys.readouterr().err


def test_hostile_side_files_are_one_line_errors(inputs, tmp_path, capsys):
    # Each was a traceback (ValueError, RecursionError) or a hang (a FIFO) before.
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    bad_line = hostile / "bad.jsonl"
    bad_line.write_text('{"task_id": 5, "neighbour_task_ids": []}\n')
    deep = hostile / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    fifo = hostile / "fifo.jsonl"
    os.mkfifo(fifo)
    objects = hostile / "objects.npz"
    np = pytest.importorskip("numpy")
    np.savez(objects, task_ids=np.array(["a", ("b",)], dtype=object), vectors=np.eye(2))
    cases = [
        (["--neighbours", str(bad_line)], "bad.jsonl:1: 'task_id' must be a non-empty string"),
        (["--neighbours", str(fifo)], "fifo.jsonl: not a regular file"),
        (["--human-errors", str(deep)], "nested too deeply"),
        (["--embeddings", str(objects)], "array 'task_ids': not a numeric array"),
    ]
    for extra, message in cases:
        argv = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
                str(inputs["manifest"]), *extra, "--out", str(tmp_path / "out"),
                "--no-progress"]  # fmt: skip
        with deadline(30):
            assert cli.main(argv) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("arcjudge: error: ") and message in err, (extra, err)
        assert err.count("\n") == 1 and "Traceback" not in err


def test_repeats_are_recorded_and_change_no_instance(inputs, built, capsys):
    assert json.loads((built / "build.json").read_text())["repeats"] == 1
    capsys.readouterr()
    store = str(built / "cache.sqlite")  # the same calls: read from the first build's cache
    repeated = build(inputs, inputs["root"] / "repeats", "--repeats", "6", "--store", store)
    assert "answer every instance 6 times" in capsys.readouterr().out
    assert (repeated / "instances.jsonl").read_bytes() == (built / "instances.jsonl").read_bytes()
    summary = json.loads((repeated / "build.json").read_text())
    assert summary["repeats"] == 6
    assert {**summary, "repeats": 1} == json.loads((built / "build.json").read_text())
    code = cli.main(["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
                     str(inputs["manifest"]), "--repeats", "0", "--out",
                     str(inputs["root"] / "bad")])  # fmt: skip
    assert code == 2 and "--repeats must be >= 1" in capsys.readouterr().err


# --------------------------------------------------------------------- answerers


def verifier_outputs(sandbox, record: dict, grids: list) -> list:
    spec = record["verifier"]
    program = (
        VerifierSource(spec["source"], spec["kind"], spec["path"])
        .program_for(record["task_id"])
        .program
    )
    result = sandbox.run(
        program, [to_grid(g) for g in grids], VERIFIER_LIMITS, policy=PolicyMode.OFF
    )
    assert result.status is ProgramStatus.LOADED
    return [r.grid if r.status is Status.OK else None for r in result.results]


def oracle(sandbox, records: list[dict]) -> tuple[list[dict], list[dict]]:
    """Answers and Definition programs computed with the task's verifier."""
    answers, programs = [], []
    by_task: dict[str, dict[str, dict]] = {}
    for r in records:
        by_task.setdefault(r["task_id"], {})[r["dimension"]] = r
    for task_id, dims in sorted(by_task.items()):
        task = load_task(SAMPLE / "tasks" / f"{task_id}.json")
        pool = [p.input for p in (*task.train, *task.test, *task.arc_gen)]
        cands = dims["classification"]["prompt"]["candidates"]
        edit = dims["editing"]["prompt"]
        grids = [*pool, *(to_grid(c["input"]) for c in cands), to_grid(edit["input"])]
        out = dict(zip(grids, verifier_outputs(sandbox, dims["definition"], grids), strict=True))
        judged = [out[to_grid(c["input"])] == to_grid(c["output"]) for c in cands]
        demos = [(p.input, p.output) for p in task.train]
        generated = next(
            (g, out[g])
            for g in pool
            if out[g] is not None
            and all(
                hamming_distance(g, a) > DEFAULT_MIN_DISTANCE
                and hamming_distance(out[g], b) > DEFAULT_MIN_DISTANCE
                for a, b in demos
            )
        )
        fixed = out[to_grid(edit["input"])]
        edited = {"input": edit["input"], "output": to_lists(fixed)} if fixed else None
        if fixed is None or hamming_distance(fixed, to_grid(edit["output"])) > 0.7:
            edited = dims["editing"]["key"]["reference_edit"]  # a repair back to the source
        assert edited is not None
        target = to_grid(dims["inversion"]["prompt"]["output"])
        inverted = next(g for g in pool if out[g] == target)
        for dim, answer in (
            ("classification", ["valid" if j else "invalid" for j in judged]),
            ("generation", {"input": to_lists(generated[0]), "output": to_lists(generated[1])}),
            ("editing", edited),
            ("inversion", {"input": to_lists(inverted)}),
        ):
            answers.append(
                {
                    "task_id": task_id,
                    "dimension": dim,
                    "model": "oracle",
                    "run": 1,
                    "answer": answer,
                }
            )
        table = [[to_lists(g), to_lists(o)] for g, o in out.items() if o is not None]
        code = (
            f"TABLE = {json.dumps(table)}\n"
            "def transform(grid):\n"
            "    for i, o in TABLE:\n"
            "        if i == grid:\n"
            "            return o\n"
            "    raise ValueError('not in the table')\n"
        )
        programs.append(
            {
                "id": f"oracle-{task_id}",
                "task_id": task_id,
                "model": "oracle",
                "run": 1,
                "code": code,
            }
        )
    return answers, programs


def random_grid(rng: random.Random) -> list[list[int]]:
    h, w = rng.randint(1, 6), rng.randint(1, 6)
    return [[rng.randrange(10) for _ in range(w)] for _ in range(h)]


def other_answers(records: list[dict]) -> list[dict]:
    rng = random.Random(3)
    answers = []
    for r in records:
        if r["dimension"] == "classification":
            answers.append(
                {
                    "task_id": r["task_id"],
                    "dimension": "classification",
                    "model": "always-valid",
                    "run": 1,
                    "answer": ["valid"] * 5,
                }
            )
        for run in (1, 2):
            dim = r["dimension"]
            if dim == "definition":
                continue
            if dim == "classification":
                answer: object = [rng.choice(["valid", "invalid"]) for _ in range(5)]
            elif dim == "inversion":
                answer = random_grid(rng)
            else:
                answer = {"input": random_grid(rng), "output": random_grid(rng)}
            answers.append(
                {
                    "task_id": r["task_id"],
                    "dimension": dim,
                    "model": "random",
                    "run": run,
                    "answer": answer,
                }
            )
    return answers


@pytest.fixture(scope="module")
def scored(inputs, built, sandbox) -> dict:
    root = inputs["root"]
    records = read_jsonl(built / "instances.jsonl")
    answers, programs = oracle(sandbox, records)
    answers += other_answers(records)
    (root / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (root / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    run_cli(
        "score",
        "--programs",
        str(root / "programs.jsonl"),
        "--tasks",
        str(SAMPLE / "tasks"),
        "--out",
        str(root / "defs"),
    )
    run_cli(
        "dimensions",
        "score",
        "--instances",
        str(built / "instances.jsonl"),
        "--answers",
        str(root / "answers.jsonl"),
        "--definitions",
        str(root / "defs"),
        "--out",
        str(root / "scored"),
    )
    summary = json.loads((root / "scored" / "summary.json").read_text())
    return {"summary": summary, "records": records, "dir": root / "scored"}


def test_oracle_passes_every_dimension_on_every_task(scored):
    stats = scored["summary"]["models"]["oracle"]
    for dim in DIMENSIONS:
        assert stats["dimensions"][dim] == {**stats["dimensions"][dim], "passed": 10, "total": 10}
    assert stats["full_task"]["accuracy"] == 1.0
    assert stats["independence_baseline"] == 1.0
    consistency = stats["self_consistency"]["all"]
    assert consistency["classification"]["all"] == {"agree": 50, "total": 50, "rate": 1.0}
    for dim in ("generation", "inversion"):
        assert consistency[dim]["right"] == {"agree": 10, "total": 10, "rate": 1.0}
    conditioned = stats["self_consistency"]["definition_passes_train_test"]
    assert conditioned["inversion"]["all"]["total"] == 10


def test_always_valid_gets_what_the_mixture_predicts(scored):
    stats = scored["summary"]["models"]["always-valid"]
    labels = [r["key"]["labels"] for r in scored["records"] if r["dimension"] == "classification"]
    all_valid = sum(all(x == "valid" for x in ls) for ls in labels)
    valid_share = sum(x == "valid" for ls in labels for x in ls) / 50
    assert stats["dimensions"]["classification"]["passed"] == all_valid
    assert stats["classification_judgments"]["accuracy"] == pytest.approx(valid_share)
    # The mixture gives each slot "valid" with probability 0.25 while no type of the task
    # is used up (the sample's tasks have enough candidates of each type they have that
    # few slots see one used up), so the per-judgment score is 0.25 up to sampling noise
    # (4 standard deviations of 50 draws) and the all-five score is 0.25**5 ~ 0.001: zero
    # or one of 10 tasks.
    assert abs(valid_share - 0.25) < 4 * (0.25 * 0.75 / 50) ** 0.5
    assert all_valid <= 1
    # Not answered: reported as such, not as failures.
    assert stats["dimensions"]["generation"] is None and stats["full_task"] is None


def test_random_answerer_scores_near_zero(scored):
    stats = scored["summary"]["models"]["random"]
    dims = stats["dimensions"]
    assert dims["classification"]["total"] == 20 and dims["classification"]["passed"] <= 2
    for dim in ("generation", "editing", "inversion", "definition"):
        assert dims[dim]["passed"] == 0, dim
    assert stats["full_task"]["passed"] == 0


def test_outputs_and_report(scored, built):
    items = read_jsonl(scored["dir"] / "items.jsonl")
    oracle_items = [i for i in items if i["model"] == "oracle"]
    assert len(oracle_items) == 50 and all(i["passed"] for i in oracle_items)
    missing_def = [i for i in items if i["model"] == "random" and i["dimension"] == "definition"]
    assert missing_def and all(i["reason"] == "no Definition program" for i in missing_def)
    html = (scored["dir"] / "report.html").read_text()
    assert html.count('<svg class="bars"') == 3 and "always-valid" in html
    assert "<script" not in html
    # summary.json and build.json read back through their records to the same bytes
    for path, record in ((scored["dir"] / "summary.json", DimensionScoreSummary),
                         (built / "build.json", BuildInfo)):  # fmt: skip
        text = path.read_text()
        again = record.from_json(json.loads(text)).to_json()
        assert json_dumps(again, sort_keys=True, indent=1) + "\n" == text, path


@pytest.mark.parametrize("over", ["every-task", "complete-tasks"])
def test_a_task_missing_a_dimension_fails_full_task_unless_complete_tasks(
    inputs, built, scored, over, capsys
):
    """The study's n counts every task (default); ``complete-tasks`` is the old reading."""
    root = inputs["root"] / f"missing-{over}"
    root.mkdir()
    records = read_jsonl(built / "instances.jsonl")
    gone = sorted({r["task_id"] for r in records})[3]
    kept = [r for r in records if (r["task_id"], r["dimension"]) != (gone, "editing")]
    (root / "instances.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    shutil.copy(built / "build.json", root / "build.json")
    capsys.readouterr()
    run_cli(
        "dimensions",
        "score",
        "--instances",
        str(root / "instances.jsonl"),
        "--answers",
        str(inputs["root"] / "answers.jsonl"),
        "--definitions",
        str(inputs["root"] / "defs"),
        "--full-task-over",
        over,
        "--store",
        str(scored["dir"] / "cache.sqlite"),  # the calls are the same: nothing runs again
        "--out",
        str(root / "scored"),
    )
    printed = capsys.readouterr().out
    summary = json.loads((root / "scored" / "summary.json").read_text())
    assert summary["full_task_over"] == over
    assert summary["missing_dimensions"] == {gone: ["editing"]}
    full = summary["models"]["oracle"]["full_task"]  # one run; the oracle passes all it has
    if over == "every-task":
        assert (full["passed"], full["total"]) == (9, 10)
        assert f"a missing dimension counts as a failure: {gone} (editing)" in printed
    else:
        assert (full["passed"], full["total"]) == (9, 9)
        assert f"left out, missing a dimension: {gone} (editing)" in printed
    html = (root / "scored" / "report.html").read_text()
    assert gone in html


def test_malformed_answers_fail_their_item_and_never_crash(inputs, built, scored):
    root = inputs["root"]
    lines = [
        "this is not json",
        "[1, 2]",
        json.dumps({"task_id": "0d3d703e", "dimension": "editing", "model": "m"}),
        json.dumps({"task_id": "0d3d703e", "dimension": "telepathy", "model": "m", "run": 1}),
        json.dumps(
            {"task_id": "nope", "dimension": "inversion", "model": "m", "run": 1, "answer": [[1]]}
        ),
        json.dumps(
            {
                "task_id": "0d3d703e",
                "dimension": "classification",
                "model": "m",
                "run": 1,
                "answer": ["valid"] * 4,
            }
        ),
        json.dumps(
            {
                "task_id": "0d3d703e",
                "dimension": "inversion",
                "model": "m",
                "run": 1,
                "answer": [[1, 2], [3]],
            }
        ),
        json.dumps(
            {
                "task_id": "0d3d703e",
                "dimension": "generation",
                "model": "m",
                "run": 1,
                "answer": "a grid, trust me",
            }
        ),
        json.dumps({"task_id": "0d3d703e", "dimension": "editing", "model": "m", "run": 1}),
        json.dumps(
            {
                "task_id": "0d3d703e",
                "dimension": "inversion",
                "model": "m",
                "run": 1,
                "answer": [[1]],
            }
        ),
        json.dumps(
            {
                "task_id": "1e0a9b12",
                "dimension": "inversion",
                "model": "m",
                "run": 1,
                "answer": [[99]],
            }
        ),
    ]
    (root / "bad.jsonl").write_text("\n".join(lines) + "\n")
    run_cli(
        "dimensions",
        "score",
        "--instances",
        str(built / "instances.jsonl"),
        "--answers",
        str(root / "bad.jsonl"),
        "--out",
        str(root / "bad"),
    )
    summary = json.loads((root / "bad" / "summary.json").read_text())
    problems = summary["answers_problems"]
    assert summary["answers_problem_count"] == 6
    assert any("line 1: not valid JSON" in p for p in problems)
    assert any("line 2: not a JSON object" in p for p in problems)
    assert any("line 3: missing run" in p for p in problems)
    assert any("unknown dimension" in p for p in problems)
    assert summary["unmatched_answers"] == 1 and summary["duplicate_answers"] == 1
    items = {(i["task_id"], i["dimension"]): i for i in read_jsonl(root / "bad" / "items.jsonl")}
    reasons = {k: v["reason"] for k, v in items.items() if k[0] in ("0d3d703e", "1e0a9b12")}
    assert "5 judgments, got 4" in reasons[("0d3d703e", "classification")]
    assert "not a grid" in reasons[("0d3d703e", "inversion")]
    assert "'input' and 'output'" in reasons[("0d3d703e", "generation")]
    assert "no 'answer' field" in reasons[("0d3d703e", "editing")]
    assert "not a grid" in reasons[("1e0a9b12", "inversion")]
    # Other tasks of the answered dimensions count as unanswered failures.
    assert items[("3c9b0459", "inversion")]["reason"] == "no answer"
    assert not any(i["passed"] for i in items.values())


def test_inversion_answer_is_not_shown_in_other_dimensions(built):
    records = read_jsonl(built / "instances.jsonl")
    by_task: dict[str, dict[str, dict]] = {}
    for r in records:
        by_task.setdefault(r["task_id"], {})[r["dimension"]] = r
    for dims in by_task.values():
        hidden = dims["inversion"]["key"]["input"]
        shown = [c["input"] for c in dims["classification"]["prompt"]["candidates"]]
        shown.append(dims["editing"]["prompt"]["input"])
        assert hidden not in shown


def test_docker_backend_gives_the_same_items(inputs, built, scored, docker_image):
    root = inputs["root"]
    code = cli.main(
        [
            "dimensions",
            "score",
            "--instances",
            str(built / "instances.jsonl"),
            "--answers",
            str(root / "answers.jsonl"),
            "--definitions",
            str(root / "defs"),
            "--out",
            str(root / "scored-docker"),
            "--backend",
            "docker",
            "--no-progress",
        ]
    )
    assert code == 0
    docker_items = (root / "scored-docker" / "items.jsonl").read_bytes()
    assert docker_items == (scored["dir"] / "items.jsonl").read_bytes()
