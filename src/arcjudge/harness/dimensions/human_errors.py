"""Wrong answers people gave: the ``human_error`` candidates' source.

Two formats, told apart by the file's suffix (:func:`load_human_errors`):

* H-ARC's ``incorrect_submissions.csv`` (:func:`read_harc_csv`): columns ``task_name,
  task_type, test_output_grid, count``, grids as ``|077|777|077|``; every row answers the
  task's first test input.
* ``human_errors.json`` (:func:`read_human_errors_json`), for any task set: an object of
  task id -> list of entries, each a grid (a list of rows of digits 0-9; count 1, first
  test input) or ``{"output": grid, "count": n, "test_index": i}`` (``count`` default 1,
  ``test_index`` default 0)::

      {"007bbfc7": [[[1, 2], [3, 4]], {"output": [[5]], "count": 3, "test_index": 1}]}

Malformed rows and entries are skipped, each with a reason in ``HumanErrors.skipped``; a
file that is not one of the formats at all raises ``ValueError``.

Human errors kept as loose files (P-ARC's three wrong grids per task, say) become one
``human_errors.json`` with :func:`collect_human_errors` (``arcjudge dimensions
human-errors``): from H-ARC CSVs, ``human_errors.json`` files, and directories of
``<task_id>.json`` or ``<task_id>_<anything>.json`` files, each holding one wrong grid or a
list of entries as above; :func:`human_errors_json` writes the merged result.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from arcjudge.grids import MAX_SIDE, Grid, to_grid
from arcjudge.harness.core.jsonl import json_value
from arcjudge.harness.core.record import Record, RecordError
from arcjudge.harness.dimensions.corruptions import normalize_task_id, read_utf8
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath

__all__ = [
    "HARC_COLUMNS",
    "HumanError",
    "HumanErrors",
    "collect_human_errors",
    "human_errors_json",
    "load_human_errors",
    "parse_harc_grid",
    "read_harc_csv",
    "read_human_errors_json",
]

HARC_COLUMNS = ("task_name", "task_type", "test_output_grid", "count")
_DIGITS = frozenset("0123456789")


def _excerpt(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_harc_grid(text: str) -> Grid:
    """Parse an H-ARC grid such as ``|077|777|077|`` (rows between pipes).

    Args:
        text: The grid text; surrounding whitespace is ignored.

    Returns:
        The grid: one row per pipe-delimited field, one cell per digit.

    Raises:
        ValueError: If the text does not start and end with ``|``, has an empty row, a
            character other than ``0``-``9``, rows of different lengths or a side longer
            than ``MAX_SIDE``. The message quotes (the start of) the text.
    """
    if not isinstance(text, str):
        raise ValueError(f"H-ARC grid must be a string, got {type(text).__name__}")
    stripped = text.strip()
    where = f"bad H-ARC grid {_excerpt(stripped)}"
    if len(stripped) < 2 or not (stripped.startswith("|") and stripped.endswith("|")):
        raise ValueError(f"{where}: expected rows between pipes, like '|077|777|077|'")
    rows = stripped[1:-1].split("|")
    if len(rows) > MAX_SIDE:
        raise ValueError(f"{where}: {len(rows)} rows (at most {MAX_SIDE})")
    grid = []
    for r, row in enumerate(rows):
        if not row:
            raise ValueError(f"{where}: row {r} is empty")
        bad = next((ch for ch in row if ch not in _DIGITS), None)
        if bad is not None:
            raise ValueError(f"{where}: row {r} has {bad!r}, not a digit 0-9")
        if len(row) != len(rows[0]):
            raise ValueError(f"{where}: row {r} has {len(row)} cells but row 0 has {len(rows[0])}")
        if len(row) > MAX_SIDE:
            raise ValueError(f"{where}: {len(row)} columns (at most {MAX_SIDE})")
        grid.append(tuple(int(ch) for ch in row))
    return tuple(grid)


@dataclass
class HumanErrors:
    """What :func:`load_human_errors` read.

    Attributes:
        by_task: Task id -> ``(wrong grid, count)`` answering the task's first test input,
            in file order; entries repeating a grid of the same task and test are merged
            (counts added). The same lists as ``tests[task][0]``.
        tests: Task id -> test index -> ``(wrong grid, count)``, for every test input
            (H-ARC's CSV answers the first one only).
        task_types: Task id -> its ``task_type`` (e.g. ``training``, ``evaluation``), the
            first one seen.
        skipped: One reason per skipped row (``"line N: ..."``).
    """

    by_task: dict[str, list[tuple[Grid, int]]] = field(default_factory=dict)
    tests: dict[str, dict[int, list[tuple[Grid, int]]]] = field(default_factory=dict)
    task_types: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def read_harc_csv(path: str | Path) -> HumanErrors:
    """Read H-ARC's ``incorrect_submissions.csv``.

    The CSV has a header with (at least) the columns ``task_name, task_type,
    test_output_grid, count``. ``task_name`` may be ``<id>.json`` or ``<id>``; it is
    normalized to the id. Rows with an empty task name, a malformed grid or a count that
    is not a non-negative integer are skipped and reported in ``skipped``.

    Args:
        path: The CSV file.

    Returns:
        The errors by task, the task types and the skipped-row reasons.

    Raises:
        ValueError: If the file is not UTF-8 text or its header lacks a needed column.
        OSError: If the file cannot be read.
    """
    path = Path(path)
    text = read_utf8(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [column for column in HARC_COLUMNS if column not in header]
    if missing:
        raise ValueError(f"{path}: header lacks column(s) {', '.join(missing)}")
    reader.fieldnames = header
    result = HumanErrors()
    merged: dict[str, dict[Grid, int]] = {}
    for row in reader:
        line = reader.line_num
        name = normalize_task_id(row.get("task_name") or "")
        if not name:
            result.skipped.append(f"line {line}: empty task_name")
            continue
        try:
            grid = parse_harc_grid(row.get("test_output_grid") or "")
        except ValueError as exc:
            result.skipped.append(f"line {line}: task {name}: {exc}")
            continue
        raw_count = (row.get("count") or "").strip()
        try:
            count = int(raw_count)
        except ValueError:
            count = -1
        if count < 0:
            result.skipped.append(
                f"line {line}: task {name}: count {raw_count!r} is not a non-negative integer"
            )
            continue
        counts = merged.setdefault(name, {})
        counts[grid] = counts.get(grid, 0) + count
        result.task_types.setdefault(name, (row.get("task_type") or "").strip())
    result.by_task = {task: list(counts.items()) for task, counts in merged.items()}
    result.tests = {task: {0: errors} for task, errors in result.by_task.items()}
    return result


@dataclass(frozen=True)
class HumanError(Record):
    """One entry of a ``human_errors.json`` task list: a wrong output people gave.

    Attributes:
        output: The wrong output grid.
        count: How many people gave it (default 1).
        test_index: Which test input of the task it answers (default 0, the first).

    Raises:
        RecordError: A count or test index below 0.
    """

    output: Grid
    count: int = 1
    test_index: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("count", "test_index"):
            if getattr(self, name) < 0:
                raise RecordError(f"{getattr(self, name)} is not a non-negative integer", (name,))


_ENTRY_KEYS = frozenset(f.name for f in dataclasses.fields(HumanError))


def _merge(errors: list[tuple[Grid, int]], grid: Grid, count: int) -> None:
    """Add ``count`` of ``grid`` to ``errors`` (a grid already there: counts added)."""
    for i, (known, seen) in enumerate(errors):
        if known == grid:
            errors[i] = (known, seen + count)
            return
    errors.append((grid, count))


def _entries(
    result: HumanErrors, task: str, entries: object, where: str
) -> None:  # fmt: skip
    """Add a task's entries (a list of grids or entry objects) to ``result.tests``."""
    if not isinstance(entries, list):
        result.skipped.append(f"{where}: not a list of wrong outputs")
        return
    merged = result.tests.setdefault(task, {})
    for number, entry in enumerate(entries):
        at = f"{where} entry {number}"
        try:
            if isinstance(entry, dict):
                unknown = sorted(set(entry) - _ENTRY_KEYS)
                if unknown:
                    raise ValueError(f"unknown field(s) {', '.join(unknown)}")
                error = HumanError.from_json(entry)
            else:
                error = HumanError(to_grid(entry))
        except (ValueError, TypeError) as exc:
            result.skipped.append(f"{at}: {exc}")
            continue
        grid, count, test = error.output, error.count, error.test_index
        _merge(merged.setdefault(test, []), grid, count)
    if not merged:
        del result.tests[task]


def read_human_errors_json(path: str | Path) -> HumanErrors:
    """Read a ``human_errors.json`` (the format is in the module docstring).

    Raises:
        ValueError: The file is not UTF-8 JSON, or not an object of task id -> list.
        OSError: If the file cannot be read.
    """
    path = Path(path)
    text = read_utf8(path)
    try:
        data = json_value(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an object of task id -> list of wrong outputs")
    result = HumanErrors()
    for raw_task, entries in data.items():
        task = normalize_task_id(str(raw_task))
        if not task:
            result.skipped.append(f"task {raw_task!r}: empty task id")
            continue
        _entries(result, task, entries, f"task {task}")
    result.by_task = {t: tests[0] for t, tests in result.tests.items() if 0 in tests}
    return result


def load_human_errors(path: str | Path) -> HumanErrors:
    """Read human errors: ``.json`` is :func:`read_human_errors_json`, else H-ARC's CSV.

    Raises:
        ValueError: The file is not of its format (header, encoding, JSON shape).
        OSError: If the file cannot be read.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return read_human_errors_json(path)
    return read_harc_csv(path)


def _folder_file(result: HumanErrors, path: Path, directory: Path) -> None:
    """One file of a directory of human errors: ``<task_id>[_<anything>].json``.

    Read by the rule for untrusted paths inside ``directory``: a FIFO, a device or a
    symlink out of it is skipped with the reason.
    """
    task = path.stem.split("_", 1)[0]
    try:
        data = json_value(read_utf8(path, directory))
    except RefusedPath as exc:
        result.skipped.append(f"{path.name}: refused: {exc.reason}")
        return
    except (ValueError, OSError) as exc:
        result.skipped.append(f"{path.name}: not JSON ({exc})")
        return
    try:
        grid = to_grid(data)
    except (ValueError, TypeError):  # not one grid: a list of entries
        _entries(result, task, data, path.name)
        return
    _merge(result.tests.setdefault(task, {}).setdefault(0, []), grid, 1)


def collect_human_errors(sources: list[Path]) -> HumanErrors:
    """Merge human errors from files and directories (see the module docstring).

    Each source is an H-ARC CSV, a ``human_errors.json``, or a directory whose ``*.json``
    files are one task's wrong grids each. Grids of the same task and test input are
    merged (counts added); what cannot be read is listed in ``skipped``.

    Raises:
        ValueError: A file source is not of its format (header, encoding, JSON shape).
        OSError: A source cannot be read.
    """
    result = HumanErrors()
    for source in sources:
        if source.is_dir():
            found = HumanErrors()
            for path in sorted(source.glob("*.json")):
                _folder_file(found, path, source)
        else:
            found = load_human_errors(source)
        result.skipped.extend(f"{source}: {reason}" for reason in found.skipped)
        for task, tests in found.tests.items():
            for test, errors in tests.items():
                target = result.tests.setdefault(task, {}).setdefault(test, [])
                for grid, count in errors:
                    _merge(target, grid, count)
        for task, kind in found.task_types.items():
            result.task_types.setdefault(task, kind)
    result.by_task = {t: tests[0] for t, tests in result.tests.items() if 0 in tests}
    return result


def human_errors_json(errors: HumanErrors) -> str:
    """``errors`` as a ``human_errors.json`` text (tasks and test inputs sorted)."""
    data = {
        task: [
            HumanError(grid, count, test).to_json()
            for test in sorted(errors.tests[task])
            for grid, count in errors.tests[task][test]
        ]
        for task in sorted(errors.tests)
    }
    return json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n"
