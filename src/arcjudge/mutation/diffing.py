"""Unified diffs of a one-region change, computed on a window around the change.

Diffing a whole 10,000-line file for every mutant is quadratic; a mutant changes one
contiguous region, so diffing that region plus the context lines around it and shifting
the hunk line numbers gives exactly the same text as ``difflib.unified_diff`` on the
whole file.
"""

from __future__ import annotations

import difflib
import re

CONTEXT = 3
"""Context lines per hunk (difflib's default)."""

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


def _back_lines(text: str, pos: int, count: int) -> int:
    """Start of the line ``count`` lines above the line starting at ``pos``."""
    for _ in range(count):
        if pos <= 0:
            return 0
        pos = text.rfind("\n", 0, pos - 1) + 1
    return pos


def _forward_lines(text: str, pos: int, count: int) -> int:
    """End of the ``count``-th line after ``pos`` (a line start)."""
    for _ in range(count):
        found = text.find("\n", pos)
        if found < 0:
            return len(text)
        pos = found + 1
    return pos


def splice_diff(
    original: str,
    start: int,
    end: int,
    replacement: str,
    fromfile: str = "a",
    tofile: str = "b",
) -> str:
    """Unified diff of ``original`` against ``original[:start] + replacement + original[end:]``.

    Args:
        original: The whole original text.
        start: Where the replaced region starts (a line start).
        end: Where it ends (a line start, or the end of the text).
        replacement: The new text of the region.
        fromfile: Label of the original.
        tofile: Label of the mutant.

    Returns:
        The diff text; every line ends with a newline.
    """
    low = _back_lines(original, start, CONTEXT)
    high = _forward_lines(original, end, CONTEXT)
    before = original[low:high].splitlines(keepends=True)
    after = (original[low:start] + replacement + original[end:high]).splitlines(keepends=True)
    offset = original.count("\n", 0, low)
    lines = difflib.unified_diff(before, after, fromfile, tofile, n=CONTEXT)
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if not offset:
        return text

    def shift(match: re.Match[str]) -> str:
        old, old_len, new, new_len = match.groups()
        return f"@@ -{int(old) + offset}{old_len or ''} +{int(new) + offset}{new_len or ''} @@"

    return _HUNK.sub(shift, text)
