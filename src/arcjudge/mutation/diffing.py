"""Unified diffs of a one-region change, computed on a window around the change.

Diffing a whole 10,000-line file for every mutant is quadratic; a mutant changes one
contiguous region, so diffing that region plus the context lines around it and shifting
the hunk line numbers gives a correct unified diff, in practice the same text as
``difflib.unified_diff`` on the whole file. Not always: where lines equal to the changed
ones repeat around the change (runs of blank lines, say), ``difflib`` on the whole file
may align them otherwise, and a random test of such texts finds it does in about one
case in six; both diffs then describe the same change.

Inside the window the lines both sides share at the top and at the bottom (the blank
lines a sliced RE-ARC verifier keeps in place of the functions before it, say) are cut
down to the context lines before ``difflib`` runs, when that cannot change its answer
(:func:`_trim`): ``difflib``'s matching is quadratic in a run of equal lines. When the
changed lines of the two sides share no line with each other nor with the lines around
them (almost every mutant), the hunk is written directly (:func:`_one_replacement`):
``difflib`` could only answer that, and takes two to three times as long to.
"""

from __future__ import annotations

import difflib
import re

CONTEXT = 3
"""Context lines per hunk (difflib's default)."""

_AUTOJUNK_LINES = 200
"""From this many lines on ``difflib`` treats frequent lines as junk (``autojunk``)."""

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
    quick = _one_replacement(before, after, offset, fromfile, tofile)
    if quick is not None:
        return quick
    cut = _trim(before, after)
    if cut is not None:
        head, tail = cut
        before = before[head : len(before) - tail]
        after = after[head : len(after) - tail]
        offset += head
    lines = difflib.unified_diff(before, after, fromfile, tofile, n=CONTEXT)
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if not offset:
        return text

    def shift(match: re.Match[str]) -> str:
        old, old_len, new, new_len = match.groups()
        return f"@@ -{int(old) + offset}{old_len or ''} +{int(new) + offset}{new_len or ''} @@"

    return _HUNK.sub(shift, text)


def _shared_ends(before: list[str], after: list[str]) -> tuple[int, int]:
    """How many lines both sides start with and end with (not overlapping)."""
    limit = min(len(before), len(after))
    prefix = 0
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]
    ):
        suffix += 1
    return prefix, suffix


def _guarded_ends(before: list[str], after: list[str]) -> tuple[int, int] | None:
    """The shared ends ``(len(P), len(S))`` when the guard of :func:`_trim` holds, else ``None``.

    The guard: fewer than 200 lines a side (``difflib`` junks nothing), neither middle
    empty, and no line of ``P`` or ``S`` in either middle.
    """
    if len(after) >= _AUTOJUNK_LINES or len(before) >= _AUTOJUNK_LINES:
        return None
    prefix, suffix = _shared_ends(before, after)
    old, new = before[prefix : len(before) - suffix], after[prefix : len(after) - suffix]
    if not old or not new:
        return None
    shared = set(before[:prefix])
    shared.update(before[len(before) - suffix :])
    if not shared.isdisjoint(old) or not shared.isdisjoint(new):
        return None
    return prefix, suffix


def _unified_range(start: int, stop: int) -> str:
    """A hunk header's range, as ``difflib`` writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _one_replacement(
    before: list[str], after: list[str], offset: int, fromfile: str, tofile: str
) -> str | None:
    """The diff when ``difflib`` can only answer "replace the middles", without it.

    With the guard of :func:`_trim` (``P`` and ``S`` are matched whole, the middles as
    they would be alone) and no line the middles share, the middles have no matching
    block: ``difflib`` finds ``P`` equal, ``X`` replaced by ``Y``, ``S`` equal, one hunk
    with :data:`CONTEXT` lines of ``P`` and ``S`` around the change. A mutant's change is
    almost always so; anything else is ``None`` (``difflib`` decides).

    Args:
        before: The window's original lines.
        after: The window's mutated lines.
        offset: Lines of the original above the window.
        fromfile: Label of the original.
        tofile: Label of the mutant.
    """
    ends = _guarded_ends(before, after)
    if ends is None:
        return None
    prefix, suffix = ends
    old, new = before[prefix : len(before) - suffix], after[prefix : len(after) - suffix]
    if not set(old).isdisjoint(new):
        return None
    top = prefix - min(CONTEXT, prefix)
    bottom = min(CONTEXT, suffix)
    old_stop = len(before) - suffix + bottom
    new_stop = len(after) - suffix + bottom
    lines = [
        f"--- {fromfile}\n",
        f"+++ {tofile}\n",
        f"@@ -{_unified_range(top + offset, old_stop + offset)}"
        f" +{_unified_range(top + offset, new_stop + offset)} @@\n",
        *(" " + line for line in before[top:prefix]),
        *("-" + line for line in old),
        *("+" + line for line in new),
        *(" " + line for line in before[len(before) - suffix : old_stop]),
    ]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _trim(before: list[str], after: list[str]) -> tuple[int, int] | None:
    """How many shared lines to cut from the top and the bottom without changing the diff.

    With ``P`` the lines both sides start with and ``S`` those they end with, the
    middles ``X`` and ``Y`` differ. When neither middle is empty, no line of ``P`` or
    ``S`` occurs in ``X`` or ``Y`` and ``difflib`` junks nothing (fewer than 200 lines),
    every block ``difflib`` can match lies in one part of each side (the middles keep
    ``P`` and ``S`` apart), and blocks of ``P`` against ``S`` are never longest: ``P``
    and ``S`` are each matched whole, along their diagonal, and split the ranges
    exactly at the middles' ends, so the middles are matched as they would be alone.
    Keeping :data:`CONTEXT` lines of ``P`` and ``S`` then gives the same hunks, whose
    line numbers shift by the lines cut from the top.

    Args:
        before: The window's original lines.
        after: The window's mutated lines.

    Returns:
        ``(top, bottom)`` lines to cut, or ``None`` when nothing can be cut safely.
    """
    ends = _guarded_ends(before, after)
    if ends is None:
        return None
    prefix, suffix = ends
    top = max(prefix - CONTEXT, 0)
    bottom = max(suffix - CONTEXT, 0)
    if not top and not bottom:
        return None
    return top, bottom
