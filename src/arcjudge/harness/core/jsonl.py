"""Reading JSON-lines record files: one reader for every workflow's records.

Each line of a record file is one JSON object; blank lines are skipped. A record's
``from_json`` raises ``KeyError``, ``LookupError``, ``TypeError``, ``ValueError`` (or
``AttributeError``) on a malformed object; :func:`read_records` turns that into an
:class:`~arcjudge.errors.InputError` naming the file and line. JSON nested too deeply for
the decoder (``[[[[...``, which raises ``RecursionError``) is a ``ValueError`` like any
other bad JSON (:func:`json_value`), so no reader of third-party JSON shows a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from arcjudge.errors import InputError

__all__ = ["NESTED_TOO_DEEPLY", "json_value", "read_records", "read_text_lines"]

NESTED_TOO_DEEPLY = "nested too deeply to decode"
"""The ``ValueError`` message of JSON whose nesting exceeds the decoder's recursion limit."""

T = TypeVar("T")


def json_value(text: str | bytes) -> Any:
    """``json.loads(text)``, JSON nested too deeply (or too large) being a ``ValueError``.

    Raises:
        ValueError: Not JSON (``json.JSONDecodeError``), or nested too deeply or too large
            to decode.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(NESTED_TOO_DEEPLY) from None
    except MemoryError:
        raise ValueError(f"too large to decode ({len(text):,} characters)") from None


def read_text_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file.

    Raises:
        InputError: When it is missing or unreadable.
    """
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def read_records(
    path: Path, read: Callable[[Mapping[str, Any]], T], what: str
) -> list[tuple[int, T]]:
    """``(line number, record)`` for every non-blank line of a JSONL file, in order.

    Args:
        path: The file.
        read: Makes a record of a line's object (a ``from_json``).
        what: The record's name in errors (``"an instance record"``).

    Raises:
        InputError: The file is missing or unreadable, or a line is not JSON, not an
            object, or not ``what`` (``FILE:LINE: not WHAT (why)``).
    """
    found: list[tuple[int, T]] = []
    for number, line in enumerate(read_text_lines(path), 1):
        if not line.strip():
            continue
        try:
            data = json_value(line)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            found.append((number, read(data)))
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not {what} ({exc})") from None
    return found
