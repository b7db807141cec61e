"""Turn what an untrusted program returned into a canonical ARC grid.

This module runs inside the sandbox, in the same process as untrusted code, under a
bare ``python -I``. It therefore uses the standard library only (never ``numpy``,
never ``arcjudge``) and binds every builtin it needs to a private module name at
import time, so that later monkeypatching of :mod:`builtins` by the untrusted code
cannot change what it does.

A canonical grid is an immutable tuple of tuples of exact Python ``int`` values in
``0..9``: rectangular, with ``1..MAX_SIDE`` rows and ``1..MAX_SIDE`` columns.

Rules of :func:`canonicalize` (for program results):

* The outer container must be of exact type ``list`` or ``tuple`` (subclasses are
  rejected: they can lie through ``__len__``, ``__iter__``, ``__getitem__`` or
  ``__eq__``), or exactly a ``numpy.ndarray`` (found through ``sys.modules``, never
  imported) that is 2-D, within the size bounds and of dtype kind ``b``, ``i``, ``u``
  or ``f``.
* Rows are exact ``list``/``tuple`` or 1-D exact ``numpy.ndarray`` values.
* Cells are exact ``int``; ``bool`` (``True`` -> 1); finite integral exact ``float``
  (``2.0`` -> 2); or numpy ``integer``, ``bool_`` and ``floating`` scalars (same float
  rules). Every converted value is checked again to be an exact ``int``.
* Sizes are checked before anything is iterated or copied, so huge inputs are
  rejected in constant time.

:func:`validate_plain` is the strict variant for data parsed by ``json.loads`` from
an untrusted peer: exact ``list`` of exact ``list`` of exact ``int`` only.

:func:`to_wire` and :func:`from_wire` carry a canonical grid between processes as
``[width, digits]``: the cells row by row as one string of ASCII digits, which JSON
encodes and parses several times faster than nested lists. :func:`from_wire` is strict;
:func:`check_wire` is its check alone (the harness compares checked wire forms as they
are and decodes with :func:`decode_wire` only the grids it needs).

Neither :func:`canonicalize` nor :func:`validate_plain` ever raises for any input (except
:class:`KeyboardInterrupt`); on failure they return ``(None, reason)`` with a short
human-readable reason.
"""

from __future__ import annotations

import itertools
import math
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import pinned
else:
    try:  # the harness imports this module from the package, the supervisor by bare name
        from . import pinned
    except ImportError:
        import pinned

if TYPE_CHECKING:
    from typing import Any, Protocol, SupportsFloat, SupportsInt, TypeGuard

    class _DType(Protocol):
        @property
        def kind(self) -> object: ...

    class _NdArray(Protocol):
        """What is read of a ``numpy.ndarray`` (the type of each value is checked)."""

        @property
        def ndim(self) -> object: ...
        @property
        def shape(self) -> object: ...
        @property
        def dtype(self) -> _DType: ...
        def tolist(self) -> object: ...


__all__ = [
    "MAX_SIDE",
    "Grid",
    "canonical_wire",
    "canonicalize",
    "check_wire",
    "decode_wire",
    "exact_grid",
    "from_wire",
    "to_wire",
    "validate_plain",
]

pinned.pin(globals())  # see pinned.py; the names below are bound once as well

Grid = tuple[tuple[int, ...], ...]

# ARC grids are 1..30 per side, but the ARC-GEN stable set holds grids of up to 75 rows or
# columns (445 of its 200,000 grids, in 6 tasks), and a correct verifier must be able to
# return them. 100 keeps the size bound (10,000 cells) while accepting all of them.
MAX_SIDE = 100

# Builtins bound once, at import time: untrusted code may later replace the names in
# ``builtins`` (or shadow them), and none of that must change behaviour here.
_type = type
_len = len
_int = int
_bool = bool
_float = float
_str = str
_list = list
_tuple = tuple  # type: ignore[type-arg]  # the class itself, so ``_type(x) is _tuple`` narrows
_range = range
_repr = repr
_isinstance = isinstance
_issubclass = issubclass
_getattr = getattr
_BaseException = BaseException
_KeyboardInterrupt = KeyboardInterrupt
_math_isfinite = math.isfinite
_float_is_integer = float.is_integer
_int_bit_length = int.bit_length
_sys_modules = sys.modules
_sys_modules_get = sys.modules.get
# The C-level getter of ``type.__name__``: a metaclass cannot override it.
_type_name_getter = type.__dict__["__name__"].__get__
_set = set
_map = map
_iter = iter
_zip = zip
_INT_ONLY = frozenset({int})
_ROW_TYPES = {False: frozenset({list, tuple}), True: frozenset({list})}  # by ``strict``
_COLORS = frozenset(range(10))
_bytes = bytes
_chain = itertools.chain.from_iterable
_str_isascii = str.isascii
_str_isdigit = str.isdigit
_str_encode = str.encode
_bytes_translate = bytes.translate
_bytes_decode = bytes.decode
_TO_DIGITS = bytes.maketrans(bytes(range(10)), b"0123456789")
# cells 0..9 to their digits, every other byte to a non-digit: one pass checks and spells
_TO_DIGITS_ONLY = b"0123456789" + b"x" * 246
_bytes_isdigit = bytes.isdigit
_FROM_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))

_MAX_NAME = 60
_ARRAY_KINDS = ("b", "i", "u", "f")
# By number of dimensions: what it is (a grid of rows, a row of cells), what its items are
_WHAT = {2: "grid", 1: "grid row"}
_ITEMS = {2: " rows", 1: " columns"}
_EMPTY = {2: "empty grid", 1: "empty row"}
_Result = tuple[Grid | None, str | None]


def _type_name(obj: object) -> str:
    """Return the (truncated) name of the type of ``obj`` without running its code."""
    try:
        name = _type_name_getter(_type(obj))
    except _BaseException:  # pragma: no cover - the getter is C code on a real type
        return "?"
    if _type(name) is not _str:  # pragma: no cover - defensive
        return "?"
    if _len(name) > _MAX_NAME:
        return name[:_MAX_NAME] + "..."
    return name


def _int_text(value: int) -> str:
    """Return a short text form of an exact ``int`` (huge values are summarised)."""
    if -(10**12) <= value <= 10**12:
        return _repr(value)
    return "huge (" + _repr(_int_bit_length(value)) + " bits)"


class _Numpy:
    """The numpy types needed here, looked up in ``sys.modules`` (never imported)."""

    __slots__ = ("bool_", "floating", "integer", "ndarray", "timedelta64")

    def __init__(self, ndarray: type, bool_: type, integer: type, floating: type, td: type) -> None:
        self.ndarray = ndarray
        self.bool_ = bool_
        self.integer = integer
        self.floating = floating
        self.timedelta64 = td


def _numpy() -> _Numpy | None:
    """Return numpy's types if numpy is already loaded and looks sane, else ``None``."""
    np = _sys_modules_get("numpy")
    if np is None:
        return None
    try:
        types = (
            _getattr(np, "ndarray"),
            _getattr(np, "bool_"),
            _getattr(np, "integer"),
            _getattr(np, "floating"),
            _getattr(np, "timedelta64"),
        )
    except _BaseException as exc:
        if _isinstance(exc, _KeyboardInterrupt):
            raise
        return None
    for t in types:
        if _type(t) is not _type:
            return None
    return _Numpy(*types)


def _is_ndarray(x: object, np: _Numpy) -> TypeGuard[_NdArray]:
    """Whether ``x`` is exactly a ``numpy.ndarray``."""
    return _type(x) is np.ndarray


def _is_numpy_integer(x: object, np: _Numpy) -> TypeGuard[SupportsInt]:
    """Whether ``x`` is a numpy integer scalar (``timedelta64`` is not a cell)."""
    t = _type(x)
    return _issubclass(t, np.integer) and not _issubclass(t, np.timedelta64)


def _is_numpy_floating(x: object, np: _Numpy) -> TypeGuard[SupportsFloat]:
    """Whether ``x`` is a numpy floating scalar."""
    return _issubclass(_type(x), np.floating)


def _is_sequence(x: object, strict: bool) -> TypeGuard[list[object] | tuple[object, ...]]:
    """Whether ``x`` is an exact ``list`` (or exact ``tuple`` unless ``strict``)."""
    t = _type(x)
    return t is _list or (t is _tuple and not strict)


def _float_cell(f: float) -> tuple[int | None, str | None]:
    """Convert an exact ``float`` cell (finite, integral, in range) to an ``int``."""
    if f != f:
        return None, "NaN cell"
    if not _math_isfinite(f):
        return None, "infinite cell: " + _repr(f)
    if not _float_is_integer(f):
        return None, "non-integral cell: " + _repr(f)
    if not 0.0 <= f <= 9.0:
        if -1e12 <= f <= 1e12:
            return None, "cell out of range: " + _repr(_int(f))
        return None, "cell out of range: " + _repr(f)
    return _int(f), None


def _cell(x: object, np: _Numpy | None, strict: bool) -> tuple[int | None, str | None]:
    """Convert one cell to an ``int`` in ``0..9`` or explain why it cannot be one."""
    # ``_type(x) is ...`` each time, not once into a variable: that is what narrows ``x``
    if _type(x) is _int:
        v = x
    elif strict:
        return None, "unsupported cell type: " + _type_name(x)
    elif _type(x) is _bool:
        v = 1 if x is True else 0
    elif _type(x) is _float:
        return _float_cell(x)
    elif np is not None and _issubclass(_type(x), np.bool_):
        b = _bool(x)
        v = 1 if b is True else 0
    elif np is not None and _is_numpy_integer(x, np):
        v = _int(x)
        if _type(v) is not _int:  # pragma: no cover - int() always returns an exact int
            return None, "unsupported cell type: " + _type_name(x)
    elif np is not None and _is_numpy_floating(x, np):
        f = _float(x)
        if _type(f) is not _float:  # pragma: no cover - float() returns an exact float
            return None, "unsupported cell type: " + _type_name(x)
        return _float_cell(f)
    else:
        return None, "unsupported cell type: " + _type_name(x)
    if 0 <= v <= 9:
        return v, None
    return None, "cell out of range: " + _int_text(v)


def _side_problem(side: int, ndim: int) -> str | None:
    """Why ``side`` items cannot make a grid (``ndim`` 2: rows) or a row (1: cells), or ``None``."""
    if side == 0:
        return _EMPTY[ndim]
    if side > MAX_SIDE:
        return "too big: " + _int_text(side) + _ITEMS[ndim]
    return None


def _array_to_list(arr: _NdArray, ndim: int) -> tuple[list[object] | None, str | None]:
    """Check an exact ``numpy.ndarray``'s shape and dtype, then convert it to lists.

    Args:
        arr: The array (its type has already been checked to be exactly ``ndarray``).
        ndim: The required number of dimensions (2 for a grid, 1 for a row).

    Returns:
        ``(list, None)`` with the ``tolist()`` result, or ``(None, reason)``.

    """
    what = _WHAT[ndim]
    got = arr.ndim
    if _type(got) is not _int:
        return None, "not a " + what + ": array with bad ndim"
    if got != ndim:
        return None, "not a " + what + ": " + _int_text(got) + "-D array"
    shape = arr.shape
    if _type(shape) is not _tuple or _len(shape) != ndim:
        return None, "not a " + what + ": array with bad shape"
    for side in shape:
        if _type(side) is not _int:
            return None, "not a " + what + ": array with bad shape"
    if not (0 < shape[0] <= MAX_SIDE and 0 < shape[-1] <= MAX_SIDE):
        return None, _side_problem(shape[0], ndim) or _side_problem(shape[-1], 1)
    kind = arr.dtype.kind
    if _type(kind) is not _str or kind not in _ARRAY_KINDS:
        return None, "unsupported array dtype: " + _str(arr.dtype)[:_MAX_NAME]
    out = arr.tolist()
    if _type(out) is not _list or _len(out) != shape[0]:
        return None, "not a " + what + ": array conversion failed"
    return out, None


def _convert(value: object, strict: bool) -> _Result:
    """Do the work of :func:`canonicalize` (``strict=False``) or :func:`validate_plain`."""
    np = None if strict else _numpy()
    rows_in, reason = _items(value, 2, np, strict)
    if rows_in is None:
        return None, reason

    # First pass: row types and sizes (at most MAX_SIDE rows, each O(1) to size up).
    rows: list[tuple[object, ...]] = []
    width = -1
    for row in rows_in:
        if _is_sequence(row, strict) and 0 < _len(row) <= MAX_SIDE:
            cells = _tuple(row)  # the common case, without the call below
        else:
            listed, reason = _items(row, 1, np, strict)
            if listed is None:
                return None, reason
            cells = listed
        if width == -1:
            width = _len(cells)
        elif _len(cells) != width:
            return None, "ragged rows"
        rows.append(cells)

    # Second pass: the cells (at most MAX_SIDE * MAX_SIDE of them).
    out: list[tuple[int, ...]] = []
    for cells in rows:
        converted: list[int] = []
        for x in cells:
            v, reason = _cell(x, np, strict)
            if v is None:
                return None, reason
            converted.append(v)
        if _len(converted) != width:  # pragma: no cover - defensive
            return None, "ragged rows"
        out.append(_tuple(converted))
    return _tuple(out), None


def _items(
    value: object, ndim: int, np: _Numpy | None, strict: bool
) -> tuple[tuple[object, ...] | None, str | None]:
    """A snapshot of a grid's rows (``ndim`` 2) or a row's cells (1), sizes checked.

    The snapshot is taken once: nothing done later can change the items looked at.
    """
    if _is_sequence(value, strict):
        n = _len(value)
        if not 0 < n <= MAX_SIDE:
            return None, _side_problem(n, ndim)
        items = _tuple(value)
    elif np is not None and _is_ndarray(value, np):
        listed, reason = _array_to_list(value, ndim)
        if listed is None:
            return None, reason
        items = _tuple(listed)
    else:
        return None, "not a " + _WHAT[ndim] + ": " + _type_name(value)
    if _len(items) == 0:  # pragma: no cover - the length was checked above
        return None, _EMPTY[ndim]
    return items, None


def _check(value: object, strict: bool) -> _Result:
    """:func:`canonicalize` (``strict=False``) or :func:`validate_plain` (``strict=True``).

    The fast path first; else :func:`_convert`, with any exception turned into a reason.
    """
    fast = _fast(value, strict)
    if fast is not None:
        return fast, None
    try:
        return _convert(value, strict)
    except _BaseException as exc:
        if _isinstance(exc, _KeyboardInterrupt):
            raise
        return None, "could not read output: " + _type_name(exc)


def canonicalize(value: object) -> tuple[Grid | None, str | None]:
    """Turn what a program returned into a canonical grid.

    Accepts exact ``list``/``tuple`` containers (or exact 2-D ``numpy.ndarray``
    values, when numpy is already loaded) of rows that are exact ``list``/``tuple``
    or 1-D ``numpy.ndarray`` values, holding ``int``, ``bool``, finite integral
    ``float`` or numpy integer/bool/floating cells in ``0..9``. See the module
    docstring for the full rules.

    Args:
        value: Anything at all; typically the return value of an untrusted program.

    Returns:
        ``(grid, None)`` with an immutable tuple of tuples of ``int`` on success, or
        ``(None, reason)`` with a short human-readable reason. Never raises (other
        than :class:`KeyboardInterrupt`).

    """
    return _check(value, False)


def exact_grid(value: object) -> Grid | None:
    """The grid itself, as tuples, if it is already exact (no conversion needed), else ``None``.

    Args:
        value: Any value.

    Returns:
        The canonical grid when ``value`` is a list or tuple of lists or tuples of exact
        ``int`` cells in 0..9 within the size bounds; ``None`` otherwise. Never raises.
    """
    return _fast(value, False)


def _fast(value: object, strict: bool) -> Grid | None:
    """The common case, checked at C speed; ``None`` means "check the slow way".

    ``strict``: exact lists only (as :func:`validate_plain` wants), else lists or tuples.
    Only built-in types are touched before the cell types are known to be exact ``int``, so
    no code of the program runs here (no ``__len__``, ``__iter__`` or ``__hash__`` of its own).
    """
    try:
        if not _is_sequence(value, strict) or not 1 <= _len(value) <= MAX_SIDE:
            return None
        rows: list[Any] | tuple[Any, ...] = value  # rows of unknown type: checked next
        if not _set(_map(_type, rows)) <= _ROW_TYPES[strict]:
            return None
        widths = _set(_map(_len, rows))
        if _len(widths) != 1:
            return None
        (width,) = widths
        if not 1 <= width <= MAX_SIDE:
            return None
        if _set(_map(_type, _chain(rows))) != _INT_ONLY:
            return None
        if not _set(_chain(rows)) <= _COLORS:
            return None
        return _tuple(_map(_tuple, rows))
    except Exception:
        return None


def validate_plain(obj: object) -> tuple[Grid | None, str | None]:
    """Strictly validate a grid decoded by ``json.loads`` from an untrusted peer.

    Only an exact ``list`` of exact ``list`` of exact ``int`` values in ``0..9`` is
    accepted (no tuples, no ``bool``, no ``float``, no subclasses), rectangular, with
    ``1..MAX_SIDE`` rows and columns.

    Args:
        obj: The decoded JSON value.

    Returns:
        ``(grid, None)`` with an immutable tuple of tuples of ``int`` on success, or
        ``(None, reason)`` with a short human-readable reason. Never raises (other
        than :class:`KeyboardInterrupt`).

    """
    return _check(obj, True)


def canonical_wire(value: object) -> tuple[list[int | str] | None, str | None]:
    """:func:`canonicalize` then :func:`to_wire`: the wire form of what a program returned.

    The common case (exact ``list``/``tuple`` rows of exact ``int`` cells in 0..9) goes
    straight to the wire form at C speed, without building the grid; as in
    :func:`_fast`, no code of the program runs on that path. Anything else goes through
    :func:`canonicalize`.

    Args:
        value: Anything at all; typically the return value of an untrusted program.

    Returns:
        ``([width, digits], None)``, or ``(None, reason)``. Never raises (other than
        :class:`KeyboardInterrupt`).
    """
    try:
        if _is_sequence(value, False) and 1 <= _len(value) <= MAX_SIDE:
            rows: list[Any] | tuple[Any, ...] = value
            if _set(_map(_type, rows)) <= _ROW_TYPES[False]:
                widths = _set(_map(_len, rows))
                if _len(widths) == 1:
                    (width,) = widths
                    if 1 <= width <= MAX_SIDE and _set(_map(_type, _chain(rows))) == _INT_ONLY:
                        flat = _bytes(_chain(rows))  # exact ints: ValueError outside 0..255
                        if _len(flat) == width * _len(rows):
                            digits = _bytes_translate(flat, _TO_DIGITS_ONLY)
                            if _bytes_isdigit(digits):  # no cell above 9
                                return [width, _bytes_decode(digits)], None
    except Exception:
        pass
    grid, reason = _check(value, False)
    if grid is None:
        return None, reason
    return to_wire(grid), None


def to_wire(grid: Grid) -> list[int | str]:
    """The wire form ``[width, digits]`` of a canonical grid.

    Args:
        grid: A canonical grid (as :func:`canonicalize` returns it).

    Returns:
        ``[width, "0123..."]``: the width and the cells, row by row, as ASCII digits.
    """
    return [_len(grid[0]), _bytes_decode(_bytes_translate(_bytes(_chain(grid)), _TO_DIGITS))]


def check_wire(obj: object) -> tuple[tuple[int, str] | None, str | None]:
    """Strictly check a grid's wire form received from an untrusted peer, without decoding it.

    Args:
        obj: The decoded JSON value: ``[width, digits]``.

    Returns:
        ``((width, digits), None)`` for a well-formed grid (two cells are equal exactly when
        these pairs are), or ``(None, reason)``. Never raises (other than
        :class:`KeyboardInterrupt`).
    """
    try:
        if _type(obj) is not _list or _len(obj) != 2:
            return None, "not a [width, digits] pair"
        width, digits = obj
        if _type(width) is not _int or _type(digits) is not _str:
            return None, "not a [width, digits] pair"
        cells = _len(digits)
        if not 1 <= width <= MAX_SIDE or cells % width or not 1 <= cells // width <= MAX_SIDE:
            return None, f"bad shape: {cells} cells in rows of {width}"
        if not (_str_isascii(digits) and _str_isdigit(digits)):
            return None, "cells other than the digits 0-9"
        return (width, digits), None
    except _KeyboardInterrupt:
        raise
    except _BaseException:
        return None, "malformed grid"


def decode_wire(width: int, digits: str) -> Grid:
    """The grid of a wire form :func:`check_wire` accepted (or :func:`to_wire` made)."""
    flat = _bytes_translate(_str_encode(digits, "ascii"), _FROM_DIGITS)
    if _len(flat) % width:  # not a checked wire form: the last row is short
        return _tuple(_tuple(flat[k : k + width]) for k in _range(0, _len(flat), width))
    cells = _iter(flat)
    return _tuple(_zip(*[cells] * width))  # rows of ``width`` cells, at C speed


def from_wire(obj: object) -> tuple[Grid | None, str | None]:
    """Strictly parse a grid's wire form received from an untrusted peer.

    Args:
        obj: The decoded JSON value: ``[width, digits]``.

    Returns:
        ``(grid, None)`` with an immutable tuple of tuples of ``int``, or ``(None, reason)``.
        Never raises (other than :class:`KeyboardInterrupt`).
    """
    wire, reason = check_wire(obj)
    if wire is None:
        return None, reason
    try:
        return decode_wire(*wire), None
    except _KeyboardInterrupt:
        raise
    except _BaseException:  # pragma: no cover - a checked wire form always decodes
        return None, "malformed grid"
