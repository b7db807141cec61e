"""JSON codecs: how one value of a record's field is read (checked) and written.

A :class:`Codec` reads a JSON value into its Python value, raising :class:`RecordError`
(what is wrong, and where below the record) when it is not one, and writes it back. The
codecs of the plain types (:data:`STR`, :data:`INT`, :data:`FLOAT`, :data:`BOOL`,
:data:`ANY`, :data:`GRID`, :data:`CELLS`) and the combinators (optional, union, sequence,
fixed tuple, mapping, enum, literal) are here; :func:`arcjudge.harness.core.record.codec_for`
picks them from a field's type annotation.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from arcjudge.grids import Grid, GridRejected, to_grid

__all__ = [
    "ANY",
    "BOOL",
    "CELLS",
    "EXACT",
    "FLOAT",
    "GRID",
    "INT",
    "NONE",
    "STR",
    "Codec",
    "JsonPath",
    "RecordError",
    "enum_codec",
    "expected",
    "fixed",
    "literal",
    "mapping",
    "optional",
    "same",
    "sequence",
    "union",
]

T = TypeVar("T")
JsonPath = tuple[str | int, ...]
_ABSENT: Any = object()  # no value
_STR_KEYS = frozenset({str})


class RecordError(ValueError):
    """A JSON value that is not the record it should be: which field, and what is wrong.

    Attributes:
        problem: What is wrong (``expected int, got str``, ``missing``).
        path: The keys and list indices from the record's object down to the value.
    """

    def __init__(self, problem: str, path: JsonPath = ()) -> None:
        super().__init__(problem, path)
        self.problem = problem
        self.path = path

    def at(self, step: str | int | JsonPath) -> RecordError:
        """The same error, one key (or index, or key path) further out."""
        steps = step if isinstance(step, tuple) else (step,)
        return RecordError(self.problem, (*steps, *self.path))

    def __str__(self) -> str:
        if not self.path:
            return self.problem
        where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in self.path)
        return f"field {where.lstrip('.')!r}: {self.problem}"


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (str, "str"),
    (list, "list"),
    (Mapping, "object"),
    (type(None), "null"),
)


def _json_type(value: object) -> str:
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def expected(what: str, value: object) -> RecordError:
    """The error for a value that is not ``what`` (naming the JSON type it is)."""
    return RecordError(f"expected {what}, got {_json_type(value)}")


@dataclass(frozen=True)
class Codec(Generic[T]):
    """How one value is read from JSON and written to it.

    Attributes:
        name: What the value is, for errors (``int``, ``list of str``).
        decode: JSON value -> Python value; raises :class:`RecordError` (with the path
            below the value) when it is not one.
        encode: Python value -> JSON value (``json.dumps`` writes it; enum members stay
            members, which are their strings).
        python: The Python type(s) of decoded values (a union writes a value with the
            first member codec whose type it has).
    """

    name: str
    decode: Callable[[Any], T]
    encode: Callable[[T], Any]
    python: type | tuple[type, ...] = object

    def optional(self) -> Codec[T | None]:
        """This codec, or ``null`` for ``None``."""
        return optional(self)


def same(value: T) -> T:
    """The value as it is (the codec of values JSON already holds)."""
    return value


def _scalar(name: str, kinds: type | tuple[type, ...], python: type) -> Codec[Any]:
    def decode(value: object) -> object:
        if type(value) is python or (
            isinstance(value, kinds) and not (isinstance(value, bool) and python is not bool)
        ):
            return value
        raise expected(name, value)

    return Codec(name, decode, same, python)


STR: Codec[str] = _scalar("str", str, str)
INT: Codec[int] = _scalar("int", int, int)
FLOAT: Codec[float] = _scalar("number", (int, float), float)
BOOL: Codec[bool] = _scalar("bool", bool, bool)
ANY: Codec[Any] = Codec("any JSON value", same, same)
"""Any JSON value, kept as it is."""


def _none(value: object) -> None:
    if value is not None:
        raise expected("null", value)


EXACT: dict[Codec[Any], type] = {STR: str, INT: int, FLOAT: float, BOOL: bool}
"""Codecs that take a value of exactly this type as it is (a shortcut when reading)."""

NONE: Codec[None] = Codec("null", _none, same, type(None))


def _decode_grid(value: object) -> Grid:
    try:
        return to_grid(value)
    except GridRejected as exc:
        reason = str(exc.reason)
        problem = reason if reason.startswith("not a grid") else f"not a grid: {reason}"
        raise RecordError(problem) from None


def _encode_grid(grid: Grid) -> list[list[int]]:
    return [list(row) for row in grid]


GRID: Codec[Grid] = Codec("grid", _decode_grid, _encode_grid, tuple)
"""A grid (:func:`arcjudge.grids.to_grid`'s rules), written as lists of lists."""


_ROWS = frozenset({list})


def _decode_cells(value: object) -> Grid:
    if type(value) is list and set(map(type, value)) <= _ROWS:
        return tuple(map(tuple, value))
    raise expected("list of rows", value)


CELLS: Codec[Grid] = Codec("list of rows", _decode_cells, _encode_grid, tuple)
"""A list of rows, read as written: no rule on the cells (what a first failure shows)."""


def enum_codec(cls: type[enum.StrEnum]) -> Codec[Any]:
    """A :class:`~enum.StrEnum`'s members, read from and written as their values."""
    members = cls._value2member_map_
    allowed = ", ".join(m.value for m in cls)

    def decode(value: object) -> enum.StrEnum:
        if isinstance(value, str) and value in members:
            return cast(enum.StrEnum, members[value])
        raise RecordError(f"expected one of {allowed}, got {str(value)[:40]!r}")

    return Codec(cls.__name__, decode, same, cls)


def literal(values: tuple[object, ...]) -> Codec[Any]:
    """One of ``values`` (a ``Literal[...]`` annotation), as it is."""

    def decode(value: object) -> object:
        if value in values:
            return value
        raise RecordError(f"expected one of {values}, got {str(value)[:40]!r}")

    return Codec(" or ".join(map(repr, values)), decode, same, tuple({type(v) for v in values}))


def optional(inner: Codec[T]) -> Codec[T | None]:
    """``null`` or what ``inner`` reads."""

    def decode(value: object) -> T | None:
        return None if value is None else inner.decode(value)

    def encode(value: T | None) -> object:
        return None if value is None else inner.encode(value)

    python = inner.python if isinstance(inner.python, tuple) else (inner.python,)
    return Codec(f"{inner.name} or null", decode, encode, (*python, type(None)))


def union(members: tuple[Codec[Any], ...]) -> Codec[Any]:
    """What the first of ``members`` that takes the value reads."""
    name = " or ".join(c.name for c in members)

    def decode(value: object) -> object:
        for codec in members:
            try:
                return codec.decode(value)
            except RecordError:
                continue
        raise expected(name, value)

    def encode(value: object) -> object:
        for codec in members:
            if isinstance(value, codec.python):
                return codec.encode(value)
        raise TypeError(f"{value!r:.40} is none of {name}")

    return Codec(name, decode, encode, tuple(t for c in members for t in _types(c)))


def _types(codec: Codec[Any]) -> tuple[type, ...]:
    return codec.python if isinstance(codec.python, tuple) else (codec.python,)


def sequence(inner: Codec[T]) -> Codec[tuple[T, ...]]:
    """A list of what ``inner`` reads, as a tuple."""
    plain = inner.encode is same

    def decode(value: object) -> tuple[T, ...]:
        if not isinstance(value, list):
            raise expected(f"list of {inner.name}", value)
        items = []
        for index, item in enumerate(value):
            try:
                items.append(inner.decode(item))
            except RecordError as exc:
                raise exc.at(index) from None
        return tuple(items)

    def encode(value: tuple[T, ...]) -> list[Any]:
        return list(value) if plain else [inner.encode(v) for v in value]

    return Codec(f"list of {inner.name}", decode, encode, tuple)


def fixed(members: tuple[Codec[Any], ...]) -> Codec[tuple[Any, ...]]:
    """A list of exactly ``len(members)`` values, each read by its codec, as a tuple."""
    size = len(members)
    name = f"list of {size}"

    exact = tuple(EXACT.get(c, _ABSENT) for c in members)

    def decode(value: object) -> tuple[Any, ...]:
        if not isinstance(value, list) or len(value) != size:
            raise expected(name, value)
        if tuple(map(type, value)) == exact:
            return tuple(value)
        items = []
        for index, (codec, item) in enumerate(zip(members, value, strict=True)):
            try:
                items.append(codec.decode(item))
            except RecordError as exc:
                raise exc.at(index) from None
        return tuple(items)

    def encode(value: tuple[Any, ...]) -> list[Any]:
        return [codec.encode(v) for codec, v in zip(members, value, strict=True)]

    return Codec(name, decode, encode, tuple)


def mapping(keys: Codec[Any], values: Codec[Any]) -> Codec[Mapping[Any, Any]]:
    """An object whose keys ``keys`` reads and whose values ``values`` reads."""
    plain = keys.encode is same and values.encode is same
    as_is = plain and keys is STR and values is ANY
    exact = {EXACT[values]} if keys is STR and values in EXACT else _ABSENT
    name = f"object of {values.name}"

    def decode(value: object) -> Mapping[Any, Any]:
        if not isinstance(value, Mapping):
            raise expected("object", value)
        if as_is:
            return value
        if (
            exact is not _ABSENT
            and set(map(type, value.values())) <= exact
            and set(map(type, value)) <= _STR_KEYS
        ):
            return dict(value)  # every value exactly its type: nothing to read
        result = {}
        for key, item in value.items():
            try:
                result[keys.decode(key)] = values.decode(item)
            except RecordError as exc:
                raise exc.at(key) from None
        return result

    def encode(value: Mapping[Any, Any]) -> dict[Any, Any]:
        if plain:
            return dict(value)
        return {keys.encode(k): values.encode(v) for k, v in value.items()}

    return Codec(name, decode, encode, Mapping)
