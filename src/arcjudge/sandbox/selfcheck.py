"""Backend-independent attack suite: each case tries an attack and checks it is contained.

``arcjudge selfcheck --backend NAME`` and ``tests/test_selfcheck.py`` run the same cases.
A case is one or more programs run in order on the same worker; it is *contained* when
the statuses are the expected ones and the host-side check (files, sockets, processes)
finds no trace of the attack.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import psutil

from arcjudge.sandbox.base import Sandbox
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.types import Grid, Limits, Program, ProgramResult, ProgramStatus, Status

SELFCHECK_LIMITS = Limits(
    wall_seconds=2.0, memory_bytes=256 << 20, processes=32, output_bytes=1 << 20, total_seconds=20
)
SAMPLE: Grid = ((1, 2), (3, 4))
SECRET_VAR = "ARCJUDGE_SELFCHECK_SECRET"
RUNNER_MARK = "runner.py"


@dataclass
class Context:
    """Host-side fixtures an attack aims at."""

    host_dir: str
    port: int
    listener: socket.socket
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)

    def fill(self, source: str) -> bytes:
        """Substitute ``{host_dir}``, ``{port}``, ``{marker}`` in a case's source."""
        text = source.replace("{host_dir}", self.host_dir)
        text = text.replace("{port}", str(self.port)).replace("{marker}", self.marker)
        return text.encode()

    def loopback_contacted(self) -> bool:
        """Return whether anything connected to the host's loopback listener."""
        self.listener.setblocking(False)
        try:
            conn, _ = self.listener.accept()
        except (BlockingIOError, OSError):
            return False
        conn.close()
        return True


@dataclass(frozen=True)
class Case:
    """One attack: programs to run, the statuses that mean 'contained', a host check."""

    name: str
    sources: tuple[str, ...]
    expected: str
    accept: Callable[[list[ProgramResult]], bool]
    host_ok: Callable[[Context], bool] = lambda ctx: True
    limits: Limits = SELFCHECK_LIMITS


def _statuses(result: ProgramResult) -> set[str]:
    if result.status is not ProgramStatus.LOADED:
        return {result.status.value}
    return {r.status.value for r in result.results}


def _only(*allowed: str) -> Callable[[list[ProgramResult]], bool]:
    def accept(results: list[ProgramResult]) -> bool:
        return all(_statuses(r) <= set(allowed) for r in results)

    return accept


def _last_grid(expected: Grid) -> Callable[[list[ProgramResult]], bool]:
    def accept(results: list[ProgramResult]) -> bool:
        last = results[-1]
        return last.status is ProgramStatus.LOADED and all(
            r.status is Status.OK and r.grid == expected for r in last.results
        )

    return accept


def _no_escape_file(ctx: Context) -> bool:
    names = os.listdir(ctx.host_dir)
    stray = [p for p in ("/escape-" + ctx.marker, "/tmp/escape-" + ctx.marker) if os.path.exists(p)]
    return not names and not stray


CASES: tuple[Case, ...] = (
    Case(
        "fork_bomb",
        ("import os\ndef transform(g):\n    while True:\n        try:\n            os.fork()\n"
         "        except OSError:\n            pass\n",),
        "timeout",
        _only("timeout", "error", "memory", "crashed"),
    ),  # fmt: skip
    Case(
        "memory_bomb",
        ("def transform(g):\n    hoard = []\n    while True:\n"
         "        hoard.append(bytearray(50 * 1024 * 1024))\n",),
        "memory",
        _only("memory", "crashed"),
    ),  # fmt: skip
    Case(
        "infinite_loop_python",
        ("def transform(g):\n    while True:\n        pass\n",),
        "timeout",
        _only("timeout"),
    ),
    Case(
        "regex_backtracking_in_c",
        ("import re\ndef transform(g):\n    re.match(r'(a+)+$', 'a' * 64 + 'b')\n    return g\n",),
        "timeout",
        _only("timeout"),
    ),
    Case(
        "bigint_power_in_c",
        ("def transform(g):\n    x = 7 ** (7 ** 10)\n    return g\n",),
        "timeout",
        _only("timeout", "memory"),
    ),
    Case(
        "sigalrm_disarmed",
        ("import signal\ndef transform(g):\n"
         "    for s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):\n"
         "        signal.signal(s, signal.SIG_IGN)\n"
         "    signal.alarm(0)\n    while True:\n        pass\n",),
        "timeout",
        _only("timeout"),
    ),  # fmt: skip
    Case(
        "base_exception_swallowed",
        ("def transform(g):\n    while True:\n        try:\n            while True:\n"
         "                pass\n        except BaseException:\n            pass\n",),
        "timeout",
        _only("timeout"),
    ),  # fmt: skip
    Case(
        "sleep_past_wall_limit",
        ("import time\ndef transform(g):\n    time.sleep(60)\n    return g\n",),
        "timeout",
        _only("timeout"),
    ),
    Case(
        "write_outside_workdir",
        ("import os\ndef transform(g):\n    wrote = 0\n"
         "    for path in ('{host_dir}/escape-{marker}', '/escape-{marker}',\n"
         "                 '/tmp/escape-{marker}'):\n"
         "        try:\n            with open(path, 'w') as fh:\n                fh.write('x')\n"
         "            wrote = 1\n        except OSError:\n            pass\n"
         "    return [[wrote]]\n",),
        "ok [[0]], no file on the host",
        _only("ok"),
        _no_escape_file,
    ),  # fmt: skip
    Case(
        "read_harness_environment",
        ("import os\ndef transform(g):\n    found = 0\n"
         "    if any(k.startswith('" + SECRET_VAR + "') for k in os.environ):\n        found = 1\n"
         "    for pid in os.listdir('/proc'):\n"
         "        try:\n            with open('/proc/%s/environ' % pid, 'rb') as fh:\n"
         "                if b'" + SECRET_VAR + "' in fh.read():\n                    found = 1\n"
         "        except OSError:\n            pass\n    return [[found]]\n",),
        "ok [[0]]",
        _last_grid(((0,),)),
    ),  # fmt: skip
    Case(
        "network_route_outside",
        ("import socket\ndef transform(g):\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "    try:\n        s.connect(('192.0.2.1', 9))\n        return [[1]]\n"
         "    except OSError:\n        return [[0]]\n",),
        "ok [[0]] (no route; a UDP connect sends no packet)",
        _last_grid(((0,),)),
    ),  # fmt: skip
    Case(
        "network_host_loopback",
        ("import socket\ndef transform(g):\n    s = socket.socket()\n    s.settimeout(1)\n"
         "    try:\n        s.connect(('127.0.0.1', {port}))\n        return [[1]]\n"
         "    except OSError:\n        return [[0]]\n",),
        "ok [[0]], listener untouched",
        _last_grid(((0,),)),
        lambda ctx: not ctx.loopback_contacted(),
    ),  # fmt: skip
    Case(
        "thread_and_daemon_outlive_call",
        ("import os, threading, time\ndef transform(g):\n"
         "    threading.Thread(target=time.sleep, args=(60,)).start()\n"
         "    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
         "            time.sleep(60)\n        os._exit(0)\n    return g\n",),
        "ok, no process left",
        _only("ok"),
    ),  # fmt: skip
    Case(
        "sys_exit",
        ("import sys\ndef transform(g):\n    sys.exit(0)\n",),
        "error",
        _only("error"),
    ),
    Case(
        "os_exit",
        ("import os\ndef transform(g):\n    os._exit(0)\n",),
        "error",
        _only("error"),
    ),
    Case(
        "print_a_gigabyte",
        ("import sys\ndef transform(g):\n    chunk = 'x' * (1 << 20)\n    for _ in range(1024):\n"
         "        sys.stdout.write(chunk)\n    return g\n",),
        "output_limit",
        _only("output_limit"),
    ),  # fmt: skip
    Case(
        "huge_grid",
        ("def transform(g):\n    return [[1] * 1000 for _ in range(10000)]\n",),
        "invalid_output",
        _only("invalid_output"),
    ),
    Case(
        "deep_recursion_segfault",
        ("import sys\nsys.setrecursionlimit(10 ** 7)\nclass Deep:\n"
         "    def __call__(self, n):\n        return self(n + 1)\n"
         "def transform(g):\n    return Deep()(0)\n",),
        "crashed",
        _only("crashed", "error", "memory"),
    ),  # fmt: skip
    Case(
        "eq_always_true",
        ("class Liar(list):\n    def __eq__(self, other):\n        return True\n"
         "    def __len__(self):\n        return 2\n"
         "def transform(g):\n    return Liar()\n",),
        "invalid_output",
        _only("invalid_output"),
    ),  # fmt: skip
    Case(
        "poison_next_program",
        ("import builtins, json\nbuiltins.len = lambda x: 0\nbuiltins.isinstance = lambda *a: False\n"
         "builtins.list = tuple\njson.dumps = lambda *a, **k: '[[9]]'\n"
         "json.loads = lambda *a, **k: [[9]]\nimport sys\nsys.modules['canonical'] = None\n"
         "def transform(g):\n    return [[9]]\n",
         "def transform(g):\n    return [list(r) for r in g]\n"),
        "second program ok and correct",
        _last_grid(SAMPLE),
    ),  # fmt: skip
    Case(
        "read_other_programs_temp_files",
        ("import os\ndef transform(g):\n"
         "    for d in ('.', '/tmp', '/dev/shm', '/var/tmp'):\n        try:\n"
         "            with open(os.path.join(d, 'secret-{marker}'), 'w') as fh:\n"
         "                fh.write('x')\n        except OSError:\n            pass\n    return g\n",
         "import os\ndef transform(g):\n"
         "    for d in ('.', '..', '/tmp', '/dev/shm', '/var/tmp'):\n"
         "        for root, _, files in os.walk(d):\n"
         "            if 'secret-{marker}' in files:\n                return [[1]]\n"
         "    return [[0]]\n"),
        "second program ok [[0]]",
        _last_grid(((0,),)),
    ),  # fmt: skip
    Case(
        "top_level_never_returns",
        ("while True:\n    pass\n",),
        "load_error",
        _only("load_error"),
    ),
)


@dataclass(frozen=True)
class Outcome:
    """The result of one case."""

    name: str
    expected: str
    got: str
    contained: bool
    seconds: float


def _describe(results: list[ProgramResult]) -> str:
    parts = []
    for result in results:
        if result.status is not ProgramStatus.LOADED:
            parts.append(result.status.value)
            continue
        for r in result.results:
            parts.append(f"ok {[list(row) for row in r.grid]}" if r.grid else r.status.value)
    return ", ".join(parts)


def leftover_processes(exclude: set[int]) -> list[psutil.Process]:
    """Return runner processes (supervisors' children or escapees) not in ``exclude``."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if proc.info["pid"] not in exclude and any(RUNNER_MARK in part for part in cmdline):
            found.append(proc)
    return found


def _supervisor_pids() -> set[int]:
    pids = set()
    for proc in psutil.process_iter(["pid", "cmdline", "ppid"]):
        cmdline = proc.info.get("cmdline") or []
        if any(RUNNER_MARK in part for part in cmdline) and proc.info["ppid"] == os.getpid():
            pids.add(proc.info["pid"])
    return pids


def run_case(sandbox: Sandbox, case: Case, ctx: Context) -> Outcome:
    """Run one case on ``sandbox`` and judge it.

    Args:
        sandbox: A sandbox with a single worker (cases with two programs rely on it).
        case: The case.
        ctx: Host-side fixtures.

    Returns:
        What happened and whether it was contained.
    """
    start = time.monotonic()
    results = [
        sandbox.run(Program(ctx.fill(src)), [SAMPLE], case.limits, policy=PolicyMode.OFF)
        for src in case.sources
    ]
    contained = case.accept(results) and case.host_ok(ctx)
    time.sleep(0.05)
    strays = leftover_processes(_supervisor_pids())
    if strays:
        contained = False
    got = _describe(results) + (f"; {len(strays)} stray processes" if strays else "")
    return Outcome(case.name, case.expected, got, contained, time.monotonic() - start)


def run_suite(
    make_sandbox: Callable[[], Sandbox], names: set[str] | None = None
) -> Iterator[Outcome]:
    """Run the cases (all, or those named) and then the after-suite checks.

    Args:
        make_sandbox: Builds a fresh one-worker sandbox; it is closed at the end.
        names: Optional subset of case names.

    Yields:
        One ``Outcome`` per case, then ``after_suite``.
    """
    host_dir = tempfile.mkdtemp(prefix="arcjudge-selfcheck-")
    os.chmod(host_dir, 0o777)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    ctx = Context(host_dir, listener.getsockname()[1], listener)
    before_tmp = set(os.listdir(tempfile.gettempdir()))
    os.environ[SECRET_VAR] = uuid.uuid4().hex
    sandbox = make_sandbox()
    try:
        for case in CASES:
            if names is None or case.name in names:
                yield run_case(sandbox, case, ctx)
        start = time.monotonic()
        benign = sandbox.run(
            Program(b"def transform(g):\n    return [list(r) for r in g]\n"), [SAMPLE],
            SELFCHECK_LIMITS,
        )  # fmt: skip
        benign_ok = _last_grid(SAMPLE)([benign])
    finally:
        sandbox.close()
        listener.close()
        os.environ.pop(SECRET_VAR, None)
        shutil.rmtree(host_dir, ignore_errors=True)
    time.sleep(0.1)
    strays = leftover_processes(set())
    new_tmp = sorted(
        n for n in set(os.listdir(tempfile.gettempdir())) - before_tmp if n.startswith("arcjudge-")
    )
    problems = []
    if not benign_ok:
        problems.append(f"benign program: {_describe([benign])}")
    if strays:
        problems.append(f"{len(strays)} processes left")
    if new_tmp:
        problems.append(f"temp dirs left: {', '.join(new_tmp)}")
    yield Outcome(
        "after_suite",
        "benign ok, no processes or temp dirs left",
        "; ".join(problems) or "benign ok, nothing left",
        not problems,
        time.monotonic() - start,
    )


def format_table(outcomes: list[Outcome]) -> str:
    """Render outcomes as a plain-text table (case, expected, got, contained)."""
    rows = [("case", "expected", "got", "contained")]
    rows += [(o.name, o.expected, o.got[:60], "yes" if o.contained else "NO") for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
