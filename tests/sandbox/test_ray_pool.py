"""``--executor ray``: a two-node Ray cluster on this machine gives the local outputs.

The cluster is Ray's multi-node test utility (a head and one extra node process, one CPU
each). Tests skip without Ray unless ``ARCJUDGE_REQUIRE_RAY=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from arcjudge import cli
from arcjudge.harness.validate.cli import sample_dir
from arcjudge.sandbox.selfcheck import leftover_processes
from tests.support.helpers import cached_rows, default_sigint

SAMPLE = sample_dir()
TASK = "0d3d703e"  # recolor: 3->4, 1->5, 2->6, 8->9 and back
RECOLOR = "{3: 4, 4: 3, 1: 5, 5: 1, 2: 6, 6: 2, 8: 9, 9: 8}"


def _require_ray():
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("ARCJUDGE_REQUIRE_RAY") == "1":
            pytest.fail("ray is required here (ARCJUDGE_REQUIRE_RAY=1) but not installed")
        pytest.skip("ray not installed (pip install 'arcjudge[ray]')")


@pytest.fixture(scope="module")
def cluster_address():
    _require_ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster.address
    cluster.shutdown()


def sandbox_strays(since: float) -> list[psutil.Process]:
    """Runner processes started since ``since`` (other tests' live pools are older)."""
    return leftover_processes(set(), since)


def node_pool_processes() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if cmd and cmd[0].startswith("ray::NodePool"):
            found.append(proc)
    return found


def programs(path: Path, count: int, sleep: float = 0.0) -> Path:
    lines = []
    for k in range(count):
        kind = k % 3
        if kind == 0:  # right
            body = f"    return [[{RECOLOR}.get(c, c) for c in r] for r in g]\n"
        elif kind == 1:  # wrong: identity
            body = "    return g\n"
        else:  # runtime failure
            body = "    raise ValueError('no idea')\n"
        code = f"import time  # program {k}\ndef transform(g):\n    time.sleep({sleep})\n{body}"
        lines.append({"id": f"p{k}", "task_id": TASK, "model": f"m{k % 2}", "run": 1, "code": code})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def tasks_dir(root: Path) -> Path:
    tasks = root / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / f"{TASK}.json").write_bytes((SAMPLE / "tasks" / f"{TASK}.json").read_bytes())
    return tasks


def score_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return [
        "score",
        "--programs",
        str(root / "programs.jsonl"),
        "--tasks",
        str(root / "tasks"),
        "--out",
        str(out),
        "--backend",
        "process",
        "--no-progress",
        *extra,
    ]


def test_score_on_ray_equals_local(cluster_address, tmp_path, capsys):
    started = time.time()
    programs(tmp_path / "programs.jsonl", 9)
    tasks_dir(tmp_path)
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert cli.main(score_argv(tmp_path, local, "--chunk", "4")) == 0
    argv = score_argv(
        tmp_path, remote, "--chunk", "4", "--executor", "ray", "--ray-address", cluster_address
    )
    assert cli.main(argv) == 0
    for name in ("results.jsonl", "summary.json"):
        assert (local / name).read_bytes() == (remote / name).read_bytes(), name
    out = capsys.readouterr().out
    node_lines = [line for line in out.splitlines() if line.startswith("node ")]
    assert len(node_lines) == 2, out
    # Both nodes did work: 9 programs x 7 chunks of at most 4 of the 25 inputs.
    assert all(" 0 items" not in line for line in node_lines), node_lines
    assert not node_pool_processes()
    assert not sandbox_strays(started)


def test_validate_on_ray_equals_local(cluster_address, tmp_path):
    base = ["validate", "--sample", "--samples", "4", "--backend", "process", "--no-progress"]
    assert cli.main([*base, "--out", str(tmp_path / "local")]) == 0
    assert (
        cli.main(
            [
                *base,
                "--out",
                str(tmp_path / "ray"),
                "--executor",
                "ray",
                "--ray-address",
                cluster_address,
            ]
        )
        == 0
    )
    for name in ("verdicts.jsonl", "suspects.jsonl", "manifest.json"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()
    assert not node_pool_processes()


def _spawn(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arcjudge.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )


def _wait_rows(store: Path, proc: subprocess.Popen, rows: int, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while cached_rows(store) < rows:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.1)


def disturbed_run_equals_local(root: Path, address: str, disturb) -> str:
    """Score locally, then on Ray calling ``disturb()`` mid-run; same outputs, no infra.

    Returns:
        The Ray run's stdout (its per-node lines).
    """
    programs(root / "programs.jsonl", 6, sleep=0.05)
    tasks_dir(root)
    local, remote = root / "local", root / "ray"
    assert cli.main(score_argv(root, local, "--chunk", "2")) == 0
    proc = _spawn(
        score_argv(root, remote, "--chunk", "2", "--executor", "ray", "--ray-address", address)
    )
    try:
        _wait_rows(remote / "cache.sqlite", proc, 8)
        disturb()
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    for name in ("results.jsonl", "summary.json"):
        assert (local / name).read_bytes() == (remote / name).read_bytes(), name
    assert "infra" not in (remote / "results.jsonl").read_text()
    return stdout


def assert_nothing_left(started: float) -> None:
    deadline = time.monotonic() + 30
    while (node_pool_processes() or sandbox_strays(started)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not node_pool_processes()
    assert not sandbox_strays(started)


def test_killing_a_node_actor_mid_run_changes_nothing(cluster_address, tmp_path):
    started = time.time()

    def kill_one_actor():
        victims = node_pool_processes()
        assert len(victims) == 2, victims
        victims[-1].kill()  # SIGKILL the actor process of one node, items in flight

    stdout = disturbed_run_equals_local(tmp_path, cluster_address, kill_one_actor)
    assert "1 actor losses" in stdout, stdout
    assert_nothing_left(started)


def test_ctrl_c_on_the_driver_leaves_nothing_running(cluster_address, tmp_path):
    started = time.time()
    programs(tmp_path / "programs.jsonl", 6, sleep=0.2)
    tasks_dir(tmp_path)
    out = tmp_path / "ray"
    proc = _spawn(
        score_argv(
            tmp_path, out, "--chunk", "1", "--executor", "ray", "--ray-address", cluster_address
        )
    )
    try:
        _wait_rows(out / "cache.sqlite", proc, 3)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert_nothing_left(started)
    assert not (out / "results.jsonl").exists()  # interrupted: no partial outputs
    assert cached_rows(out / "cache.sqlite") >= 3  # finished work is kept for the rerun


def test_losing_a_whole_node_mid_run_changes_nothing(tmp_path):
    started = time.time()
    _require_ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        # remove_node kills the node's raylet and workers
        stdout = disturbed_run_equals_local(
            tmp_path, cluster.address, lambda: cluster.remove_node(extra)
        )
        assert re.search(r"[1-9]\d* actor losses", stdout), stdout
    finally:
        cluster.shutdown()
    assert_nothing_left(started)


def test_programs_and_batches_are_put_once(cluster_address, monkeypatch):
    _require_ray()
    import ray

    from arcjudge.sandbox.ray_pool import RaySandbox
    from arcjudge.sandbox.types import VERIFIER_LIMITS, Program

    puts = []
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda value, **kw: puts.append(value) or real_put(value, **kw))
    program = Program(b"def transform(g):\n    return g\n", ("transform",))
    batches = [[((k,),), ((k, k),)] for k in range(3)]
    with RaySandbox("process", cluster_address) as sb:
        for _ in range(4):
            for batch in batches:
                result = sb.run(program, list(batch), VERIFIER_LIMITS)
                assert [r.grid for r in result.results] == batch
        items = sum(s.items for s in sb.node_stats())
    assert items == 12
    assert len(puts) == 1 + len(batches)  # one program, three batches: 4 puts for 12 items


def test_mutate_on_ray_equals_local(cluster_address, tmp_path):
    # --wall 1: a few mutants of the sample's verifiers loop forever.
    args = [
        "mutate",
        "--tasks",
        str(SAMPLE / "tasks"),
        "--inputs",
        "4",
        "--wall",
        "1",
        "--backend",
        "process",
        "--no-progress",
        "--source",
        f"module=module:{SAMPLE / 'module'}",
    ]
    assert cli.main([*args, "--out", str(tmp_path / "local")]) == 0
    assert (
        cli.main(
            [
                *args,
                "--out",
                str(tmp_path / "ray"),
                "--executor",
                "ray",
                "--ray-address",
                cluster_address,
            ]
        )
        == 0
    )
    for name in ("mutants.jsonl", "corruptions.jsonl", "summary.json"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()
    assert (tmp_path / "ray" / "corruptions.jsonl").read_text().count("\n") > 10


def test_unreachable_cluster_is_a_clear_error(tmp_path, capsys):
    _require_ray()
    programs(tmp_path / "programs.jsonl", 1)
    tasks_dir(tmp_path)
    started = time.monotonic()
    argv = score_argv(
        tmp_path, tmp_path / "out", "--executor", "ray", "--ray-address", "127.0.0.1:9"
    )
    assert cli.main(argv) == 2
    assert time.monotonic() - started < 30
    err = capsys.readouterr().err
    assert "arcjudge: error: no Ray cluster answers at 127.0.0.1:9" in err
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_without_ray_installed_the_error_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    programs(tmp_path / "programs.jsonl", 1)
    tasks_dir(tmp_path)
    assert cli.main(score_argv(tmp_path, tmp_path / "out", "--executor", "ray")) == 2
    assert "pip install 'arcjudge[ray]'" in capsys.readouterr().err


def test_batches_of_variants_run_on_the_nodes(cluster_address):
    from arcjudge.sandbox.ray_pool import RaySandbox
    from arcjudge.sandbox.types import Limits, Program, ProgramStatus, changed_shared_state

    base = Program(b"def transform(g):\n    return g\n")
    variants = [
        b"def transform(g):\n    return [[7]]\n",
        b"import builtins\ndef transform(g):\n    builtins.planted = 1\n    return g\n",
        b"import builtins\ndef transform(g):\n    return [[int(hasattr(builtins, 'planted'))]]\n",
    ]
    limits = Limits(wall_seconds=2, total_seconds=5)
    with RaySandbox("process", cluster_address) as sb:
        first, planted, probe = sb.run_variants(base, variants, [((1,),)], limits, call_seconds=0.5)
    assert first.status is ProgramStatus.LOADED and first.results[0].grid == ((7,),)
    assert changed_shared_state(planted)  # reported, not a silent fallback to infra
    assert probe.results[0].grid == ((0,),)
