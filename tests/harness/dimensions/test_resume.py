"""`dimensions build` and `dimensions score` resume after Ctrl-C or a kill, byte for byte.

The world: four sample tasks whose module-style verifiers are validated as they are, then
made slow (a sleep before the same answer), so a build or a grading run can be cut while
its verifier calls are under way. The calm run, the cut run and the rerun of the cut run
(same ``--out``, so the same ``OUT/cache.sqlite``) must write the same bytes, and the rerun
must only redo what the cut run had not stored.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arcjudge import cli
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.build import BuildConfig, Builder
from arcjudge.harness.dimensions.grading import DimensionScoreConfig, DimensionScorer
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.types import Limits
from tests.support.helpers import cached_rows, default_sigint

SAMPLE = sample_dir()
VERIFIERS = {  # module style, right on every pair of the sample's tasks
    "1e0a9b12": None,  # the sample's own module verifier
    "74dd1130": None,
    "67a3c6ac": "def transform(g):\n    return [r[::-1] for r in g]\n",
    "3c9b0459": "def transform(g):\n    return [r[::-1] for r in g[::-1]]\n",
}
TASKS = tuple(VERIFIERS)
SLOW = "\n\nimport time as _time\n_fast = transform\n\n\ndef transform(g):\n" \
       "    _time.sleep(0.08)\n    return _fast(g)\n"  # fmt: skip
OUTPUTS = {
    "build": ("instances.jsonl", "build.json"),
    "score": ("items.jsonl", "summary.json", "report.html"),
}


def run_cli(*argv: str) -> None:
    assert cli.main([*argv, "--backend", "process", "--no-progress"]) == 0, argv


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """Tasks, validated verifiers (then slowed), a calm build, answers and definitions."""
    root = tmp_path_factory.mktemp("resume")
    (root / "tasks").mkdir()
    (root / "module").mkdir()
    for task_id, code in VERIFIERS.items():
        shutil.copy(SAMPLE / "tasks" / f"{task_id}.json", root / "tasks")
        if code is None:
            shutil.copy(SAMPLE / "module" / f"{task_id}.py", root / "module")
        else:
            (root / "module" / f"{task_id}.py").write_text(code)
    run_cli("validate", "--tasks", str(root / "tasks"), "--source",
            f"module=module:{root / 'module'}", "--out", str(root / "val"))  # fmt: skip
    manifest = json.loads((root / "val" / "manifest.json").read_text())
    assert all(manifest["tasks"][t]["chosen"] == "module" for t in TASKS)
    for task_id in TASKS:  # same answers, slower: the manifest still names this source
        with (root / "module" / f"{task_id}.py").open("a") as f:
            f.write(SLOW)
    assert subprocess.run(build_argv(root, root / "built"), check=False).returncode == 0
    write_answers(root)
    programs = [
        {"id": f"d{k}", "task_id": t, "model": "m", "run": run,
         "code": "def transform(g):\n    return [r[::-1] for r in g]\n" if k % 2 else
                 "def transform(g):\n    return g[::-1]\n"}
        for k, (t, run) in enumerate((t, r) for t in TASKS for r in (1, 2))
    ]  # fmt: skip
    (root / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in programs))
    run_cli("score", "--programs", str(root / "programs.jsonl"), "--tasks",
            str(root / "tasks"), "--out", str(root / "defs"))  # fmt: skip
    return root


def write_answers(root: Path) -> None:
    """Two runs of answers per task and dimension: many distinct inputs for the verifier."""
    rng = random.Random(5)

    def grid() -> list[list[int]]:
        h, w = rng.randint(2, 5), rng.randint(2, 5)
        return [[rng.randint(0, 9) for _ in range(w)] for _ in range(h)]

    lines = []
    for text in (root / "built" / "instances.jsonl").read_text().splitlines():
        record = json.loads(text)
        dim = record["dimension"]
        for run in (1, 2):
            if dim == "definition":
                continue
            if dim == "classification":
                answer: object = ["valid"] * 5 if run == 1 else record["key"]["labels"]
            elif dim == "inversion":
                answer = {"input": record["key"]["input"] if run == 1 else grid()}
            else:
                answer = {"input": grid(), "output": grid()}
            lines.append({"task_id": record["task_id"], "dimension": dim, "model": "m",
                          "run": run, "answer": answer})  # fmt: skip
    (root / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in lines))


def build_argv(root: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "arcjudge.cli", "dimensions", "build", "--tasks",
        str(root / "tasks"), "--manifest", str(root / "val"), "--out", str(out),
        "--backend", "process", "--workers", "1", "--no-progress",
    ]  # fmt: skip


def score_argv(root: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "arcjudge.cli", "dimensions", "score", "--instances",
        str(root / "built" / "instances.jsonl"), "--answers", str(root / "answers.jsonl"),
        "--definitions", str(root / "defs"), "--out", str(out),
        "--backend", "process", "--workers", "1", "--no-progress",
    ]  # fmt: skip


ARGV = {"build": build_argv, "score": score_argv}


@pytest.fixture(scope="module")
def calm(world) -> dict[str, Path]:
    """A calm run of each command (the build's is the world's own)."""
    out = world / "calm-score"
    done = subprocess.run(score_argv(world, out), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return {"build": world / "built", "score": out}


def outputs(directory: Path, command: str) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in OUTPUTS[command]}


@pytest.mark.parametrize("command", ["build", "score"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupt_and_resume_is_byte_identical(world, calm, command, sig):
    out = world / f"cut-{command}-{sig.name}"
    argv = ARGV[command](world, out)
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint
    )
    cache = out / "cache.sqlite"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not cached_rows(cache) and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "finished before it could be cut"
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=30)
    if sig is signal.SIGINT:
        assert proc.returncode == 130, err
        assert b"rerun the same command to resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert not any((out / name).exists() for name in OUTPUTS[command])
    stored = cached_rows(cache)
    assert stored > 0
    again = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert cached_rows(cache) > stored  # the rest was run, and stored too
    assert outputs(out, command) == outputs(calm[command], command)


@pytest.mark.parametrize("command", ["build", "score"])
def test_fully_cached_rerun_writes_the_same_bytes(world, calm, command):
    out = calm[command]
    written = outputs(out, command)
    rows = cached_rows(out / "cache.sqlite")
    assert rows > 0
    again = subprocess.run(ARGV[command](world, out), capture_output=True, check=False)
    assert again.returncode == 0, again.stderr
    assert outputs(out, command) == written
    assert cached_rows(out / "cache.sqlite") == rows


class RefusingSandbox:
    """The runtime of a real sandbox, but every call fails the test (all must be cached)."""

    def __init__(self, real: ProcessSandbox) -> None:
        self.size = real.size
        self.fingerprint = real.runtime_fingerprint()

    def runtime_fingerprint(self) -> str:
        return self.fingerprint

    def run(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a call that should have come from the store was run")


def test_a_cached_rerun_runs_nothing(world, calm, sandbox):
    refusing = RefusingSandbox(sandbox)
    store = ResultStore(calm["build"] / "cache.sqlite")
    try:
        config = BuildConfig(world / "tasks", world / "val", limits=Limits(wall_seconds=10.0))
        builder = Builder(config)
        builder.run(refusing, store)  # type: ignore[arg-type]
    finally:
        store.close()
    built = (calm["build"] / "instances.jsonl").read_text()
    assert "".join(builder.lines()) == built
    store = ResultStore(calm["score"] / "cache.sqlite")
    try:
        scorer = DimensionScorer(
            DimensionScoreConfig(
                world / "built" / "instances.jsonl",
                world / "answers.jsonl",
                definitions_dir=world / "defs",
                verifier_limits=Limits(wall_seconds=10.0),
            )
        )
        scorer.run(refusing, store)  # type: ignore[arg-type]
    finally:
        store.close()
    assert "".join(scorer.item_lines()) == (calm["score"] / "items.jsonl").read_text()
    assert any(item.consistency is not None for item in scorer.items)  # Definition programs too
