"""Backend-independent attack suite: each case tries an attack and checks it is contained.

``arcjudge selfcheck --backend NAME`` and ``tests/sandbox/test_selfcheck.py`` run the same cases.
A case is one or more programs run in order on the same worker; it is *contained* when
the statuses are the expected ones and the host-side check (files, sockets, processes)
finds no trace of the attack.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from arcjudge.safetext import terminal_safe
from arcjudge.sandbox.docker import CONTAINER_MODULES
from arcjudge.sandbox.interface import Sandbox, run_variants
from arcjudge.sandbox.policy import PolicyMode
from arcjudge.sandbox.runtime.cgroups import ZYGOTE_BYTES
from arcjudge.sandbox.types import (
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    Status,
    changed_shared_state,
)

SELFCHECK_LIMITS = Limits(
    wall_seconds=2.0, memory_bytes=256 << 20, processes=32, output_bytes=1 << 20, total_seconds=20
)
SAMPLE: Grid = ((1, 2), (3, 4))
ENTRY_POINTS = ("transform", "generate")
SECRET_VAR = "ARCJUDGE_SELFCHECK_SECRET"
RUNNER_MARK = "runner.py"
ZYGOTE_NAME = "arcjudge-zygote"
SAMPLE_DIR = str(Path(__file__).resolve().parents[1] / "data" / "sample")
Accept = Callable[[list[ProgramResult]], bool]
"""Whether a case's results (one per program, in order) mean the attack was contained."""


@dataclass
class Context:
    """Host-side fixtures an attack aims at.

    Attributes:
        host_dir: A directory of the host every user may write to (nothing may appear).
        port: A listener on the host's loopback (nothing may connect).
        listener: Its socket.
        module_dirs: The module directory the cases with ``module_dir`` import from, and
            another source's directory beside it (``make_module_dirs``).
        memory_cap: What all of a program's processes together may hold (the memory
            cgroup's limit; in a container the container's).
    """

    host_dir: str
    port: int
    listener: socket.socket
    module_dirs: tuple[str, ...] = ()
    memory_cap: int = 0
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.time)

    def fill(self, source: str) -> bytes:
        """Substitute ``{host_dir}``, ``{port}``, ``{marker}``, ... in a case's source."""
        text = source.replace("{host_dir}", self.host_dir)
        text = text.replace("{memory_cap}", str(self.memory_cap))
        text = text.replace("{port}", str(self.port)).replace("{marker}", self.marker)
        text = text.replace("{secret_var}", SECRET_VAR)
        text = text.replace("{sample_dir}", SAMPLE_DIR).replace("{host_file}", self.host_file)
        text = text.replace("{host_release}", os.uname().release)
        text = text.replace("{host_boot_id}", _host_boot_id())
        return text.encode()

    @property
    def host_file(self) -> str:
        """A file of expected outputs on the host, readable by everyone."""
        return os.path.join(self.host_dir, f"expected-{self.marker}.json")

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
    accept: Accept
    host_ok: Callable[[Context], bool] = lambda ctx: True
    limits: Limits = SELFCHECK_LIMITS
    backends: tuple[str, ...] | None = None  # None: every backend
    modes: tuple[str, ...] = ()  # per source: "transform" (default) or "generate"
    inputs: int = 1  # how many copies of SAMPLE each program gets
    # Protections of which at least one must be active for the attack to stay inside the
    # sandbox; without any, it would hit the harness itself, so the case is not run and
    # counts as not contained (e.g. kill(-1) when programs share the harness's uid).
    needs_one_of: tuple[str, ...] = ()
    # Run the sources as one batch of variants (``run_variants``) of a benign base
    # program, each call with a deadline of ``call_seconds``, instead of one by one.
    variants: bool = False
    call_seconds: float = 0.5
    # Programs get the suite's module directory (``Context.module_dirs``) to import from.
    module_dir: bool = False


def _statuses(result: ProgramResult) -> set[str]:
    if result.status is not ProgramStatus.LOADED:
        return {result.status.value}
    return {r.status.value for r in result.results}


def _only(*allowed: str) -> Accept:
    def accept(results: list[ProgramResult]) -> bool:
        return all(_statuses(r) <= set(allowed) for r in results)

    return accept


def _last_grid(expected: Grid) -> Accept:
    def accept(results: list[ProgramResult]) -> bool:
        last = results[-1]
        return last.status is ProgramStatus.LOADED and all(
            r.status is Status.OK and r.grid == expected for r in last.results
        )

    return accept


def _only_grid(expected: Grid) -> Accept:
    def accept(results: list[ProgramResult]) -> bool:
        return all(_last_grid(expected)([r]) for r in results)

    return accept


def _ok_then_last_grid(expected: Grid) -> Accept:
    def accept(results: list[ProgramResult]) -> bool:
        return _only("ok")(results[:-1]) and _last_grid(expected)(results)

    return accept


def _error_text_safe(results: list[ProgramResult]) -> bool:
    last = results[-1]
    if last.status is not ProgramStatus.LOADED or last.results[0].status is not Status.ERROR:
        return False
    text = last.results[0].error or ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x1b" not in terminal_safe(text) and "\\ud800" in text


def _no_escape_file(ctx: Context) -> bool:
    names = [n for n in os.listdir(ctx.host_dir) if n != os.path.basename(ctx.host_file)]
    stray = [p for p in ("/escape-" + ctx.marker, "/tmp/escape-" + ctx.marker) if os.path.exists(p)]
    return not names and not stray


def _src(text: str) -> str:
    """Dedent a case's program text."""
    return textwrap.dedent(text).lstrip("\n")


def _case(name: str, expected: str, accept: Accept, *sources: str, **options: Any) -> Case:
    """A ``Case`` of programs written indented in this file (``options``: ``Case``'s fields)."""
    return Case(name, tuple(_src(s) for s in sources), expected, accept, **options)


_ECHO = _src(
    """
    def transform(g):
        return [list(r) for r in g]
    """
)
"""A benign program: it returns its input (as lists)."""
_FILE_HAS = _src(
    """
    import os
    def read(path):
        try:
            with open(path, 'rb') as fh:
                return fh.read()
        except OSError:
            return None
    def file_has(path, needle):
        data = read(path)
        return data is not None and needle in data
    def proc_has(name, needle):
        return any(file_has('/proc/%s/%s' % (pid, name), needle) for pid in os.listdir('/proc'))
    """
)
"""Helpers for a program that reads host files: ``read``, ``file_has``, ``proc_has``."""
_HOLDERS = _src(
    """
    import os, select, time
    def held_together(n, hold, wait=4.0):
        # Bytes held at once by n children, each hold()-ing (bytes, what keeps them). A
        # child reports its pid and bytes once it holds them, then waits; only children
        # still alive at the end count (the OOM killer may take one after it reported).
        r, w = os.pipe()
        for _ in range(n):
            if os.fork() == 0:
                try:
                    size, kept = hold()
                    os.write(w, b'%d:%d,' % (os.getpid(), size))
                    time.sleep(60)
                finally:
                    os._exit(0)
        os.close(w)
        text, end = b'', time.time() + wait
        while text.count(b',') < n and time.time() < end:
            if select.select([r], [], [], 0.1)[0]:
                got = os.read(r, 4096)
                if not got:
                    break
                text += got
        time.sleep(0.2)  # an OOM kill in flight lands
        held = 0
        for item in text.split(b',')[:-1]:
            pid, size = map(int, item.split(b':'))
            if os.waitpid(pid, os.WNOHANG) == (0, 0):  # alive: still holding
                held += size
        return held
    """
)
"""``held_together(n, hold)``: what n children hold at once, for the memory cases."""
_found_nothing = _last_grid(((0,),))
"""The last program answered ``[[0]]`` to every input: its attack found nothing."""
_SIGNAL_GUARDS = ("pid_namespace", "uid_per_program")
"""Either keeps a program's signals from reaching the harness's processes."""


def _variants(name: str, expected: str, accept: Accept, *sources: str, **options: Any) -> Case:
    """A case whose programs run as one batch of variants (``run_variants``)."""
    return _case(name, expected, accept, *sources, variants=True, inputs=2, **options)


def _grids(*expected: Grid | None) -> Accept:
    """Variant k answered ``expected[k]`` to every input (``None``: not checked here)."""

    def accept(results: list[ProgramResult]) -> bool:
        return len(results) == len(expected) and all(
            want is None or _last_grid(want)([result])
            for result, want in zip(results, expected, strict=True)
        )

    return accept


def _then(first: Accept, rest: Accept) -> Accept:
    """``first`` holds for the first result and ``rest`` for the others."""
    return lambda results: bool(results) and first(results[:1]) and rest(results[1:])


def _shared_state_reported(results: list[ProgramResult]) -> bool:
    return changed_shared_state(results[0])


def _never_infra_then_ok(results: list[ProgramResult]) -> bool:
    """The attack found nothing or was stopped as the program's failure; the next runs.

    The first program answers ``[[0]]`` or ends as ``memory``, ``crashed``, ``error`` or
    ``timeout`` (never ``infra``: its own allocations are its fault), and the benign
    program after it answers correctly (its worker survived or was replaced).
    """
    first, last = results[0], results[-1]
    stopped = first.status is ProgramStatus.LOADED and all(
        r.status in (Status.MEMORY, Status.CRASHED, Status.ERROR, Status.TIMEOUT)
        or (r.status is Status.OK and r.grid == ((0,),))
        for r in first.results
    )
    return stopped and _last_grid(SAMPLE)([last])


def _survived(name: str, expected: str, accept: Accept, attack: str) -> Case:
    """A case whose attack signals other processes; a benign program must run after it."""
    return _case(name, expected, accept, attack, _ECHO, needs_one_of=_SIGNAL_GUARDS)


"""The last program answered ``[[0]]`` to every input: its attack found nothing."""


def _host_boot_id() -> str:
    """This host kernel's boot id (a container on the host kernel reads the same one)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip() or "unknown"
    except OSError:
        return "unknown"


CASES: tuple[Case, ...] = (
    _case(
        "fork_bomb",
        "timeout",
        _only("timeout", "error", "memory", "crashed"),
        """
        import os
        def transform(g):
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """,
    ),
    _case(
        "memory_bomb",
        "memory",
        _only("memory", "crashed"),
        """
        def transform(g):
            hoard = []
            while True:
                hoard.append(bytearray(50 * 1024 * 1024))
        """,
    ),
    _case(
        "infinite_loop_python",
        "timeout",
        _only("timeout"),
        """
        def transform(g):
            while True:
                pass
        """,
    ),
    _case(
        "regex_backtracking_in_c",
        "timeout",
        _only("timeout"),
        """
        import re
        def transform(g):
            re.match(r'(a+)+$', 'a' * 64 + 'b')
            return g
        """,
    ),
    _case(
        "bigint_power_in_c",
        "timeout",
        _only("timeout", "memory"),
        """
        def transform(g):
            x = 7 ** (7 ** 10)
            return g
        """,
    ),
    _case(
        "sigalrm_disarmed",
        "timeout",
        _only("timeout"),
        """
        import signal
        def transform(g):
            for s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):
                signal.signal(s, signal.SIG_IGN)
            signal.alarm(0)
            while True:
                pass
        """,
    ),
    _case(
        "base_exception_swallowed",
        "timeout",
        _only("timeout"),
        """
        def transform(g):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        """,
    ),
    _case(
        "sleep_past_wall_limit",
        "timeout",
        _only("timeout"),
        """
        import time
        def transform(g):
            time.sleep(60)
            return g
        """,
    ),
    _case(
        "write_outside_workdir",
        "ok, no file on the host",
        _only("ok"),
        """
        import os
        def transform(g):
            wrote = 0
            for path in ('{host_dir}/escape-{marker}', '/escape-{marker}',
                         '/tmp/escape-{marker}'):
                try:
                    with open(path, 'w') as fh:
                        fh.write('x')
                    wrote = 1
                except OSError:
                    pass
            return [[wrote]]
        """,
        host_ok=_no_escape_file,
    ),
    _case(
        "read_harness_environment",
        "ok [[0]]",
        _found_nothing,
        _FILE_HAS
        + _src(
            """
            def transform(g):
                found = any(k.startswith('{secret_var}') for k in os.environ)
                return [[int(found or proc_has('environ', b'{secret_var}'))]]
            """
        ),
    ),
    _case(
        "network_route_outside",
        "ok [[0]] (no route; a UDP connect sends no packet)",
        _found_nothing,
        """
        import socket
        def transform(g):
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.connect(('192.0.2.1', 9))
                return [[1]]
            except OSError:
                return [[0]]
        """,
    ),
    _case(
        "network_host_loopback",
        "ok [[0]], listener untouched",
        _found_nothing,
        """
        import socket
        def transform(g):
            try:
                s = socket.socket()
                s.settimeout(1)
                s.connect(('127.0.0.1', {port}))
                return [[1]]
            except OSError:
                return [[0]]
        """,
        host_ok=lambda ctx: not ctx.loopback_contacted(),
    ),
    _case(
        "thread_and_daemon_outlive_call",
        "ok, no process left",
        _only("ok"),
        """
        import os, threading, time
        def transform(g):
            threading.Thread(target=time.sleep, args=(60,)).start()
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(60)
                os._exit(0)
            return g
        """,
    ),
    _case(
        "sys_exit",
        "error",
        _only("error"),
        """
        import sys
        def transform(g):
            sys.exit(0)
        """,
    ),
    _case(
        "os_exit",
        "error",
        _only("error"),
        """
        import os
        def transform(g):
            os._exit(0)
        """,
    ),
    _case(
        "print_a_gigabyte",
        "output_limit",
        _only("output_limit"),
        """
        import sys
        def transform(g):
            chunk = 'x' * (1 << 20)
            for _ in range(1024):
                sys.stdout.write(chunk)
            return g
        """,
    ),
    _case(
        "huge_grid",
        "invalid_output",
        _only("invalid_output"),
        """
        def transform(g):
            return [[1] * 1000 for _ in range(10000)]
        """,
    ),
    _case(
        "deep_recursion_segfault",
        "crashed",
        _only("crashed", "error", "memory"),
        """
        import sys
        sys.setrecursionlimit(10 ** 7)
        class Deep:
            def __call__(self, n):
                return self(n + 1)
        def transform(g):
            return Deep()(0)
        """,
    ),
    _case(
        "eq_always_true",
        "invalid_output",
        _only("invalid_output"),
        """
        class Liar(list):
            def __eq__(self, other):
                return True
            def __len__(self):
                return 2
        def transform(g):
            return Liar()
        """,
    ),
    _case(
        "poison_next_program",
        "second program ok and correct",
        _last_grid(SAMPLE),
        """
        import builtins, json
        builtins.len = lambda x: 0
        builtins.isinstance = lambda *a: False
        builtins.list = tuple
        json.dumps = lambda *a, **k: '[[9]]'
        json.loads = lambda *a, **k: [[9]]
        import sys
        sys.modules['canonical'] = None
        def transform(g):
            return [[9]]
        """,
        _ECHO,
    ),
    _case(
        "read_other_programs_temp_files",
        "second program ok [[0]]",
        _found_nothing,
        """
        import os
        def transform(g):
            for d in ('.', '/tmp', '/dev/shm', '/var/tmp'):
                try:
                    with open(os.path.join(d, 'secret-{marker}'), 'w') as fh:
                        fh.write('x')
                except OSError:
                    pass
            return g
        """,
        """
        import os
        def transform(g):
            for d in ('.', '..', '/tmp', '/dev/shm', '/var/tmp'):
                for root, _, files in os.walk(d):
                    if 'secret-{marker}' in files:
                        return [[1]]
            return [[0]]
        """,
    ),
    _case(
        "shared_memory_to_next_program",
        "second program ok [[0]]",
        _found_nothing,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        def transform(g):
            seg = libc.shmget(0x4A1D6E, 4096, 0o1666)  # IPC_CREAT | 0666
            try:
                fd = os.open('/dev/mqueue/arcjudge-{marker}', os.O_CREAT | os.O_WRONLY)
                os.close(fd)
            except OSError:
                pass
            return [[1 if seg >= 0 else 0]]
        """,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        def transform(g):
            seen = libc.shmget(0x4A1D6E, 0, 0) >= 0
            seen = seen or os.path.exists('/dev/mqueue/arcjudge-{marker}')
            return [[1 if seen else 0]]
        """,
    ),
    _case(
        "top_level_never_returns",
        "load_error",
        _only("load_error"),
        """
        while True:
            pass
        """,
    ),
    _case(
        "docker_socket_unreachable",
        "ok [[0]]",
        _found_nothing,
        """
        import socket
        def transform(g):
            for path in ('/var/run/docker.sock', '/run/docker.sock'):
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(path)
                    return [[1]]
                except OSError:
                    pass
            return [[0]]
        """,
    ),
    _survived(
        "kill_every_process",
        "the run carries on: next program ok",
        _last_grid(SAMPLE),
        """
        import os, signal
        def transform(g):
            for target in (-1, 1):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            return g
        """,
    ),
    _case(
        "memory_of_earlier_jobs",
        "generator, verifier, then a program finding none of their data: ok [[0]]",
        _found_nothing,
        """
        SECRET = '{marker}'[::-1] + '-source'
        def generate():
            return {'input': [[7, 7, 3]], 'output': [[3, 1, 4, 1, 5]]}
        """,
        """
        SECRET = '{marker}'[::-1] + '-verifier'
        def transform(g):
            return [[2, 7, 1, 8, 2, 8]]
        """,
        """
        import gc
        def transform(g):
            needle = '{marker}'[::-1]
            wanted = {'[[3, 1, 4, 1, 5]]', '[[2, 7, 1, 8, 2, 8]]', '[[7, 7, 3]]',
                      '[3, 1, 4, 1, 5]', '[2, 7, 1, 8, 2, 8]', '[7, 7, 3]'}
            found = 0
            for obj in gc.get_objects():
                try:
                    if isinstance(obj, (list, tuple)) and repr(obj) in wanted:
                        found = 1
                    values = obj.values() if isinstance(obj, dict) else ()
                    for v in list(values):
                        if isinstance(v, str) and needle in v and v is not needle:
                            found = 1
                        if isinstance(v, (bytes, bytearray)) and needle.encode() in v:
                            found = 1
                except Exception:
                    pass
            return [[found]]
        """,
        modes=("generate", "transform", "transform"),
        inputs=3,
    ),
    _case(
        "forge_next_programs_results",
        "detached survivors are gone; the next program ok and correct",
        _last_grid(SAMPLE),
        """
        import os, time, json, struct, signal
        def attack():
            me = os.getpid()
            frame = json.dumps({'k': 'out', 'i': 0, 's': 'ok', 'g': [1, '6']}).encode()
            data = struct.pack('>I', len(frame)) + frame
            end = time.time() + 3
            while time.time() < end:
                for pid in os.listdir('/proc'):
                    if not pid.isdigit() or int(pid) == me:
                        continue
                    for fd in range(3, 8):
                        try:
                            w = os.open('/proc/%s/fd/%d' % (pid, fd), os.O_WRONLY)
                            os.write(w, data * 4)
                            os.close(w)
                        except OSError:
                            pass
                    try:
                        os.kill(int(pid), signal.SIGSTOP)
                    except OSError:
                        pass
                time.sleep(0.01)
        def transform(g):
            if os.fork() == 0:
                os.setsid()
                for _ in range(6):
                    if os.fork() != 0:
                        os._exit(0)
                    os.setsid()
                attack()
                os._exit(0)
            return g
        """,
        """
        import time
        def transform(g):
            time.sleep(0.5)
            return [list(r) for r in g]
        """,
        needs_one_of=_SIGNAL_GUARDS,
    ),
    _case(
        "keyring_to_next_program",
        "add_key denied, nothing found: ok [[0]], ok [[0]]",
        _only_grid(((0,),)),
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def transform(g):
            r = libc.syscall(248, b'user', b'arcjudge-{marker}', b'secret', 6, -4)
            return [[1 if r >= 0 else 0]]
        """,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def transform(g):
            r = libc.syscall(250, 10, -4, b'user', b'arcjudge-{marker}', 0)
            return [[1 if r >= 0 else 0]]
        """,
    ),
    _case(
        "see_host_processes",
        "no host process visible: ok [[0]]",
        _found_nothing,
        _FILE_HAS
        + _src(
            """
            def transform(g):
                return [[int(proc_has('cmdline', b'{marker}'))]]
            """
        ),
    ),
    _case(
        "read_task_data_on_host",
        "no task data, package data or host directory visible: ok [[0]]",
        _found_nothing,
        _FILE_HAS
        + _src(
            """
            def transform(g):
                paths = ('{host_file}', '{sample_dir}/EXPECTED.json', '{sample_dir}/README.md')
                found = int(any(read(path) is not None for path in paths))
                tops = ['/' + d for d in os.listdir('/') if d not in ('proc', 'sys', 'usr')]
                tops += [os.path.dirname('{host_dir}'), os.path.dirname('{sample_dir}')]
                for top in tops:
                    for root, dirs, files in os.walk(top):
                        if any(f.startswith('expected-{marker}') or f == 'EXPECTED.json'
                               for f in files):
                            found = 1
                        dirs[:] = [d for d in dirs if not d.startswith(('python', 'lib'))]
                return [[found]]
            """
        ),
    ),
    _case(
        "exit_code_of_sandbox_failure",
        "error, load_error (never infra)",
        _only("error", "load_error"),
        """
        import os
        def transform(g):
            os._exit(70)
        """,
        """
        import os
        os._exit(70)
        """,
    ),
    _survived(
        "signal_the_supervisor",
        "ok; the run carries on: next program ok",
        _ok_then_last_grid(SAMPLE),
        """
        import os, signal
        def transform(g):
            targets = {os.getppid(), 1}
            for pid in os.listdir('/proc'):
                if pid.isdigit() and int(pid) != os.getpid():
                    targets.add(int(pid))
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
                for target in sorted(targets) + [-1]:
                    try:
                        os.kill(target, sig)
                    except OSError:
                        pass
            return g
        """,
    ),
    _case(
        "read_later_inputs_at_load",
        "no later input readable ahead: ok [[0]] x3",
        _only_grid(((0,),)),
        """
        import os
        def peek():
            seen = 0
            for fd in range(3, 16):
                try:
                    os.set_blocking(fd, False)
                    if os.read(fd, 1 << 16):
                        seen = 1
                except OSError:
                    pass
                finally:
                    try:
                        os.set_blocking(fd, True)
                    except OSError:
                        pass
            return seen
        seen = peek()
        def transform(g):
            return [[max(seen, peek())]]
        """,
        inputs=3,
    ),
    _case(
        "socket_families_other_than_unix",
        "no socket but AF_UNIX: ok [[0]]",
        _found_nothing,
        """
        import socket
        def transform(g):
            made = 0
            for family in (40, 17, 16, 10, 2):  # VSOCK, PACKET, NETLINK, INET6, INET
                try:
                    socket.socket(family, socket.SOCK_DGRAM if family != 40
                                  else socket.SOCK_STREAM).close()
                    made += 1
                except OSError:
                    pass
            try:
                socket.socketpair(socket.AF_UNIX).__class__
            except OSError:
                made += 10
            return [[made]]
        """,
    ),
    _case(
        "hostile_error_text",
        "error, with text that encodes as UTF-8 and has no escape sequences",
        _error_text_safe,
        """
        def transform(g):
            raise ValueError('\\ud800 \\x1b[2J\\x1b[H forged' * 3)
        """,
    ),
    _case(
        "memory_outside_the_limit",
        "memfd_create denied (its pages count against no limit): ok [[0]]",
        _found_nothing,
        """
        import os
        def transform(g):
            try:
                fd = os.memfd_create('hoard')
            except (OSError, AttributeError):
                return [[0]]
            os.posix_fallocate(fd, 0, 1 << 30)  # never mapped: RLIMIT_AS misses it
            return [[1]]
        """,
    ),
    _case(
        "scratch_too_deep_to_clean",
        "ok or timeout (a tree deeper than the recursion limit, files up to the inode cap); "
        "the next program finds its scratch empty: ok [[0]]",
        lambda results: _only("ok", "timeout")(results[:1]) and _last_grid(((0,),))(results),
        """
        import os
        def transform(g):
            try:
                for _ in range(3000):
                    os.mkdir('d')
                    os.chdir('d')
                for k in range(50000):
                    open('f%d' % k, 'w').close()
            except OSError:
                pass
            return g
        """,
        """
        import os
        def transform(g):
            return [[len(os.listdir('.'))]]
        """,
    ),
    _case(
        "forged_load_frame",
        "load_error (an entry point that was never asked for)",
        _only("load_error"),
        """
        import json, os, struct
        frame = json.dumps({'k': 'load', 'ok': True, 'entry': '\\x1b[2Jevil'}).encode()
        os.write(3, struct.pack('>I', len(frame)) + frame)
        def transform(g):
            return g
        """,
    ),
    _case(
        "forged_generator_output",
        "invalid_output (a generator's field in a transform answer)",
        _only("invalid_output"),
        """
        import json, os, struct
        def transform(g):
            frame = {'k': 'out', 'i': 0, 's': 'ok', 'g': [1, '5'], 'o': [1, '7']}
            data = json.dumps(frame).encode()
            os.write(3, struct.pack('>I', len(data)) + data)
            return g
        """,
    ),
    _variants(
        "variant_hangs_next_runs_fresh",
        "timeout at the call deadline (the rest not run); next variant: fresh process, ok",
        _then(_only("timeout"), _grids(((0,),))),
        """
        import os
        os.environ['ARCJUDGE_VARIANT_WAS_HERE'] = '1'
        def transform(g):
            while True:
                pass
        """,
        """
        import os
        def transform(g):
            return [[int('ARCJUDGE_VARIANT_WAS_HERE' in os.environ)]]
        """,
    ),
    _variants(
        "variant_changes_builtins",
        "reported as changing shared state; the next variant sees the real builtins: ok [[0]]",
        _then(_shared_state_reported, _grids(((0,),))),
        """
        import builtins
        def transform(g):
            builtins.arcjudge_planted = True
            builtins.abs = lambda x: 7
            return g
        """,
        """
        import builtins
        def transform(g):
            return [[int(hasattr(builtins, 'arcjudge_planted')) + abs(0)]]
        """,
    ),
    _variants(
        "variant_mutates_its_input",
        "ok: every call gets a fresh copy; the next variant's input is untouched",
        _grids(((9, 2), (3, 4)), SAMPLE),
        """
        def transform(g):
            g[0][0] = 9
            return g
        """,
        _ECHO,
    ),
    _variants(
        "variant_exits_or_crashes",
        "error, crashed; the variants after them still run: ok",
        lambda results: (
            _only("error")(results[:1])
            and _only("crashed", "error", "memory")(results[1:2])
            and _grids(SAMPLE)(results[2:])
        ),
        """
        import os
        def transform(g):
            os._exit(0)
        """,
        """
        import sys
        sys.setrecursionlimit(10 ** 7)
        class Deep:
            def __call__(self, n):
                return self(n + 1)
        def transform(g):
            return Deep()(0)
        """,
        _ECHO,
    ),
    _case(
        "module_files_outside_the_directory",
        "the job frame carries only module files the program may read: ok [[0, 1]]",
        _last_grid(((0, 1),)),
        """
        import base64, sys
        if False:  # never run: these lines only name files for the supervisor to compile
            import leak, cross_host, cross_container, owner_only, real
        def transform(g):
            loader = getattr(sys.modules.get('modcode'), '_PrecompiledLoader', None)
            code = dict(getattr(loader, 'code', None) or {})
            found = 0
            for path, entry in code.items():
                try:
                    if b'{marker}' in base64.b64decode(entry[1]):
                        found = 1
                except Exception:
                    pass
            return [[found, int(any(p.endswith('/real.py') for p in code))]]
        """,
        module_dir=True,
    ),
    _case(
        "memory_across_processes",
        "20 children of 100 MB each: all together held within the cap, the program is "
        "the OOM killer's choice (never infra); next program ok",
        _never_infra_then_ok,
        _HOLDERS
        + _src(
            """
            def transform(g):
                def hold():
                    block = bytearray(100 << 20)
                    for i in range(0, len(block), 4096):
                        block[i] = 1
                    return 100 << 20, block
                return [[int(held_together(20, hold) > {memory_cap})]]
            """
        ),
        _ECHO,
        limits=dataclasses.replace(SELFCHECK_LIMITS, memory_bytes=128 << 20, wall_seconds=8.0),
        needs_one_of=("memory_cgroup", "container_memory_limit"),
    ),
    _case(
        "socket_buffers_outside_the_limit",
        "kernel memory queued in AF_UNIX socket buffers by 28 processes counts against "
        "the cap: ok [[0]] or stopped (never infra); next program ok",
        _never_infra_then_ok,
        _HOLDERS
        + _src(
            """
            import socket
            def transform(g):
                def fill():
                    total, kept = 0, []
                    try:
                        while True:
                            a, b = socket.socketpair()
                            kept.append((a, b))
                            for end in (a, b):
                                end.setblocking(False)
                                try:
                                    while True:
                                        total += end.send(b'x' * 65536)
                                except BlockingIOError:
                                    pass
                    except OSError:
                        pass
                    return total, kept
                return [[int(held_together(28, fill, wait=6.0) > {memory_cap})]]
            """
        ),
        _ECHO,
        limits=dataclasses.replace(SELFCHECK_LIMITS, memory_bytes=64 << 20, wall_seconds=10.0),
        needs_one_of=("memory_cgroup", "container_memory_limit"),
    ),
    _case(
        "cpu_affinity_widened",
        "the program stays on its worker's CPU: ok [[0]]",
        _found_nothing,
        """
        import os
        def transform(g):
            before = os.sched_getaffinity(0)
            try:
                os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
            except OSError:
                pass
            return [[int(os.sched_getaffinity(0) != before)]]
        """,
    ),
    _case(
        "channel_through_shared_inodes",
        "no file lock, lease, inotify watch or page-cache probe on a file every sandbox "
        "shares: each refused, ok [[0]]",
        _found_nothing,
        """
        import ctypes, errno, fcntl, mmap, os, struct
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        def refused(call):
            try:
                return call() == -1 and ctypes.get_errno() == errno.EPERM
            except OSError as exc:
                return exc.errno == errno.EPERM
        def transform(g):
            fd = os.open(os.__file__, os.O_RDONLY)  # the standard library: shared
            lock = struct.pack('hhqqi', fcntl.F_RDLCK, 0, 4242, 1, 0)
            view = mmap.mmap(fd, 4096, access=mmap.ACCESS_COPY)  # the file's cached pages
            page = ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(view)))
            vec = ctypes.create_string_buffer(8)
            calls = [lambda cmd=cmd: fcntl.fcntl(fd, cmd, lock)
                     for cmd in (fcntl.F_SETLK, fcntl.F_GETLK, 37, 36)]  # record, OFD locks
            calls += [
                lambda: fcntl.flock(fd, fcntl.LOCK_SH),
                lambda: fcntl.fcntl(fd, 1024, 1),  # F_SETLEASE
                lambda: fcntl.fcntl(fd, 1026, 0),  # F_NOTIFY
                lambda: libc.syscall(294, 0),  # inotify_init1
                lambda: libc.syscall(27, page, 4096, vec),  # mincore on a shared file's page
                lambda: os.preadv(fd, [bytearray(8)], 0, 8),  # RWF_NOWAIT: cached or not
                lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED),
            ]
            ctypes.set_errno(0)
            open_channels = sum(not refused(call) for call in calls)
            return [[open_channels]]
        """,
    ),
    _case(
        "program_replaces_builtins",
        "the runtime ignores a program's own builtins: ok and correct",
        _last_grid(((2, 1), (4, 3))),
        """
        import builtins, json, os, struct
        builtins.len = lambda x: 0
        builtins.list = tuple
        builtins.isinstance = lambda *a: False
        builtins.str = lambda *a: 'x'
        builtins.int = lambda *a: 7
        builtins.memoryview = None
        json.dumps = lambda *a, **k: '[[9]]'
        json.loads = lambda *a, **k: [[9]]
        def transform(g):
            return [[c for c in r][::-1] for r in g]
        """,
    ),
    _case(
        "packages_beside_arcjudge",
        "of the packages installed beside arcjudge, programs see only numpy and scipy: ok [[0]]",
        _found_nothing,
        """
        import importlib.util, os, sys
        def transform(g):
            import numpy
            names = ('arcjudge', 'psutil', 'pytest', 'libcst', 'docker', 'hypothesis', 'ray')
            seen = [n for n in names if importlib.util.find_spec(n) is not None]
            for path in sys.path:
                try:
                    seen += [e for e in os.listdir(path) if e.startswith(names)]
                except OSError:
                    pass
            return [[len(seen)]]
        """,
    ),
    _case(
        "syscalls_reach_host_kernel",
        "gVisor's kernel answers, not the host's (release, /proc/version, boot id): ok [[0]]",
        _found_nothing,
        _FILE_HAS
        + _src(
            """
            def transform(g):
                seen = os.uname().release == '{host_release}'
                seen = seen or file_has('/proc/version', b'{host_release}')
                seen = seen or file_has('/proc/sys/kernel/random/boot_id', b'{host_boot_id}')
                return [[int(seen)]]
            """
        ),
        backends=("docker-runsc",),
    ),
)

GVISOR_VARIANT = "docker-runsc"
# Which backends' cases a variant runs: docker on gVisor runs docker's cases and its own.
_VARIANT_FAMILY = {GVISOR_VARIANT: (GVISOR_VARIANT, "docker")}


@dataclass(frozen=True)
class KnownDifference:
    """How a backend or runtime differs from the others on some cases (printed with them).

    The cases still run and must be contained; this states what is done differently
    there, or what else contains the attack, and why.
    """

    variant: str
    cases: tuple[str, ...]  # empty: the whole suite
    text: str


KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = (
    KnownDifference(
        GVISOR_VARIANT,
        (),
        "docker top cannot list a gVisor container's processes (the daemon matches the "
        "sandbox's own pids against the host's ps), so stray processes are counted from "
        "inside the container, by a process run there with docker exec",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("fork_bomb",),
        "the container's pids limit counts gVisor's own host threads (about 40, and about 5 "
        "per program process on the ptrace platform), not the container's processes, and "
        "gVisor dies when it is reached: it is 1024 there, and the bomb is stopped by the "
        "program's RLIMIT_NPROC, which gVisor enforces (threads included)",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("thread_and_daemon_outlive_call", "forge_next_programs_results", "fork_bomb"),
        "gVisor refuses PR_SET_CHILD_SUBREAPER (protections()['subreaper'] is False): orphans "
        "go to the supervisor (PID 1), not the zygote, so after each program the zygote "
        "repeats kill(-1) until the container's /proc shows no live process but the "
        "supervisor and itself, and the supervisor reaps them",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("keyring_to_next_program",),
        "gVisor has no kernel keyrings (add_key fails with EACCES even without the filter); "
        "the syscall filter's EPERM comes first",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("shared_memory_to_next_program",),
        "gVisor implements System V IPC (per IPC namespace, private per container) but has "
        "no /dev/mqueue; the syscall filter denies shmget and mq_* first",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("see_host_processes", "read_harness_environment", "read_task_data_on_host"),
        "/proc is gVisor's own: it lists the sandbox's processes only and has fewer files "
        "than Linux's (no /proc/sys/kernel/random/boot_id, for one)",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("network_route_outside", "network_host_loopback", "socket_families_other_than_unix"),
        "runsc runs with --network=none (daemon.json): the sandbox's network stack has a "
        "loopback of its own only; AF_VSOCK does not exist there; the syscall filter (run "
        "by gVisor's kernel, which implements seccomp) denies every family but AF_UNIX first",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("memory_bomb",),
        "the container's memory limit covers the whole sandbox (gVisor's kernel and the "
        "programs' memory); the program's RLIMIT_AS is enforced by gVisor's memory manager",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("memory_across_processes",),
        "the container's memory limit covers gVisor's kernel and the programs together, and "
        "when it is reached the host's OOM killer takes the whole sandbox (the programs' "
        "oom_score_adj is gVisor's own): the harness reads the daemon's OOM event and "
        "records that program's inputs as memory, and a fresh container takes its place",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("channel_through_shared_inodes",),
        "gVisor keeps file locks per sandbox (they never reached another container there); "
        "the syscall filter refuses them first, as everywhere",
    ),
    KnownDifference(
        GVISOR_VARIANT,
        ("syscalls_reach_host_kernel",),
        "runs on gVisor only: on runc the container shares the host kernel by design",
    ),
)


def known_differences(variant: str) -> tuple[KnownDifference, ...]:
    """Return what is known to differ on a backend variant (``variant_of``)."""
    return tuple(d for d in KNOWN_DIFFERENCES if d.variant == variant)


def variant_of(sandbox: Sandbox) -> str:
    """The backend variant a sandbox is: its name, or ``docker-runsc`` on gVisor.

    gVisor is decided from the runtime read back from the containers
    (``protections()["gvisor_kernel"]``), never from what was asked for.
    """
    if sandbox.name == "docker" and sandbox.protections().get("gvisor_kernel"):
        return GVISOR_VARIANT
    return sandbox.name


@dataclass(frozen=True)
class CaseOutcome:
    """The result of one case."""

    name: str
    expected: str
    got: str
    contained: bool
    seconds: float
    known: str = ""  # what is known to differ on this case here (KnownDifference texts)


def _describe(results: list[ProgramResult]) -> str:
    parts = []
    for result in results:
        if result.status is not ProgramStatus.LOADED:
            parts.append(result.status.value)
            continue
        for r in result.results:
            parts.append(f"ok {[list(row) for row in r.grid]}" if r.grid else r.status.value)
    return ", ".join(parts)


def leftover_processes(exclude: set[int], since: float = 0.0) -> list[psutil.Process]:
    """Return sandbox processes of this harness that should no longer exist.

    A process counts when its command line is the runner's, it started at or after
    ``since`` and it is either a descendant of this process or an orphan (parent pid 1),
    and it is not in ``exclude`` (the live supervisors).
    """
    mine = {p.pid for p in psutil.Process().children(recursive=True)}
    found = []
    for proc in psutil.process_iter(["pid", "ppid", "cmdline", "create_time"]):
        info = proc.info
        cmdline = info.get("cmdline") or []
        if info["pid"] in exclude or not any(RUNNER_MARK in part for part in cmdline):
            continue
        if info["ppid"] in exclude and _comm(info["pid"]) == ZYGOTE_NAME:
            continue  # a live supervisor's fork server
        if (info.get("create_time") or 0.0) + 0.05 < since:
            continue
        if info["pid"] in mine or info["ppid"] == 1:
            found.append(proc)
    return found


def _comm(pid: int) -> str:
    """A process's current name, read fresh (psutil caches names)."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _supervisor_pids() -> set[int]:
    pids = set()
    for proc in psutil.process_iter(["pid", "cmdline", "ppid"]):
        cmdline = proc.info.get("cmdline") or []
        if any(RUNNER_MARK in part for part in cmdline) and proc.info["ppid"] == os.getpid():
            pids.add(proc.info["pid"])
    return pids


def run_case(sandbox: Sandbox, case: Case, ctx: Context) -> CaseOutcome:
    """Run one case on ``sandbox`` and judge it.

    Args:
        sandbox: A sandbox with a single worker (cases with two programs rely on it).
        case: The case.
        ctx: Host-side fixtures.

    Returns:
        What happened and whether it was contained.
    """
    start = time.monotonic()
    if case.needs_one_of:
        protections = sandbox.protections()
        if not any(protections.get(name) for name in case.needs_one_of):
            got = f"not run: without {' or '.join(case.needs_one_of)} it would reach the harness"
            return CaseOutcome(case.name, case.expected, got, False, 0.0)
    results: list[ProgramResult] = []
    module_dirs = ctx.module_dirs[:1] if case.module_dir else ()
    if case.variants:
        base = Program(_ECHO.encode(), ENTRY_POINTS)
        batch = [ctx.fill(src) for src in case.sources]
        inputs = [SAMPLE] * case.inputs
        results.extend(
            run_variants(
                sandbox, base, batch, inputs, case.limits, call_seconds=case.call_seconds,
                policy=PolicyMode.OFF,
            )
        )  # fmt: skip
    for k, src in enumerate(() if case.variants else case.sources):
        program = Program(ctx.fill(src), ENTRY_POINTS, module_dirs if k == 0 else ())
        if k < len(case.modes) and case.modes[k] == "generate":
            calls = [GeneratorCall(seed=s) for s in range(case.inputs)]
            results.append(sandbox.generate(program, calls, case.limits, policy=PolicyMode.OFF))
        else:
            inputs = [SAMPLE] * case.inputs
            results.append(sandbox.run(program, inputs, case.limits, policy=PolicyMode.OFF))
    contained = case.accept(results) and case.host_ok(ctx)
    time.sleep(0.05)
    strays = len(leftover_processes(_supervisor_pids(), ctx.started))
    in_workers = getattr(sandbox, "stray_processes", None)
    if in_workers is not None:
        strays += in_workers()
    if strays:
        contained = False
    got = _describe(results) + (f"; {strays} stray processes" if strays else "")
    return CaseOutcome(case.name, case.expected, got, contained, time.monotonic() - start)


def cases_for(backend: str) -> tuple[Case, ...]:
    """Return the cases that apply to a backend or variant (``docker-runsc``: docker's too)."""
    family = _VARIANT_FAMILY.get(backend, (backend,))
    return tuple(c for c in CASES if c.backends is None or set(family) & set(c.backends))


def make_module_dirs(ctx: Context, base: str) -> tuple[str, ...]:
    """A module directory whose files reach out of it, and another source's beside it.

    In ``base/mods``: ``real.py``; ``leak.py`` linked to a credential of the harness's user
    (mode 0600, outside); ``cross_host.py`` and ``cross_container.py`` linked to another
    source's file (its host path, and its path in a container, where the docker backend
    mounts the second module directory); ``owner_only.py``, mode 0600. Every file but
    ``real.py`` holds the suite's marker.

    Returns:
        ``(base/mods, base/other)``: the module directory and the other source's.
    """
    mods, other, secret = (os.path.join(base, d) for d in ("mods", "other", "secret"))
    for directory, mode in ((mods, 0o755), (other, 0o755), (secret, 0o700)):
        os.mkdir(directory)
        os.chmod(directory, mode)
    files = {
        os.path.join(secret, "credentials.json"): (
            f'{{"token": "{ctx.marker}-credential"}}',
            0o600,
        ),
        os.path.join(other, "private.py"): (f"KEY = '{ctx.marker}-other-source'\n", 0o644),
        os.path.join(mods, "owner_only.py"): (f"TOKEN = '{ctx.marker}-owner-only'\n", 0o600),
        os.path.join(mods, "real.py"): ("VALUE = 1\n", 0o644),
    }
    for path, (text, mode) in files.items():
        with open(path, "w") as fh:
            fh.write(text)
        os.chmod(path, mode)
    os.symlink(os.path.join(secret, "credentials.json"), os.path.join(mods, "leak.py"))
    os.symlink(os.path.join(other, "private.py"), os.path.join(mods, "cross_host.py"))
    os.symlink(f"{CONTAINER_MODULES}/g1/m/private.py", os.path.join(mods, "cross_container.py"))
    return mods, other


def memory_cap(sandbox: Sandbox, limits: Limits) -> int:
    """What all of a program's processes may hold together in ``sandbox``, in bytes.

    A container's memory limit where there is one (``DockerSandbox.memory_bytes``), else
    the programs' memory cgroup's: the job's ``memory_bytes`` and the zygote's share.
    """
    container = getattr(sandbox, "memory_bytes", None)
    if isinstance(container, int):
        return container
    return limits.memory_bytes + ZYGOTE_BYTES


def run_suite(
    make_sandbox: Callable[[tuple[str, ...]], Sandbox], names: set[str] | None = None
) -> Iterator[CaseOutcome]:
    """Run the cases (all, or those named) and then the after-suite checks.

    Args:
        make_sandbox: Builds a fresh one-worker sandbox whose programs may import from the
            module directories it is given (a container must mount them); it is closed
            at the end.
        names: Optional subset of case names.

    Yields:
        One ``CaseOutcome`` per case, then ``after_suite``.
    """
    host_dir = tempfile.mkdtemp(prefix="arcjudge-selfcheck-")
    os.chmod(host_dir, 0o777)
    modules_base = tempfile.mkdtemp(prefix="arcjudge-selfcheck-modules-")
    os.chmod(modules_base, 0o755)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    ctx = Context(host_dir, listener.getsockname()[1], listener)
    ctx.module_dirs = make_module_dirs(ctx, modules_base)
    with open(ctx.host_file, "w") as fh:  # what a user's task data looks like
        fh.write('{"test": [{"output": [[1]]}]}')
    os.chmod(ctx.host_file, 0o644)
    before_tmp = set(os.listdir(tempfile.gettempdir()))
    baseline = _supervisor_pids()
    os.environ[SECRET_VAR] = uuid.uuid4().hex
    host_process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)", f"--task-data=/{ctx.marker}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        sandbox = make_sandbox(ctx.module_dirs)
    except BaseException:
        host_process.kill()
        host_process.wait()
        listener.close()
        shutil.rmtree(host_dir, ignore_errors=True)
        shutil.rmtree(modules_base, ignore_errors=True)
        raise
    try:
        variant = variant_of(sandbox)
        differences = known_differences(variant)
        for case in cases_for(variant):
            if names is None or case.name in names:
                ctx.memory_cap = memory_cap(sandbox, case.limits)
                outcome = run_case(sandbox, case, ctx)
                known = "; ".join(d.text for d in differences if case.name in d.cases)
                yield dataclasses.replace(outcome, known=known)
        start = time.monotonic()
        benign = sandbox.run(
            Program(_ECHO.encode()), [SAMPLE],
            SELFCHECK_LIMITS,
        )  # fmt: skip
        benign_ok = _last_grid(SAMPLE)([benign])
    finally:
        sandbox.close()
        host_process.kill()
        host_process.wait()
        listener.close()
        os.environ.pop(SECRET_VAR, None)
        shutil.rmtree(host_dir, ignore_errors=True)
        shutil.rmtree(modules_base, ignore_errors=True)
    time.sleep(0.1)
    strays = leftover_processes(baseline, ctx.started)
    new_tmp = sorted(
        n for n in set(os.listdir(tempfile.gettempdir())) - before_tmp if n.startswith("arcjudge-")
    )
    problems = []
    leftover_containers = getattr(sandbox, "leftover_containers", None)
    if leftover_containers is not None and leftover_containers():
        problems.append(f"containers left: {', '.join(leftover_containers())}")
    if not benign_ok:
        problems.append(f"benign program: {_describe([benign])}")
    if strays:
        problems.append(f"{len(strays)} processes left")
    if new_tmp:
        problems.append(f"temp dirs left: {', '.join(new_tmp)}")
    yield CaseOutcome(
        "after_suite",
        "benign ok, no processes, temp dirs or containers left",
        "; ".join(problems) or "benign ok, nothing left",
        not problems,
        time.monotonic() - start,
    )


def format_table(outcomes: list[CaseOutcome]) -> str:
    """Render outcomes as a plain-text table (case, expected, got, contained)."""
    rows = [("case", "expected", "got", "contained")]
    for o in outcomes:
        mark = ("yes" if o.contained else "NO") + ("*" if o.known else "")
        rows.append((o.name, o.expected, o.got[:60], mark))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(o.known for o in outcomes):
        lines.append("* a known difference of this backend applies (see below)")
    return "\n".join(lines)


def format_known(variant: str) -> str:
    """Render the known differences of a backend variant ('' when there are none)."""
    differences = known_differences(variant)
    if not differences:
        return ""
    lines = [f"known differences on {variant} (those cases still run and must be contained):"]
    for d in differences:
        lines.append(f"  {', '.join(d.cases) or 'every case'}: {d.text}")
    return "\n".join(lines)
