"""The process backend run by an unprivileged user (uid 64999), from a root test run.

With unprivileged user namespaces allowed (as here) the supervisor makes one of its own
and isolates programs as it does for root: the whole selfcheck must be contained. Where
they are refused, ``protections()`` and the warning must say so and how to enable them.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator

import pytest

from arcjudge.sandbox.selfcheck import cases_for
from unprivileged import delegated_cgroups, wrap

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux namespaces")

# A seccomp filter like a container's default profile: unshare() fails with EPERM. It is
# installed in a launcher that then execs the real command (filters survive execve).
DENY_UNSHARE = textwrap.dedent(
    """
    import ctypes, os, struct, sys
    SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, EPERM, NR_UNSHARE = 0x7FFF0000, 0x00050000, 1, 272
    def ins(code, jt, jf, k):
        return struct.pack("HBBI", code, jt, jf, k)
    prog = b"".join([
        ins(0x20, 0, 0, 0),                     # A = syscall number
        ins(0x15, 0, 1, NR_UNSHARE),            # if A == unshare
        ins(0x06, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        ins(0x06, 0, 0, SECCOMP_RET_ALLOW),
    ])
    buf = ctypes.create_string_buffer(prog)
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = Fprog(len(prog) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0
    assert libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
    """
)

# Runs in the unprivileged process: one sandbox, its protections and hints, one program.
PROBE = textwrap.dedent(
    """
    import json, sys
    from arcjudge.sandbox.policy import PolicyMode
    from arcjudge.sandbox.process import ProcessSandbox
    from arcjudge.sandbox.types import Limits, Program
    source = sys.argv[1].encode()
    with ProcessSandbox(workers=1) as sb:
        out = {"protections": sb.protections(), "hints": sb.hints()}
        res = sb.run(Program(source, entry_points=("p",)), [((1,),)], Limits(processes=8),
                     policy=PolicyMode.OFF)
    out["status"] = res.status.value
    out["results"] = [[r.status.value, r.grid, r.error] for r in res.results]
    print(json.dumps(out))
    """
)

COUNT_FORKS = textwrap.dedent(
    """
    import os, time
    def p(g):
        n = 0
        for _ in range(40):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
        return [[n // 10, n % 10], [os.getuid() % 10, len(os.listdir('/proc')) % 10]]
    """
)


@contextlib.contextmanager
def _unshare_denied_launcher() -> Iterator[str]:
    """A launcher script (``DENY_UNSHARE``) the unprivileged user can read, for the block."""
    with tempfile.TemporaryDirectory(prefix="arcjudge-test-") as where:
        os.chmod(where, 0o755)
        launcher = os.path.join(where, "deny_unshare.py")
        with open(launcher, "w") as fh:
            fh.write(DENY_UNSHARE)
        os.chmod(launcher, 0o644)
        yield launcher


def _probe(
    interpreter: list[str], source: str, unprivileged: bool = True, cgroups: list[str] = ()
) -> tuple[dict, str]:
    argv = [*interpreter, "-c", PROBE, source]
    proc = subprocess.run(
        wrap(argv, cgroups) if unprivileged else argv, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


SELFCHECK = [sys.executable, "-c", "import sys; from arcjudge.cli import main; sys.exit(main())"]
# What only a memory cgroup contains on the process backend: memory of all a program's
# processes together, kernel memory (socket buffers) included.
NEEDS_A_CGROUP = {"memory_across_processes", "socket_buffers_outside_the_limit"}


def _failed(proc: subprocess.CompletedProcess[str]) -> set[str]:
    """The cases a selfcheck run names as not contained."""
    lines = [x for x in proc.stderr.splitlines() if "selfcheck failed:" in x]
    return set(lines[0].split("selfcheck failed:", 1)[1].strip().split(", ")) if lines else set()


def test_selfcheck_contains_every_case_as_unprivileged_user() -> None:
    """With user namespaces and a cgroup delegated to the user: as contained as root."""
    with delegated_cgroups() as groups:
        proc = subprocess.run(
            wrap([*SELFCHECK, "selfcheck", "--backend", "process"], groups),
            capture_output=True,
            text=True,
            timeout=600,
        )
    if not groups:  # no cgroup v1 hierarchies here to delegate: the next test's case
        assert _failed(proc) == NEEDS_A_CGROUP, proc.stdout[-4000:] + proc.stderr[-2000:]
        return
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"all {len(cases_for('process')) + 1} cases contained" in proc.stdout
    assert "running without" not in proc.stderr


def test_without_a_cgroup_the_selfcheck_names_what_only_a_cgroup_contains() -> None:
    """Without root and without a delegated cgroup: stated, with how to get one."""
    proc = subprocess.run(
        wrap([*SELFCHECK, "selfcheck", "--backend", "process"]),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert _failed(proc) == NEEDS_A_CGROUP
    assert "running without: memory_cgroup" in proc.stderr
    assert "Delegate=yes" in proc.stderr  # the hint: how to get one
    assert "memory_cgroup" in proc.stdout.splitlines()[0].split("missing:")[1]


def test_unprivileged_protections_match_roots_but_the_uid() -> None:
    with delegated_cgroups() as groups:
        as_user, _ = _probe([sys.executable], COUNT_FORKS, cgroups=groups)
    as_root, _ = _probe([sys.executable], COUNT_FORKS, unprivileged=False)
    mine = as_user["protections"]
    for name in ("network_namespace", "mount_namespace", "read_only_root", "pid_namespace",
                 "fresh_proc", "minimal_root", "private_tmp", "seccomp_filter",
                 "privilege_drop", "kill_all_after_program", "programs_not_dumpable",
                 "memory_cgroup", "cpu_cgroup"):  # fmt: skip
        if name.endswith("_cgroup") and not groups:
            continue
        assert mine[name] is True, name
        assert as_root["protections"][name] is True, name
    assert mine["user_namespace"] is True and mine["user_namespace_per_program"] is True
    assert mine["supervisor_not_dumpable"] is True  # programs are our uid on the host
    assert mine["uid_per_program"] is False  # one host uid: stated, not claimed
    assert as_user["hints"] == (
        {} if groups else {"memory_cgroup": as_user["hints"]["memory_cgroup"]}
    )
    # The process limit counts the program's own processes, as for root; the program
    # sees a uid of its own (not 0) and only its own processes in /proc.
    assert as_user["status"] == as_root["status"] == "loaded"
    ((status, grid, _),) = as_user["results"]
    ((root_status, root_grid, _),) = as_root["results"]
    assert status == root_status == "ok"
    assert grid[0] == root_grid[0] == [0, 7]  # 8 processes: the program and 7 children
    assert grid[1][1] == root_grid[1][1]


def test_refused_user_namespaces_are_named_with_how_to_enable_them() -> None:
    with _unshare_denied_launcher() as launcher:
        out, stderr = _probe([sys.executable, launcher], "def p(g):\n    return g\n")
    protections = out["protections"]
    assert protections["user_namespace"] is False
    assert protections["pid_namespace"] is False and protections["network_namespace"] is False
    hint = out["hints"]["user_namespace"]
    assert "EPERM" in hint and "docker backend" in hint
    assert "running without" in stderr and "user_namespace: refused (EPERM)" in stderr
    # Programs still run, with the weaker isolation that is stated.
    assert out["status"] == "loaded" and out["results"] == [["ok", [[1]], None]]


# What the fallback cannot contain, as docs/sandbox.md states it: programs share the harness's
# uid and see the host's files and /proc; attacks that would stop or kill the harness
# itself are not run and count as not contained.
FALLBACK_NOT_CONTAINED = {
    "write_outside_workdir",
    "read_harness_environment",
    "read_other_programs_temp_files",
    "see_host_processes",
    "read_task_data_on_host",
    "packages_beside_arcjudge",
    "kill_every_process",
    "forge_next_programs_results",
    "signal_the_supervisor",
} | NEEDS_A_CGROUP  # run without a delegated cgroup


def test_selfcheck_without_user_namespaces_names_exactly_what_it_cannot_contain() -> None:
    with _unshare_denied_launcher() as launcher:
        cli = "import sys; from arcjudge.cli import main; sys.exit(main())"
        argv = [sys.executable, launcher, "-c", cli, "selfcheck", "--backend", "process"]
        proc = subprocess.run(wrap(argv), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert _failed(proc) == FALLBACK_NOT_CONTAINED
    assert "user_namespace: refused (EPERM)" in proc.stderr
