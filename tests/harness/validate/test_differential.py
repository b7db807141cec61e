"""Differential analysis: suspect generator samples, disputes, quarantine, ambiguity."""

from __future__ import annotations

import json

import pytest

from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.harness.validate.records import (
    AmbiguousTask,
    DisputedInput,
    SuspectSample,
    differential_from_json,
)
from arcjudge.harness.validate.validator import ValidateConfig, Validator
from arcjudge.sandbox.types import Limits
from arcjudge.verifiers.sources import GeneratorSource, VerifierSource
from tests.support.differential_world import FAULTY, TASK, make_world, run


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("diff"))


def test_suspects_are_exactly_the_faulty_samples(world, sandbox, tmp_path):
    v = run(world, sandbox, tmp_path)
    suspects = [differential_from_json(json.loads(x)) for x in v.suspect_lines()]
    found = {s.seed for s in suspects if isinstance(s, SuspectSample)}
    assert found == FAULTY
    for s in suspects:
        if isinstance(s, SuspectSample):
            assert (
                set(s.sources)
                == {"re-arc", "module", "golf", "odd"}
                - ({"odd"} if s.seed in {11, 14, 16} else set())
                or len(s.sources) >= 2
            )
    verdicts = {r.source: r.verdict for r in v.records[TASK]}
    assert verdicts == dict.fromkeys(("re-arc", "module", "golf", "odd"), "invalid")
    disputes = {s.seed for s in suspects if isinstance(s, DisputedInput)}
    assert disputes == {11, 14, 16}  # where "odd" departs from the others
    summary = v.manifest()["differential"]
    assert summary["tasks_with_suspects"] == 1 and summary["tasks_only_suspect_failures"] == 1


def test_quarantine_makes_only_the_correct_ones_valid(world, sandbox, tmp_path):
    v = run(world, sandbox, tmp_path, quarantine_suspects=True)
    verdicts = {r.source: r.verdict for r in v.records[TASK]}
    assert verdicts == {
        "re-arc": "valid_quarantined", "module": "valid_quarantined",
        "golf": "valid_quarantined", "odd": "invalid",
    }  # fmt: skip
    manifest = v.manifest()
    assert manifest["coverage"]["covered"] == 0
    assert manifest["differential"]["covered_quarantined"] == 1
    assert manifest["tasks"][TASK]["chosen_quarantined"] == "re-arc"


def test_deterministic_and_same_on_docker(world, sandbox, tmp_path, docker_image):
    from arcjudge.sandbox.docker import DockerSandbox

    a = "".join(run(world, sandbox, tmp_path / "a").suspect_lines())
    b = "".join(run(world, sandbox, tmp_path / "b").suspect_lines())
    assert a == b
    mounts = (str(sample_dir() / "re-arc"), str(sample_dir() / "module"), str(world / "golf"),
              str(world / "odd"), "tests/fixtures/generator_faulty")  # fmt: skip
    with DockerSandbox(2, image=docker_image, module_dirs=mounts) as dsb:
        c = "".join(run(world, dsb, tmp_path / "c").suspect_lines())
    assert a == c


def test_ambiguity_probe_flags_verifiers_with_different_rules(tmp_path, sandbox):
    # Two verifiers that agree on the demonstrations (all grids have a 1 somewhere) but
    # encode different rules: "recolor 1 to 2" versus "recolor every non-zero to 2".
    task_id = "00000001"
    pair = lambda g: {"input": g, "output": [[2 if c else 0 for c in r] for r in g]}  # noqa: E731
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / f"{task_id}.json").write_text(
        json.dumps({"train": [pair([[1, 0], [0, 1]])], "test": [pair([[0, 1]])]})
    )
    for name, body in (("a", "2 if c == 1 else c"), ("b", "2 if c else 0")):
        d = tmp_path / name
        d.mkdir()
        (d / f"{task_id}.py").write_text(
            f"def transform(g):\n    return [[{body} for c in r] for r in g]\n"
        )
    gen = tmp_path / "gen"
    (gen / "tasks").mkdir(parents=True)
    (gen / "common.py").write_text("")
    (gen / "tasks" / f"task_{task_id}.py").write_text(
        "import random\ndef generate():\n"
        "    g = [[random.choice([0, 1, 3]) for _ in range(3)] for _ in range(3)]\n"
        "    return {'input': g, 'output': [[2 if c else 0 for c in r] for r in g]}\n"
    )
    config = ValidateConfig(
        tasks_dir=tmp_path / "tasks",
        sources=(
            VerifierSource("a", "module", tmp_path / "a"),
            VerifierSource("b", "module", tmp_path / "b"),
        ),
        generator=GeneratorSource("arc-gen", gen),
        samples=0,
        probe_samples=8,
        limits=Limits(wall_seconds=2.0),
    )
    store = ResultStore(tmp_path / "s.sqlite")
    v = Validator(config, sandbox, store)
    v.run()
    store.close()
    assert {r.verdict for r in v.records[task_id]} == {"valid"}  # probes never grade
    assert v.manifest()["tasks"][task_id]["ambiguous"] is True
    flagged = [differential_from_json(json.loads(x)) for x in v.suspect_lines()]
    assert isinstance(flagged[-1], AmbiguousTask) and len(flagged[-1].outputs) == 2
