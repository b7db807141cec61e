"""Programs files: JSONL records of model-written programs, as code or as raw replies.

``score`` reads them, and ``dimensions score`` reads the same file for the Definition
dimension: one reader, so both see the same code for the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.core.jsonl import json_value
from arcjudge.safetext import clean_text

__all__ = ["ProgramRecord", "program_record", "read_programs"]


@dataclass
class ProgramRecord:
    """One line of a programs file, with its code (given, or extracted from a reply).

    Attributes:
        line: Its line number in the file (1-based).
        fields: The record as read (``id``, ``task_id``, ``model``, ``code`` or ``response``).
        code: The program text to run (lone surrogates escaped).
        extraction: For a ``response``: which fenced block was taken and why, else ``None``.
    """

    line: int
    fields: dict[str, Any]
    code: str
    extraction: dict[str, Any] | None


def program_record(
    line: int, fields: dict[str, Any], entry_points: tuple[str, ...]
) -> ProgramRecord | None:
    """A record's program: its ``code``, or the one extracted from its ``response``.

    Args:
        line: The record's line number (1-based).
        fields: The record (``code`` or ``response`` a string).
        entry_points: Entry points that mark a code block as the program, in order.

    Returns:
        The record with its code, or ``None`` when it has neither string.
    """
    # Texts with lone surrogates (JSON's "\ud800") cannot be UTF-8 source: they are
    # escaped (inside a string literal, to the same value).
    if isinstance(fields.get("code"), str):
        return ProgramRecord(line, fields, clean_text(fields["code"]), None)
    if isinstance(fields.get("response"), str):
        ex = extract_program(clean_text(fields["response"]), entry_points)
        extraction = {
            "block": ex.block,
            "blocks": ex.blocks,
            "reason": ex.reason,
            "fence_unclosed": ex.unclosed,
        }
        return ProgramRecord(line, fields, ex.code, extraction)
    return None


def read_programs(path: Path, entry_points: tuple[str, ...]) -> list[ProgramRecord]:
    """Read and check a programs JSONL file (``score``'s input; Definition answers).

    Args:
        path: The file.
        entry_points: Entry points that mark a code block as the program, in order.

    Returns:
        One record per non-blank line, in file order.

    Raises:
        InputError: On unreadable files, bad JSON, missing fields or duplicate ids.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    records = []
    seen: set[str] = set()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            fields = json_value(text)
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not valid JSON ({exc})") from None
        if not isinstance(fields, dict):
            raise InputError(f"{path}:{number}: a record must be a JSON object")
        for name in ("id", "task_id"):
            if not isinstance(fields.get(name), str | int) or fields.get(name) in ("", None):
                raise InputError(f"{path}:{number}: missing field {name!r}")
        if str(fields["id"]) in seen:
            raise InputError(f"{path}:{number}: duplicate id {fields['id']!r}")
        seen.add(str(fields["id"]))
        record = program_record(number, fields, entry_points)
        if record is None:
            raise InputError(f"{path}:{number}: needs a 'code' or a 'response' string")
        records.append(record)
    if not records:
        raise InputError(f"{path}: no programs")
    return records
