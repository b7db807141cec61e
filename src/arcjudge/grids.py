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

A grid's *compact form* (:data:`WireGrid`) is ``(width, digits)``: its cells row by row
as ASCII digits, the form the sandbox replies with, the result store keeps and answers are
compared in. :func:`compact` makes it of the harness's own grids, :func:`wire_of` of a
grid that must be one, :func:`grid_of` decodes it, and :class:`LazyGrids` holds a result's
grids in either form, making each from the other when it is first read.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from operator import ne as _ne

# The one import from the sandbox: its runtime's stdlib-only canonicalizer (the supervisor
# runs that directory as it is, so the rules live there; tests/test_layout.py).
from arcjudge.sandbox.runtime.canonical import MAX_SIDE, canonicalize, decode_wire, validate_plain

__all__ = [
    "MAX_SIDE",
    "Grid",
    "GridRejected",
    "LazyGrids",
    "WireGrid",
    "canonical_distance",
    "canonicalize",
    "compact",
    "grid_of",
    "hamming_distance",
    "is_grid",
    "same_shape",
    "to_grid",
    "to_lists",
    "validate_plain",
    "wire_distance",
    "wire_of",
]

Grid = tuple[tuple[int, ...], ...]
"""A canonical grid: an immutable tuple of tuples of ``int`` in ``0..9`` (see above)."""

WireGrid = tuple[int, str]
"""A checked grid in its compact form ``(width, digits)``: the cells row by row as ASCII
digits (``canonical.check_wire``). Two grids are equal exactly when their forms are."""


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


_TO_DIGITS = bytes.maketrans(bytes(range(10)), b"0123456789")
_DIGIT_BYTES = bytes(range(10))


def compact(grid: Sequence[Sequence[int]]) -> WireGrid | None:
    """The compact form of one of the harness's own grids, ``None`` if not a grid of 0..9.

    For trusted grids only (task files, checked replies): cells are read as ``bytes``
    reads them, without the exact-type checks ``canonical`` makes on a program's values,
    so it costs a few C-level passes over the cells.
    """
    try:
        width = len(grid[0])
        flat = bytes(itertools.chain.from_iterable(grid))
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    rows = len(grid)
    if (
        not (0 < width <= MAX_SIDE and 0 < rows <= MAX_SIDE)
        or len(flat) != width * rows
        or flat.translate(None, _DIGIT_BYTES)  # a cell outside 0..9 is left over
        or len(set(map(len, grid))) != 1
    ):
        return None
    return width, flat.translate(_TO_DIGITS).decode("ascii")


def wire_of(grid: Grid) -> WireGrid:
    """The compact form of a canonical grid (see :data:`WireGrid`).

    Raises:
        ValueError: If ``grid`` is not a grid of 0..9.
    """
    wire = compact(grid)
    if wire is None:
        raise ValueError("not a grid of cells 0..9")
    return wire


def grid_of(wire: WireGrid) -> Grid:
    """The grid of a compact form (see :data:`WireGrid`)."""
    return decode_wire(*wire)


class LazyGrids:
    """A result's two grids, each held in the form it came in and made in the other on demand.

    ``grid`` is the answer (a generator sample's input) and ``output`` a generator sample's
    output. A result decoded from a supervisor's reply or read from the result store has
    them in compact form (``wire``, ``output_wire``) and decodes a grid only when it is read,
    so comparing answers costs no decoding; a result made from grids makes their compact
    forms when those are first read. The base of ``RunResult`` (the sandbox's) and
    ``StoredResult`` (the harness's), so both hold and convert their grids the same way.

    Args:
        grid: The answer grid, or ``None`` (then ``wire``, if any, is decoded when read).
        wire: Its compact form, or ``None`` (then made from ``grid`` when read).
        output: A generator sample's output grid.
        output_wire: Its compact form.
    """

    __slots__ = ("_grid", "_output", "_output_wire", "_wire")

    def __init__(
        self,
        grid: Grid | None = None,
        wire: WireGrid | None = None,
        output: Grid | None = None,
        output_wire: WireGrid | None = None,
    ) -> None:
        self._grid = grid
        self._wire = wire
        self._output = output
        self._output_wire = output_wire

    @property
    def grid(self) -> Grid | None:
        """The answer grid (decoded from ``wire`` the first time it is read)."""
        if self._grid is None and self._wire is not None:
            self._grid = grid_of(self._wire)
        return self._grid

    @property
    def wire(self) -> WireGrid | None:
        """``grid`` in its compact form (``None`` with no grid)."""
        if self._wire is None and self._grid is not None:
            self._wire = wire_of(self._grid)
        return self._wire

    @property
    def output(self) -> Grid | None:
        """A generator sample's output grid (decoded the first time it is read)."""
        if self._output is None and self._output_wire is not None:
            self._output = grid_of(self._output_wire)
        return self._output

    @property
    def output_wire(self) -> WireGrid | None:
        """``output`` in its compact form."""
        if self._output_wire is None and self._output is not None:
            self._output_wire = wire_of(self._output)
        return self._output_wire
