"""One call of a program's entry point and its ``out`` frame (standard library only).

Runs in the program process (``program.py``), beside the program's code: each input
frame's grid as a fresh copy, the call (a generator's seeded, a variant's from the base's
shared run where it can: ``splitstream.py``), the value checked and canonicalized, and
the frame that carries the answer (or the failure) back to the supervisor.
"""

from __future__ import annotations

import os
import struct
import sys
import traceback
from typing import TYPE_CHECKING, cast

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from collections.abc import Callable

    from . import canonical, framing, pinned, splitstream
    from .exception_text import ERROR_CHARS, describe
    from .framing import JsonObject

else:
    import canonical
    import framing
    import pinned
    import splitstream
    from exception_text import ERROR_CHARS, describe

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

_HEADER = struct.Struct(">I")
_type = type  # bound once: the program may replace ``builtins.type``
# Module functions called after the program's code ran, bound before it could replace them.
_os_write = os.write
_encode_frame = framing.encode
_canonical_wire = canonical.canonical_wire
_canonicalize = canonical.canonicalize
_to_wire = canonical.to_wire


def _out_of_memory(exc: MemoryError, index: int) -> dict[str, object]:
    """Free what the failed call held (its frames), then describe it."""
    traceback.clear_frames(exc.__traceback__)
    exc.__traceback__ = None
    return {"k": "out", "i": index, "s": "memory", "e": f"MemoryError: {exc}"[:ERROR_CHARS]}


def flush_output() -> None:
    """Flush the program's ``sys.stdout`` and ``sys.stderr`` (whatever they are now)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # a closed or replaced stream is the program's own loss
            pass


_FROM_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))


def fresh_input(item: JsonObject, fmt: str) -> object:
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


def answer(fn: Callable[..., object], item: JsonObject, fmt: str, generate: bool) -> JsonObject:
    """Call the entry point on one input frame; return the ``out`` frame."""
    index = item["i"]
    try:
        if generate:
            return _generate_one(fn, item["x"], index)
        value = fn(fresh_input(item, fmt))
        wire, reason = _canonical_wire(value)
        if wire is None:
            return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
        return {"k": "out", "i": index, "s": "ok", "g": wire}
    except MemoryError as exc:
        return _out_of_memory(exc, index)
    except BaseException as exc:  # SystemExit and friends are errors too
        return {"k": "out", "i": index, "s": "error", "e": describe(exc)}


_OK_FRAME = b'{"k":"out","i":%d,"s":"ok","g":[%d,"%s"]}'


def out_frame(msg: JsonObject) -> bytes:
    """The frame bytes of an ``out`` frame; an ``ok`` grid's without the JSON encoder.

    The same bytes as ``framing.encode(msg)`` (the wire form's digits are ASCII digits).
    """
    if msg["s"] == "ok" and _type(msg["i"]) is int and "o" not in msg:
        width, digits = msg["g"]
        payload = _OK_FRAME % (msg["i"], width, digits.encode("ascii"))
        return _HEADER.pack(len(payload)) + payload
    return _encode_frame(msg)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor, retrying short writes."""
    view = memoryview(data)
    while view:
        view = view[_os_write(fd, view) :]


def answer_variant(
    fn: Callable[..., object],
    split: tuple[splitstream.Splitter, splitstream.Plan] | None,
    item: JsonObject,
    fmt: str,
) -> JsonObject:
    """A variant's ``out`` frame for one input: from the base's shared run where it can.

    ``same`` (``splitstream.SAME``) only where the supervisor marked the input (``"m"``).
    """
    if split is None:
        return answer(fn, item, fmt, False)
    index = item["i"]
    try:
        splitter, plan = split
        equal, value = splitter.call(plan, index, fresh_input(item, fmt), bool(item.get("m")))
        if equal:
            return {"k": "out", "i": index, "s": splitstream.SAME}
        if value is splitstream.FULL:
            value = fn(fresh_input(item, fmt))
        grid, reason = _canonicalize(value)
        if grid is None:
            return {"k": "out", "i": index, "s": "invalid_output", "e": reason}
        return {"k": "out", "i": index, "s": "ok", "g": _to_wire(grid)}
    except MemoryError as exc:
        return _out_of_memory(exc, index)
    except BaseException as exc:  # SystemExit and friends are errors too
        return {"k": "out", "i": index, "s": "error", "e": describe(exc)}
