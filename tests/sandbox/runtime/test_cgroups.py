"""Each worker's cgroups (``runtime/cgroups.py``): layout, limits, removal.

The v1 layout is exercised for real by every sandbox test on this machine (and its
containment by the selfcheck's memory cases); here the parts that machine does not show:
cgroup v2's layout, on a tree of plain files shaped like one, the order of v1's two
limits, what ``remove`` touches, and the reason given where no group can be made.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcjudge.sandbox.runtime import cgroups


def _fake_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cgroup2 root of plain files, as this process's only hierarchy."""
    root = tmp_path / "cgroup2"
    root.mkdir()
    (root / "cgroup.subtree_control").write_text("cpu\n")
    (root / "cpuset.cpus.effective").write_text("0-3\n")
    mount = (str(root), "/")
    monkeypatch.setattr(cgroups, "_mounts", lambda: {"unified": mount})
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"unified": "/user.slice/session.scope"})
    real_mkdir = os.mkdir

    def mkdir(path: str, mode: int = 0o777) -> None:  # a new group comes with its files
        real_mkdir(path, mode)
        for name in ("cgroup.procs", "cgroup.subtree_control", "cpuset.cpus", "memory.max"):
            Path(path, name).write_text("")

    monkeypatch.setattr(cgroups.os, "mkdir", mkdir)
    monkeypatch.setattr(cgroups.os, "geteuid", lambda: 0)
    return root


def test_v2_worker_groups_are_leaves_below_a_group_without_processes(tmp_path, monkeypatch):
    root = _fake_v2(tmp_path, monkeypatch)
    groups, problem = cgroups.make(cpu=1)
    assert problem is None and groups is not None and groups.v2
    top = root / f"arcjudge-{os.getpid()}"
    assert groups.paths == [str(top)]
    # the root hands the controllers down, the worker's group to its two leaves
    assert set((root / "cgroup.subtree_control").read_text().split()) == {
        "+memory", "+cpu", "+cpuset"
    }  # fmt: skip
    assert set((top / "cgroup.subtree_control").read_text().split()) == {
        "+memory", "+cpu", "+cpuset"
    }  # fmt: skip
    assert (top / "cpuset.cpus").read_text() == "1"
    assert (top / "supervisor" / "cgroup.procs").read_text() == "0"  # we joined our leaf
    groups.adopt_programs(4242)
    assert (top / "programs" / "cgroup.procs").read_text() == "4242"
    groups.set_memory(100 << 20)
    assert (top / "programs" / "memory.max").read_text() == str((100 << 20) + cgroups.ZYGOTE_BYTES)


def test_v1_limits_keep_memory_and_swap_in_order(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    writes: list[str] = []
    for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"):
        (memory / name).write_text("9223372036854771712")
    groups = cgroups.WorkerGroups(False, [], str(memory), [], [], [])
    real_write = cgroups._write

    def write(path: str, text: str) -> None:
        writes.append(f"{Path(path).name}={text}")
        real_write(path, text)

    cgroups._write = write  # type: ignore[assignment]
    try:
        groups.set_memory(100)  # lowering from unlimited: memory first
        groups.set_memory(200)  # raising: memory+swap first
        groups.set_memory(200)  # unchanged: nothing written
    finally:
        cgroups._write = real_write  # type: ignore[assignment]
    low, high = 100 + cgroups.ZYGOTE_BYTES, 200 + cgroups.ZYGOTE_BYTES
    assert writes == [
        f"memory.limit_in_bytes={low}",
        f"memory.memsw.limit_in_bytes={low}",
        f"memory.memsw.limit_in_bytes={high}",
        f"memory.limit_in_bytes={high}",
    ]


def test_remove_touches_only_arcjudge_groups_deepest_first(tmp_path):
    top = tmp_path / "arcjudge-123"
    (top / "programs").mkdir(parents=True)
    other = tmp_path / "someone-elses"
    other.mkdir()
    assert cgroups.remove([str(top), str(other)], wait_seconds=0.0) == []
    assert not top.exists() and other.exists()


def test_groups_of_gone_supervisors_are_removed_by_the_next(tmp_path):
    gone = tmp_path / "arcjudge-999999999"  # no such process
    (gone / "programs").mkdir(parents=True)
    alive = tmp_path / f"arcjudge-{os.getpid()}"
    alive.mkdir()
    cgroups._remove_stale(str(tmp_path))
    assert not gone.exists() and alive.exists()


def test_without_writable_groups_the_reason_says_how_to_get_one(tmp_path, monkeypatch):
    root = _fake_v2(tmp_path, monkeypatch)
    root.chmod(0o555)
    monkeypatch.setattr(cgroups.os, "geteuid", lambda: 1000)  # below our own group, then
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"unified": "/missing"})
    try:
        groups, problem = cgroups.make(cpu=None)
    finally:
        root.chmod(0o755)
    assert groups is None and problem is not None
    assert "cannot make this worker's cgroups" in problem and "Delegate=yes" in problem
