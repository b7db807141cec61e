"""Candidate invalid pairs for the Classification and Editing dimensions.

Each generator here proposes input-output pairs that are *close* to a task's rule but
meant to be wrong. They are only candidates: the caller runs the task's verifier on
``CandidatePair.input`` in the sandbox and keeps a candidate only when the verifier's
output differs from ``CandidatePair.output``. Every candidate therefore carries its input,
its (presumably wrong) output, the true output when it is already known
(``correct_output``) and a JSON-friendly ``detail`` dict saying where it came from.

Kinds:

* ``color_flip``: a valid pair with one 4-connected same-colored region of its input *or*
  its output recolored (see :func:`color_flip`).
* ``instance_mismatch``: an input paired with the output of another valid instance of
  the same task, among the outputs nearest to its own (see :func:`instance_mismatch`).
* ``human_error``: a test input with a wrong answer that people submitted (H-ARC's
  participants, or a ``human_errors.json``: :mod:`.human_errors`; see :func:`human_error`).
* ``retrieval``: a demonstration pair of a neighbouring task (see :func:`load_neighbours`
  and :func:`retrieval`).
* ``corrupted_verifier``: a pair produced by a mutated verifier (made by
  :mod:`arcjudge.harness.mutate.mutator`; the kind is listed here so both share one record type).

All functions are pure and deterministic: randomness comes only from the
``random.Random`` passed in, and iteration orders never depend on hashing.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcjudge.grids import Grid, canonical_distance
from arcjudge.harness.core.jsonl import json_value
from arcjudge.harness.core.record import Record
from arcjudge.sandbox.runtime.untrusted_files import read_regular
from arcjudge.tasks import Pair
from arcjudge.vocabulary import INVALID_KINDS

__all__ = [
    "CandidatePair",
    "color_flip",
    "human_error",
    "instance_mismatch",
    "load_neighbours",
    "normalize_task_id",
    "read_utf8",
    "retrieval",
]

_SIDES = ("input", "output")


TEXT_FILE_BYTES = 1 << 30
"""The largest human-errors or neighbours file read (1 GiB)."""


def read_utf8(path: Path, within: Path | None = None) -> str:
    """The text of a UTF-8 file (a byte-order mark dropped), by the rule for untrusted paths.

    Args:
        path: The file: a regular file of at most :data:`TEXT_FILE_BYTES` (never a FIFO or
            a device, which could block or never end).
        within: The directory it was found in, which it may not leave by a symlink
            (``None``: a file named by the user, whose symlinks are followed).

    Raises:
        ValueError: If the file is not UTF-8 text.
        OSError: If it cannot be read (``RefusedPath``, naming the reason, if the rule
            refuses it).
    """
    if within is None:
        data = read_regular(os.path.realpath(path), max_bytes=TEXT_FILE_BYTES)
    else:
        data = read_regular(str(path), within=str(within), max_bytes=TEXT_FILE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None


def normalize_task_id(name: str) -> str:
    """Return a task id from ``<id>`` or ``<id>.json`` (surrounding spaces dropped)."""
    name = name.strip()
    return name[: -len(".json")] if name.endswith(".json") else name


@dataclass(frozen=True)
class CandidatePair(Record):
    """A candidate invalid pair for one task.

    A record (:class:`~arcjudge.harness.core.record.Record`): its ``to_json`` writes the
    grids as lists of lists and ``detail`` as it is.

    Attributes:
        task_id: The task the pair is meant to be invalid for.
        kind: How it was made: one of :data:`INVALID_KINDS`.
        input: The input grid.
        output: The proposed (presumably wrong) output grid.
        correct_output: The true output of ``input`` under the task's rule when it is
            already known, else ``None`` (the verifier will tell).
        detail: JSON-friendly provenance (source pair, cell, colors, neighbour task...).
            Not part of the hash, so candidates can go in sets.
    """

    task_id: str
    kind: str
    input: Grid
    output: Grid
    correct_output: Grid | None
    detail: dict[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        """Reject unknown kinds early."""
        super().__post_init__()
        if self.kind not in INVALID_KINDS:
            raise ValueError(
                f"unknown candidate kind {self.kind!r} (expected one of {', '.join(INVALID_KINDS)})"
            )


# --------------------------------------------------------------------------- color_flip


def _region(grid: Grid, row: int, col: int) -> list[tuple[int, int]]:
    """Cells of the 4-connected region of ``grid[row][col]``'s color containing it."""
    color = grid[row][col]
    height, width = len(grid), len(grid[0])
    seen = {(row, col)}
    stack = [(row, col)]
    while stack:
        r, c = stack.pop()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if (
                0 <= nr < height
                and 0 <= nc < width
                and (nr, nc) not in seen
                and grid[nr][nc] == color
            ):
                seen.add((nr, nc))
                stack.append((nr, nc))
    return sorted(seen)


def _flip_region(grid: Grid, rng: random.Random) -> tuple[Grid, dict[str, Any]]:
    """Recolor one region of ``grid``; return the new grid and what was done."""
    cells = [(r, c) for r, row in enumerate(grid) for c, v in enumerate(row)]
    nonzero = [(r, c) for r, c in cells if grid[r][c] != 0]
    row, col = rng.choice(nonzero or cells)
    old = grid[row][col]
    new = rng.choice([color for color in range(10) if color != old])
    region = _region(grid, row, col)
    mutable = [list(r) for r in grid]
    for r, c in region:
        mutable[r][c] = new
    info = {"row": row, "col": col, "old_color": old, "new_color": new, "region_size": len(region)}
    return tuple(tuple(r) for r in mutable), info


def color_flip(
    task_id: str,
    pairs: Sequence[Pair],
    rng: random.Random,
    *,
    count: int = 1,
    side: str | None = None,
) -> list[CandidatePair]:
    """Recolor one 4-connected same-colored region of a valid pair's input or output.

    Each candidate is drawn independently: a pair uniformly among ``pairs`` that have an
    output; then the grid to corrupt, input or output with probability 1/2 each (unless
    ``side`` fixes it; the study's variant corrupts a cell of either grid); then a cell,
    uniformly among the non-zero cells of that grid when there are any (so the background
    color 0 is only touched in all-zero grids), else among all cells; then a new color,
    uniformly among the nine colors other than the cell's. The cell's whole 4-connected
    region of its color takes the new color, so the corrupted grid always differs from the
    original and the pair differs from the source pair.

    Args:
        task_id: The task the pairs belong to.
        pairs: Valid pairs of the task (demonstrations, ARC-GEN pairs...); pairs whose
            output is ``None`` are ignored.
        rng: The only source of randomness.
        count: How many distinct candidates to return at most. Fewer are returned when
            repeated draws keep producing duplicates (tiny grids).
        side: ``"input"`` or ``"output"`` to always corrupt that grid; ``None`` to choose
            at random per candidate.

    Returns:
        Up to ``count`` distinct candidates, in draw order (empty if no pair has an
        output). ``correct_output`` is the source pair's output when the output was
        corrupted, and ``None`` when the input was (the true output of the new input is
        unknown until the verifier runs). ``detail`` holds ``source_index`` (into
        ``pairs``), ``side``, ``row``, ``col``, ``old_color``, ``new_color`` and
        ``region_size``.

    Raises:
        ValueError: If ``count`` is negative or ``side`` is not ``None``, ``"input"`` or
            ``"output"``.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if side is not None and side not in _SIDES:
        raise ValueError(f"side must be None, 'input' or 'output', got {side!r}")
    usable = [i for i, p in enumerate(pairs) if p.output is not None]
    results: list[CandidatePair] = []
    if not usable:
        return results
    seen: set[tuple[Grid, Grid]] = set()
    for _ in range(20 * count + 20):
        if len(results) >= count:
            break
        index = rng.choice(usable)
        source = pairs[index]
        assert source.output is not None  # filtered above
        chosen_side = side if side is not None else rng.choice(_SIDES)
        if chosen_side == "input":
            new_input, info = _flip_region(source.input, rng)
            new_output, correct = source.output, None
        else:
            new_output, info = _flip_region(source.output, rng)
            new_input, correct = source.input, source.output
        key = (new_input, new_output)
        if key in seen:
            continue
        seen.add(key)
        detail = {"source_index": index, "side": chosen_side, **info}
        results.append(CandidatePair(task_id, "color_flip", new_input, new_output, correct, detail))
    return results


# ---------------------------------------------------------------------- instance_mismatch


def instance_mismatch(
    task_id: str,
    target: Pair,
    pool: Sequence[Pair],
    rng: random.Random,
    *,
    nearest: int = 3,
) -> CandidatePair | None:
    """Pair ``target.input`` with a near output of another instance of the same task.

    The distinct outputs of ``pool`` that differ from ``target.output`` are ranked by
    :func:`~arcjudge.grids.hamming_distance` to ``target.output`` (ties keep pool order);
    one of the first ``nearest`` is chosen uniformly.

    Args:
        task_id: The task.
        target: A valid pair of the task; its output must be known.
        pool: Other valid pairs of the task (ARC-GEN pairs plus demonstrations); it may
            contain ``target`` itself. Pairs without an output are ignored.
        rng: The only source of randomness.
        nearest: How many of the nearest distinct outputs to choose from (at least 1).

    Returns:
        The candidate, with ``correct_output = target.output`` and ``detail`` holding
        ``source_index`` (the first pool pair with the chosen output), ``distance``,
        ``rank`` (0 = nearest) and ``choices`` (how many outputs were eligible); or
        ``None`` when the pool has no output different from ``target.output``.

    Raises:
        ValueError: If ``target.output`` is ``None`` or ``nearest < 1``.
    """
    if target.output is None:
        raise ValueError("instance_mismatch needs a target pair with a known output")
    if nearest < 1:
        raise ValueError(f"nearest must be >= 1, got {nearest}")
    first_index: dict[Grid, int] = {}
    for i, pair in enumerate(pool):
        if pair.output is not None and pair.output != target.output:
            first_index.setdefault(pair.output, i)
    if not first_index:
        return None
    ranked = sorted(
        ((canonical_distance(target.output, out), i, out) for out, i in first_index.items()),
        key=lambda item: (item[0], item[1]),
    )
    choices = ranked[:nearest]
    rank = rng.randrange(len(choices))
    distance, index, output = choices[rank]
    detail = {"source_index": index, "distance": distance, "rank": rank, "choices": len(choices)}
    return CandidatePair(task_id, "instance_mismatch", target.input, output, target.output, detail)


# ------------------------------------------------------------------------------ H-ARC


def human_error(
    task_id: str,
    test_pair: Pair,
    errors: Sequence[tuple[Grid, int]],
    rng: random.Random,
    *,
    task_type: str | None = None,
    test_index: int | None = None,
) -> CandidatePair | None:
    """Pair a test input with a wrong answer that humans submitted for it.

    One of ``errors`` is drawn with probability proportional to its count (count 0 is
    never drawn), after dropping grids equal to ``test_pair.output``.

    Args:
        task_id: The task.
        test_pair: The test pair the submissions answered. When its output is ``None``
            nothing can be excluded and ``correct_output`` is ``None``.
        errors: ``(submitted grid, count)`` entries, e.g. ``HumanErrors.by_task[id]``.
        rng: The only source of randomness.
        task_type: Optional H-ARC ``task_type`` to record in ``detail``.
        test_index: Which test input ``test_pair`` is, recorded in ``detail`` when given
            (the build gives it for every test input but the first).

    Returns:
        The candidate (``detail``: ``error_index`` into ``errors``, ``count``,
        ``total_count`` of the eligible entries, ``task_type``), or ``None`` when no
        eligible entry has a positive count.
    """
    eligible = [
        (i, grid, count)
        for i, (grid, count) in enumerate(errors)
        if count > 0 and grid != test_pair.output
    ]
    if not eligible:
        return None
    total = sum(count for _, _, count in eligible)
    ticket = rng.randrange(total)
    position = 0
    while ticket >= eligible[position][2]:
        ticket -= eligible[position][2]
        position += 1
    index, grid, count = eligible[position]
    detail: dict[str, Any] = {
        "error_index": index, "count": count, "total_count": total, "task_type": task_type,
    }  # fmt: skip
    if test_index is not None:
        detail["test_index"] = test_index
    return CandidatePair(task_id, "human_error", test_pair.input, grid, test_pair.output, detail)


# -------------------------------------------------------------------------- retrieval


def load_neighbours(path: str | Path) -> dict[str, list[str]]:
    """Read a neighbours JSONL file: one ``{"task_id", "neighbour_task_ids"}`` per line.

    Blank lines are ignored. Task ids may be given as ``<id>`` or ``<id>.json``; they are
    normalized to the id. Repeated neighbours of a task are kept once, in first order.

    Args:
        path: The JSONL file.

    Returns:
        Task id -> its neighbour task ids, in file order.

    Raises:
        ValueError: On the first malformed line, with a one-line message
            ``<path>:<line>: <problem>`` (not JSON, not an object, missing or non-string
            ``task_id``, ``neighbour_task_ids`` not a list of non-empty strings, or a task
            listed twice), or if the file is not UTF-8.
        OSError: If the file cannot be read.
    """
    path = Path(path)
    text = read_utf8(path)
    result: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json_value(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}")
        task = record.get("task_id")
        if not isinstance(task, str) or not normalize_task_id(task):
            raise ValueError(f"{where}: 'task_id' must be a non-empty string")
        neighbours = record.get("neighbour_task_ids")
        if not isinstance(neighbours, list) or not all(
            isinstance(n, str) and normalize_task_id(n) for n in neighbours
        ):
            raise ValueError(f"{where}: 'neighbour_task_ids' must be a list of non-empty strings")
        task = normalize_task_id(task)
        if task in result:
            raise ValueError(f"{where}: task {task!r} is listed twice")
        result[task] = list(dict.fromkeys(normalize_task_id(n) for n in neighbours))
    return result


def retrieval(
    task_id: str,
    neighbours: Mapping[str, Sequence[str]],
    demos_by_task: Mapping[str, Sequence[Pair]],
    rng: random.Random,
) -> CandidatePair | None:
    """Take a demonstration pair of one of the task's neighbour tasks.

    A neighbour is chosen uniformly among ``neighbours[task_id]`` (the task itself,
    repeats and neighbours with no usable demonstration left out), then one of its demonstrations
    uniformly. Demonstrations without an output, and pairs that are also demonstrations of
    ``task_id`` itself (when ``demos_by_task`` has it), are not usable.

    Args:
        task_id: The task the candidate is for.
        neighbours: Task id -> neighbour task ids (see :func:`load_neighbours`).
        demos_by_task: Task id -> its demonstration pairs.
        rng: The only source of randomness.

    Returns:
        The candidate, with ``correct_output = None`` (the pair is right for the neighbour,
        its output under this task's rule is unknown) and ``detail`` holding
        ``neighbour_task_id``, ``neighbour_rank`` (position in the neighbour list) and
        ``pair_index`` (into the neighbour's demonstrations); or ``None`` when no
        neighbour has a usable demonstration.
    """
    own = set(demos_by_task.get(task_id, ()))
    options: list[tuple[int, str, list[int]]] = []
    seen = {task_id}
    for rank, neighbour in enumerate(neighbours.get(task_id, ())):
        if neighbour in seen:
            continue
        seen.add(neighbour)
        demos = demos_by_task.get(neighbour, ())
        usable = [i for i, p in enumerate(demos) if p.output is not None and p not in own]
        if usable:
            options.append((rank, neighbour, usable))
    if not options:
        return None
    rank, neighbour, usable = rng.choice(options)
    index = rng.choice(usable)
    pair = demos_by_task[neighbour][index]
    assert pair.output is not None  # filtered above
    detail = {"neighbour_task_id": neighbour, "neighbour_rank": rank, "pair_index": index}
    return CandidatePair(task_id, "retrieval", pair.input, pair.output, None, detail)
