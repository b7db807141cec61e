"""The build faithful to the reference study, on the bundled sample.

Editing pairs come from human error, corrupted verifier and color flip only; no candidate
shows a demonstration's input (``mutate`` never runs mutants on one, ``build`` drops any
that does); valid pairs are fresh generator samples when a generator is given, and
Definition replies are scored on that generator; self-consistency runs each Definition
program with the entry points ``score`` ran it with; ``mutate --operators paper`` uses the
study's two operators. ``bench/check_build.py`` (the check a user runs on a 400-task
build) passes on the faithful build and catches each deviation.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.grids import to_grid
from arcjudge.harness.core.inputs import DEFAULT_SAMPLES
from arcjudge.harness.mutate.mutator import MutateConfig
from arcjudge.harness.score.scorer import ScoreConfig
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.harness.validate.validator import ValidateConfig
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import VERIFIER_LIMITS, GeneratorCall, ProgramStatus, Status
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from arcjudge.vocabulary import EDITING_KINDS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import check_build

SAMPLE = sample_dir()
SOURCES = [
    "--source", f"re-arc=re-arc:{SAMPLE / 're-arc'}",
    "--source", f"golf=golf:{SAMPLE / 'golf'}",
    "--source", f"module=module:{SAMPLE / 'module'}",
]  # fmt: skip
GENERATOR = f"arc-gen:{SAMPLE / 'generators' / 'arc-gen'}"
STUDY_EDITING = ("human_error", "corrupted_verifier", "color_flip")
OLD_EDITING = "instance_mismatch,corrupted_verifier,color_flip"


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tasks() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((SAMPLE / "tasks").glob("*.json"))}


def harc_rows() -> str:
    """Wrong test answers of our own, one cell off the true output, for every task."""
    lines = ["task_name,task_type,test_output_grid,count"]
    for task_id, task in tasks().items():
        grid = [list(row) for row in task["test"][0]["output"]]
        grid[0][0] = (grid[0][0] + 1) % 10
        lines.append(f"{task_id}.json,training,|{'|'.join(''.join(map(str, r)) for r in grid)}|,2")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("faithful")
    run_cli("validate", "--sample", "--out", str(root / "val"))
    mutate = ["mutate", "--tasks", str(SAMPLE / "tasks"), *SOURCES, "--manifest", str(root / "val")]
    run_cli(*mutate, "--out", str(root / "mut"))
    run_cli(*mutate, "--demonstration-inputs", "--out", str(root / "mut-demos"))
    (root / "harc.csv").write_text(harc_rows())
    # Instance mismatch the heaviest type: the old Editing draw would take it everywhere.
    mixture = {"valid": 0.25, "instance_mismatch": 0.74, "human_error": 0.01}
    (root / "mixture.json").write_text(json.dumps(mixture))
    common = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
              str(root / "val"), "--human-errors", str(root / "harc.csv"), "--store",
              str(root / "cache.sqlite")]  # fmt: skip
    run_cli(*common, "--corruptions", str(root / "mut" / "corruptions.jsonl"),
            "--generator", GENERATOR, "--mixture", str(root / "mixture.json"),
            "--out", str(root / "gen"))  # fmt: skip
    run_cli(*common, "--corruptions", str(root / "mut" / "corruptions.jsonl"),
            "--mixture", str(root / "mixture.json"), "--editing-kinds", OLD_EDITING,
            "--out", str(root / "old-editing"))  # fmt: skip
    run_cli(*common, "--corruptions", str(root / "mut-demos" / "corruptions.jsonl"),
            "--out", str(root / "demos"))  # fmt: skip
    run_cli(*common, "--valid-pairs", "arc-gen", "--out", str(root / "arc-gen-valid"))
    run_cli(*common, "--mismatch-pool", "valid", "--out", str(root / "valid-pool"))
    names = ("val", "mut", "mut-demos", "gen", "demos", "arc-gen-valid", "valid-pool")
    return {"root": root, **{n: root / n for n in names}, "old": root / "old-editing"}


def by_dimension(build: Path, dimension: str) -> dict[str, dict]:
    return {r["task_id"]: r for r in read_jsonl(build / "instances.jsonl")
            if r["dimension"] == dimension}  # fmt: skip


# ------------------------------------------------------------------------ editing


def test_editing_pairs_are_of_the_study_types_only(world):
    assert EDITING_KINDS == STUDY_EDITING
    summary = json.loads((world["gen"] / "build.json").read_text())
    assert summary["editing_kinds"] == list(STUDY_EDITING)
    editing = by_dimension(world["gen"], "editing")
    assert len(editing) == 10 and {r["key"]["kind"] for r in editing.values()} <= set(STUDY_EDITING)
    # Human error, the only one of the three with weight here, wherever it was confirmed;
    # its repair is the test pair (the true output is known).
    with_errors = [t for t, i in summary["tasks"].items() if i["confirmed"].get("human_error")]
    assert len(with_errors) >= 8
    for task_id in with_errors:
        record = editing[task_id]
        test = tasks()[task_id]["test"][0]
        assert record["key"]["kind"] == "human_error", task_id
        assert record["prompt"]["input"] == test["input"] != record["key"]["reference_edit"]
        assert record["key"]["reference_edit"] == {"input": test["input"], "output": test["output"]}


def test_editing_kinds_flag_gives_the_old_draw(world):
    kinds = {r["key"]["kind"] for r in by_dimension(world["old"], "editing").values()}
    assert "instance_mismatch" in kinds and "human_error" not in kinds
    problems, _ = check_build.check(world["old"])
    assert any("editing pair of type instance_mismatch" in p for p in problems)
    allowed = tuple(OLD_EDITING.split(","))
    assert not check_build.check(world["old"], editing_kinds=allowed)[0]


def test_editing_kinds_must_be_known(world, capsys):
    argv = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
            str(world["val"]), "--editing-kinds", "human_error,typo", "--out",
            str(world["root"] / "bad")]  # fmt: skip
    assert cli.main(argv) == 2
    assert "--editing-kinds: unknown type(s) typo" in capsys.readouterr().err
    argv[argv.index("--editing-kinds") : argv.index("--out")] = [
        "--valid-pairs", "arc-gen", "--samples", "5"
    ]  # fmt: skip
    assert cli.main(argv) == 2
    assert "--valid-pairs arc-gen takes no --generator and no --samples" in (
        capsys.readouterr().err
    )


# ------------------------------------------------------------ demonstration inputs


def test_mutate_never_runs_mutants_on_demonstration_inputs(world):
    train = {t: {json.dumps(p["input"]) for p in task["train"]} for t, task in tasks().items()}
    pairs = read_jsonl(world["mut"] / "corruptions.jsonl")
    assert pairs and all(p["split"] in ("test", "arc-gen") for p in pairs)
    assert not [p for p in pairs if json.dumps(p["input"]) in train[p["task_id"]]]
    old = read_jsonl(world["mut-demos"] / "corruptions.jsonl")
    assert any(p["split"] == "train" for p in old)  # --demonstration-inputs: as before
    summary = json.loads((world["mut"] / "summary.json").read_text())
    assert summary["demonstration_inputs"] is False and summary["seed"] == 77


def test_build_drops_candidates_showing_a_demonstration_input(world):
    summary = json.loads((world["demos"] / "build.json").read_text())
    dropped = summary["demonstration_inputs_dropped"]
    assert dropped.get("corrupted_verifier", 0) > 0
    per_task = sum(
        t["demonstration_inputs_dropped"].get("corrupted_verifier", 0)
        for t in summary["tasks"].values()
    )
    assert per_task == dropped["corrupted_verifier"]
    for build in (world["demos"], world["gen"]):
        problems, counts = check_build.check(build)
        assert not [p for p in problems if "demo input" in p or "demonstration" in p], problems
        assert counts["tasks"] == 10


# ------------------------------------------------------------------ valid pairs


def test_valid_candidates_are_fresh_generator_samples(world, sandbox):
    summary = json.loads((world["gen"] / "build.json").read_text())
    assert summary["inputs"]["generator"] == {
        "kind": "arc-gen",
        "path": str((SAMPLE / "generators" / "arc-gen").resolve()),
    }
    assert summary["generator_samples"] == 50 and summary["valid_sources"] == {"generator": 10}
    generator = GeneratorSource("arc-gen", SAMPLE / "generators" / "arc-gen")
    seen = 0
    for task_id, record in by_dimension(world["gen"], "classification").items():
        slots = [
            (pair, origin)
            for pair, kind, origin in zip(record["prompt"]["candidates"], record["key"]["kinds"],
                                          record["key"]["provenance"], strict=True)
            if kind == "valid"
        ]  # fmt: skip
        if not slots:
            continue
        assert all(o["split"] == "generator" and o["seed"] == 77 + o["index"] for _, o in slots)
        # The inputs are the generator's samples for those seeds, drawn here on our own...
        program = generator.program_for(task_id).program
        calls = [GeneratorCall(o["seed"], generator.kwargs) for _, o in slots]
        drawn = sandbox.generate(program, calls, VERIFIER_LIMITS)
        assert drawn.status is ProgramStatus.LOADED
        assert [to_grid(p["input"]) for p, _ in slots] == [r.grid for r in drawn.results]
        # ... and the outputs the task's validated verifier's.
        spec = record["verifier"]
        verifier = VerifierSource(spec["source"], spec["kind"], spec["path"])
        ran = sandbox.run(verifier.program_for(task_id).program,
                          [to_grid(p["input"]) for p, _ in slots], VERIFIER_LIMITS,
                          policy=PolicyMode.OFF)  # fmt: skip
        assert all(r.status is Status.OK for r in ran.results)
        assert [to_grid(p["output"]) for p, _ in slots] == [r.grid for r in ran.results]
        seen += len(slots)
    assert seen >= 5
    for record in by_dimension(world["gen"], "inversion").values():
        assert record["key"]["split"] == "generator"
    assert check_build.check(world["gen"], strict=True) == ([], check_build.check(world["gen"])[1])


def test_a_generator_build_gives_the_same_bytes_again(world):
    """Samples and verifier outputs come back from the store; other seed, other samples."""
    root = world["root"]
    argv = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
            str(world["val"]), "--human-errors", str(root / "harc.csv"), "--corruptions",
            str(root / "mut" / "corruptions.jsonl"), "--generator", GENERATOR, "--mixture",
            str(root / "mixture.json"), "--store", str(root / "cache.sqlite")]  # fmt: skip
    run_cli(*argv, "--out", str(root / "gen-again"))
    for name in ("instances.jsonl", "build.json"):
        assert (root / "gen-again" / name).read_bytes() == (world["gen"] / name).read_bytes()
    run_cli(*argv, "--samples", "7", "--seed", "5", "--out", str(root / "gen-seed5"))
    summary = json.loads((root / "gen-seed5" / "build.json").read_text())
    assert summary["generator_samples"] == 7 and summary["seed"] == 5
    for record in by_dimension(root / "gen-seed5", "inversion").values():
        assert record["key"]["split"] == "generator" and record["key"]["seed"] - 5 in range(7)


def test_valid_pairs_are_the_manifests_generator_samples_by_default(world):
    # built without --generator: the generator validate drew from (the manifest's)
    summary = json.loads((world["demos"] / "build.json").read_text())
    assert summary["inputs"]["generator"] == {"kind": "arc-gen", "path": GENERATOR[8:]}
    assert summary["generator_samples"] == 50 and summary["valid_pairs"] == "generator"
    assert summary["valid_sources"] == {"generator": 10}
    for record in by_dimension(world["demos"], "classification").values():
        for kind, origin in zip(record["key"]["kinds"], record["key"]["provenance"], strict=True):
            assert kind != "valid" or origin["split"] == "generator"


def test_valid_pairs_arc_gen_gives_the_old_valid_pairs(world):
    summary = json.loads((world["arc-gen-valid"] / "build.json").read_text())
    assert summary["inputs"]["generator"] is None and summary["generator_samples"] == 0
    assert summary["valid_pairs"] == "arc-gen" and summary["valid_sources"] == {"arc-gen": 10}
    for record in by_dimension(world["arc-gen-valid"], "classification").values():
        for kind, origin in zip(record["key"]["kinds"], record["key"]["provenance"], strict=True):
            assert kind != "valid" or origin["split"] == "arc-gen"


def _mismatch_outputs(build: Path) -> dict[str, list]:
    """Per task, the outputs of its Classification instance's instance-mismatch candidates."""
    found: dict[str, list] = {}
    for task_id, record in by_dimension(build, "classification").items():
        kinds = record["key"]["kinds"]
        pairs = record["prompt"]["candidates"]
        found[task_id] = [
            p["output"] for k, p in zip(kinds, pairs, strict=True) if k == "instance_mismatch"
        ]
    return found


def _stable_outputs(task_id: str) -> list:
    task = tasks()[task_id]
    return [p["output"] for p in (*task["train"], *task.get("arc-gen", []))]


def test_instance_mismatches_take_arc_gen_and_demonstration_outputs(world):
    # valid pairs are generator samples here; the mismatch pool is still ARC-GEN + train
    found = _mismatch_outputs(world["demos"])
    assert sum(len(o) for o in found.values()) >= 5
    for task_id, outputs in found.items():
        assert all(o in _stable_outputs(task_id) for o in outputs), task_id
    # --mismatch-pool valid: the old pool, the (generator) valid pairs' outputs
    old = _mismatch_outputs(world["valid-pool"])
    assert any(o not in _stable_outputs(t) for t, outputs in old.items() for o in outputs)
    summary = json.loads((world["valid-pool"] / "build.json").read_text())
    assert summary["mismatch_pool"] == "valid"


def test_check_build_catches_a_valid_pair_that_is_no_generator_sample(world, tmp_path):
    lines = (world["gen"] / "instances.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        record = json.loads(line)
        if record["dimension"] == "classification" and "valid" in record["key"]["kinds"]:
            slot = record["key"]["kinds"].index("valid")
            record["key"]["provenance"][slot]["split"] = "arc-gen"
        out.append(json.dumps(record))
    (tmp_path / "instances.jsonl").write_text("\n".join(out) + "\n")
    (tmp_path / "build.json").write_text((world["gen"] / "build.json").read_text())
    problems, _ = check_build.check(tmp_path)
    assert problems and all("is arc-gen" in p for p in problems)


def test_definition_replies_are_scored_on_the_builds_generator(world):
    """The build's generator and 50 samples, not validate --sample's 10."""
    program = "```python\ndef transform(grid):\n    return [row[::-1] for row in grid]\n```"
    reply = {"id": "67a3c6ac/definition", "model": "m", "run": 1, "reply": program}
    replies = world["root"] / "replies.jsonl"
    replies.write_text(json.dumps(reply) + "\n")
    out = world["root"] / "scored-replies"
    run_cli("dimensions", "score", "--instances", str(world["gen"] / "instances.jsonl"),
            "--replies", str(replies), "--out", str(out))  # fmt: skip
    scoring = json.loads((out / "summary.json").read_text())["definition_scoring"]
    assert scoring["generator"]["path"] == str((SAMPLE / "generators" / "arc-gen").resolve())
    assert scoring["samples"] == 50 and scoring["seed"] == 77
    (result,) = read_jsonl(out / "definitions.jsonl")
    assert result["splits"]["generator"] == [50, 50] and result["verdict"] == "pass"


# ------------------------------------------------------------------ consistency


def test_consistency_calls_the_entry_point_score_used(world):
    """A program whose function is ``mirror``, scored with ``--entrypoint mirror``."""
    root = world["root"]
    task_id = "67a3c6ac"  # mirror left to right
    code = "def mirror(grid):\n    return [row[::-1] for row in grid]\n"
    programs = root / "programs.jsonl"
    line = {"id": "p1", "task_id": task_id, "model": "m", "run": 1, "code": code}
    programs.write_text(json.dumps(line) + "\n")
    run_cli("score", "--programs", str(programs), "--tasks", str(SAMPLE / "tasks"),
            "--entrypoint", "mirror", "--out", str(root / "defs"))  # fmt: skip
    (result,) = read_jsonl(root / "defs" / "results.jsonl")
    assert result["entry_points"] == ["mirror"] and result["verdict"] == "pass"
    classification = by_dimension(world["gen"], "classification")[task_id]
    answers = root / "answers.jsonl"
    answer = {"task_id": task_id, "dimension": "classification", "model": "m", "run": 1,
              "answer": classification["key"]["labels"]}  # fmt: skip
    answers.write_text(json.dumps(answer) + "\n")
    out = root / "scored-consistency"
    run_cli("dimensions", "score", "--instances", str(world["gen"] / "instances.jsonl"),
            "--answers", str(answers), "--definitions", str(root / "defs"), "--programs",
            str(programs), "--out", str(out))  # fmt: skip
    (item,) = [
        i
        for i in read_jsonl(out / "items.jsonl")
        if i["dimension"] == "classification" and i["task_id"] == task_id
    ]
    assert "valid" in classification["key"]["labels"]
    # The right program, right answers: it agrees with every judgment (run with the
    # default entry points it would not load, and disagree on every valid candidate).
    assert item["consistency"]["agree"] == [True] * 5
    assert item["consistency"]["definition_passes_train_test"] is True


# ------------------------------------------------------------------- operators


def test_mutate_uses_the_studys_two_operators_by_default(world):
    mutants = read_jsonl(world["mut"] / "mutants.jsonl")  # mutate without --operators
    by_source = {}
    for m in mutants:
        by_source.setdefault(m["source"], set()).add(m["operator"])
    assert by_source["re-arc"] == {"stmt.drop_assign_rewire"}
    assert by_source["module"] == {"expr.binop_left"}  # golf's valid files have no `a OP b`
    assert by_source.get("golf", {"expr.binop_left"}) == {"expr.binop_left"}
    summary = json.loads((world["mut"] / "summary.json").read_text())
    assert summary["operator_set"] == "paper"
    assert set(summary["operators"]) == {"stmt.drop_assign_rewire", "expr.binop_left"}


def test_mutate_operators_all_gives_every_registered_operator(world):
    out = world["root"] / "mut-all"
    run_cli("mutate", "--tasks", str(SAMPLE / "tasks"), *SOURCES, "--manifest",
            str(world["val"]), "--operators", "all", "--out", str(out))  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["operator_set"] == "all" and len(summary["operators"]) > 2
    paper = read_jsonl(world["mut"] / "mutants.jsonl")
    assert len(read_jsonl(out / "mutants.jsonl")) > len(paper)


# -------------------------------------------------------------------- defaults


def test_every_seeded_command_defaults_to_the_studys_seed_and_samples(tmp_path):
    from arcjudge.cli import _parser
    from arcjudge.harness.dimensions.build import BuildConfig
    from arcjudge.harness.mutate.cli import COMMAND as MUTATE
    from arcjudge.harness.score.cli import COMMAND as SCORE
    from arcjudge.harness.validate.cli import COMMAND as VALIDATE

    def validate_config(args: argparse.Namespace) -> ValidateConfig:
        return VALIDATE.configure(args).config

    def score_config(args: argparse.Namespace) -> ScoreConfig:
        return SCORE.configure(args).config

    def mutate_config(args: argparse.Namespace) -> MutateConfig:
        return MUTATE.configure(args).config

    parse = _parser().parse_args
    tasks, out = str(SAMPLE / "tasks"), str(tmp_path / "o")
    source = f"g=golf:{SAMPLE / 'golf'}"
    validated = validate_config(parse(["validate", "--tasks", tasks, "--source", source,
                                       "--generator", GENERATOR, "--out", out]))  # fmt: skip
    assert (validated.seed, validated.samples) == (77, 50)
    plain = validate_config(parse(["validate", "--tasks", tasks, "--source", source, "--out", out]))
    assert (plain.seed, plain.samples) == (77, 0)
    sample = validate_config(parse(["validate", "--sample", "--out", out]))
    assert (sample.seed, sample.samples) == (0, 10)  # what EXPECTED.json is for
    programs = tmp_path / "p.jsonl"
    programs.write_text("")
    scored = score_config(parse(["score", "--programs", str(programs), "--tasks", tasks,
                                 "--generator", GENERATOR, "--out", out]))  # fmt: skip
    assert (scored.seed, scored.samples) == (77, 50)
    mutated = mutate_config(parse(["mutate", "--tasks", tasks, "--source", source, "--out", out]))
    assert mutated.seed == 77 and mutated.study_operators and mutated.operators is None
    assert BuildConfig(SAMPLE / "tasks", tmp_path).seed == 77
    assert BuildConfig(SAMPLE / "tasks", tmp_path).samples is None  # with a generator: 50
    assert DEFAULT_SAMPLES == 50


def test_without_any_generator_valid_pairs_are_arc_gen_and_samples_an_error(tmp_path, capsys):
    run_cli("validate", "--tasks", str(SAMPLE / "tasks"), "--source",
            f"golf=golf:{SAMPLE / 'golf'}", "--out", str(tmp_path / "val"))  # fmt: skip
    argv = ["dimensions", "build", "--tasks", str(SAMPLE / "tasks"), "--manifest",
            str(tmp_path / "val"), "--per-kind", "2"]  # fmt: skip
    run_cli(*argv, "--out", str(tmp_path / "built"))
    summary = json.loads((tmp_path / "built" / "build.json").read_text())
    assert summary["inputs"]["generator"] is None and summary["generator_samples"] == 0
    assert set(summary["valid_sources"]) == {"arc-gen"}
    capsys.readouterr()
    assert cli.main([*argv, "--samples", "5", "--out", str(tmp_path / "b2")]) == 2
    assert "no generator to draw them from" in capsys.readouterr().err
