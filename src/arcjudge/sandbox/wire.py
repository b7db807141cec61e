"""The wire form of a job and of its reply: what crosses to and from a supervisor.

A request frame carries the program's source, its entry points and input grids (never
expected outputs); a reply frame carries statuses and output grids, all program-controlled
and so validated here before anything else reads them.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Any

from arcjudge.safetext import clean_text
from arcjudge.sandbox.runtime import canonical
from arcjudge.sandbox.types import (
    SHARED_STATE_ERROR,
    GeneratorCall,
    Grid,
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
    WiredGrids,
    input_wire,
)

Frame = dict[str, Any]
"""A parsed JSON frame (request or reply)."""

SAME = "same"
"""A variant's answer on a ``shareable`` input: what the base answered (``splitstream``)."""
_STATUSES = {s.value: s for s in Status}  # a dict lookup: several times faster than Status()


def encode_job(
    program: Program,
    inputs: Sequence[Grid] | Sequence[GeneratorCall],
    limits: Limits,
    mode: str = "transform",
) -> Frame:
    """Build the request frame for a supervisor (no expected outputs in it, ever).

    Args:
        program: The program to run.
        inputs: Input grids only (``WiredGrids``: sent as their wire forms).
        limits: Limits to enforce.
        mode: ``transform`` (call the entry point on each grid) or ``generate`` (inputs are
            ``GeneratorCall`` seeds and keyword arguments).

    Returns:
        A JSON-ready request.
    """
    return {
        "op": "run",
        "source": base64.b64encode(program.source).decode("ascii"),
        "entry_points": list(program.entry_points),
        "module_dirs": [os.path.abspath(d) for d in program.module_dirs],
        "input_format": program.input_format,
        "mode": mode,
        "inputs": inputs.wires
        if isinstance(inputs, WiredGrids)
        else [
            {"seed": c.seed, "kwargs": dict(c.kwargs)}
            if isinstance(c, GeneratorCall)
            else input_wire(c)
            for c in inputs
        ],
        "limits": {
            "wall_seconds": limits.wall_seconds,
            "memory_bytes": limits.memory_bytes,
            "processes": limits.processes,
            "output_bytes": limits.output_bytes,
            "total_seconds": limits.total_seconds,
            "disk_bytes": limits.disk_bytes,
        },
    }


def encode_variants(
    program: Program,
    variants: Sequence[bytes],
    inputs: Sequence[Grid],
    limits: Limits,
    call_seconds: float,
    shareable: Sequence[int] = (),
) -> Frame:
    """Build the request frame for a batch of variants of one program.

    Args:
        program: The base program: its top level is loaded once per child (the imports
            every variant shares) and never called; its entry points, module directories
            and input format are every variant's.
        variants: The variants' sources, run one after another over every input.
        inputs: Input grids only.
        limits: Limits to enforce (``total_seconds`` per variant).
        call_seconds: Deadline of each call of a variant (at most ``wall_seconds``).
        shareable: Indexes of the inputs where a variant may answer ``same`` (what the
            base answered there, a grid: the caller fills it in, see
            :func:`decode_variants`); only indexes, never the base's answers.

    Returns:
        A JSON-ready request.
    """
    frame = encode_job(program, inputs, limits)
    frame["op"] = "variants"
    frame["variants"] = [base64.b64encode(v).decode("ascii") for v in variants]
    frame["call_seconds"] = min(float(call_seconds), limits.wall_seconds)
    if shareable:
        frame["same"] = sorted({int(i) for i in shareable})
    return frame


def _text(value: object, limit: int = 4000) -> str | None:
    """A program-controlled text, cut and made valid UTF-8 (lone surrogates escaped)."""
    return clean_text(value[:limit]) if isinstance(value, str) else None


def decode_result(
    reply: Frame,
    n_inputs: int,
    findings: tuple[str, ...],
    mode: str = "transform",
    same_as: Sequence[RunResult | None] | None = None,
) -> ProgramResult:
    """Turn a supervisor's reply into a ``ProgramResult``, validating everything.

    Args:
        reply: The parsed reply frame.
        n_inputs: How many inputs were sent.
        findings: Policy findings to attach.
        mode: The job's mode: only ``generate`` results carry a generator's output grid.
        same_as: Per input, the base's result where a variant may answer ``same`` (an
            ``ok`` one: the variant's result is it, with the variant's time); a ``same``
            anywhere else makes the reply malformed.

    Returns:
        The result; an ``infra`` result when the reply is malformed.
    """
    try:
        status = ProgramStatus(reply.get("status", ""))
        seconds = float(reply.get("seconds") or 0.0)
        output = _text(reply.get("output")) or ""
        if status is not ProgramStatus.LOADED:
            return ProgramResult(
                status, error=_text(reply.get("error")), output=output, seconds=seconds,
                findings=findings,
            )  # fmt: skip
        raw = reply.get("results")
        if not isinstance(raw, list) or len(raw) != n_inputs:
            raise ValueError("wrong number of results")
        results = []
        generate = mode == "generate"
        for index, item in enumerate(raw):
            if item["s"] == SAME:
                base = same_as[index] if same_as is not None else None
                if base is None or base.status is not Status.OK:
                    raise ValueError("'same' where the base has no grid")
                grid = None if base.wire is not None else base.grid
                results.append(RunResult(index, Status.OK, grid, None, float(item.get("t", 0.0)),
                                         wire=base.wire))  # fmt: skip
                continue
            item_status = _STATUSES.get(item["s"])
            if item_status is None:
                raise ValueError(f"unknown status {item['s']!r}"[:200])
            wire = gen_output = None
            if item_status is Status.OK:
                # checked, not decoded: ``RunResult.grid`` builds the grid when it is read
                wire, reason = canonical.check_wire(item.get("g"))
                if wire is None:
                    raise ValueError(f"malformed grid: {reason}")
                if ("o" in item) != generate:
                    raise ValueError("generator output where none belongs, or missing")
                if generate:
                    gen_output, reason = canonical.check_wire(item.get("o"))
                    if gen_output is None:
                        raise ValueError(f"malformed grid: {reason}")
            results.append(
                RunResult(
                    index, item_status, None, _text(item.get("e")), float(item.get("t", 0.0)),
                    wire=wire, output_wire=gen_output,
                )
            )  # fmt: skip
        return ProgramResult(
            status, tuple(results), entry_point=_text(reply.get("entry"), 100), output=output,
            seconds=seconds, findings=findings,
        )  # fmt: skip
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return ProgramResult(
            ProgramStatus.INFRA, error=f"malformed reply: {exc}", findings=findings
        )


def decode_variants(
    reply: Frame,
    n_inputs: int,
    findings: Sequence[tuple[str, ...]],
    same_as: Sequence[RunResult | None] | None = None,
) -> tuple[ProgramResult, ...]:
    """Turn a supervisor's reply to a batch of variants into one result per variant.

    Every field is program-controlled and validated as :func:`decode_result` does. A
    variant that changed the state variants share gets an ``infra`` result whose error
    starts with ``SHARED_STATE_ERROR`` (its results are discarded: run it alone).

    Args:
        reply: The parsed reply frame.
        n_inputs: How many inputs were sent.
        findings: Policy findings to attach, one entry per variant sent.
        same_as: As for :func:`decode_result` (the inputs sent as ``shareable``).

    Returns:
        One result per variant, in order; all ``infra`` when the reply is malformed or
        the batch failed as a whole.
    """
    n = len(findings)
    status = reply.get("status") if isinstance(reply, dict) else None
    raw = reply.get("variants") if isinstance(reply, dict) else None
    if status != ProgramStatus.LOADED.value:
        error = _text(reply.get("error")) if isinstance(reply, dict) else None
        return tuple(ProgramResult(ProgramStatus.INFRA, error=error, findings=f) for f in findings)
    if not isinstance(raw, list) or len(raw) != n or not all(isinstance(r, dict) for r in raw):
        return tuple(
            ProgramResult(ProgramStatus.INFRA, error="malformed reply: wrong number of variants",
                          findings=f)
            for f in findings
        )  # fmt: skip
    decoded = []
    for item, found in zip(raw, findings, strict=True):
        shared = item.get("shared_state")
        if shared is not None:
            why = _text(shared) or "?"
            decoded.append(
                ProgramResult(ProgramStatus.INFRA, error=f"{SHARED_STATE_ERROR}: {why}",
                              findings=found)
            )  # fmt: skip
            continue
        decoded.append(decode_result(item, n_inputs, found, same_as=same_as))
    return tuple(decoded)
