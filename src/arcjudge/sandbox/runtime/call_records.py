"""One call's record, from what the program sent or why it sent nothing (stdlib only).

The supervisor (``runner.py``) waits for each call's frame (``Supervisor.pump``); what
came, or what ended the wait, becomes the call's record here: a status and its error, an
``ok`` answer's grid checked in its wire form (never decoded), and, when the program's
process ended, how it ended (:func:`child_fate`).
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# sys.path[0] (runner.py inserts it) and they are imported by bare name, as nothing here
# may import arcjudge
if TYPE_CHECKING:
    from . import canonical
    from .child import Child, Event
else:
    import canonical

ERROR_CHARS = 2000
CHILD_STATUSES = ("ok", "invalid_output", "error", "memory")
SAME = "same"
"""A variant's answer "what the base answered" (``splitstream.SAME``), on marked inputs."""


def child_fate(child: Child) -> tuple[str, str]:
    """After EOF: how did the child end? Returns (status, error)."""
    status = child.wait_exit(1.0)
    if status is None:
        return "error", "the program closed its result channel"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGXCPU:
            return "timeout", "CPU time limit exceeded (SIGXCPU)"
        if sig == signal.SIGKILL:
            return "memory", "killed by SIGKILL (out of memory)"
        return "crashed", f"killed by signal {name}"
    code = os.waitstatus_to_exitcode(status)
    return "error", f"the program exited (code {code}) before returning"


def call_record(
    ev: Event,
    index: int,
    wall: float,
    over_budget: bool,
    child: Child,
    mode: str | None,
    *,
    same: bool = False,
) -> dict[str, object]:
    """The record of one call from what the program sent (or why it sent nothing).

    ``same``: the input is one where a variant may answer ``same`` (its base's
    answer, filled in by the harness); anywhere else that answer is a corrupted
    channel.
    """
    if ev.kind == "timeout":
        if over_budget:
            return {"s": "timeout", "e": "total budget exhausted"}
        return {"s": "timeout", "e": f"no result within {wall:g} s"}
    if ev.kind == "output_limit":
        return {"s": "output_limit", "e": "printed more than the output limit"}
    if ev.kind == "bad_frame":
        return {"s": "invalid_output", "e": f"corrupted result channel: {ev.value}"}
    if ev.kind == "harness_gone":
        return {"s": "infra", "e": "harness went away"}
    if ev.kind == "eof":
        fate, why = child_fate(child)
        return {"s": fate, "e": why}
    msg = ev.value
    if not (isinstance(msg, dict) and msg.get("k") == "out" and msg.get("i") == index):
        return {
            "s": "invalid_output",
            "e": "corrupted result channel: unexpected frame",
            "bad": 1,
        }
    status = msg.get("s")
    if status == SAME and same:
        return {"s": SAME}
    if status not in CHILD_STATUSES:
        return {"s": "invalid_output", "e": "corrupted result channel: bad status", "bad": 1}
    if status == "ok":
        grid, reason = canonical.check_wire(msg.get("g"))  # checked, never decoded here
        if grid is None:
            return {"s": "invalid_output", "e": f"corrupted result channel: {reason}", "bad": 1}
        record: dict[str, object] = {
            "s": "ok",
            "g": msg["g"],
        }  # checked: passed on in its wire form
        if ("o" in msg) != (mode == "generate"):  # a pair only, and always, from generators
            return {
                "s": "invalid_output",
                "e": "corrupted result channel: bad fields",
                "bad": 1,
            }
        if "o" in msg:
            other, reason = canonical.check_wire(msg.get("o"))
            if other is None:
                return {"s": "invalid_output", "e": f"corrupted channel: {reason}", "bad": 1}
            record["o"] = msg["o"]
        return record
    error = msg.get("e")
    return {"s": status, "e": error[:ERROR_CHARS] if isinstance(error, str) else None}
