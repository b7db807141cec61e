"""`arcjudge score`: verdicts and failure classes on a corpus of our own programs."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest

import arcjudge
from arcjudge import cli
from arcjudge.harness.core.calls import Call, call_key, run_calls
from arcjudge.harness.core.commandline import limits_from
from arcjudge.harness.core.engine import Engine
from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.core.stats import wilson_interval
from arcjudge.harness.core.store import ResultStore
from arcjudge.harness.dimensions.consistency import agrees, agrees_batch
from arcjudge.harness.score.records import GroupSummary, ScoreResult
from arcjudge.harness.score.scorer import ScoreConfig, Scorer
from arcjudge.sandbox import PooledSandbox, Program
from arcjudge.sandbox.selfcheck import CASES
from arcjudge.vocabulary import FailureClass
from helpers import cached_rows, default_sigint

FLIP = "aaaa0001"  # flip rows


def flip(g):
    return [list(r) for r in g[::-1]]


GRIDS = [[[1, 2], [3, 4]], [[0, 1, 0], [2, 2, 2]], [[3, 3], [0, 3], [4, 4]], [[5, 6]]]

GOOD = "def transform(grid):\n    return grid[::-1]\n"
CORPUS = [
    # (id, fields, expected verdict, expected failure class)
    ("good", {"code": GOOD}, "pass", None),
    ("numpy_float", {"code": "import numpy as np\ndef transform(g):\n"
                             "    return np.array(g, dtype=float)[::-1]\n"}, "pass", None),
    ("mutates", {"code": "def transform(g):\n    g.reverse()\n    return g\n"}, "pass", None),
    ("solve_name", {"code": "def solve(g):\n    return g[::-1]\n"}, "pass", None),
    ("markdown", {"response": "Sure!\n```python\ndef transform(g):\n    return g[::-1]\n```\n"},
     "pass", None),
    ("two_blocks", {"response": "```python\ndef transform(g):\n    return g\n```\nBetter:\n"
                                "```python\ndef transform(g):\n    return g[::-1]\n```\n"
                                "```\n[[1]]\n```"}, "pass", None),
    ("wrong", {"code": "def transform(g):\n    return g\n"}, "fail", "rule"),
    ("not_a_grid", {"code": "def transform(g):\n    return 'hello'\n"}, "fail", "rule"),
    ("raises", {"code": "def transform(g):\n    return g[10]\n"}, "fail", "runtime"),
    ("half_raises", {"code": "def transform(g):\n    if len(g) == 1:\n        raise ValueError\n"
                             "    return g[::-1]\n"}, "fail", "runtime"),
    ("syntax", {"code": "def transform(g)\n    return g\n"}, "fail", "static"),
    ("wrong_name", {"code": "def answer(g):\n    return g[::-1]\n"}, "fail", "static"),
    ("no_code", {"response": "I think the rule is to flip the grid."}, "fail", "static"),
    ("duplicate_of_good", {"code": GOOD}, "pass", None),
]  # fmt: skip
ADVERSARIAL = {
    "fork_bomb": "runtime", "memory_bomb": "runtime", "infinite_loop_python": "runtime",
    "sigalrm_disarmed": "runtime", "sys_exit": "runtime", "os_exit": "runtime",
    "print_a_gigabyte": "runtime", "huge_grid": "rule", "deep_recursion_segfault": "runtime",
    "eq_always_true": "rule", "top_level_never_returns": "static",
}  # fmt: skip


@pytest.fixture
def world(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    pairs = [{"input": g, "output": flip(g)} for g in GRIDS]
    (tasks / f"{FLIP}.json").write_text(
        json.dumps({"train": pairs[:2], "test": pairs[2:3], "arc-gen": pairs[3:]})
    )
    lines = []
    for model, (pid, fields, _, _) in zip(["m1", "m2"] * len(CORPUS), CORPUS, strict=False):
        lines.append({"id": pid, "task_id": FLIP, "model": model, "run": 1, **fields})
    cases = {c.name: c for c in CASES}
    for name in ADVERSARIAL:
        source = cases[name].sources[0].replace("{marker}", "x").replace("{port}", "1")
        lines.append({"id": f"attack_{name}", "task_id": FLIP, "model": "m3", "code": source})
    programs = tmp_path / "programs.jsonl"
    programs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path


def score_argv(world, out, *extra):
    return [
        "score", "--programs", str(world / "programs.jsonl"), "--tasks", str(world / "tasks"),
        "--out", str(out), "--backend", "process", "--wall", "1", "--no-progress", *extra,
    ]  # fmt: skip


def read_results(out):
    return {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def test_every_verdict_and_failure_class(world, capsys):
    out = world / "out"
    assert cli.main(score_argv(world, out)) == 0
    results = read_results(out)
    for pid, _fields, verdict, failure in CORPUS:
        assert (results[pid]["verdict"], results[pid]["failure"]) == (verdict, failure), pid
    for name, failure in ADVERSARIAL.items():
        assert results[f"attack_{name}"]["failure"] == failure, name
    assert results["good"]["model"] == "m1" and results["good"]["run"] == 1
    assert results["good"]["splits"] == {"train": [2, 2], "test": [1, 1], "arc-gen": [1, 1]}
    assert results["two_blocks"]["extraction"] == {
        "block": 1, "blocks": 3, "reason": "last block defining the entry point",
        "fence_unclosed": False,
    }  # fmt: skip
    assert results["wrong"]["first_failure"]["train"]["produced"] == [[1, 2], [3, 4]]
    assert "code" not in results["good"] and len(results["good"]["code_sha256"]) == 64
    summary = json.loads((out / "summary.json").read_text())
    assert summary["groups"]["(all)"]["programs"] == len(CORPUS) + len(ADVERSARIAL)
    assert set(summary["groups"]) == {"(all)", "m1", "m2", "m3"}
    table = capsys.readouterr().out
    assert "(all)" in table and "95% CI" in table
    timings = [json.loads(x) for x in (out / "timings.jsonl").read_text().splitlines()]
    assert len(timings) == len(CORPUS) + len(ADVERSARIAL)
    assert "<svg" in (out / "report.html").read_text()


def write_programs(world, lines):
    (world / "programs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_lone_surrogates_in_program_texts_end_to_end(world):
    # A lone surrogate cannot be UTF-8: SQLite and every writer used to raise on it. It
    # arrives from a program's exception message (at load time or per input), from a JSON
    # escape in the code, in a carried-through field, and in an unclosed fence's reply.
    write_programs(world, [
        {"id": "raises", "task_id": FLIP, "model": "m\ud800",
         "code": "def transform(g):\n    raise ValueError('bad \\ud800 end')\n"},
        {"id": "json_escape", "task_id": FLIP, "model": "m",
         "code": "def transform(g):\n    raise ValueError('\ud800')\n"},
        {"id": "load", "task_id": FLIP, "model": "m",
         "code": "raise ValueError('load \\udcff')\n"},
        {"id": "unclosed", "task_id": FLIP, "model": "m",
         "response": "```python\ndef transform(g):\n    return g[::-1]  # \ud800\n"},
    ])  # fmt: skip
    out = world / "out"
    assert cli.main(score_argv(world, out)) == 0
    first = (out / "results.jsonl").read_bytes()
    first.decode("utf-8")
    results = read_results(out)
    assert results["raises"]["failure"] == "runtime"
    assert "ValueError: bad \\ud800 end" in results["raises"]["first_failure"]["train"]["error"]
    assert results["raises"]["model"] == "m\\ud800"
    assert "ValueError: \\ud800" in results["json_escape"]["first_failure"]["train"]["error"]
    assert results["load"]["failure"] == "static"
    assert "load \\udcff" in results["load"]["error"]
    assert results["unclosed"]["verdict"] == "pass"
    assert results["unclosed"]["extraction"]["fence_unclosed"] is True
    assert "\\ud800" in (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert "m\\ud800" in summary["groups"]
    assert cached_rows(out / "cache.sqlite") > 0
    # The rerun answers from the store (where the texts were stored escaped): same bytes.
    assert cli.main(score_argv(world, out)) == 0
    assert (out / "results.jsonl").read_bytes() == first
    timings = [json.loads(x) for x in (out / "timings.jsonl").read_text().splitlines()]
    assert all(t["seconds"] == 0.0 for t in timings)


def test_outputs_are_owner_only_and_runtime_recorded(world):
    write_programs(world, [{"id": "good", "task_id": FLIP, "code": GOOD}])
    os.chmod(world, 0o755)
    old_umask = os.umask(0o022)
    try:
        out = world / "new" / "out"
        assert cli.main(score_argv(world, out)) == 0
    finally:
        os.umask(old_umask)
    for directory in (world / "new", out):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert stat.S_IMODE(world.stat().st_mode) == 0o755  # the user's directory: untouched
    names = {p.name for p in out.iterdir()}
    assert {"results.jsonl", "summary.json", "timings.jsonl", "report.html", "runtime.json",
            "cache.sqlite"} <= names  # fmt: skip
    for path in out.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    runtime = json.loads((out / "runtime.json").read_text())["runtime"]
    assert runtime["backend"] == "process" and runtime["python"]
    assert "runtime" not in json.loads((out / "summary.json").read_text())


def test_results_from_another_runtime_are_not_reused(world, monkeypatch):
    write_programs(world, [{"id": "good", "task_id": FLIP, "code": GOOD}])
    out = world / "out"

    def seconds():
        return [json.loads(x)["seconds"] for x in (out / "timings.jsonl").read_text().splitlines()]

    assert cli.main(score_argv(world, out)) == 0
    assert seconds()[0] > 0
    assert cli.main(score_argv(world, out)) == 0
    assert seconds() == [0.0]  # same runtime: answered from the store
    real = PooledSandbox.runtime_fingerprint
    monkeypatch.setattr(
        PooledSandbox, "runtime_fingerprint", lambda self: real(self) + "|numpy 0.0"
    )
    assert cli.main(score_argv(world, out)) == 0
    assert seconds()[0] > 0  # another runtime: run again


def test_stop_at_first_failure_keeps_verdicts(world):
    full, short = world / "full", world / "short"
    assert cli.main(score_argv(world, full, "--chunk", "1")) == 0
    assert cli.main(score_argv(world, short, "--chunk", "1", "--stop-at-first-failure")) == 0
    a, b = read_results(full), read_results(short)
    assert {k: v["verdict"] for k, v in a.items()} == {k: v["verdict"] for k, v in b.items()}
    assert b["wrong"]["statuses"]["arc-gen"] == {"skipped": 1}
    assert a["wrong"]["statuses"]["arc-gen"] == {"ok": 1}


def test_same_results_on_docker(world, docker_image):
    # The memory bomb needs about 0.6 s per call to reach its limit (over 4 s seen on a
    # 2-core machine at load average 9): the wall leaves it clear of a timeout. The fork
    # bomb times out on each of its 4 inputs (4 x 8 s): the budget leaves all four their
    # own timeout (at 40 s, on a loaded machine, docker's last one hit the budget instead).
    a, b = world / "process", world / "docker"
    assert cli.main(score_argv(world, a, "--wall", "8", "--budget", "120")) == 0
    argv = score_argv(world, b, "--wall", "8", "--budget", "120")
    argv[argv.index("process")] = "docker"
    assert cli.main(argv) == 0
    assert (a / "results.jsonl").read_bytes() == (b / "results.jsonl").read_bytes()


def test_interrupt_and_resume_is_byte_identical(world):
    body = "import time  # {k}\ndef transform(g):\n    time.sleep(0.2)\n    return g[::{step}]\n"
    slow = [
        {
            "id": f"slow{k}",
            "task_id": FLIP,
            "model": "s",
            "code": body.format(k=k, step=k % 2 * 2 - 1),
        }
        for k in range(6)
    ]
    (world / "programs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in slow))

    def argv(out):
        return [sys.executable, "-m", "arcjudge.cli", *score_argv(world, out, "--chunk", "1",
                                                                  "--workers", "1")]  # fmt: skip

    calm = subprocess.run(argv(world / "calm"), capture_output=True, text=True, check=False)
    assert calm.returncode == 0, calm.stderr
    proc = subprocess.Popen(
        argv(world / "cut"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and cached_rows(world / "cut" / "cache.sqlite") < 4:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert not (world / "cut" / "results.jsonl").exists()
    again = subprocess.run(argv(world / "cut"), capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    calm_bytes = (world / "calm" / "results.jsonl").read_bytes()
    assert (world / "cut" / "results.jsonl").read_bytes() == calm_bytes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "not valid JSON"),
        ('{"task_id": "aaaa0001", "code": "x"}\n', "missing field 'id'"),
        ('{"id": 1, "task_id": "aaaa0001"}\n', "needs a 'code' or a 'response'"),
        ('{"id": 1, "task_id": "zzzz9999", "code": "x"}\n', "task ids not in"),
        ('{"id": 1, "task_id": "aaaa0001", "code": "x"}\n' * 2, "duplicate id"),
    ],
)
def test_bad_programs_file(world, content, message, capsys):
    (world / "programs.jsonl").write_text(content)
    assert cli.main(score_argv(world, world / "bad")) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert not (world / "bad" / "results.jsonl").exists()


def test_extraction_rules():
    reply = "```py\ndef helper():\n    pass\n```\n```python\ndef transform(g):\n    return g\n```"
    assert extract_program(reply, ("transform",)).block == 1
    assert extract_program("```\nx = 1\n```", ("transform",)).reason.startswith("last block")
    assert extract_program("no code here", ("transform",)).code == ""
    bare = extract_program("def transform(g):\n    return g\n", ("transform",))
    assert bare.block is None and "def transform" in bare.code


def test_wilson_interval_known_values():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 0.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)
    results = [ScoreResult(1, "t", "", None), ScoreResult(2, "t", "", FailureClass.RULE)]
    s = GroupSummary.of(results).to_json()
    assert s["pass_rate"] == 0.5 and s["failure_shares"]["rule"] == 0.5


def test_consistency_helpers(sandbox):
    code = "def transform(g):\n    return [r[::-1] for r in g]\n"
    assert agrees(code, [[1, 2]], [[2, 1]], sandbox=sandbox)
    assert not agrees(code, [[1, 2]], [[1, 2]], sandbox=sandbox)
    assert agrees_batch(code, [([[1, 2]], [[2, 1]]), ([[3]], [[4]]), ("bad", [[1]])],
                        sandbox=sandbox) == [True, False, False]  # fmt: skip
    assert agrees_batch("def transform(g)\n", [([[1]], [[1]])], sandbox=sandbox) == [False]


def test_verified_samples_come_from_the_engine_and_the_store(tmp_path, monkeypatch):
    import arcjudge
    from arcjudge.sandbox.pool import PooledSandbox

    sample = Path(arcjudge.__file__).parent / "data" / "sample"
    generator = f"arc-gen:{sample / 'generators' / 'arc-gen'}"
    val = tmp_path / "val"
    assert cli.main(["validate", "--sample", "--out", str(val), "--backend", "process",
                     "--no-progress"]) == 0  # fmt: skip
    tasks = sorted(p.stem for p in (sample / "tasks").glob("*.json"))[:3]
    programs = tmp_path / "programs.jsonl"
    code = "def transform(g):\n    return g\n"
    lines = [json.dumps({"id": t, "task_id": t, "model": "m", "code": code}) for t in tasks]
    programs.write_text("".join(line + "\n" for line in lines))
    argv = ["score", "--programs", str(programs), "--tasks", str(sample / "tasks"),
            "--generator", generator, "--samples", "3", "--verifiers", str(val),
            "--out", str(tmp_path / "out"), "--backend", "process", "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    verified = {t: summary["generator"][t]["verified"] for t in tasks}
    assert all(0 <= n <= 3 for n in verified.values()) and sum(verified.values()) > 0
    first = (tmp_path / "out" / "results.jsonl").read_bytes()

    def no_calls(*args, **kwargs):
        raise AssertionError("a fully cached rerun ran a program")

    monkeypatch.setattr(PooledSandbox, "run", no_calls)
    monkeypatch.setattr(PooledSandbox, "map", no_calls)
    assert cli.main(argv) == 0  # everything, the verifier's answers included, from the store
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == first


def test_compact_and_spaced_arcgen_files_score_the_same(world):
    """ARC-GEN's compact spelling (read with its compact forms) scores as any other file."""
    pairs = [{"input": g, "output": flip(g)} for g in [*GRIDS, [[7, 8, 9]], [[1], [2], [3]]]]
    lines = [{"id": pid, "task_id": FLIP, "code": code}
             for pid, code in [("good", GOOD), ("wrong", "def transform(g):\n    return g\n"),
                               ("half", "def transform(g):\n    return g[::-1] if len(g) > 1"
                                        " else [[0]]\n")]]  # fmt: skip
    write_programs(world, lines)
    results = {}
    for spelling, separators in (("compact", (",", ":")), ("spaced", (", ", ": "))):
        arcgen = world / f"arcgen-{spelling}"
        arcgen.mkdir()
        (arcgen / f"{FLIP}.json").write_text(json.dumps(pairs, separators=separators))
        out = world / f"out-{spelling}"
        assert cli.main(score_argv(world, out, "--arcgen", str(arcgen))) == 0
        results[spelling] = (out / "results.jsonl").read_text()
    assert results["compact"] == results["spaced"]
    scored = {r["id"]: r for r in map(json.loads, results["compact"].splitlines())}
    assert scored["good"]["splits"]["arc-gen"] == [6, 6]
    assert scored["half"]["splits"]["arc-gen"] == [4, 6]
    failure = scored["wrong"]["first_failure"]["arc-gen"]
    assert (failure["expected"], failure["produced"]) == ([[3, 4], [1, 2]], [[1, 2], [3, 4]])


def _calls_back_up(run: Callable[[], object]) -> list[str]:
    """Calls ``run`` makes (in this thread) into a harness file that is already on the stack.

    Such a call returns to a higher layer in the middle of the way down: a generator of the
    caller pulled by the engine, a callback of the caller's called by it, a generator of the
    engine's consumed by the store.
    """
    harness = str(Path(arcjudge.__file__).parent / "harness")
    found = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        callee = frame.f_code.co_filename
        if event != "call" or not callee.startswith(harness):
            return
        files = []  # the harness files on the stack, the caller's first
        outer = frame.f_back
        while outer is not None:
            if outer.f_code.co_filename.startswith(harness):
                files.append(outer.f_code.co_filename)
            outer = outer.f_back
        if files and files[0] != callee and callee in files:
            name = f"{Path(files[0]).name} -> {Path(callee).name}:{frame.f_code.co_qualname}"
            found.add(name)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return sorted(found)


def test_the_programs_path_never_returns_to_a_higher_layer(world, sandbox, tmp_path):
    """Programs go down scorer -> engine -> store and their outcomes come back up, once."""
    config = ScoreConfig(world / "programs.jsonl", world / "tasks", limits=limits_from(2, 60))
    store = ResultStore(tmp_path / "s.sqlite")
    try:
        scorer = Scorer(config, sandbox, store)
        scorer.records = scorer.records[: len(CORPUS)]  # not the attacks: quick
        assert _calls_back_up(scorer.run) == []
        assert len(scorer.scored()) == len(CORPUS)
        # The check sees such calls: ``run_calls`` hands the engine a generator and a
        # callback of its own (``Engine.run``).
        engine = Engine(sandbox, store, config.limits)
        program = Program(GOOD.encode())
        call = Call(program, call_key(engine, program, ""), [((1, 2),)])
        assert _calls_back_up(lambda: run_calls(engine, [call])) == [
            "engine.py -> calls.py:run_calls.<locals>.done",
            "engine.py -> calls.py:run_calls.<locals>.tasks",
        ]
    finally:
        store.close()
