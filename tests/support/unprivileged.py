"""Run a command as an unprivileged user, from a test running as root.

The test's interpreter and checkout may lie under a directory other users cannot enter
(``/root/.pyenv``, say). The command therefore runs in a private mount namespace where
each such closed directory is covered by an open tmpfs holding only what the command
needs, bound back at the same paths, and then switches to an unprivileged uid of its own
(``setpriv``).
Nothing of this outlives the command: the mount namespace dies with it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import site
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Not nobody (65534): gVisor's sandbox processes run as nobody on the host, and programs of
# the no-user-namespace fallback, which share this uid and see the host's /proc, could
# signal them. A uid of its own, with no passwd entry, touches nothing else.
UID = 64999
REQUIRED_TOOLS = ("unshare", "setpriv", "mount")


def _closed_ancestor(path: str) -> tuple[str, str] | None:
    """The outermost ancestor others cannot enter, and its child on the way to ``path``."""
    parts = Path(path).resolve().parts
    for depth in range(1, len(parts)):
        ancestor = str(Path(*parts[:depth]))
        if not os.stat(ancestor).st_mode & stat.S_IXOTH:
            return ancestor, str(Path(*parts[: depth + 1]))
    return None


def needed_paths() -> list[str]:
    """What the command needs to reach: the interpreter, its libraries, this checkout."""
    paths = {sys.prefix, sys.base_prefix, sys.executable, str(Path(__file__).resolve().parents[2])}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(paths)


def unavailable() -> str | None:
    """Why commands cannot be run as an unprivileged uid from here, or ``None``."""
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if os.geteuid() != 0:
        return "needs root to switch to an unprivileged user"
    if missing:
        return f"missing tools: {', '.join(missing)}"
    return None


def wrap(argv: list[str], cgroups: list[str] | tuple[str, ...] = ()) -> list[str]:
    """:func:`command`, in a test: skips it (fails it with ``ARCJUDGE_REQUIRE_NONROOT=1``)
    when this process is not root or a tool is missing."""
    problem = unavailable()
    if problem is not None:
        if os.environ.get("ARCJUDGE_REQUIRE_NONROOT") == "1":
            pytest.fail(f"ARCJUDGE_REQUIRE_NONROOT=1 but {problem}")
        pytest.skip(problem)
    return command(argv, cgroups=cgroups)


@contextlib.contextmanager
def delegated_cgroups() -> Iterator[list[str]]:
    """Groups of the memory, cpu and cpuset hierarchies (cgroup v1) owned by ``UID``.

    What an administrator gives a user to run arcjudge with memory limits per program
    without root: below this process's own groups, each ``chown``-ed to the user (the
    cpuset one with its parent's CPUs and memory nodes). Removed afterwards, with what
    was made below them.

    Yields:
        The groups' directories (for :func:`command`'s ``cgroups``); empty where this
        machine has no such v1 hierarchies.
    """
    own = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, names, path = line.rstrip("\n").split(":", 2)
            for name in names.split(","):
                own[name] = path
    name = f"arcjudge-test-delegated-{os.getpid()}"
    made: list[str] = []
    try:
        for controller in ("memory", "cpu", "cpuset"):
            top = f"/sys/fs/cgroup/{controller}"
            if controller not in own or not os.path.isdir(top):
                break
            parent = os.path.join(top, own[controller].lstrip("/"))
            path = os.path.join(parent, name)
            os.mkdir(path)
            made.append(path)
            if controller == "cpuset":
                for key in ("cpuset.cpus", "cpuset.mems"):
                    with (
                        open(os.path.join(parent, key)) as src,
                        open(os.path.join(path, key), "w") as dst,
                    ):
                        dst.write(src.read())
            for entry in [path, *(os.path.join(path, f) for f in os.listdir(path))]:
                os.chown(entry, UID, UID)
        yield made if len(made) == 3 else []
    finally:
        for path in made:
            for top, dirs, _files in os.walk(path, topdown=False):
                for d in dirs:
                    _rmdir(os.path.join(top, d))
            _rmdir(path)


def _rmdir(path: str) -> None:
    """Remove a group whose processes may still be exiting."""
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def command(
    argv: list[str], env: dict[str, str] | None = None, cgroups: list[str] | tuple[str, ...] = ()
) -> list[str]:
    """The command line that runs ``argv`` as an unprivileged uid with ``needed_paths()`` reachable.

    Args:
        argv: The command.
        env: Its whole environment (default: a minimal ``PATH``, ``HOME`` and locale).
        cgroups: Groups (:func:`delegated_cgroups`) the command starts in.

    Returns:
        An ``unshare ... sh -c ...`` command line; its process becomes ``argv`` by exec.
    """
    exposed: dict[str, set[str]] = {}
    for path in needed_paths():
        found = _closed_ancestor(path)
        if found is not None:
            exposed.setdefault(found[0], set()).add(found[1])
    lines = ["set -e", "mkdir -p /run/arcjudge-unprivileged"]
    for k, (closed, children) in enumerate(sorted(exposed.items())):
        for j, child in enumerate(sorted(children)):
            keep = f"/run/arcjudge-unprivileged/{k}-{j}"
            lines += [f"mkdir -p {keep}", f"mount --bind {shlex.quote(child)} {keep}"]
        lines.append(f"mount -t tmpfs -o mode=0755 arcjudge-open {shlex.quote(closed)}")
        for j, child in enumerate(sorted(children)):
            keep = f"/run/arcjudge-unprivileged/{k}-{j}"
            target = shlex.quote(child)
            kind = "-d" if os.path.isdir(child) else "-f"
            make = f"mkdir -p {target}" if kind == "-d" else f"touch {target}"
            lines += [make, f"mount --bind {keep} {target}"]
    lines += [f"echo $$ > {shlex.quote(os.path.join(g, 'cgroup.procs'))}" for g in cgroups]
    env = env or {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LC_ALL": "C.UTF-8"}
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))
    lines.append(
        f"exec setpriv --reuid={UID} --regid={UID} --clear-groups env -i {assignments} "
        + " ".join(shlex.quote(a) for a in argv)
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)]
