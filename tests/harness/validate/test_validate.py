"""`arcjudge validate` on hand-made sources in the three formats, with known verdicts."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from arcjudge import cli
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.validate.records import read_verdicts
from arcjudge.harness.validate.validator import ValidateConfig, Validator
from arcjudge.sandbox.types import Limits
from arcjudge.verifiers.sources import VerifierSource
from arcjudge.vocabulary import Verdict
from tests.support.helpers import cached_rows, default_sigint
from tests.support.validate_world import FLIP, RECOLOR, make_world, run_validate


@pytest.fixture
def world(tmp_path):
    return make_world(tmp_path)


def verdict_map(validator):
    """(task, source) -> the verdict as ``verdicts.jsonl`` holds it."""
    return {(r.task_id, r.source): r.to_json() for r in validator.verdict_records()}


def test_verdicts_of_every_kind(world, sandbox):
    v = verdict_map(run_validate(world, sandbox))
    assert v[(FLIP, "rearc")]["verdict"] == "valid"
    assert v[(RECOLOR, "rearc")]["verdict"] == "valid"
    assert v[(FLIP, "rearc")]["splits"] == {
        "train": [2, 2], "test": [1, 1], "arc-gen": [4, 4], "generator": [8, 8]
    }  # fmt: skip
    golf = v[(FLIP, "golf")]  # wrong only on the 1-row ARC-GEN pair
    assert golf["verdict"] == "invalid"
    assert list(golf["first_failure"]) == ["arc-gen"]
    assert golf["first_failure"]["arc-gen"]["index"] == 1
    assert golf["first_failure"]["arc-gen"]["produced"] == [[0]]
    assert v[(RECOLOR, "golf")]["verdict"] == "missing"
    timeout = v[(FLIP, "module")]  # times out only on the ARC-GEN grid starting with 9
    assert timeout["verdict"] == "invalid"
    assert timeout["first_failure"]["arc-gen"]["status"] == "timeout"
    assert timeout["statuses"]["arc-gen"] == {"ok": 3, "timeout": 1}
    assert v[(RECOLOR, "module")]["verdict"] == "load_error"
    assert "SyntaxError" in v[(RECOLOR, "module")]["error"]
    crash = v[(FLIP, "crash")]
    assert crash["verdict"] == "invalid" and crash["statuses"]["train"] == {"error": 2}
    assert "boom" in crash["first_failure"]["train"]["error"]
    seven = v[(RECOLOR, "seven")]  # right on demos and ARC-GEN, wrong on generator samples
    assert seven["verdict"] == "invalid"
    assert list(seven["first_failure"]) == ["generator"]
    assert "seed" in seven["first_failure"]["generator"]


def test_a_source_cannot_pass_off_another_directorys_file_as_its_own(world, sandbox):
    # thief/FLIP.py is a symlink to another source's file: refused, a per-task problem.
    # thief/RECOLOR.py is a symlink to a file of its own directory: read, and the
    # provenance names the file it resolves to.
    thief = world / "thief"
    thief.mkdir()
    (thief / f"{FLIP}.py").symlink_to(world / "module" / f"{FLIP}.py")
    (thief / "recolor_impl.py").write_text(
        "def transform(g):\n    return [[5 if c else 0 for c in r] for r in g]\n"
    )
    (thief / f"{RECOLOR}.py").symlink_to("recolor_impl.py")
    source = VerifierSource("thief", "module", thief)
    refused = source.program_for(FLIP)
    assert refused.program is None and refused.refused is not None
    assert "a symlink out of its directory" in refused.refused
    os.mkfifo(thief / "0badf1f0.py")  # a FIFO never blocks the read: refused at once
    fifo = source.program_for("0badf1f0")
    assert fifo.program is None and fifo.refused is not None and "a FIFO" in fifo.refused
    (thief / "0badf1f0.py").unlink()
    config = ValidateConfig(
        tasks_dir=world / "tasks",
        sources=(source,),
        arcgen_dir=world / "arcgen",
        limits=Limits(wall_seconds=1.0, total_seconds=30.0),
    )
    store = ResultStore(world / "thief.sqlite")
    try:
        validator = Validator(config, sandbox, store)
        validator.run()
    finally:
        store.close()
    v = verdict_map(validator)
    flip_record = v[(FLIP, "thief")]
    assert flip_record["verdict"] == "load_error"
    assert flip_record["error"].startswith(f"refused: {thief / FLIP}.py: a symlink out of")
    assert str(world / "module") in flip_record["error"]  # the target, for the operator
    assert "sha256" not in flip_record["provenance"]
    recolor_record = v[(RECOLOR, "thief")]
    assert recolor_record["verdict"] == "valid"
    assert recolor_record["provenance"]["file"] == str((thief / "recolor_impl.py").resolve())


def test_manifest_picks_first_valid_source(world, sandbox):
    validator = run_validate(world, sandbox)
    manifest = validator.manifest()
    entry = manifest["tasks"][FLIP]
    assert (entry["chosen"], entry["valid"]) == ("rearc", ["rearc"])
    assert (entry["suspects"], entry["disputes"], entry["ambiguous"]) == (0, 0, False)
    assert manifest["tasks"][FLIP]["generator"]["ok"] == 8
    assert manifest["coverage"] == {
        "tasks": 2, "covered": 2, "fraction": 1.0, "unsampled": 0, "covered_unsampled": 0
    }  # fmt: skip
    assert manifest["per_source"]["golf"]["missing"] == 1


def test_samples_are_reproducible_and_seeded(world, sandbox):
    a = run_validate(world, sandbox, "a.sqlite")
    b = run_validate(world, sandbox, "b.sqlite")
    assert "".join(a.verdict_lines()) == "".join(b.verdict_lines())
    assert [s.grid for s in a.samples[FLIP]] == [s.grid for s in b.samples[FLIP]]
    assert len({s.grid for s in a.samples[FLIP]}) > 1


def test_rerun_uses_the_cache(world, sandbox):
    first = run_validate(world, sandbox)
    start = time.monotonic()
    second = run_validate(world, sandbox)
    assert time.monotonic() - start < 1.0  # the timeout is not paid again
    assert "".join(first.verdict_lines()) == "".join(second.verdict_lines())


def test_cli_writes_its_files_and_summary(world, capsys):
    out = world / "out"
    argv = [
        "validate", "--tasks", str(world / "tasks"), "--arcgen", str(world / "arcgen"),
        "--source", f"rearc=re-arc:{world / 'rearc'}", "--source", f"golf=golf:{world / 'golf'}",
        "--generator", f"arc-gen:{world / 'gen'}", "--samples", "4", "--out", str(out),
        "--backend", "process", "--no-progress", "--wall", "2",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "tasks with >= 1 valid verifier: 2/2" in text
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("cache")) == [
        "manifest.json", "report.html", "runtime.json", "suspects.jsonl", "verdicts.jsonl"
    ]  # fmt: skip
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    for path in out.iterdir():  # cache.sqlite (and its -wal, -shm) too
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert json.loads((out / "runtime.json").read_text())["runtime"]["backend"] == "process"
    assert "runtime" not in json.loads((out / "manifest.json").read_text())
    verdicts = read_verdicts(out / "verdicts.jsonl")
    assert len(verdicts) == 4 and verdicts[0].task_id == FLIP


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--source", "x=nope:{w}/golf"], "unknown verifier source kind"),
        (["--source", "x=golf:{w}/missing"], "no such directory"),
        (["--source", "justaname"], "expected NAME=KIND:PATH"),
        (["--source", "x=re-arc:{w}/golf"], "no verifiers.py"),
        (["--source", "x=golf:{w}/golf", "--generator", "arc-gen:{w}/golf"], "no tasks/"),
        (["--source", "x=golf:{w}/golf", "--samples", "3"], "--samples needs --generator"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(world, extra, message, capsys):
    out = world / "out-bad"
    argv = ["validate", "--tasks", str(world / "tasks"), "--out", str(out), "--backend", "process"]
    argv += [a.replace("{w}", str(world)) for a in extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcjudge: error:") and message in err and "Traceback" not in err
    assert not out.exists()


def test_task_file_that_is_not_arc_json(world, capsys):
    (world / "tasks" / "broken.json").write_text('{"hello": "world"}')
    argv = [
        "validate", "--tasks", str(world / "tasks"), "--source", f"g=golf:{world / 'golf'}",
        "--out", str(world / "o"), "--backend", "process", "--no-progress",
    ]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "broken.json: not an ARC task" in err and "Traceback" not in err
    assert not (world / "o" / "verdicts.jsonl").exists()


def test_interrupt_and_resume_gives_identical_verdicts(world, tmp_path):
    slow = world / "slow"
    slow.mkdir()
    for task_id in (FLIP, RECOLOR):
        (slow / f"{task_id}.py").write_text(
            "import time\ndef transform(g):\n    time.sleep(0.15)\n    return g[::-1]\n"
        )

    def argv(out):
        return [
            sys.executable, "-m", "arcjudge.cli", "validate", "--tasks", str(world / "tasks"),
            "--arcgen", str(world / "arcgen"), "--source", f"slow=module:{slow}",
            "--source", f"rearc=re-arc:{world / 'rearc'}",
            "--generator", f"arc-gen:{world / 'gen'}",
            "--samples", "6", "--chunk", "2", "--out", str(out), "--backend", "process",
            "--workers", "1", "--no-progress",
        ]  # fmt: skip

    calm = subprocess.run(argv(tmp_path / "calm"), capture_output=True, text=True, check=False)
    assert calm.returncode == 0, calm.stderr
    interrupted = tmp_path / "interrupted"
    proc = subprocess.Popen(
        argv(interrupted), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    )  # fmt: skip
    cache = interrupted / "cache.sqlite"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not cached_rows(cache):
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert not (interrupted / "verdicts.jsonl").exists()
    done_before = cached_rows(cache)
    assert 0 < done_before
    resumed = subprocess.run(argv(interrupted), capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert (interrupted / "verdicts.jsonl").read_bytes() == (
        tmp_path / "calm" / "verdicts.jsonl"
    ).read_bytes()
    assert (interrupted / "manifest.json").read_bytes() == (
        tmp_path / "calm" / "manifest.json"
    ).read_bytes()


def test_killed_run_resumes_too(world, tmp_path):
    slow = world / "slow2"
    slow.mkdir()
    (slow / f"{FLIP}.py").write_text(
        "import time\ndef transform(g):\n    time.sleep(0.2)\n    return g[::-1]\n"
    )
    out = tmp_path / "killed"
    argv = [
        sys.executable, "-m", "arcjudge.cli", "validate", "--tasks", str(world / "tasks"),
        "--source", f"slow=module:{slow}", "--chunk", "1", "--out", str(out),
        "--backend", "process", "--workers", "1", "--no-progress",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and cached_rows(out / "cache.sqlite") < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    records = read_verdicts(out / "verdicts.jsonl")
    assert records[0].verdict is Verdict.VALID
    assert records[0].tally is not None and records[0].tally.splits["train"] == (2, 2)


def test_bundled_sample_matches_its_expected_verdicts(tmp_path, capsys):
    from arcjudge.harness.validate.cli import sample_dir

    expected = json.loads((sample_dir() / "EXPECTED.json").read_text())
    out = tmp_path / "sample-out"
    argv = ["validate", "--sample", "--out", str(out), "--backend", "process", "--wall", "2",
            "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    assert "tasks with >= 1 valid verifier: 10/10" in capsys.readouterr().out
    got = {(r.task_id, r.source): r for r in read_verdicts(out / "verdicts.jsonl")}
    reason = {"ok": "wrong", "error": "error", "timeout": "timeout"}
    for task_id, kinds in expected["tasks"].items():
        for kind in expected["kinds"]:
            want, record = kinds[kind], got[(task_id, kind)]
            assert record.verdict == want["verdict"], (task_id, kind, record)
            if want["verdict"] == "invalid":
                assert record.tally is not None
                first = record.tally.first_failure
                split = next(s for s in expected["split_order"] if s in first)
                failure = first[split]
                assert (split, reason[failure.status], failure.index) == (
                    want["split"],
                    want["reason"],
                    want["index"],
                ), (task_id, kind)
    assert (out / "report.html").stat().st_size > 10_000


def test_sample_on_the_full_arcgen_stable_set(tmp_path, shared_data):
    from arcjudge.harness.validate.cli import sample_dir

    root = sample_dir()
    config = ValidateConfig(
        tasks_dir=root / "tasks",
        sources=(
            VerifierSource("re-arc", "re-arc", root / "re-arc"),
            VerifierSource("golf", "golf", root / "golf"),
            VerifierSource("module", "module", root / "module"),
        ),
        arcgen_dir=shared_data / "arc-gen-100k",
        limits=Limits(wall_seconds=2.0, total_seconds=60.0),
    )
    from arcjudge.sandbox.process import ProcessSandbox

    store = ResultStore(tmp_path / "c.sqlite")
    with ProcessSandbox(2) as sb:
        validator = Validator(config, sb, store)
        validator.run()
    store.close()
    v = verdict_map(validator)
    assert v[("0d3d703e", "re-arc")]["splits"]["arc-gen"] == [262, 262]
    assert v[("0d3d703e", "re-arc")]["verdict"] == "valid"
    # wrong only on ARC-GEN pairs that are wider than tall: fails there, not on the demos
    a416 = v[("a416b8f3", "module")]
    assert a416["verdict"] == "invalid"
    assert a416["splits"]["train"][0] == a416["splits"]["train"][1]
    assert a416["first_failure"]["arc-gen"]["status"] == "ok"
