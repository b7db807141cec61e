"""Pair lists in their compact JSON spelling, read without the JSON decoder.

ARC-GEN's stable set spells each task's pairs as ``[{"input":[[7,0],[0,7]],"output":...},
...]``: no spaces, ``input`` then ``output``, one digit per cell. A file that is exactly that
(its grids found by a regular expression, everything between them checked to be the
spelling's punctuation) and whose grids are rectangular with
``1..MAX_SIDE`` per side is read here at C speed, straight from its bytes; anything else (a
space, another key, a cell of two digits, a ragged grid) is ``None``, and the caller reads
the file the strict way (``tasks.read_pairs``), which gives the same pairs or the error.
"""

from __future__ import annotations

import re

from arcjudge.grids import MAX_SIDE, Grid

_ROW = rb"\[[0-9](?:,[0-9])*\]"
_GRIDS = re.compile(rb"\[" + _ROW + rb"(?:," + _ROW + rb")*\]")
_FIRST, _OUTPUT, _NEXT, _END = b'[{"input":', b',"output":', b'},{"input":', b"}]"
_VALUES = bytes.maketrans(b"0123456789", bytes(range(10)))


def _grid(text: bytes) -> Grid | None:
    """A grid spelled ``[[d,d],[d,d]]`` (already matched), ``None`` if ragged or too large.

    The spelling has a ``]`` only after each row and at the end, so the grid is rectangular
    with ``width`` cells a row exactly when every row's ``]`` is where ``width`` puts it.
    """
    height = text.count(b"],[") + 1
    cells = text.translate(_VALUES, b"[],")
    width = len(cells) // height
    step = 2 * width + 2  # a row's digits and commas, then "],["
    if (
        not (width <= MAX_SIDE and height <= MAX_SIDE)
        or len(cells) != width * height
        or len(text) != height * step + 1
        or text[2 * width + 1 :: step] != b"]" * height
    ):
        return None
    values = iter(cells)
    return tuple(zip(*[values] * width, strict=False))


def compact_pairs(data: bytes) -> list[tuple[Grid, Grid]] | None:
    """The ``(input, output)`` grids of a file in the compact spelling, else ``None``.

    Args:
        data: The file's bytes.

    Returns:
        The pairs in file order (what decoding the JSON and checking its grids gives), or
        ``None`` when the file is not exactly the compact spelling of valid pairs.
    """
    if data == b"[]":
        return []
    grids = []
    end = 0
    for number, match in enumerate(_GRIDS.finditer(data)):
        # what lies between the grids is exactly the spelling's punctuation, or no fast path
        between = _FIRST if not number else _OUTPUT if number % 2 else _NEXT
        if data[end : match.start()] != between:
            return None
        grid = _grid(match.group())
        if grid is None:
            return None
        grids.append(grid)
        end = match.end()
    if not grids or len(grids) % 2 or data[end:] != _END:
        return None
    return list(zip(grids[0::2], grids[1::2], strict=True))
