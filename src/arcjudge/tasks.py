"""ARC task files: demonstrations, test pairs and ARC-GEN pairs.

Formats read:
- ARC task JSON: ``{"train": [{"input": G, "output": G}, ...], "test": [...]}``.
- Kaggle task JSON: the same plus ``"arc-gen": [...]`` pairs.
- ARC-GEN stable set: one JSON list of ``{"input", "output"}`` pairs per task id.

Grids in data files are checked strictly (lists of lists of ints 0..9, 1..MAX_SIDE per side).
Problems raise ``TaskFormatError`` with a one-line message naming the file.

Task files come from third parties, so they are read by the rule for untrusted paths
(``untrusted_files``): regular files only (a FIFO named ``x.json`` is refused at once, never
waited on; a symlink is followed, but only to a regular file: never to ``/dev/zero``), at
most :data:`TASK_FILE_BYTES`, and JSON nested too deeply to decode is an error, not a
``RecursionError``.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from arcjudge.errors import InputError
from arcjudge.fastpairs import compact_pairs_with_wires
from arcjudge.grids import MAX_SIDE, Grid, WireGrid, validate_plain
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, read_regular

TASK_FILE_BYTES = 64 << 20
"""The largest task or pair file read (64 MiB; ARC-GEN's largest stable file is ~1 MiB)."""


class TaskFormatError(InputError):
    """A task or pair file is missing, unreadable or not in an ARC format."""


@dataclass(frozen=True)
class Pair:
    """One input grid and its expected output (``None`` when the file has none).

    Attributes:
        input: The input grid.
        output: The expected output, ``None`` when the file has none.
        wires: The two grids' compact forms (``grids.compact``) when the reader made them
            already (ARC-GEN's compact spelling), else ``None``; not part of equality.
    """

    input: Grid
    output: Grid | None
    wires: tuple[WireGrid, WireGrid] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Task:
    """An ARC task: its id (the file stem) and its pairs per split."""

    task_id: str
    train: tuple[Pair, ...]
    test: tuple[Pair, ...]
    arc_gen: tuple[Pair, ...] = ()

    def split(self, name: str) -> tuple[Pair, ...]:
        """Return the pairs of a split named as in ``TASK_SPLITS``."""
        return {"train": self.train, "test": self.test, "arc-gen": self.arc_gen}[name]


def read_task_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of a task or pair file, by the rule for untrusted paths.

    Symlinks are followed (a task directory may be a farm of links) and the file they
    end at must be a regular file of at most ``max_bytes`` (``None``: :data:`TASK_FILE_BYTES`).

    Raises:
        TaskFormatError: Missing, not a regular file, too large or unreadable (naming
            ``path`` and why).
    """
    try:
        limit = TASK_FILE_BYTES if max_bytes is None else max_bytes
        return read_regular(os.path.realpath(path), max_bytes=limit)
    except FileNotFoundError:
        raise TaskFormatError(f"{path}: no such file") from None
    except RefusedPath as exc:
        raise TaskFormatError(f"{path}: refused: {exc.reason}") from None
    except OSError as exc:
        raise TaskFormatError(f"{path}: cannot read ({exc.strerror})") from None


def decode_json_bytes(data: bytes, path: Path) -> object:
    """JSON decoded from a file's bytes.

    Raises:
        TaskFormatError: Not JSON, or nested too deeply (or too large) to decode.
    """
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise TaskFormatError(f"{path}: not valid JSON (nested too deeply)") from None
    except MemoryError:
        raise TaskFormatError(f"{path}: too large to decode ({len(data):,} bytes)") from None


def _read_json(path: Path) -> tuple[object, bool]:
    """The decoded file, and whether it may hold a JSON boolean (see ``read_pairs``)."""
    data = read_task_bytes(path)
    return decode_json_bytes(data, path), _may_hold_bools(data)


def _may_hold_bools(data: bytes) -> bool:
    """Whether decoded ``data`` may hold a JSON boolean (see ``read_pairs``)."""
    # A boolean is only ever decoded from a literal token, which UTF-8 spells as these bytes.
    return b"true" in data or b"false" in data or json.detect_encoding(data) != "utf-8"


def _pairs(path: Path, where: str, raw: object, need_output: bool, bools: bool) -> tuple[Pair, ...]:
    return read_pairs(raw, f"{path}: {where}", need_output, bools=bools)


_DIGIT_BYTES = bytes(range(10))


def _grid(value: object, bools: bool) -> tuple[Grid | None, str | None]:
    """``validate_plain``, at C speed for data known to hold no boolean.

    Decoded JSON cells are ints, floats, strings, ``None``, lists, dicts or booleans;
    ``bytes`` takes only ints of 0..255 and booleans, so without booleans a grid whose
    cells ``bytes`` takes and that are all 0..9 is exactly what ``validate_plain`` accepts.
    Anything else goes the strict way (which gives the reason).
    """
    if not bools and type(value) is list and 0 < len(value) <= MAX_SIDE:
        try:
            if set(map(type, value)) == {list}:
                widths = set(map(len, value))
                if (
                    len(widths) == 1
                    and 0 < min(widths) <= MAX_SIDE
                    and not bytes(itertools.chain.from_iterable(value)).translate(
                        None, _DIGIT_BYTES
                    )
                ):
                    return tuple(map(tuple, value)), None
        except (TypeError, ValueError):
            pass
    return validate_plain(value)


def read_pairs(
    raw: object, where: str, need_output: bool = True, *, bools: bool = True
) -> tuple[Pair, ...]:
    """Check decoded JSON as a list of ``{input, output}`` pairs (grids checked strictly).

    Args:
        raw: The decoded JSON.
        where: What it is, for messages (``"t3: train"`` gives ``"t3: train[1].input ..."``).
        need_output: Whether every pair must have an output.
        bools: Whether ``raw`` may hold a boolean (``False``, known from the file's bytes,
            lets grids be checked at C speed; the result is the same).

    Returns:
        The pairs (``output`` ``None`` where there is none and none is needed).

    Raises:
        TaskFormatError: Naming ``where`` and the first pair that is wrong.
    """
    if not isinstance(raw, list):
        raise TaskFormatError(f"{where} is not a list of pairs")
    pairs = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "input" not in item:
            raise TaskFormatError(f"{where}[{i}] is not an {{input, output}} pair")
        grid_in, reason = _grid(item["input"], bools)
        if grid_in is None:
            raise TaskFormatError(f"{where}[{i}].input is not a grid ({reason})")
        grid_out = None
        if "output" in item:
            grid_out, reason = _grid(item["output"], bools)
            if grid_out is None:
                raise TaskFormatError(f"{where}[{i}].output is not a grid ({reason})")
        elif need_output:
            raise TaskFormatError(f"{where}[{i}] has no output")
        pairs.append(Pair(grid_in, grid_out))
    return tuple(pairs)


def load_task(path: str | Path) -> Task:
    """Read an ARC or Kaggle-style task file.

    Args:
        path: A ``<task_id>.json`` file.

    Returns:
        The task; ``arc_gen`` is filled from an ``arc-gen`` key when present.

    Raises:
        TaskFormatError: If the file is missing, not a regular file, over
            :data:`TASK_FILE_BYTES`, not JSON (or nested too deeply), or not an ARC task.
    """
    path = Path(path)
    data, bools = _read_json(path)
    if not isinstance(data, dict) or "train" not in data or "test" not in data:
        raise TaskFormatError(f"{path}: not an ARC task (needs 'train' and 'test' keys)")
    return Task(
        task_id=path.stem,
        train=_pairs(path, "train", data["train"], True, bools),
        test=_pairs(path, "test", data["test"], False, bools),
        arc_gen=_pairs(path, "arc-gen", data.get("arc-gen", []), True, bools),
    )


def load_arcgen_pairs(path: str | Path) -> tuple[Pair, ...]:
    """Read one task's ARC-GEN stable-set file (a JSON list of pairs).

    A file in ARC-GEN's compact spelling is read by ``fastpairs`` (the same pairs, faster).

    Raises:
        TaskFormatError: If the file is missing, not JSON, or not a list of pairs.
    """
    path = Path(path)
    data = read_task_bytes(path)
    fast = compact_pairs_with_wires(data)
    if fast is not None:  # ARC-GEN's own spelling, read without the JSON decoder
        return tuple(Pair(grid_in, grid_out, wires) for (grid_in, grid_out), wires in fast)
    return _pairs(path, "pairs", decode_json_bytes(data, path), True, _may_hold_bools(data))


def task_files(directory: str | Path) -> list[Path]:
    """Return the ``*.json`` files of a task directory, sorted by task id.

    Raises:
        TaskFormatError: If the directory does not exist or holds no JSON file.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise TaskFormatError(f"{directory}: no such directory")
    files = sorted(directory.glob("*.json"))
    if not files:
        raise TaskFormatError(f"{directory}: no *.json task files")
    return files


def iter_tasks(directory: str | Path) -> Iterator[Task]:
    """Yield the tasks of a directory one at a time, in task-id order."""
    for path in task_files(directory):
        yield load_task(path)
