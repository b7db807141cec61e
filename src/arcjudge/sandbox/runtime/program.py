"""The program's side of the sandbox (standard library only).

A program process is forked by the zygote (``zygote.py``), a process that has never held
any job's data. It first reads its job from its own pipe, sets up its sandbox (namespaces,
minimal root, fresh ``/proc``, limits, a uid of its own, not dumpable, syscall filter),
then sends ``ready``: that frame is the supervisor's evidence that every failure after it
is the program's and every failure before it is the sandbox's. Only then does the
program's code load. Inputs arrive one frame at a time, each after the previous answer,
so nothing a program computes at load time can know a later input.

Frames to the supervisor (result pipe, fd 3): ``{"k": "ready"}``, ``{"k": "setup_failed",
"e"}``, ``{"k": "load", "ok", "entry"|"error", "v"?}``, ``{"k": "out", "i", "s", "g"|"e",
"o"?}``, ``{"k": "end", "clean", "e"}`` (variants only).
Frames from the supervisor (job pipe, fd 4): the job, then ``{"i", "x"}`` per input; for a
batch of variants (``"variants"`` in the job: the job's own source is the base program,
loaded but never called as a whole) per variant ``{"v", "s"}``, its inputs, then
``{"end"}``. A variant's input marked ``"m"`` may be answered ``{"k": "out", "i", "s":
"same"}``: the variant computes there what the base computes (``splitstream.py``).
"""

from __future__ import annotations

import binascii
import builtins
import fcntl
import itertools
import os
import resource
import signal
import struct
import sys
import traceback
import types
import warnings
from typing import TYPE_CHECKING, cast

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypedDict

    from . import canonical, framing, modcode, pinned, rootfs, seccomp, splitstream
    from . import isolation as iso
    from .framing import JsonObject

    class Settings(TypedDict):
        """What every program's set-up needs and no job changes (see :func:`_setup`)."""

        namespaced: bool
        userns: bool
        root_plan: rootfs.RootPlan | None
        seccomp: bool

else:
    import canonical
    import framing
    import isolation as iso
    import modcode
    import pinned
    import rootfs
    import seccomp
    import splitstream

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

RESULT_FD = 3
JOB_FD = 4
ERROR_CHARS = 2000
MAX_JOB_BYTES = 64 << 20
MAX_INPUT_BYTES = 16 << 20
MAX_OPEN_FILES = 64
"""Descriptors per process: also what bounds the socket buffers a process can fill."""
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_HEADER = struct.Struct(">I")
_type = type  # bound once: the program may replace ``builtins.type``
# Module functions called after the program's code ran, bound before it could replace them.
_os_write = os.write
_os_exit = os._exit
_os_set_blocking = os.set_blocking
_b64decode = binascii.a2b_base64
_sys_modules = sys.modules
_module_type = types.ModuleType
_write_frame = framing.write_frame
_read_frame = framing.read_frame
_encode_frame = framing.encode
_frame_error = framing.FrameError
_frame_input = framing.BlockingFrameInput
_canonical_wire = canonical.canonical_wire
_canonicalize = canonical.canonicalize
_to_wire = canonical.to_wire


_DESCRIBED: dict[tuple[object, ...], str] = {}
_SCALARS = (int, str, float, bool, type(None))


def _description_key(exc: BaseException) -> tuple[object, ...] | None:
    """All that decides a plain exception's description (``None``: not a plain one).

    Plain: a builtin exception type other than the ones whose text may name things from
    the frames (``NameError``, ``AttributeError``, ``ImportError``), scalar arguments,
    nothing chained, no notes. Its text is then decided by its type, arguments and each
    frame's file, function, line and position (the source lines are the files').
    """
    kind = type(exc)
    if (
        kind.__module__ != "builtins"
        or issubclass(kind, NameError | AttributeError | ImportError | SyntaxError)
        or exc.__cause__ is not None
        or exc.__context__ is not None
        or "__notes__" in vars(exc)
        or not all(type(a) in _SCALARS for a in exc.args)
    ):
        return None
    frames: list[object] = [kind, exc.args]
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, code.co_name, tb.tb_lineno, _position(code, tb.tb_lasti)))
        tb = tb.tb_next
    return tuple(frames)


_POSITIONS: dict[tuple[int, int], tuple[object, object]] = {}


def _position(code: types.CodeType, lasti: int) -> object:
    """Where in its line an instruction is (kept with its code: the id stays its own)."""
    key = (id(code), lasti)
    kept = _POSITIONS.get(key)
    if kept is None or kept[0] is not code:
        if len(_POSITIONS) >= 65536:
            _POSITIONS.clear()
        position = next(itertools.islice(code.co_positions(), lasti // 2, None), None)
        kept = _POSITIONS[key] = (code, position)
    return kept[1]


def _describe(exc: BaseException) -> str:
    """The exception as text, without the runtime's own frames (they differ per backend).

    A plain exception's text is kept by what decides it (:func:`_description_key`):
    variants of one program raise the same exceptions at the same places, and the
    formatting (source lines, position carets) costs more than most calls.
    """
    try:
        key = _description_key(exc)
    except BaseException:
        key = None
    if key is not None and key in _DESCRIBED:
        return _DESCRIBED[key]
    text = _format(exc)
    if key is not None:
        if len(_DESCRIBED) >= 4096:
            _DESCRIBED.clear()
        _DESCRIBED[key] = text
    return text


def _format(exc: BaseException) -> str:
    try:
        report = traceback.TracebackException.from_exception(exc, limit=-8)
        report.stack = traceback.StackSummary.from_list(
            [
                f
                for f in report.stack
                if os.path.dirname(os.path.abspath(f.filename)) != _RUNTIME_DIR
            ]
        )
        text = "".join(report.format())
    except BaseException:
        text = f"{type(exc).__name__} (could not format the exception)"
    return text[-ERROR_CHARS:]


def _out_of_memory(exc: MemoryError, index: int) -> dict[str, object]:
    """Free what the failed call held (its frames), then describe it."""
    traceback.clear_frames(exc.__traceback__)
    exc.__traceback__ = None
    return {"k": "out", "i": index, "s": "memory", "e": f"MemoryError: {exc}"[:ERROR_CHARS]}


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # a closed or replaced stream is the program's own loss
            pass


_FROM_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))


def _fresh_input(item: JsonObject, fmt: str) -> object:
    """The input grid of an input frame, as a fresh list of lists or tuple of tuples."""
    if "c" in item:
        cells = str(item["c"]).encode("ascii").translate(_FROM_DIGITS)
        width = int(item["w"])
        shaped = memoryview(cells).cast("B", (len(cells) // width, width))
        rows = cast("list[list[int]]", shaped.tolist())  # nested lists at C speed
        if fmt == "tuple":
            return tuple(map(tuple, rows))
        return rows
    grid = item["x"]
    if fmt == "tuple":
        return tuple(tuple(row) for row in grid)
    return [list(row) for row in grid]


def _generate_one(fn: Callable[..., object], call: JsonObject, index: int) -> dict[str, object]:
    """Seed ``random`` and call a generator; its pair must be two grids."""
    import random

    random.seed(call["seed"])
    value = fn(**call.get("kwargs", {}))
    if type(value) is not dict or "input" not in value or "output" not in value:
        return {"k": "out", "i": index, "s": "invalid_output", "e": "not an {input, output} dict"}
    grid_in, reason_in = _canonicalize(value["input"])
    grid_out, reason_out = _canonicalize(value["output"])
    if grid_in is None or grid_out is None:
        reason = f"input: {reason_in}" if grid_in is None else f"output: {reason_out}"
        return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
    return {
        "k": "out",
        "i": index,
        "s": "ok",
        "g": _to_wire(grid_in),
        "o": _to_wire(grid_out),
    }


def _set_limits(limits: JsonObject, memory_baseline: int) -> None:
    def cap(which: int, value: int) -> None:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            pass

    cap(resource.RLIMIT_AS, memory_baseline + int(limits["memory_bytes"]))
    cap(resource.RLIMIT_NPROC, int(limits["processes"]))
    cap(resource.RLIMIT_FSIZE, int(limits["disk_bytes"]))
    cap(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_CPU, int(limits["total_seconds"]) + 2)
    cap(resource.RLIMIT_MSGQUEUE, 0)
    cap(resource.RLIMIT_MEMLOCK, 0)


def _virtual_size() -> int:
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class SetupFailed(Exception):
    """The sandbox could not be set up for this program (the sandbox's fault, not its)."""


def _wire_descriptors(job_r: int, res_w: int, out_w: int) -> None:
    """Put the three pipes at fds 4, 3, 1/2, /dev/null at 0, and close everything else."""
    hi = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in (job_r, res_w, out_w)]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(hi[2], 1)
    os.dup2(hi[2], 2)
    os.dup2(hi[1], RESULT_FD)
    os.dup2(hi[0], JOB_FD)
    os.closerange(JOB_FD + 1, 1 << 16)


def _enter_own_user_namespace(job: JsonObject, namespaced: bool) -> None:
    """Without root: become the job's uid in a user namespace of the program's own.

    Without a minimal root of its own (the host's ``/proc`` is read-only here) the
    program stays root of the supervisor's user namespace, with no capabilities.
    """
    problem = None
    if namespaced:
        iso.prctl(iso.PR_SET_DUMPABLE, 1)  # else /proc/self/uid_map is not ours to write
        problem = iso.enter_nested_user_namespace(int(job["uid"]))
        iso.prctl(iso.PR_SET_DUMPABLE, 0)
    if problem is not None:
        raise SetupFailed(f"could not create the program's user namespace ({problem})")
    if not iso.drop_capabilities():
        raise SetupFailed("could not drop the program's capabilities")


def _drop_privileges(job: JsonObject, userns: bool) -> None:
    uid = job.get("uid")
    if uid is not None and not userns:
        gids = [int(g) for g in job.get("gids", [])]
        os.setgroups(gids)
        os.setresgid(int(uid), int(uid), int(uid))
        os.setresuid(int(uid), int(uid), int(uid))
        if os.getuid() != int(uid) or os.geteuid() != int(uid):
            raise SetupFailed("could not drop privileges")
    iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)  # cleared by the uid change: set again
    if not iso.prctl(iso.PR_SET_DUMPABLE, 0):
        raise SetupFailed("could not make the program non-dumpable")
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)


def _setup(job: JsonObject, settings: Settings) -> str:
    """Set up the sandbox in this process; return the program's working directory.

    ``settings`` is what every program shares (``namespaced``, ``userns``, ``root_plan``,
    ``seccomp``), inherited from the zygote; ``job`` is this program's own.

    In namespaced mode this process is PID 1 of a PID namespace of its own (the zygote
    forked it there); it makes its mount and IPC namespaces and builds its minimal root.
    Without root (``userns``: the supervisor is root of a user namespace that
    maps only its caller) the program then moves into a user namespace of its own, as the
    job's uid, and drops every capability.
    """
    limits = job["limits"]
    workdir = str(job["workdir"])
    userns = bool(settings.get("userns"))
    if settings["namespaced"]:  # the zygote forked us as PID 1 of a PID namespace of ours
        root_plan = settings["root_plan"]
        assert root_plan is not None  # namespaced means the supervisor made a plan
        iso.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getpid() != 1 or not iso.unshare(iso.CLONE_NEWNS | iso.CLONE_NEWIPC):
            raise SetupFailed("could not create the program's namespaces")
        try:
            job["module_dirs"] = rootfs.enter_minimal_root(
                root_plan,
                job["module_dirs"],
                int(limits["disk_bytes"]),
                0 if userns else int(job["uid"]),  # userns: the program's id maps to our 0
            )
        except OSError as exc:
            raise SetupFailed(f"could not build the program's root: {exc}") from None
    for sig in (signal.SIGPIPE, signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversize writes raise OSError instead
    if userns:  # first: the process limit then counts this namespace's processes only
        _enter_own_user_namespace(job, settings["namespaced"])
    _set_limits(limits, _virtual_size())
    _drop_privileges(job, userns)
    os.chdir(workdir)
    if settings["seccomp"] and not seccomp.install():
        raise SetupFailed("could not install the syscall filter")
    os.environ.clear()
    os.environ.update({"TMPDIR": workdir, "HOME": workdir})
    return workdir


OOM_SCORE_ADJ = 1000
"""The OOM killer's first choice: a program's processes, never the supervisor or zygote
that share its memory cgroup or container (raising it needs no privilege; lowering does)."""


def _first_for_the_oom_killer() -> None:
    """Raise this process's ``oom_score_adj`` (its children inherit it).

    A non-dumpable process's ``/proc/self`` files belong to the host's root: in a user
    namespace the process is made dumpable for the write (no program code has run yet,
    and no other program can see this process).
    """
    iso.prctl(iso.PR_SET_DUMPABLE, 1)
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(OOM_SCORE_ADJ))
    except OSError as exc:
        raise SetupFailed(f"could not raise the program's oom_score_adj ({exc})") from None
    finally:
        iso.prctl(iso.PR_SET_DUMPABLE, 0)


def child_entry(job_r: int, res_w: int, out_w: int, settings: Settings) -> None:
    """Run in a process freshly forked by the zygote: set up, load, serve (never returns)."""
    try:
        os.setsid()
        _wire_descriptors(job_r, res_w, out_w)
        try:
            _first_for_the_oom_killer()
            job = framing.read_frame(JOB_FD, MAX_JOB_BYTES)
            if not isinstance(job, dict):
                raise SetupFailed("no job received")
            workdir = _setup(job, settings)
        except SetupFailed as exc:
            framing.write_frame(RESULT_FD, {"k": "setup_failed", "e": str(exc)})
            os._exit(0)
        framing.write_frame(RESULT_FD, {"k": "ready"})
        _serve(job, workdir)
    except BaseException:
        pass
    os._exit(0)


def _exec_program(
    source: bytes, job: JsonObject, workdir: str
) -> tuple[Callable[..., object] | None, dict[str, object]]:
    """Compile and run a program's module in a fresh namespace; return its entry point.

    Returns:
        The entry point (``None`` when the program did not load) and the ``load`` frame
        to send.
    """
    module = _module_type("program")
    module.__dict__["__builtins__"] = builtins
    module.__dict__["__file__"] = os.path.join(workdir, "program.py")
    _sys_modules["program"] = module
    try:
        code = compile(source, "program.py", "exec", dont_inherit=True)
        del source
        exec(code, module.__dict__)
    except BaseException as exc:
        return None, {"k": "load", "ok": False, "error": _describe(exc)}
    for name in job["entry_points"]:
        if callable(module.__dict__.get(name)):
            entry: Callable[..., object] = module.__dict__[name]
            return entry, {"k": "load", "ok": True, "entry": name}
    tried = ", ".join(job["entry_points"])
    return None, {"k": "load", "ok": False, "error": f"no entry point defined (tried: {tried})"}


def _load(job: JsonObject, workdir: str) -> Callable[..., object]:
    """Compile and run the program's module; return its entry point (or exit)."""
    warnings.simplefilter("ignore")
    sys.path[:0] = list(job["module_dirs"])
    modcode.install(job.pop("module_code", None) or {}, list(job["module_dirs"]))
    sys.argv = ["program.py"]
    source = _b64decode(job["source"])
    del job["source"]
    fn, frame = _exec_program(source, job, workdir)
    if job.get("variants") and fn is not None:  # the variants share its runs (splitstream)
        job["base"] = (source, frame["entry"])
    del source
    _flush_output()
    _write_frame(RESULT_FD, frame)
    if fn is None:
        _os_exit(0)
    return fn


def _answer(fn: Callable[..., object], item: JsonObject, fmt: str, generate: bool) -> JsonObject:
    """Call the entry point on one input frame; return the ``out`` frame."""
    index = item["i"]
    try:
        if generate:
            return _generate_one(fn, item["x"], index)
        value = fn(_fresh_input(item, fmt))
        wire, reason = _canonical_wire(value)
        if wire is None:
            return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
        return {"k": "out", "i": index, "s": "ok", "g": wire}
    except MemoryError as exc:
        return _out_of_memory(exc, index)
    except BaseException as exc:  # SystemExit and friends are errors too
        return {"k": "out", "i": index, "s": "error", "e": _describe(exc)}


def _serve(job: JsonObject, workdir: str) -> None:
    """Load the program, then answer one input frame at a time until the pipe closes."""
    fn = _load(job, workdir)
    if job.get("variants"):
        _serve_variants(job, workdir, fn)
        return
    read = _frame_input(JOB_FD, MAX_INPUT_BYTES).read
    fmt = job["input_format"]
    generate = job.get("mode") == "generate"
    while True:
        try:
            item = read()
        except (_frame_error, OSError):
            return
        if not isinstance(item, dict):
            return
        msg = _answer(fn, item, fmt, generate)
        del item
        _flush_output()
        _write_all(RESULT_FD, _out_frame(msg))


_OK_FRAME = b'{"k":"out","i":%d,"s":"ok","g":[%d,"%s"]}'


def _out_frame(msg: JsonObject) -> bytes:
    """The frame bytes of an ``out`` frame; an ``ok`` grid's without the JSON encoder.

    The same bytes as ``framing.encode(msg)`` (the wire form's digits are ASCII digits).
    """
    if msg["s"] == "ok" and _type(msg["i"]) is int and "o" not in msg:
        width, digits = msg["g"]
        payload = _OK_FRAME % (msg["i"], width, digits.encode("ascii"))
        return _HEADER.pack(len(payload)) + payload
    return _encode_frame(msg)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor, retrying short writes."""
    view = memoryview(data)
    while view:
        view = view[_os_write(fd, view) :]


_CONTAINERS = frozenset((list, dict, set, bytearray))


def _container_state(value: object) -> object:
    """A mutable container's shallow contents as ids (what a variant could have changed)."""
    kind = type(value)
    if kind is list:
        return tuple(map(id, value))  # type: ignore[call-overload]
    if kind is dict:
        return tuple((id(k), id(v)) for k, v in value.items())  # type: ignore[attr-defined]
    if kind is set:
        return frozenset(map(id, value))  # type: ignore[call-overload]
    if kind is bytearray:
        return bytes(value)  # type: ignore[call-overload]
    return None


class _SharedState:
    """What variants of one batch share: modules from the module directories, builtins.

    Per module: its identity, the identity of each global and the shallow contents of
    each global list, dict, set or bytearray. Cheap (ids only): read once after the base
    loaded, then after each variant (:meth:`change`). Which modules are tracked is read
    from ``sys.modules`` again only when its names or module objects changed.
    """

    def __init__(self, module_dirs: list[str]) -> None:
        self._roots = tuple(os.path.join(os.path.abspath(d), "") for d in module_dirs)
        self._index = self._modules_index()
        self._tracked = self._scan()
        self._before = self._read(self._tracked, None)

    @staticmethod
    def _modules_index() -> tuple[tuple[str, ...], tuple[int, ...]]:
        """``sys.modules``'s names and module identities, in order."""
        return tuple(_sys_modules), tuple(map(id, _sys_modules.values()))

    def _scan(self) -> tuple[str, ...]:
        """The names of the modules to track: ``builtins`` and any from the directories."""
        return tuple(
            name
            for name, module in list(_sys_modules.items())
            if self._namespace(name, module) is not None
        )

    def _namespace(self, name: str, module: object) -> dict[str, object] | None:
        """A module's globals when it is one to track (``None``: it is not)."""
        try:
            namespace = object.__getattribute__(module, "__dict__")
        except BaseException:
            return None
        if not isinstance(namespace, dict):
            return None
        path = namespace.get("__file__")
        if name == "builtins" or (isinstance(path, str) and path.startswith(self._roots)):
            return namespace
        return None

    def _read(
        self, names: tuple[str, ...], reference: dict[str, object] | None
    ) -> dict[str, object]:
        """The tracked modules' state.

        With the state before (``reference``), a module whose globals are the same objects
        has its containers where they were: only those are looked into.
        """
        state: dict[str, object] = {}
        for name in names:
            module = _sys_modules.get(name)
            namespace = self._namespace(name, module)
            if namespace is None:
                continue
            copy = dict(namespace)
            copy.pop("__builtins__", None)
            head = (id(module), id(namespace), tuple(copy), tuple(map(id, copy.values())))
            before = reference.get(name) if reference is not None else None
            if isinstance(before, tuple) and before[:4] == head:
                where = before[5]
            else:
                where = tuple(k for k, v in copy.items() if type(v) in _CONTAINERS)
            state[name] = (*head, tuple(_container_state(copy[k]) for k in where), where)
        return state

    def change(self) -> str | None:
        """Which shared module a variant changed since the base loaded (``None``: none)."""
        index = self._modules_index()
        names = self._tracked if index == self._index else self._scan()
        after = self._read(names, self._before)
        for name in sorted(set(self._before) | set(after)):
            if self._before.get(name) != after.get(name):
                return (
                    f"module {name!r} changed" if name in self._before else f"module {name!r} added"
                )
        # unchanged: ``sys.modules`` as it is now (a module outside the directories that a
        # variant imported stays) tracks the same modules, and is what the next compares to
        self._index, self._tracked = index, names
        return None


def _answer_variant(
    fn: Callable[..., object],
    split: tuple[splitstream.Splitter, splitstream.Plan] | None,
    item: JsonObject,
    fmt: str,
) -> JsonObject:
    """A variant's ``out`` frame for one input: from the base's shared run where it can.

    ``same`` (``splitstream.SAME``) only where the supervisor marked the input (``"m"``).
    """
    if split is None:
        return _answer(fn, item, fmt, False)
    index = item["i"]
    try:
        splitter, plan = split
        equal, value = splitter.call(plan, index, _fresh_input(item, fmt), bool(item.get("m")))
        if equal:
            return {"k": "out", "i": index, "s": splitstream.SAME}
        if value is splitstream.FULL:
            value = fn(_fresh_input(item, fmt))
        grid, reason = _canonicalize(value)
        if grid is None:
            return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
        return {"k": "out", "i": index, "s": "ok", "g": _to_wire(grid)}
    except MemoryError as exc:
        return _out_of_memory(exc, index)
    except BaseException as exc:  # SystemExit and friends are errors too
        return {"k": "out", "i": index, "s": "error", "e": _describe(exc)}


def _serve_variants(job: JsonObject, workdir: str, base: Callable[..., object]) -> None:
    """Serve a batch of variants of the loaded base program, one after another.

    The base program was loaded (its top level ran: the imports every variant shares are
    now cached) but is never called. Per variant the supervisor sends ``{"v", "s"}`` (its
    source), then its inputs one at a time, then ``{"end"}``; the variant is compiled
    and run in a fresh module namespace, and at its end the shared state is compared
    with what it was after the base loaded: ``{"k": "end", "v", "clean"}`` (a child
    whose shared state changed exits: the supervisor replaces it).

    A variant of the base's entry point that differs from it after its first statements
    starts, per input, from the base's run of those (``splitstream``).
    """
    send = _write_frame
    read = _read_frame
    fmt = job["input_format"]
    dirs = list(job["module_dirs"])
    base_source, entry = job.pop("base")
    splitter: splitstream.Splitter | None = None
    try:
        splitter = splitstream.Splitter(base_source, entry, getattr(base, "__globals__", {}))
    except Exception:  # not split: every variant runs whole
        splitter = None
    del base_source
    shared = _SharedState(dirs)
    fn: Callable[..., object] | None = None
    split: tuple[splitstream.Splitter, splitstream.Plan] | None = None
    while True:
        try:
            _os_set_blocking(JOB_FD, True)
            item = read(JOB_FD, MAX_INPUT_BYTES)
        except (_frame_error, OSError):
            return
        if not isinstance(item, dict):
            return
        if "v" in item:
            variant = item["v"]
            source = _b64decode(str(item["s"]))
            del item
            fn, frame = _exec_program(source, job, workdir)
            split = None
            if splitter is not None and fn is not None and frame.get("entry") == entry:
                plan = splitter.plan(source, getattr(fn, "__globals__", {}))
                split = (splitter, plan) if plan is not None else None
            del source
            frame["v"] = variant
            _flush_output()
            send(RESULT_FD, frame)
        elif "end" in item:
            fn = split = None
            _sys_modules.pop("program", None)
            change = shared.change()
            _flush_output()
            send(RESULT_FD, {"k": "end", "clean": change is None, "e": change})
            if change is not None:
                _os_exit(0)
        elif fn is not None:
            msg = _answer_variant(fn, split, item, fmt)
            del item
            _flush_output()
            send(RESULT_FD, msg)
        else:
            return
