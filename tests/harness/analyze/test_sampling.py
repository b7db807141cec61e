"""Section 3.2, increased sampling: ``build --configurations``, ``--after``, Table 6, Figure 4.

Synthetic configurations (no sandbox) check Table 6 against a hand computation (means,
sample standard deviations from the formula, hard full-task counts from the items, Wilson
intervals from the formula). The bundled sample then goes the whole way: ``validate
--sample``, ``mutate``, ``dimensions build --configurations 2``, ``dimensions score`` per
configuration (configuration 2 with ``--after`` configuration 1's items, and a reply that
copies a pair accepted in configuration 1), ``dimensions analyze --configuration``.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import statistics
import sys
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.errors import InputError
from arcjudge.harness.analyze.inputs import AnalysisInputs, SamplingTasks
from arcjudge.harness.analyze.sampling import increased_sampling
from arcjudge.harness.analyze.study import analyze
from arcjudge.harness.dimensions.configurations import (
    SEED_STRIDE,
    configuration_seed,
    read_earlier_pairs,
    with_earlier_pairs,
)
from arcjudge.harness.dimensions.records import DimensionInstance, DimensionItem
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.vocabulary import BUILT_DIMENSIONS, DIMENSIONS

sys.path.insert(0, str(Path(__file__).parents[2] / "fixtures"))
import sample_replies

SAMPLE = sample_dir()
Z = statistics.NormalDist().inv_cdf(0.975)
MEASURES = ("full_task", *DIMENSIONS)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval, from its textbook formula."""
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def sample_sd(values: list[float]) -> float:
    """The sample standard deviation from its formula (n - 1 in the denominator)."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def assert_share(data: dict | None, k: int, n: int) -> None:
    assert data is not None and (data["count"], data["total"]) == (k, n), (data, k, n)
    low, high = wilson(k, n)
    assert data["ci95"] == pytest.approx([low, high], abs=2e-6)


# --------------------------------------------------------------- synthetic data

VERIFIER = {"source": "s", "kind": "module", "path": "/nowhere"}
PAIR = {"input": [[0]], "output": [[1]]}


def instance(task: str, dim: str, seed: int) -> dict:
    prompt: dict = {}
    key: dict = {}
    if dim == "output_grid":
        prompt, key = {"test_inputs": [[[0]]]}, {"test_outputs": [[[1]]]}
    elif dim == "classification":
        prompt, key = {"candidates": [PAIR] * 5}, {"labels": ["valid"] * 5, "kinds": ["valid"] * 5}
    elif dim == "generation":
        prompt = {"avoid": [PAIR]}
    elif dim == "editing":
        prompt = dict(PAIR)
    elif dim == "inversion":
        prompt = {"output": [[1]]}
    return {
        "task_id": task,
        "dimension": dim,
        "seed": seed,
        "verifier": VERIFIER,
        "prompt": prompt,
        "key": key,
    }


def item(model: str, run: str, task: str, dim: str, passed: bool, detail=None) -> dict:
    return {
        "model": model,
        "run": run,
        "task_id": task,
        "dimension": dim,
        "passed": passed,
        "reason": None if passed else "wrong",
        "detail": detail or {},
    }


def read(instances: list[dict], items: list[dict]):
    found = {}
    for record in instances:
        inst = DimensionInstance.from_json(record)
        found[(inst.task_id, inst.dimension)] = inst
    return tuple(DimensionItem.from_json(i) for i in items), found


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


TASKS = [f"t{i}" for i in range(6)]
RUNS = ("1", "2")


@pytest.fixture(scope="module")
def configurations() -> list[tuple[list[dict], list[dict]]]:
    """Three configurations, two models, two runs, six tasks; seeded passes.

    Configuration 2 has no Editing instance of t5 (so t5 is out of the hard cells);
    m2 answered no Definition in configuration 3 (no full task there); m1's run 2 is
    missing from configuration 3 (so only run 1 counts for its hard accuracy).
    """
    rng = random.Random(11)
    made = []
    for number, bias in ((1, 0.85), (2, 0.7), (3, 0.8)):
        seed = configuration_seed(77, number)
        missing = {("t5", "editing")} if number == 2 else set()
        instances = [
            instance(t, d, seed) for t in TASKS for d in BUILT_DIMENSIONS if (t, d) not in missing
        ]
        items = []
        for model, scale in (("m1", 1.0), ("m2", 0.6)):
            for run in RUNS:
                if (model, run, number) == ("m1", "2", 3):
                    continue
                for record in instances:
                    dim = record["dimension"]
                    if (model, number, dim) == ("m2", 3, "definition"):
                        continue
                    passed = rng.random() < bias * scale
                    items.append(item(model, run, record["task_id"], dim, passed))
        made.append((instances, items))
    return made


def inputs_of(configurations, **options) -> AnalysisInputs:
    (first_instances, first_items), *rest = configurations
    items, instances = read(first_instances, first_items)
    more = tuple((read(i, its)) for i, its in rest)
    found = AnalysisInputs(
        items, instances, configurations=tuple((a, b) for a, b in more), **options
    )
    found.check()
    return found


EVERY = {"sampling_tasks": SamplingTasks.EVERY}
"""The option for the old behaviour: Table 6 over every task."""


def only(configurations, model: str, tasks) -> list[tuple[list[dict], list[dict]]]:
    """Each configuration's instances and the model's items, of ``tasks`` only."""
    return [
        (
            [r for r in inst if r["task_id"] in tasks],
            [i for i in its if i["task_id"] in tasks and i["model"] == model],
        )
        for inst, its in configurations
    ]


def hand_rates(instances: list[dict], items: list[dict], model: str) -> dict[str, float | None]:
    """Table 3's accuracies of one configuration, counted again by hand."""
    mine = [i for i in items if i["model"] == model]
    rates: dict[str, float | None] = {}
    for dim in DIMENSIONS:
        these = [i["passed"] for i in mine if i["dimension"] == dim]
        rates[dim] = sum(these) / len(these) if these else None
    tasks = {r["task_id"] for r in instances}
    full = [
        t
        for t in tasks
        if all(
            any(r["task_id"] == t and r["dimension"] == d for r in instances) for d in DIMENSIONS
        )
    ]
    if any(rates[d] is None for d in DIMENSIONS):
        rates["full_task"] = None
    else:
        cells = {(i["run"], i["task_id"]) for i in mine if i["task_id"] in full}
        ok = [
            all(
                any(
                    i["run"] == r and i["task_id"] == t and i["dimension"] == d and i["passed"]
                    for i in mine
                )
                for d in DIMENSIONS
            )
            for r, t in cells
        ]
        rates["full_task"] = sum(ok) / len(ok)
    return rates


def passes_all_five(items: list[dict], model: str, run: str, task: str) -> bool:
    got = {
        i["dimension"]: i["passed"]
        for i in items
        if (i["model"], i["run"], i["task_id"]) == (model, run, task)
    }
    return all(got.get(d, False) for d in DIMENSIONS)


@pytest.mark.parametrize("study", [True, False], ids=["study", "every-task"])
def test_table6_is_what_a_hand_computation_gives(configurations, study):
    section = increased_sampling(inputs_of(configurations, **({} if study else EVERY)))
    data = section.data
    assert data["computed"] is True and data["configurations"] == 3
    assert data["seeds"] == [77, 77 + SEED_STRIDE, 77 + 2 * SEED_STRIDE] and data["same_seed"] == []
    assert data["task_selection"] == ("study" if study else "every")
    five_everywhere = [t for t in TASKS if t != "t5"]  # configuration 2 has no Editing of t5
    for model in ("m1", "m2"):
        mine = configurations
        hard_tasks = five_everywhere
        if study:  # the tasks it passed entirely in some run of configuration 1 (< 50: all)
            first = configurations[0][1]
            hard_tasks = [
                t for t in five_everywhere if any(passes_all_five(first, model, r, t) for r in RUNS)
            ]
            assert data["models"][model]["selection"] == {
                "passed_all_five": len(hard_tasks),
                "drawn": hard_tasks,
                "excluded": [],
                "tasks": hard_tasks,
            }
            assert len(hard_tasks) < len(five_everywhere)
            mine = only(configurations, model, set(hard_tasks))
            if not hard_tasks:  # m2 passed no task entirely: nothing to compute
                assert model == "m2" and data["models"][model]["hard_cells"] == 0
                for entry in data["models"][model]["budgets"]:
                    empty = {"n": 0, "mean": None, "sd": None}
                    if entry["budget"] == 1:  # the sd over runs: of no task, no run
                        empty |= {"sd_over": "runs", "sd_runs": 0}
                    assert all(entry[m] == empty for m in MEASURES)
                    assert entry["hard_full_task"] is None
                continue
        else:
            assert "selection" not in data["models"][model]
        per = [hand_rates(inst, its, model) for inst, its in mine]
        budgets = data["models"][model]["budgets"]
        for k in (1, 2, 3):
            entry = budgets[k - 1]
            assert entry["budget"] == k
            for measure in MEASURES:
                values = [p[measure] for p in per[:k] if p[measure] is not None]
                got = entry[measure]
                assert got["n"] == len(values), (model, k, measure)
                assert got["mean"] == pytest.approx(sum(values) / len(values), abs=1e-6)
                if k == 1:  # the study's sd at k = 1: over the runs of configuration 1,
                    instances, first = mine[0]  # on the tasks the rest is over

                    by_run = [
                        hand_rates(instances, [i for i in first if i["run"] == r], model)[measure]
                        for r in RUNS
                    ]
                    assert got["sd_over"] == "runs" and got["sd_runs"] == len(RUNS)
                    assert got["sd"] == pytest.approx(sample_sd(by_run), abs=1e-6)
                elif len(values) > 1:
                    assert got["sd"] == pytest.approx(sample_sd(values), abs=1e-6)
                    assert got["sd"] == pytest.approx(statistics.stdev(values), abs=1e-6)
                else:
                    assert got["sd"] is None
            runs = ["1"] if model == "m1" else list(RUNS)
            hard = entry["hard_full_task"]
            if model == "m2" and k == 3:  # no Definition in configuration 3: no full task
                assert hard is None and entry["full_task"]["n"] == 2
                continue
            passing = sum(
                all(passes_all_five(its, model, r, t) for _, its in mine[:k])
                for r in runs
                for t in hard_tasks
            )
            assert_share(hard, passing, len(runs) * len(hard_tasks))
        assert data["models"][model]["hard_cells"] == len(runs) * len(hard_tasks)
    # The table: one row per model and budget; the CSV columns hold the JSON's numbers.
    (table,) = section.tables
    assert [(r[0], r[1]) for r in table.rows] == [(m, k) for m in ("m1", "m2") for k in (1, 2, 3)]
    header = table.csv_header()
    row = dict(zip(header, table.csv().splitlines()[2].split(","), strict=True))  # m1, k=2
    assert float(row["full_task_mean"]) == pytest.approx(
        data["models"]["m1"]["budgets"][1]["full_task"]["mean"], abs=1e-6
    )
    assert (
        int(row["hard_full_task_count"])
        == data["models"]["m1"]["budgets"][1]["hard_full_task"]["count"]
    )


def test_hard_accuracy_never_rises_and_budget_one_is_table3(configurations):
    analysis = analyze(inputs_of(configurations, **EVERY)).to_json()
    for model in ("m1", "m2"):
        budgets = analysis["increased_sampling"]["models"][model]["budgets"]
        counts = [b["hard_full_task"]["count"] for b in budgets if b["hard_full_task"]]
        assert counts == sorted(counts, reverse=True)
        table3 = analysis["accuracy"]["models"][model]["full_task"]
        assert budgets[0]["full_task"]["mean"] == pytest.approx(table3["rate"], abs=1e-6)
        for dim in DIMENSIONS:
            assert budgets[0][dim]["mean"] == pytest.approx(
                analysis["accuracy"]["models"][model][dim]["rate"], abs=1e-6
            )


def test_one_configuration_is_not_computed_and_the_table_is_empty(configurations):
    items, instances = read(*configurations[0])
    analysis = analyze(AnalysisInputs(items, instances))
    section = analysis.to_json()["increased_sampling"]
    assert section == {"configurations": 1, "computed": False}
    (table,) = [t for t in analysis.tables() if t.name == "table6"]
    assert table.rows == () and "Not computed: one configuration." in table.note


def test_the_cli_reads_configurations_and_draws_figure4(tmp_path, configurations, capsys):
    args = []
    for number, (instances, items) in enumerate(configurations, 1):
        inst = write_jsonl(tmp_path / f"instances-{number}.jsonl", instances)
        its = write_jsonl(tmp_path / f"items-{number}.jsonl", items)
        args += (
            ["--items", str(its), "--instances", str(inst)]
            if number == 1
            else ["--configuration", str(its), str(inst)]
        )
    every = ["--sampling-tasks", "every"]  # m2 passed no task entirely in configuration 1
    assert cli.main(["dimensions", "analyze", *args, *every, "--out", str(tmp_path / "a")]) == 0
    printed = capsys.readouterr().out
    assert "## Table 6: increased sampling" in printed and "| m2 | 3 |" in printed
    data = json.loads((tmp_path / "a" / "analysis.json").read_text())
    assert data["inputs"]["configuration_files"][1] == [
        str(tmp_path / "items-3.jsonl"),
        str(tmp_path / "instances-3.jsonl"),
    ]
    report = (tmp_path / "a" / "report.html").read_text()
    assert 'aria-label="Figure 4' in report and report.count('<svg class="lines"') == 1
    # two lines per model: 2 models, m2's hard line broken at budget 3
    assert report.count("<polyline") == 4 and report.count("stroke-dasharray") >= 2
    assert (tmp_path / "a" / "tables" / "table6.md").read_text().count("| m1 |") == 3
    # Without configurations: no Figure 4, an empty Table 6.
    base = args[:4]
    assert cli.main(["dimensions", "analyze", *base, "--out", str(tmp_path / "b")]) == 0
    assert "Figure 4" not in (tmp_path / "b" / "report.html").read_text()
    assert (tmp_path / "b" / "tables" / "table6.csv").read_text().count("\n") == 1  # header


def test_bad_configurations_are_clear_errors(tmp_path, configurations, capsys):
    (i1, t1), (i2, t2), _ = configurations
    first = [
        "--items",
        str(write_jsonl(tmp_path / "a.jsonl", t1)),
        "--instances",
        str(write_jsonl(tmp_path / "b.jsonl", i1)),
    ]
    items2 = write_jsonl(tmp_path / "c.jsonl", t2)
    cases = [
        (["--configuration", str(items2), str(tmp_path / "nowhere.jsonl")], "nowhere.jsonl"),
        (["--configuration", str(items2)], "expected 2 arguments"),
        # configuration 2's items against configuration 1's instances minus t0
        (
            [
                "--configuration",
                str(items2),
                str(write_jsonl(tmp_path / "d.jsonl", [r for r in i2 if r["task_id"] != "t0"])),
            ],
            "configuration 2: item",
        ),
    ]
    for extra, message in cases:
        argv = ["dimensions", "analyze", *first, *extra, "--out", str(tmp_path / "o")]
        if message.startswith("expected"):  # argparse's own error
            with pytest.raises(SystemExit) as exited:
                cli.main(argv)
            assert exited.value.code == 2
        else:
            assert cli.main(argv) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "o").exists()
    # The same build twice: analysed, with a warning.
    same = ["--configuration", first[1], first[3]]
    assert cli.main(["dimensions", "analyze", *first, *same, "--out", str(tmp_path / "s")]) == 0
    assert "configurations 1 and 2 were built with the same seed" in capsys.readouterr().err


def test_earlier_pairs_read_and_extend_avoid(tmp_path):
    pair = {"input": [[3, 4]], "output": [[4, 3]]}
    items = [
        item("m", "1", "t0", "generation", True, {"pair": pair}),
        item("m", "1", "t0", "generation", True, {"pair": pair}),  # once only
        item("m", "1", "t1", "generation", False, {"pair": {"input": [[5]], "output": [[5]]}}),
        item("m", "2", "t1", "editing", True),
    ]
    earlier = read_earlier_pairs([write_jsonl(tmp_path / "i.jsonl", items)])
    grids = (((3, 4),), ((4, 3),))
    assert earlier.of("m", "1", "t0") == (grids,) and earlier.of("m", "1", "t1") == ()
    assert earlier.cells == {("m", "1"), ("m", "2")}
    assert earlier.counts() == {"m": {"1": 1, "2": 0}}
    gen = DimensionInstance.from_json(instance("t0", "generation", 77))
    other = DimensionInstance.from_json(instance("t0", "inversion", 77))
    extended, same = with_earlier_pairs([gen, other], earlier.for_cell("m", "1"))
    assert extended.avoid() == (*gen.avoid(), grids) and same is other
    # a passed Generation item without its pair (scored before items recorded it)
    old = write_jsonl(tmp_path / "old.jsonl", [item("m", "1", "t0", "generation", True)])
    with pytest.raises(InputError, match="records no generated pair"):
        read_earlier_pairs([old])
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [item("m", "1", "t0", "generation", True, {"pair": [[1]]})]
    )
    with pytest.raises(InputError, match="not a pair of grids"):
        read_earlier_pairs([bad])


# ------------------------------------------------------ the sample, end to end


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    """validate --sample, mutate, build --configurations 2, a plain build beside it."""
    out = tmp_path_factory.mktemp("sampling")
    s = SAMPLE
    run_cli("validate", "--sample", "--out", str(out / "val"))
    run_cli(
        "mutate",
        "--tasks",
        str(s / "tasks"),
        "--manifest",
        str(out / "val"),
        "--source",
        f"re-arc=re-arc:{s / 're-arc'}",
        "--source",
        f"golf=golf:{s / 'golf'}",
        "--source",
        f"module=module:{s / 'module'}",
        "--out",
        str(out / "mut"),
    )
    build = [
        "dimensions",
        "build",
        "--tasks",
        str(s / "tasks"),
        "--manifest",
        str(out / "val"),
        "--corruptions",
        str(out / "mut" / "corruptions.jsonl"),
    ]
    run_cli(*build, "--configurations", "2", "--out", str(out / "configs"))
    run_cli(*build, "--out", str(out / "plain"), "--store", str(out / "configs" / "cache.sqlite"))
    return out


def test_configurations_are_plain_builds_with_their_own_seeds(sample):
    configs = sample / "configs"
    record = json.loads((configs / "configurations.json").read_text())
    assert record["configurations"] == [
        {"configuration": 1, "seed": 77, "directory": "configuration-1"},
        {"configuration": 2, "seed": 77 + SEED_STRIDE, "directory": "configuration-2"},
    ]
    one, two = configs / "configuration-1", configs / "configuration-2"
    # Configuration 1 is the plain build with the build's seed (its build.json says which).
    assert (one / "instances.jsonl").read_bytes() == (
        sample / "plain" / "instances.jsonl"
    ).read_bytes()
    plain = json.loads((sample / "plain" / "build.json").read_text())
    assert "configuration" not in plain
    for number, path in ((1, one), (2, two)):
        built = json.loads((path / "build.json").read_text())
        assert built["configuration"] == number and built["seed"] == configuration_seed(77, number)
        assert {r["seed"] for r in jsonl(path / "instances.jsonl")} == {built["seed"]}
    # Configuration 2 drew other candidates, edits and targets for the same tasks.
    first = {(r["task_id"], r["dimension"]): r for r in jsonl(one / "instances.jsonl")}
    second = {(r["task_id"], r["dimension"]): r for r in jsonl(two / "instances.jsonl")}
    assert first.keys() == second.keys()
    for dim in ("classification", "editing", "inversion"):
        differ = [
            t
            for (t, d) in first
            if d == dim and first[(t, d)]["prompt"] != second[(t, d)]["prompt"]
        ]
        assert len(differ) >= 5, (dim, differ)
    # The output grid and Definition prompts are the task's own: the same.
    for (t, d), record in first.items():
        if d in ("output_grid", "definition"):
            assert record["prompt"] == second[(t, d)]["prompt"]

    # Corrupted-verifier candidates: configuration 2 starts further down mutate's list.
    def mutants(records):
        return {
            p.get("mutant_id")
            for r in records.values()
            if r["dimension"] == "classification"
            for p in r["key"]["provenance"]
            if p.get("mutant_id")
        }

    assert mutants(second) - mutants(first)


def test_a_rerun_finishes_a_missing_configuration_with_the_same_bytes(sample, tmp_path, capsys):
    configs = sample / "configs"
    copy = tmp_path / "configs"
    shutil.copytree(configs, copy)
    shutil.rmtree(copy / "configuration-2")
    (copy / "configurations.json").unlink()
    (copy / "configuration-3").mkdir()  # left by an earlier build of three
    s = SAMPLE
    run_cli(
        "dimensions",
        "build",
        "--tasks",
        str(s / "tasks"),
        "--manifest",
        str(sample / "val"),
        "--corruptions",
        str(sample / "mut" / "corruptions.jsonl"),
        "--configurations",
        "2",
        "--out",
        str(copy),
    )
    for rel in (
        "configurations.json",
        "configuration-1/instances.jsonl",
        "configuration-2/instances.jsonl",
        "configuration-2/build.json",
    ):
        assert (copy / rel).read_bytes() == (configs / rel).read_bytes(), rel
    assert "configuration-3 is of an earlier build with more configurations" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--configurations", "0"], "--configurations must be >= 1"),
        (
            ["--configurations", "2", "--generator", "arc-gen:/x", "--samples", str(SEED_STRIDE)],
            "generator seeds would overlap",
        ),
    ],
)
def test_bad_configuration_arguments_are_usage_errors(sample, tmp_path, capsys, extra, message):
    s = SAMPLE
    code = cli.main(
        [
            "dimensions",
            "build",
            "--tasks",
            str(s / "tasks"),
            "--manifest",
            str(sample / "val"),
            *extra,
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def scored(sample) -> dict[str, Path]:
    """Both configurations scored; configuration 2 with --after, one reply a copy.

    Configuration 1 is the README's build, so the sample's shipped replies are its
    replies. Configuration 2's are the canned models' replies to its own prompts
    (careful's made with --after), except that careful hands in, for the first task
    it passed all five dimensions on, the pair it had accepted there in configuration 1.
    """
    configs = sample / "configs"
    one, two = configs / "configuration-1", configs / "configuration-2"
    run_cli(
        "dimensions",
        "score",
        "--instances",
        str(one / "instances.jsonl"),
        "--replies",
        str(SAMPLE / "replies.jsonl"),
        "--out",
        str(configs / "scored-1"),
    )
    items1 = configs / "scored-1" / "items.jsonl"
    prompts = configs / "prompts-2-careful.jsonl"
    assert (
        cli.main(
            [
                "dimensions",
                "prompts",
                "--instances",
                str(two / "instances.jsonl"),
                "--tasks",
                str(SAMPLE / "tasks"),
                "--after",
                str(items1),
                "--model",
                "careful",
                "--out",
                str(prompts),
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in sample_replies.replies(two, prompts)]
    first = jsonl(items1)
    copied = next(
        t
        for t in sorted({i["task_id"] for i in first})
        if passes_all_five(first, "careful", "1", t)
    )
    pair = next(
        i["detail"]["pair"]
        for i in first
        if (i["model"], i["task_id"], i["dimension"]) == ("careful", copied, "generation")
    )
    for line in lines:
        if (line["model"], line["id"]) == ("careful", f"{copied}/generation"):
            line["reply"] = json.dumps(pair)
    replies = write_jsonl(configs / "replies-2.jsonl", lines)
    score2 = [
        "dimensions",
        "score",
        "--instances",
        str(two / "instances.jsonl"),
        "--replies",
        str(replies),
    ]
    run_cli(*score2, "--after", str(items1), "--out", str(configs / "scored-2"))
    run_cli(*score2, "--out", str(configs / "scored-2-without-after"))
    return {
        "copied": Path(copied),
        "pair": Path(json.dumps(pair)),
        "prompts": prompts,
        "one": configs / "scored-1",
        "two": configs / "scored-2",
        "without": configs / "scored-2-without-after",
    }


def test_a_copy_of_an_accepted_pair_fails_with_after_and_is_in_the_prompt(scored):
    copied = str(scored["copied"])
    pair = json.loads(str(scored["pair"]))

    def generation(path: Path) -> dict:
        return next(
            i
            for i in jsonl(path / "items.jsonl")
            if (i["model"], i["task_id"], i["dimension"]) == ("careful", copied, "generation")
        )

    with_after, without = generation(scored["two"]), generation(scored["without"])
    assert without["passed"] is True and without["detail"]["pair"] == pair
    assert with_after["passed"] is False
    assert with_after["reason"].startswith("copy of earlier accepted pair 0")
    assert with_after["detail"]["earlier_pair"] == 0
    summary = json.loads((scored["two"] / "summary.json").read_text())
    assert summary["after"]["accepted_pairs"] == {"careful": {"1": 10}, "hasty": {"1": 0}}
    assert "generation: copy of an earlier accepted pair" in summary["failure_reasons"]
    # careful's configuration-2 Generation prompt shows its accepted pair as one more
    # demonstration (the study's protocol), before the request to make up a new pair.
    prompt = next(
        json.loads(line)
        for line in scored["prompts"].open()
        if json.loads(line)["id"] == f"{copied}/generation"
    )
    text = prompt["messages"][1]["content"]
    demos = len(prompt["model_visible"]["demonstrations"])
    grid = "\n".join("".join(map(str, row)) for row in pair["input"])
    added = text.split(f"Example {demos + 1}\n", 1)[1].split("Make up a new pair", 1)[0]
    assert f"```\n{grid}\n```" in added and "must not be a copy" not in text.split("Make up")[1]
    assert prompt["model_visible"]["avoid"][-1] == pair


def test_definition_of_each_configuration_sees_its_own_generator_samples(scored):
    scorings = [
        json.loads((scored[k] / "summary.json").read_text())["definition_scoring"]
        for k in ("one", "two")
    ]
    assert [s["seed"] for s in scorings] == [77, 77 + SEED_STRIDE]
    samples = scorings[0]["samples"]
    assert samples > 0 and samples == scorings[1]["samples"] < SEED_STRIDE

    # hasty's identity program fails on the first generator sample: its seed and input
    def first_samples(path: Path) -> dict[str, tuple[int, object]]:
        found = {}
        for result in jsonl(path / "definitions.jsonl"):
            failure = result["first_failure"].get("generator")
            if result["model"] == "hasty" and failure:
                found[result["task_id"]] = (failure["seed"], failure["input"])
        return found

    before, after = first_samples(scored["one"]), first_samples(scored["two"])
    assert before.keys() == after.keys() and before
    assert all(before[t][0] < SEED_STRIDE <= after[t][0] for t in before)
    assert any(before[t][1] != after[t][1] for t in before)


def test_the_sample_analysis_of_two_configurations(sample, scored, capsys):
    configs = sample / "configs"
    one, two = configs / "configuration-1", configs / "configuration-2"
    out = configs / "analysis"
    argv = [
        "dimensions",
        "analyze",
        "--items",
        str(scored["one"] / "items.jsonl"),
        "--instances",
        str(one / "instances.jsonl"),
        "--configuration",
        str(scored["two"] / "items.jsonl"),
        str(two / "instances.jsonl"),
    ]
    code = cli.main([*argv, "--out", str(out)])
    assert code == 0 and "## Table 6" in capsys.readouterr().out
    data = json.loads((out / "analysis.json").read_text())["increased_sampling"]
    pairs = [
        (jsonl(one / "instances.jsonl"), jsonl(scored["one"] / "items.jsonl")),
        (jsonl(two / "instances.jsonl"), jsonl(scored["two"] / "items.jsonl")),
    ]
    everything = sorted({r["task_id"] for r in pairs[0][0]})
    for model in ("careful", "hasty"):
        # the study's tasks: those it passed entirely in configuration 1 (10 < 50: all)
        chosen = [t for t in everything if passes_all_five(pairs[0][1], model, "1", t)]
        assert data["models"][model]["selection"]["tasks"] == chosen
        if not chosen:  # hasty passed no task entirely: nothing to compute
            assert model == "hasty" and data["models"][model]["hard_cells"] == 0
            continue
        mine = only(pairs, model, set(chosen))
        per = [hand_rates(inst, its, model) for inst, its in mine]
        budget2 = data["models"][model]["budgets"][1]
        for measure in MEASURES:
            values = [p[measure] for p in per]
            assert budget2[measure]["mean"] == pytest.approx(sum(values) / 2, abs=1e-6)
            assert budget2[measure]["sd"] == pytest.approx(sample_sd(values), abs=1e-6)
        passing = sum(all(passes_all_five(its, model, "1", t) for _, its in mine) for t in chosen)
        assert_share(budget2["hard_full_task"], passing, len(chosen))
    # careful: the n tasks passing all five in configuration 1 are its Section 3.2 tasks
    # (all of them at budget 1); the copied pair fails one of them in configuration 2
    # (nothing else differs for the canned answers).
    n = len(data["models"]["careful"]["selection"]["tasks"])
    careful = data["models"]["careful"]["budgets"]
    assert careful[0]["hard_full_task"]["count"] == careful[0]["hard_full_task"]["total"] == n
    assert careful[1]["hard_full_task"]["count"] == n - 1
    assert careful[1]["hard_full_task"]["total"] == n
    assert careful[1]["full_task"]["mean"] == pytest.approx((n / n + (n - 1) / n) / 2)
    assert 'aria-label="Figure 4' in (out / "report.html").read_text()
    assert "seeded random 50 (seed 77)" in (out / "tables" / "table6.md").read_text()
    # the option for the old behaviour: every task (hard over all ten)
    assert cli.main([*argv, "--sampling-tasks", "every", "--out", str(out / "every")]) == 0
    every = json.loads((out / "every" / "analysis.json").read_text())["increased_sampling"]
    careful = every["models"]["careful"]["budgets"]
    assert careful[1]["hard_full_task"]["total"] == 10
    assert careful[1]["hard_full_task"]["count"] == n - 1
    full = [hand_rates(inst, its, "careful")["full_task"] for inst, its in pairs]
    assert careful[1]["full_task"]["mean"] == pytest.approx(sum(full) / 2, abs=1e-6)
    assert every["task_selection"] == "every" and "selection" not in every["models"]["careful"]


def test_score_after_refuses_old_items_and_warns_of_runs_named_otherwise(
    sample, scored, tmp_path, capsys
):
    two = sample / "configs" / "configuration-2"
    items1 = jsonl(scored["one"] / "items.jsonl")
    old = write_jsonl(
        tmp_path / "old.jsonl",
        [{**i, "detail": {k: v for k, v in i["detail"].items() if k != "pair"}} for i in items1],
    )
    score = [
        "dimensions",
        "score",
        "--instances",
        str(two / "instances.jsonl"),
        "--replies",
        str(sample / "configs" / "replies-2.jsonl"),
        "--backend",
        "process",
        "--no-progress",
        "--store",
        str(sample / "configs" / "cache.sqlite"),
    ]
    assert cli.main([*score, "--after", str(old), "--out", str(tmp_path / "o")]) == 2
    assert "records no generated pair" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert (
        cli.main([*score, "--after", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "none.jsonl" in capsys.readouterr().err
    # careful's pairs under another run name: nothing matches run 1, which is said
    renamed = write_jsonl(
        tmp_path / "renamed.jsonl", [{**i, "run": "7"} for i in items1 if i["model"] == "careful"]
    )
    assert cli.main([*score, "--after", str(renamed), "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "--after: no item of careful run 1" in err and "hasty run 1" in err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["after"]["unmatched"] == [["careful", "1"], ["hasty", "1"]]
    items = {
        (i["model"], i["task_id"], i["dimension"]): i for i in jsonl(tmp_path / "r" / "items.jsonl")
    }
    assert items[("careful", str(scored["copied"]), "generation")]["passed"] is True


def test_definition_scoring_refuses_a_build_record_of_another_seed(sample, tmp_path, capsys):
    configs = sample / "configs"
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(configs / "configuration-2" / "instances.jsonl", mixed)
    shutil.copy(configs / "configuration-1" / "build.json", mixed)
    code = cli.main(
        [
            "dimensions",
            "score",
            "--instances",
            str(mixed / "instances.jsonl"),
            "--replies",
            str(SAMPLE / "replies.jsonl"),
            "--backend",
            "process",
            "--no-progress",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert f"seed 77, but the instances beside it were built with seed {77 + SEED_STRIDE}" in (
        capsys.readouterr().err
    )


def test_exclude_tasks_leaves_listed_tasks_out_after_the_draw(tmp_path, configurations, capsys):
    args = []
    for number, (instances, items) in enumerate(configurations, 1):
        inst = write_jsonl(tmp_path / f"instances-{number}.jsonl", instances)
        its = write_jsonl(tmp_path / f"items-{number}.jsonl", items)
        args += (
            ["--items", str(its), "--instances", str(inst)]
            if number == 1
            else ["--configuration", str(its), str(inst)]
        )
    first = configurations[0][1]
    passed = [
        t for t in TASKS if t != "t5" and any(passes_all_five(first, "m1", r, t) for r in RUNS)
    ]
    assert len(passed) >= 2
    listed = tmp_path / "trivial.txt"
    listed.write_text(f"# trivial Definition programs\n{passed[0]}\nnot-a-task\n")
    out = tmp_path / "a"
    argv = ["dimensions", "analyze", *args, "--exclude-tasks", str(listed), "--out", str(out)]
    assert cli.main(argv) == 0
    data = json.loads((out / "analysis.json").read_text())["increased_sampling"]
    assert data["exclude_tasks"] == {"file": str(listed), "tasks": ["not-a-task", passed[0]]}
    assert data["models"]["m1"]["selection"] == {
        "passed_all_five": len(passed),
        "drawn": passed,
        "excluded": [passed[0]],
        "tasks": passed[1:],
    }
    assert data["models"]["m1"]["hard_cells"] == len(passed) - 1  # run 1 only (see fixture)
    assert (
        f"minus the 2 task(s) of --exclude-tasks {listed}"
        in (out / "tables" / "table6.md").read_text()
    )
    # --sampling-size draws fewer; a missing list is a usage error
    assert cli.main([*argv[:-2], "--sampling-size", "1", "--out", str(tmp_path / "b")]) == 0
    one = json.loads((tmp_path / "b" / "analysis.json").read_text())["increased_sampling"]
    assert len(one["models"]["m1"]["selection"]["drawn"]) == 1
    capsys.readouterr()
    missing = ["dimensions", "analyze", *args, "--exclude-tasks", str(tmp_path / "no")]
    assert cli.main([*missing, "--out", str(tmp_path / "c")]) == 2
    assert "--exclude-tasks" in capsys.readouterr().err
    assert cli.main([*argv[:-2], "--sampling-size", "0", "--out", str(tmp_path / "d")]) == 2
