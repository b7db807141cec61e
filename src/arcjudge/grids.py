"""ARC grids: canonical form, validation and distance.

A *grid* (:data:`Grid`) is an immutable tuple of tuples of exact Python ``int``
values in ``0..9``. It is rectangular and has ``1..MAX_SIDE`` rows and
``1..MAX_SIDE`` columns (``MAX_SIDE`` is 100: ARC grids are at most 30 per side, but the
ARC-GEN stable set has grids of up to 75).

Whatever a program returns is turned into a grid by :func:`canonicalize`, which is
the same function the sandbox runtime uses (see
:mod:`arcjudge.sandbox.runtime.canonical` for the full rules). In short:

* containers must be of exact type ``list`` or ``tuple`` (subclasses are rejected,
  since they can lie about their length, items or equality), or exact
  ``numpy.ndarray`` values (2-D for a grid, 1-D for a row) of a boolean, integer or
  float dtype;
* cells may be ``int``, ``bool`` (``True`` is 1), finite integral ``float`` (``2.0``
  is 2) or numpy integer, bool and floating scalars; anything else, any value
  outside ``0..9``, NaN, infinities and non-integral floats are rejected;
* sizes are checked before anything is iterated, so huge outputs are rejected at
  once.

:func:`canonicalize` never raises: it returns ``(grid, None)`` or
``(None, reason)``. :func:`to_grid` raises :class:`GridRejected` (a ``ValueError``)
with the reason instead, and :func:`is_grid` only says whether a value is
acceptable. :func:`validate_plain` is the strict check for JSON from an untrusted
peer (lists of lists of ``int`` only).

:func:`hamming_distance` compares two grids of possibly different shapes: both are
padded to the larger height and larger width with ``-1`` and the fraction of cells
that differ is returned, so it is 0.0 exactly for equal grids and 1.0 when no cell
agrees.
"""

from __future__ import annotations

from operator import ne as _ne

from arcjudge.sandbox.runtime.canonical import MAX_SIDE, canonicalize, validate_plain
from arcjudge.sandbox.types import Grid, WireGrid, grid_of

__all__ = [
    "MAX_SIDE",
    "Grid",
    "GridRejected",
    "canonical_distance",
    "canonicalize",
    "hamming_distance",
    "is_grid",
    "same_shape",
    "to_grid",
    "to_lists",
    "validate_plain",
    "wire_distance",
]


class GridRejected(ValueError):
    """A value cannot be turned into a grid; the message is the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def to_grid(value: object) -> Grid:
    """Turn a value into a canonical grid or raise.

    Args:
        value: A grid-like value (see :func:`canonicalize` for what is accepted).

    Returns:
        The canonical grid: an immutable tuple of tuples of ``int`` in ``0..9``.

    Raises:
        GridRejected: If ``value`` is not an acceptable grid; the message says why.

    """
    grid, reason = canonicalize(value)
    if grid is None:
        raise GridRejected(reason or "not a grid")
    return grid


def is_grid(value: object) -> bool:
    """Return whether :func:`canonicalize` accepts ``value``.

    Args:
        value: Anything.

    Returns:
        ``True`` if ``value`` can be turned into a grid, else ``False``. Never raises
        (other than ``KeyboardInterrupt``).

    """
    return canonicalize(value)[0] is not None


def to_lists(grid: Grid) -> list[list[int]]:
    """Return a fresh list-of-lists copy of a grid (for JSON and program inputs).

    Args:
        grid: A grid, or any value :func:`canonicalize` accepts.

    Returns:
        A new list of new lists of ``int``.

    Raises:
        GridRejected: If ``grid`` is not an acceptable grid.

    """
    return [list(row) for row in to_grid(grid)]


def hamming_distance(a: Grid, b: Grid) -> float:
    """Return the padded, normalized Hamming distance between two grids.

    Both grids are padded with ``-1`` to ``max(height) x max(width)``; the result
    is the number of differing cells divided by that area. For example ``[[1]]``
    against ``[[1, 2]]`` gives 0.5.

    Args:
        a: A grid (or any value :func:`canonicalize` accepts).
        b: Another grid (or any value :func:`canonicalize` accepts).

    Returns:
        A float in ``[0.0, 1.0]``: 0.0 if and only if the grids are equal.

    Raises:
        GridRejected: If ``a`` or ``b`` is not an acceptable grid.

    """
    ga = to_grid(a)
    gb = to_grid(b)
    ha, wa = len(ga), len(ga[0])
    hb, wb = len(gb), len(gb[0])
    height, width = max(ha, hb), max(wa, wb)
    differing = 0
    for r in range(height):
        row_a = ga[r] if r < ha else ()
        row_b = gb[r] if r < hb else ()
        for c in range(width):
            va = row_a[c] if c < len(row_a) else -1
            vb = row_b[c] if c < len(row_b) else -1
            if va != vb:
                differing += 1
    return differing / (height * width)


def canonical_distance(a: Grid, b: Grid) -> float:
    """:func:`hamming_distance` for two grids already canonical, without checking them.

    For hot loops over grids that came from :func:`canonicalize` or the task loaders
    (e.g. ranking hundreds of outputs by distance); equal rows are skipped at C speed.

    Args:
        a: A canonical grid.
        b: Another canonical grid.

    Returns:
        The same value as ``hamming_distance(a, b)``.
    """
    ha, hb = len(a), len(b)
    wa, wb = len(a[0]), len(b[0])
    differing = 0
    for ra, rb in zip(a, b, strict=False):  # rows beyond the shorter grid: below
        if ra != rb:
            differing += sum(map(_ne, ra, rb)) + abs(len(ra) - len(rb))
    if ha > hb:
        differing += (ha - hb) * wa
    elif hb > ha:
        differing += (hb - ha) * wb
    return differing / (max(ha, hb) * max(wa, wb))


def wire_distance(a: WireGrid, b: WireGrid) -> float:
    """:func:`canonical_distance` of two grids in their compact forms.

    Grids of the same shape are compared as their digit strings, row by row (equal rows
    skipped at C speed), without decoding them; others are decoded first.

    Args:
        a: A grid's compact form (:data:`~arcjudge.sandbox.types.WireGrid`).
        b: Another's.

    Returns:
        The same value as ``canonical_distance(grid_of(a), grid_of(b))``.
    """
    (width, digits), (other_width, other_digits) = a, b
    if width != other_width or len(digits) != len(other_digits):
        return canonical_distance(grid_of(a), grid_of(b))
    differing = 0
    if digits != other_digits:
        for start in range(0, len(digits), width):
            row, other = digits[start : start + width], other_digits[start : start + width]
            if row != other:
                differing += sum(map(_ne, row, other))
    return differing / len(digits)


def same_shape(a: WireGrid, b: WireGrid) -> bool:
    """Whether two grids in their compact forms have the same height and width."""
    return a[0] == b[0] and len(a[1]) == len(b[1])
