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
import os
import sys
import types
import warnings
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from collections.abc import Callable

    from . import framing, modcode, pinned, splitstream
    from .entry_calls import answer, answer_variant, flush_output, out_frame, write_all
    from .exception_text import describe
    from .framing import JsonObject
    from .program_setup import (
        JOB_FD,
        RESULT_FD,
        Settings,
        SetupFailed,
        first_for_the_oom_killer,
        setup,
        wire_descriptors,
    )
    from .shared_state import SharedState

else:
    import framing
    import modcode
    import pinned
    import splitstream
    from entry_calls import answer, answer_variant, flush_output, out_frame, write_all
    from exception_text import describe
    from program_setup import (
        JOB_FD,
        RESULT_FD,
        SetupFailed,
        first_for_the_oom_killer,
        setup,
        wire_descriptors,
    )
    from shared_state import SharedState

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

MAX_JOB_BYTES = 64 << 20
MAX_INPUT_BYTES = 16 << 20
# Module functions called after the program's code ran, bound before it could replace them.
_os_exit = os._exit
_os_set_blocking = os.set_blocking
_b64decode = binascii.a2b_base64
_sys_modules = sys.modules
_module_type = types.ModuleType
_write_frame = framing.write_frame
_read_frame = framing.read_frame
_frame_error = framing.FrameError
_frame_input = framing.BlockingFrameInput


def child_entry(job_r: int, res_w: int, out_w: int, settings: Settings) -> None:
    """Run in a process freshly forked by the zygote: set up, load, serve (never returns)."""
    try:
        os.setsid()
        wire_descriptors(job_r, res_w, out_w)
        try:
            first_for_the_oom_killer()
            job = framing.read_frame(JOB_FD, MAX_JOB_BYTES)
            if not isinstance(job, dict):
                raise SetupFailed("no job received")
            workdir = setup(job, settings)
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
        return None, {"k": "load", "ok": False, "error": describe(exc)}
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
    flush_output()
    _write_frame(RESULT_FD, frame)
    if fn is None:
        _os_exit(0)
    return fn


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
        msg = answer(fn, item, fmt, generate)
        del item
        flush_output()
        write_all(RESULT_FD, out_frame(msg))


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
    shared = SharedState(dirs)
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
            flush_output()
            send(RESULT_FD, frame)
        elif "end" in item:
            fn = split = None
            _sys_modules.pop("program", None)
            change = shared.change()
            flush_output()
            send(RESULT_FD, {"k": "end", "clean": change is None, "e": change})
            if change is not None:
                _os_exit(0)
        elif fn is not None:
            msg = answer_variant(fn, split, item, fmt)
            del item
            flush_output()
            send(RESULT_FD, msg)
        else:
            return
