"""Behaviour of the process backend: results, statuses, limits, recovery."""

from __future__ import annotations

import os
import signal
import time
import zlib

import pytest

from arcjudge.sandbox import Job, Limits, PolicyMode, Program, ProgramStatus, Status
from arcjudge.sandbox.process import ProcessSandbox

G1 = ((1, 2), (3, 4))
G2 = ((0, 5, 0),)
FAST = Limits(wall_seconds=2.0, total_seconds=30.0)


def prog(text: str, *entry: str, **kw) -> Program:
    return Program(text.encode(), entry or ("transform",), **kw)


def test_ok_results_are_canonical_grids(sandbox):
    r = sandbox.run(
        prog("def transform(g):\n    return [[c + 1 for c in r] for r in g]\n"), [G1, G2]
    )
    assert r.status is ProgramStatus.LOADED
    assert [x.grid for x in r.results] == [((2, 3), (4, 5)), ((1, 6, 1),)]
    assert all(x.status is Status.OK and x.seconds >= 0 for x in r.results)


def test_numpy_float_output_is_canonicalized(sandbox):
    src = "import numpy as np\ndef transform(g):\n    return np.array(g, dtype=float) * 2\n"
    r = sandbox.run(prog(src), [G1])
    assert r.results[0].grid == ((2, 4), (6, 8))


def test_entry_points_are_tried_in_order(sandbox):
    src = "def solve(g):\n    return [[1]]\np = lambda g: [[2]]\n"
    r = sandbox.run(prog(src, "transform", "p", "solve"), [G1])
    assert r.entry_point == "p" and r.results[0].grid == ((2,),)


def test_missing_entry_point_is_a_load_error(sandbox):
    r = sandbox.run(prog("def other(g):\n    return g\n", "transform", "solve"), [G1])
    assert r.status is ProgramStatus.LOAD_ERROR
    assert "transform, solve" in r.error and r.results == ()


def test_syntax_error_is_a_load_error(sandbox):
    r = sandbox.run(prog("def transform(g)\n    return g\n"), [G1])
    assert r.status is ProgramStatus.LOAD_ERROR and "SyntaxError" in r.error


def test_tuple_input_format(sandbox):
    src = "def transform(g):\n    assert type(g) is tuple and type(g[0]) is tuple\n    return g\n"
    r = sandbox.run(prog(src, input_format="tuple"), [G1])
    assert r.results[0].status is Status.OK


def test_each_call_gets_a_fresh_copy(sandbox):
    src = "def transform(g):\n    g[0][0] = 9\n    g.append([7] * len(g[0]))\n    return g\n"
    inputs = [G1, G1]
    r = sandbox.run(prog(src), inputs)
    assert [x.grid for x in r.results] == [((9, 2), (3, 4), (7, 7))] * 2
    assert inputs == [G1, G1]


def test_golf_zlib_packed_latin1_source_with_warnings(sandbox):
    inner = b"p=lambda g:[[2for c in r]for r in g]"
    packed = zlib.compress(inner)
    source = (
        b"#coding:L1\nimport zlib\nexec(zlib.decompress(bytes("
        + repr(packed.decode("latin-1")).encode("latin-1")
        + b",'L1')))\n"
    )
    r = sandbox.run(Program(source, ("p",)), [G1])
    assert r.status is ProgramStatus.LOADED, r.error
    assert r.results[0].grid == ((2, 2), (2, 2))


def test_timeout_on_one_input_does_not_spoil_the_next(sandbox):
    src = "def transform(g):\n    while g[0][0] == 1:\n        pass\n    return g\n"
    start = time.monotonic()
    r = sandbox.run(prog(src), [G1, G2, G1], Limits(wall_seconds=0.5, total_seconds=30))
    assert [x.status for x in r.results] == [Status.TIMEOUT, Status.OK, Status.TIMEOUT]
    assert r.results[1].grid == G2
    assert time.monotonic() - start < 5


def test_program_state_persists_between_inputs_but_not_programs(sandbox):
    src = "n = []\ndef transform(g):\n    n.append(1)\n    return [[len(n)]]\n"
    first = sandbox.run(prog(src), [G1, G1, G1])
    second = sandbox.run(prog(src), [G1])
    assert [x.grid for x in first.results] == [((1,),), ((2,),), ((3,),)]
    assert second.results[0].grid == ((1,),)


def test_total_budget_marks_the_rest_as_timeout(sandbox):
    src = "import time\ndef transform(g):\n    time.sleep(0.4)\n    return g\n"
    r = sandbox.run(prog(src), [G1] * 10, Limits(wall_seconds=2, total_seconds=1.0))
    statuses = [x.status for x in r.results]
    assert statuses[:2] == [Status.OK, Status.OK]
    assert statuses[-1] is Status.TIMEOUT and "budget" in r.results[-1].error
    assert r.seconds < 3


RLIMITS_SEEN = """import resource
def transform(g):
    def soft(name):
        return resource.getrlimit(getattr(resource, name))[0]
    unlimited = resource.RLIM_INFINITY
    return [[
        int(soft("RLIMIT_AS") != unlimited and soft("RLIMIT_AS") < {memory} + (1 << 30)),
        int(soft("RLIMIT_NPROC") == {processes}),
        int(soft("RLIMIT_FSIZE") == {disk}),
        int(soft("RLIMIT_CORE") == 0),
        int(soft("RLIMIT_CPU") != unlimited),
    ]]
"""


def test_the_program_runs_under_the_rlimits_of_its_limits(sandbox):
    # each rlimit on its own: as root the cgroups contain a memory or fork bomb as well, so
    # the attack suite alone would not see one of these go
    limits = Limits(wall_seconds=5, total_seconds=20, memory_bytes=300 << 20, processes=7,
                    disk_bytes=5 << 20)  # fmt: skip
    src = RLIMITS_SEEN.format(memory=300 << 20, processes=7, disk=5 << 20)
    r = sandbox.run(prog(src), [G1], limits)
    assert r.results[0].grid == ((1, 1, 1, 1, 1),), r.results[0].error


ISOLATION_SEEN = """import errno, os
def transform(g):
    try:
        open("/probe", "x").close()
        root = -1
    except OSError as e:
        root = e.errno
    return [[
        int(0 not in os.getresuid() + os.getresgid() and not os.getgroups()),
        int(os.readlink("/proc/self/ns/net") != {host_network!r}),
        int(root == errno.EROFS),
    ]]
"""


def test_as_root_a_program_has_no_root_ids_a_network_of_its_own_a_read_only_root(sandbox):
    # each layer on its own: the syscall filter, the namespaces and file permissions contain
    # the attack suite's cases as well, so it alone would not see one of these go (EROFS:
    # the root is read-only, whatever the permissions say)
    if os.geteuid() != 0:
        pytest.skip("the uid change and the namespaces need root")
    src = ISOLATION_SEEN.format(host_network=os.readlink("/proc/self/ns/net"))
    r = sandbox.run(prog(src), [G1])
    assert r.results[0].grid == ((1, 1, 1),), r.results[0].error


def test_exception_text_is_reported(sandbox):
    r = sandbox.run(prog("def transform(g):\n    raise KeyError('nope')\n"), [G1])
    assert r.results[0].status is Status.ERROR and "KeyError" in r.results[0].error


def test_printed_output_is_captured(sandbox):
    r = sandbox.run(
        prog("print('hello from the program')\ndef transform(g):\n    return g\n"), [G1]
    )
    assert "hello from the program" in r.output


def test_module_dirs_are_importable_read_only(sandbox, tmp_path):
    (tmp_path / "mydsl.py").write_text("def flip(g):\n    return tuple(g[::-1])\n")
    src = (
        "from mydsl import *\nimport mydsl, os\n"
        "def verify(I):\n"
        "    try:\n        open(os.path.join(os.path.dirname(mydsl.__file__), 'x'), 'w')\n"
        "        w = 1\n    except OSError:\n        w = 0\n"
        "    return flip(I) + ((w, w),)\n"
    )
    r = sandbox.run(Program(src.encode(), ("verify",), (str(tmp_path),), "tuple"), [G1])
    assert r.status is ProgramStatus.LOADED, r.error
    assert r.results[0].grid == ((3, 4), (1, 2), (0, 0))
    assert not (tmp_path / "x").exists()


def test_policy_enforce_rejects_and_warn_records(sandbox):
    src = "import os\ndef transform(g):\n    return g\n"
    rejected = sandbox.run(prog(src), [G1], policy=PolicyMode.ENFORCE)
    assert rejected.status is ProgramStatus.POLICY_REJECTED and "import.os" in rejected.error
    warned = sandbox.run(prog(src), [G1], policy=PolicyMode.WARN)
    assert warned.status is ProgramStatus.LOADED
    assert any("import.os" in f for f in warned.findings)
    off = sandbox.run(prog(src), [G1], policy=PolicyMode.OFF)
    assert off.findings == ()


def test_map_runs_every_job(sandbox):
    jobs = [
        Job(prog(f"def transform(g):\n    return [[{k}]]\n"), [G1, G2], FAST) for k in range(10)
    ]
    got = dict(sandbox.map(jobs))
    assert sorted(got) == list(range(10))
    assert all(got[k].results[1].grid == ((k,),) for k in range(10))


def test_killed_supervisor_is_replaced_and_the_program_retried():
    with ProcessSandbox(workers=1) as sb:
        sb.start()
        victim = sb.workers[0]
        os.kill(victim.proc.pid, signal.SIGKILL)
        r = sb.run(prog("def transform(g):\n    return g\n"), [G1])
        assert r.status is ProgramStatus.LOADED and r.results[0].grid == G1
        assert sb.workers[0] is not victim


def test_program_that_kills_its_supervisor_is_infra_not_a_model_failure():
    # Without isolation a program runs as the harness user and can kill its supervisor.
    src = "import os, signal\ndef transform(g):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
    if os.geteuid() == 0:
        pytest.skip("as root the program runs under another uid and cannot do this")
    with ProcessSandbox(workers=1, isolation=False) as sb:
        r = sb.run(prog(src), [G1])
    assert r.status is ProgramStatus.INFRA


def test_close_leaves_no_processes():
    import psutil

    sb = ProcessSandbox(workers=2)
    sb.start()
    pids = [w.proc.pid for w in sb.workers]
    sb.close()
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


def test_limits_are_validated():
    with pytest.raises(ValueError):
        Limits(wall_seconds=0)
    with pytest.raises(ValueError):
        Program(b"x", ("not an identifier",))
    with pytest.raises(TypeError):
        Program("text", ("p",))


def test_no_zombies_accumulate_and_forking_keeps_working():
    import psutil

    forker = (
        "import os\ndef transform(g):\n    pids = [os.fork() for _ in range(5)]\n"
        "    if 0 in pids:\n        os._exit(0)\n    for p in pids:\n        os.waitpid(p, 0)\n"
        "    return g\n"
    )
    with ProcessSandbox(workers=1) as sb:
        for _ in range(120):
            sb.run(prog("def transform(g):\n    return g\n"), [G1])
        supervisor = psutil.Process(sb.workers[0].proc.pid)
        zombies = [c for c in supervisor.children() if c.status() == psutil.STATUS_ZOMBIE]
        assert len(zombies) <= 1
        r = sb.run(prog(forker), [G1])
        assert r.results[0].status is Status.OK, r.results[0].error


@pytest.mark.skipif(os.geteuid() != 0, reason="the minimal root is built as root")
def test_interpreter_installed_under_tmp_stays_visible_in_the_minimal_root():
    """A virtualenv below /tmp (common on CI runners) is bound over the scratch tmpfs.

    Of its ``site-packages`` only the packages programs may import are in their view.
    """
    import shutil
    import subprocess
    import sys
    import tempfile

    venv = tempfile.mkdtemp(prefix="arcjudge-venv-", dir="/tmp")
    try:
        os.chmod(venv, 0o755)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        site = os.path.join(venv, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                            "site-packages")  # fmt: skip
        with open(os.path.join(site, "venv_only_module.py"), "w") as fh:
            fh.write("VALUE = 7\n")
        with open(os.path.join(site, "undeclared_data.py"), "w") as fh:
            fh.write("SECRET = 1\n")
        python = os.path.join(venv, "bin", "python")
        with ProcessSandbox(workers=1, python=python, program_packages=("venv_only_module",)) as sb:
            assert sb.protections()["minimal_root"]
            source = (
                "import os, venv_only_module\n"
                "assert not os.path.exists(os.path.join(os.path.dirname(\n"
                "    venv_only_module.__file__), 'undeclared_data.py'))\n"
                "def p(g):\n"
                "    try:\n"
                "        open(venv_only_module.__file__, 'a').close()\n"
                "        wrote = 1\n"
                "    except OSError:\n"
                "        wrote = 0\n"
                "    open('/tmp/work/scratch', 'w').close()\n"
                "    return [[venv_only_module.VALUE, wrote]]\n"
            )
            res = sb.run(Program(source.encode(), ("p",)), [((0,),)], Limits(),
                         policy=PolicyMode.OFF)  # fmt: skip
        assert res.status is ProgramStatus.LOADED, res.error
        assert res.results[0].status is Status.OK, res.results[0].error
        assert res.results[0].grid == ((7, 0),)  # importable, read-only; scratch writable
    finally:
        shutil.rmtree(venv, ignore_errors=True)


TWO_CPUS = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs two CPUs to pin two supervisors apart",
)
# a program's CPUs as a grid: how many, and the first (mod 10); then it unpins itself
AFFINITY = prog(
    "import os\n"
    "def transform(g):\n"
    "    cpus = sorted(os.sched_getaffinity(0))\n"
    "    try:\n"
    "        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))\n"
    "    except OSError:\n"
    "        pass\n"
    "    return [[len(cpus), cpus[0] % 10]]\n"
)


@TWO_CPUS
def test_supervisors_are_pinned_apart_and_their_programs_share_their_cpu():
    with ProcessSandbox(workers=2, pin_cpus=True) as sb:
        sb.start()
        pinned = [os.sched_getaffinity(w.proc.pid) for w in sb.workers]  # type: ignore[attr-defined]
        assert all(len(cpus) == 1 for cpus in pinned) and pinned[0] != pinned[1]
        allowed = {cpu % 10 for cpus in pinned for cpu in cpus}
        # every program runs on its supervisor's one CPU, even after the program before
        # it on that supervisor unpinned itself (each is forked from the pinned zygote)
        seen = {r.results[0].grid for _, r in sb.map([Job(AFFINITY, (G1,))] * 12)}
        assert {grid[0][0] for grid in seen} == {1}
        assert {grid[0][1] for grid in seen} <= allowed
        # a lost supervisor's replacement takes its CPU, not the other one's
        victim = sb.workers[0]
        cpu = os.sched_getaffinity(victim.proc.pid)  # type: ignore[attr-defined]
        os.kill(victim.proc.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        results = [r for _, r in sb.map([Job(AFFINITY, (G1,))] * 4)]
        assert all(r.status is ProgramStatus.LOADED for r in results[1:])
        now = sorted(tuple(os.sched_getaffinity(w.proc.pid)) for w in sb.workers)  # type: ignore[attr-defined]
        assert len(now) == 2 and tuple(cpu) in now and now[0] != now[1]


def test_unpinned_supervisors_keep_every_cpu():
    with ProcessSandbox(workers=2, pin_cpus=False) as sb:
        sb.start()
        for worker in sb.workers:
            assert os.sched_getaffinity(worker.proc.pid) == os.sched_getaffinity(0)  # type: ignore[attr-defined]


# 40 busy processes, each in a session of its own, after trying to widen its CPUs: for
# ``seconds`` of wall time, then it answers
FLOOD = prog(
    "import os, time\n"
    "def transform(g):\n"
    "    try:\n"
    "        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))\n"
    "    except OSError:\n"
    "        pass\n"
    "    end = time.time() + g[0][0]\n"
    "    for _ in range(40):\n"
    "        if os.fork() == 0:\n"
    "            os.setsid()\n"
    "            while time.time() < end:\n"
    "                pass\n"
    "            os._exit(0)\n"
    "    time.sleep(g[0][0])\n"
    "    return [[1]]\n"
)
# an honest program that needs a fixed amount of CPU time
HONEST = prog(
    "def transform(g):\n"
    "    n = 0\n"
    "    for k in range(g[0][0] * 1000000):\n"
    "        n += k & 7\n"
    "    return [[n % 10]]\n"
)


@TWO_CPUS
@pytest.mark.skipif(os.geteuid() != 0, reason="cgroups per worker are made as root here")
def test_a_program_cannot_take_cpu_from_another_workers_program():
    """Round three: 40 busy processes in sessions of their own stay on their worker's CPU."""
    import threading

    with ProcessSandbox(workers=2) as sb:
        sb.start()
        assert sb.protections()["cpu_cgroup"]
        alone = sb.run(HONEST, [((4,),)], Limits(wall_seconds=20))
        assert alone.results[0].status is Status.OK
        needed = alone.results[0].seconds  # its CPU time, on an idle CPU
        flood: list[object] = []
        seconds = min(9, int(needed * 6) + 2)  # a grid cell: the flood outlasts the test

        def run_flood() -> None:
            limits = Limits(wall_seconds=60)
            flood.append(sb.run(FLOOD, [((seconds,),)], limits, policy=PolicyMode.OFF))

        worker = threading.Thread(target=run_flood)
        worker.start()
        time.sleep(1.0)  # the flood is running on the other worker
        limit = needed * 3 + 0.5  # unprotected it would get about a fortieth of a CPU
        honest = sb.run(HONEST, [((4,),)], Limits(wall_seconds=limit))
        worker.join()
        assert honest.results[0].status is Status.OK, (needed, honest.results[0].error)
        assert flood and flood[0].results[0].status is Status.OK  # type: ignore[attr-defined]
