"""Reading JSON-lines record files: one reader for every workflow's records.

Each line of a record file is one JSON object; blank lines are skipped. A record's
``from_json`` raises ``KeyError``, ``LookupError``, ``TypeError``, ``ValueError`` (or
``AttributeError``) on a malformed object; :func:`read_records` turns that into an
:class:`~arcjudge.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from arcjudge.errors import InputError

__all__ = ["read_records", "read_text_lines"]

T = TypeVar("T")


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
            data = json.loads(line)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            found.append((number, read(data)))
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not {what} ({exc})") from None
    return found
