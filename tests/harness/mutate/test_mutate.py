"""`arcjudge mutate` on the bundled sample: classes, confirmed corrupted pairs, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import arcjudge
from arcjudge import cli
from arcjudge.harness.core.corruption import CorruptionRecord
from arcjudge.harness.mutate.records import MutantRecord, MutateSummary
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.mutation.parsing import NESTED_TOO_DEEPLY
from arcjudge.safetext import json_dumps
from arcjudge.sandbox import Program
from arcjudge.verifiers.sources import VerifierSource


@pytest.fixture(scope="module")
def mutated(tmp_path_factory, shared_data):
    root = sample_dir()
    out = tmp_path_factory.mktemp("mutate")
    argv = [
        "mutate", "--tasks", str(root / "tasks"), "--arcgen", str(shared_data / "arc-gen-100k"),
        "--source", f"re-arc=re-arc:{root / 're-arc'}", "--source", f"golf=golf:{root / 'golf'}",
        "--inputs", "12", "--max-per-task", "5", "--out", str(out / "m"), "--backend", "process",
        "--wall", "2",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    return out / "m"


def corruptions(out):
    return [CorruptionRecord.from_json(json.loads(x)) for x in open(out / "corruptions.jsonl")]


def mutants(out):
    return [MutantRecord.from_json(json.loads(x)) for x in open(out / "mutants.jsonl")]


def test_every_corruption_is_confirmed_invalid_by_the_original(mutated, sandbox):
    root = sample_dir()
    sources = {
        "re-arc": VerifierSource("re-arc", "re-arc", root / "re-arc"),
        "golf": VerifierSource("golf", "golf", root / "golf"),
    }
    records = corruptions(mutated)
    assert records, "the sample must yield corrupted pairs"
    by_task: dict[tuple[str, str], list[CorruptionRecord]] = {}
    for r in records:
        by_task.setdefault((r.task_id, r.mutant_id.split(":")[1]), []).append(r)
    for (task_id, source), group in by_task.items():
        program: Program = sources[source].program_for(task_id).program
        result = sandbox.run(program, [r.input for r in group])
        for r, res in zip(group, result.results, strict=True):
            assert res.grid == r.correct_output and res.grid != r.output
            assert 0 < r.hamming <= 1
    assert all(r.KIND == "corrupted_verifier" for r in records)
    assert '"kind":"corrupted_verifier"' in (mutated / "corruptions.jsonl").read_text()


def test_mutants_are_classified_and_capped(mutated):
    records = mutants(mutated)
    statuses = {m.status for m in records}
    assert "killed" in statuses and statuses <= {
        "killed", "equivalent_on_evidence", "crashes", "invalid_output"
    }  # fmt: skip
    assert all(m.id.startswith(f"{m.task_id}:{m.source}:{m.operator}:") for m in records)
    assert all(m.diff.startswith("---") for m in records)
    per_task: dict[str, int] = {}
    for r in corruptions(mutated):
        per_task[r.task_id] = per_task.get(r.task_id, 0) + 1
    assert max(per_task.values()) <= 5
    text = (mutated / "summary.json").read_text(encoding="utf-8")
    summary = json.loads(text)
    assert summary["tasks_with_corrupted_pairs"] == len(per_task)
    assert summary["operators"]["stmt.drop_assign_rewire"]["tried"] > 0
    record = MutateSummary.from_json(summary)  # read back through its record: same bytes
    assert json_dumps(record.to_json(), sort_keys=True, indent=1) + "\n" == text
    assert sum(y.tried for y in record.operators.values()) == len(records)
    killed = [r for r in records if r.status == "killed"]
    assert sum(y.killed for y in record.operators.values()) == len(killed)


def test_nearest_misses_first(mutated):
    records = corruptions(mutated)
    for task_id in {r.task_id for r in records}:
        keys = [(not r.same_shape, r.hamming) for r in records if r.task_id == task_id]
        assert keys == sorted(keys)


def test_parse_error_is_reported_and_the_run_continues(tmp_path, capsys):
    root = sample_dir()
    module = tmp_path / "module"
    module.mkdir()
    (module / "67a3c6ac.py").write_text('def transform(g):\n    print "hi"\n')
    (module / "c8f0f002.py").write_text(
        "def transform(g):\n    return [[5 if c == 7 else c for c in r] for r in g]\n"
    )
    out = tmp_path / "out"
    argv = ["mutate", "--tasks", str(root / "tasks"), "--source", f"mod=module:{module}",
            "--operators", "all", "--out", str(out), "--backend", "process",
            "--wall", "2"]  # fmt: skip
    assert cli.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert "67a3c6ac" in summary["problems"]
    assert summary["tasks_with_corrupted_pairs"] >= 1
    assert "cannot mutate" in capsys.readouterr().out


DEEP_VERIFIER = (
    "def transform(g):\n"
    "    ok = " + " and ".join(["g"] * 8000) + "\n"
    "    return [r[::-1] for r in g]\n"
)
"""Valid Python (CPython compiles it) whose 8,000 terms overflowed libcst's parser."""


def test_a_verifier_too_deep_to_parse_is_its_tasks_problem(tmp_path):
    # A subprocess: before the guard, libcst's parser killed the harness with SIGSEGV.
    # Another task's verifier is a symlink to another team's file: refused, its problem.
    root = sample_dir()
    module = tmp_path / "module"
    module.mkdir()
    (module / "67a3c6ac.py").write_text(DEEP_VERIFIER)
    (module / "c8f0f002.py").write_text(
        "def transform(g):\n    return [[5 if c == 7 else c for c in r] for r in g]\n"
    )
    other_team = tmp_path / "other-team"
    other_team.mkdir()
    (other_team / "3c9b0459.py").write_text("def transform(g):\n    return g[::-1]\n")
    (module / "3c9b0459.py").symlink_to(other_team / "3c9b0459.py")  # refused: not its own
    src = str(Path(arcjudge.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [sys.executable, "-m", "arcjudge.cli", "mutate", "--tasks", str(root / "tasks"),
            "--source", f"mod=module:{module}", "--operators", "all",
            "--out", str(tmp_path / "out"), "--backend", "process", "--wall", "2",
            "--no-progress"]  # fmt: skip
    outputs = []
    for _ in range(2):  # the second run resumes from the store: the same outputs
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr
        assert "67a3c6ac mod: cannot mutate: nested too deeply" in proc.stdout
        outputs.append(
            [(tmp_path / "out" / n).read_text() for n in ("mutants.jsonl", "summary.json")]
        )
    assert outputs[0] == outputs[1]
    summary = json.loads(outputs[0][1])
    assert [p["error"] for p in summary["problems"]["67a3c6ac"]] == [NESTED_TOO_DEEPLY]
    (refused,) = summary["problems"]["3c9b0459"]
    assert refused["error"].startswith(f"refused: {module / '3c9b0459.py'}: a symlink out of")
    assert list(summary["problems"]) == ["3c9b0459", "67a3c6ac"]
    tasks = {m.task_id for m in mutants(tmp_path / "out")}
    assert tasks == {"c8f0f002"}


def test_unknown_operator_is_one_line(tmp_path, capsys):
    root = sample_dir()
    argv = ["mutate", "--tasks", str(root / "tasks"), "--source", f"g=golf:{root / 'golf'}",
            "--operators", "expr.binop_left,nope", "--out", str(tmp_path / "o")]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown operator(s) nope" in err and "Traceback" not in err


def test_the_command_line_starts_without_numpy():
    # Start-up is paid by every `arcjudge mutate`; numpy is only for analyze/dimensions.
    import subprocess
    import sys

    code = "import sys\nfrom arcjudge import cli\ncli._commands()\nprint('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
