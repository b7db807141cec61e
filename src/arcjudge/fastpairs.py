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

from arcjudge.grids import MAX_SIDE, Grid, WireGrid

_ROW = rb"\[[0-9](?:,[0-9])*\]"
_GRIDS = re.compile(rb"\[" + _ROW + rb"(?:," + _ROW + rb")*\]")
_FIRST, _OUTPUT, _NEXT, _END = b'[{"input":', b',"output":', b'},{"input":', b"}]"
_VALUES = bytes.maketrans(b"0123456789", bytes(range(10)))


def _grid(text: bytes) -> tuple[Grid, WireGrid] | None:
    """A grid spelled ``[[d,d],[d,d]]`` (already matched) and its compact form.

    ``None`` if ragged or too large. The spelling has a ``]`` only after each row and at
    the end, so the grid is rectangular with ``width`` cells a row exactly when every row's
    ``]`` is where ``width`` puts it. The compact form (``grids.compact``'s) is the digits
    as spelled, so it costs one more pass over the bytes.
    """
    height = text.count(b"],[") + 1
    digits = text.translate(None, b"[],")
    width = len(digits) // height
    step = 2 * width + 2  # a row's digits and commas, then "],["
    if (
        not (width <= MAX_SIDE and height <= MAX_SIDE)
        or len(digits) != width * height
        or len(text) != height * step + 1
        or text[2 * width + 1 :: step] != b"]" * height
    ):
        return None
    values = iter(digits.translate(_VALUES))
    return tuple(zip(*[values] * width, strict=False)), (width, digits.decode("ascii"))


def compact_pairs_with_wires(
    data: bytes,
) -> list[tuple[tuple[Grid, Grid], tuple[WireGrid, WireGrid]]] | None:
    """:func:`compact_pairs`, each pair with its grids' compact forms (``grids.compact``).

    Args:
        data: The file's bytes.

    Returns:
        ``((input, output), (input's compact form, output's))`` per pair in file order,
        or ``None`` as for :func:`compact_pairs`.
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
    return [
        ((grid_in, grid_out), (wire_in, wire_out))
        for (grid_in, wire_in), (grid_out, wire_out) in zip(grids[0::2], grids[1::2], strict=True)
    ]


def compact_pairs(data: bytes) -> list[tuple[Grid, Grid]] | None:
    """The ``(input, output)`` grids of a file in the compact spelling, else ``None``.

    Args:
        data: The file's bytes.

    Returns:
        The pairs in file order (what decoding the JSON and checking its grids gives), or
        ``None`` when the file is not exactly the compact spelling of valid pairs.
    """
    wired = compact_pairs_with_wires(data)
    return None if wired is None else [grids for grids, _wires in wired]
