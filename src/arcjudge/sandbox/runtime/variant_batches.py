"""A batch of variants of one base program, each over every input (standard library only).

The supervisor (``runner.py``) answers a ``variants`` request here: one program process
loads the base program once and runs the variants one after another, each call with its
own deadline; a process a variant spoiled (a timeout, a crash, too much output, a
corrupted channel, changed shared state) is replaced (see :func:`run_variants`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# sys.path[0] (runner.py inserts it) and they are imported by bare name, as nothing here
# may import arcjudge
if TYPE_CHECKING:
    from . import framing
    from .call_records import ERROR_CHARS, call_record, child_fate
    from .child import Child, Output, drain_output, drain_output_nowait, input_frame
    from .framing import JsonObject
    from .runner import Supervisor
else:
    import framing
    from call_records import ERROR_CHARS, call_record, child_fate
    from child import Child, drain_output, drain_output_nowait, input_frame

_now = time.monotonic


def _variant_child(
    supervisor: Supervisor, job: JsonObject, max_frame: int, output: Output
) -> tuple[Child | None, str | None]:
    """A fresh child with the batch's base program loaded (never called)."""
    child = Child(supervisor, job, max_frame)
    problem = supervisor.await_ready(child, output)
    if problem is None:
        wall = float(job["limits"]["wall_seconds"])
        ev = supervisor.pump(child, _now() + wall, output)
        load = ev.value if ev.kind == "msg" else None
        if ev.kind == "harness_gone":
            problem = "harness went away"
        elif not (isinstance(load, dict) and load.get("k") == "load" and load.get("ok")):
            problem = f"the base program did not load ({ev.kind})"
    if problem is not None:
        drain_output(child, output)
        if child.kill():
            supervisor.harness_gone = True
        return None, problem
    return child, None


def run_variants(supervisor: Supervisor, job: JsonObject) -> dict[str, object]:
    """Run a batch of variants of one base program, each over every input.

    A child loads the base program once (the imports every variant shares), then
    runs the variants one after another, each in a fresh module namespace, one call
    at a time with a deadline of ``call_seconds`` each. After a variant that timed out
    (its remaining inputs are not run), crashed, exited, printed too much or corrupted
    the channel, or that changed the modules the variants share, the child is
    replaced; a crash or exit mid-variant continues that variant in the fresh child,
    as ``run`` does. The reply holds one result frame per variant (``run``'s fields).

    Unlike ``run``'s, a variant's inputs go out together once it has loaded (the
    variants of a batch are trusted not to be adversarial: one could read ahead);
    each call's deadline runs from the answer before it. On the inputs in the job's
    ``same`` a variant may answer ``same`` (``splitstream``: what the base answered,
    which the harness fills in); anywhere else that is a corrupted channel.
    """
    limits = job["limits"]
    wall = float(limits["wall_seconds"])
    call = min(wall, float(job.get("call_seconds") or wall))
    total = float(limits["total_seconds"])
    inputs = job["inputs"]
    n = len(inputs)
    max_frame = int(limits["output_bytes"]) + 65536
    shareable = {i for i in job.get("same") or () if type(i) is int and 0 <= i < n}
    frames = []
    for i in range(n):
        frame = input_frame(i, inputs[i], "transform")
        if i in shareable:
            frame["m"] = 1  # the variant may answer "same as the base" (splitstream)
        frames.append(framing.encode(frame))
    start = _now()
    replies: list[dict[str, object]] = []
    child: Child | None = None
    born = 0.0

    def drop() -> None:
        nonlocal child
        if child is not None:
            if child.kill():
                supervisor.harness_gone = True  # processes we could not kill: be replaced
            child = None

    try:
        for number, source in enumerate(job["variants"]):
            v_start = _now()
            budget_end = v_start + total
            output: Output = {"total": 0, "kept": b"", "limit": int(limits["output_bytes"])}
            results: list[dict[str, object] | None] = [None] * n
            status, error, entry, shared = "loaded", None, None, None
            loaded = False
            next_i = 0
            while next_i < n or not loaded:
                if child is not None and _now() - born > total / 2:
                    drop()  # its CPU limit counts every variant it ran: recycle it
                if child is None:
                    child, problem = _variant_child(supervisor, job, max_frame, output)
                    born = _now()
                    if child is None:
                        if supervisor.harness_gone:
                            return {"op": "result", "status": "infra", "error": problem}
                        status, error = "infra", problem
                        break
                child.send({"v": number, "s": source})
                ev = supervisor.pump(child, min(_now() + wall, budget_end), output)
                load = ev.value if ev.kind == "msg" else None
                problem = None
                if ev.kind == "harness_gone":
                    return {"op": "result", "status": "infra", "error": "harness went away"}
                if not (isinstance(load, dict) and load.get("k") == "load"):
                    problem = {
                        "timeout": f"loading took longer than {wall:g} s",
                        "output_limit": "printed more than the output limit while loading",
                        "bad_frame": f"corrupted result channel while loading: {ev.value}",
                    }.get(ev.kind)
                    if problem is None:
                        problem = "the program ended while loading: " + child_fate(child)[1]
                    drop()
                elif load.get("v") != number or (
                    load.get("ok") and load.get("entry") not in job["entry_points"]
                ):
                    problem = "corrupted result channel: unknown entry point"
                    drop()
                elif not load.get("ok"):
                    problem = str(load.get("error", ""))[:ERROR_CHARS]
                if problem is not None:
                    if not loaded:
                        status, error = "load_error", problem
                    else:
                        for i in range(next_i, n):
                            results[i] = {"s": "crashed", "e": f"reload failed: {problem}",
                                          "t": 0.0}  # fmt: skip
                    next_i = n
                    break
                assert isinstance(load, dict)
                loaded = True
                entry = str(load.get("entry"))[:100]
                sent = _now()
                if next_i < n:  # all at once: each answer's wait is the next call's time
                    child.send_bytes(b"".join(frames[next_i:]))
                while next_i < n:
                    output["total"] = 0  # the output cap applies to each call
                    ev = supervisor.pump(child, min(sent + call, budget_end), output)
                    now = _now()
                    record = call_record(ev, next_i, call, now >= budget_end, child, None,
                                          same=next_i in shareable)  # fmt: skip
                    record["t"] = round(now - sent, 6)
                    results[next_i] = record
                    next_i += 1
                    sent = now
                    if ev.kind == "harness_gone":
                        return {"op": "result", "status": "infra",
                                "error": "harness went away"}  # fmt: skip
                    if ev.kind != "msg" or record.get("bad"):
                        record.pop("bad", None)
                        drop()
                        if ev.kind == "timeout":  # a variant stops at its first timeout
                            skipped = "not run: an earlier call timed out"
                            for i in range(next_i, n):
                                results[i] = {"s": "timeout", "e": skipped, "t": 0.0}
                            next_i = n
                        break
            if child is not None:
                child.send({"end": number})
                ev = supervisor.pump(child, _now() + wall, output)
                end = ev.value if ev.kind == "msg" else None
                if not (isinstance(end, dict) and end.get("k") == "end" and end.get("clean")):
                    shared = (
                        str(end.get("e"))[:ERROR_CHARS]
                        if isinstance(end, dict) and end.get("k") == "end"
                        else f"no state check after the variant ({ev.kind})"
                    )
                    drop()
                drain_output_nowait(child, output)
            kept = output["kept"].decode("utf-8", "replace")
            replies.append({
                "status": status, "error": error, "entry": entry,
                "results": results if status == "loaded" else [], "output": kept,
                "seconds": _now() - v_start, "shared_state": shared,
            })  # fmt: skip
    finally:
        drop()
    return {"op": "result", "status": "loaded", "variants": replies, "seconds": _now() - start}
