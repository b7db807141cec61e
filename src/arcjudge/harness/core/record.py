"""Records declared once: a frozen dataclass's fields give its JSON reading and writing.

A record subclasses :class:`Record` and is a ``@dataclass(frozen=True)``. Its fields, in
order, are the keys of its JSON object (the attribute name is the key); each field's type
annotation chooses how its value is read and written (:func:`codec_for`: strings, numbers,
booleans, :class:`~enum.StrEnum` members, grids, tuples, mappings, optional values, nested
records), and ``field(metadata=spec(...))`` says what differs from that plain case::

    @dataclass(frozen=True)
    class TimingLine(Record):
        id: str | int
        seconds: float

    TimingLine("p1", 0.5).to_json()          # {"id": "p1", "seconds": 0.5}
    TimingLine.from_json({"id": "p1", "seconds": "slow"})
    # RecordError: field 'seconds': expected number, got str

:func:`spec` options: another ``key`` (or a path into nested objects); ``omit`` a key when
the value is the field's default (or when a predicate of the record says so); a ``codec``
other than the annotation's; ``flatten`` a nested record's keys into this object; ``extra``
(a mapping that carries every key the record does not own, written first so the record's
own keys win); ``derived`` (a key written from the other fields: a constant tag such as
``kind``, or a function of the record; checked, not stored, when read).

Reading raises :class:`RecordError` (a ``ValueError``) naming the field:
``field 'first_failure.train.index': expected int, got str``. File readers
(:func:`arcjudge.harness.core.jsonl.read_records`) add the file and line.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Self, TypeVar, cast

from arcjudge.grids import Grid, GridRejected, to_grid

__all__ = [
    "ANY",
    "CELLS",
    "GRID",
    "OMIT_DEFAULT",
    "Codec",
    "Record",
    "RecordError",
    "codec_for",
    "spec",
    "tagged",
]

T = TypeVar("T")
R = TypeVar("R", bound="Record")
JsonPath = tuple[str | int, ...]
_ABSENT: Any = object()  # no value (a missing key, a required field's default)
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


def _expected(what: str, value: object) -> RecordError:
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
        return _optional(self)


def _same(value: T) -> T:
    return value


def _scalar(name: str, kinds: type | tuple[type, ...], python: type) -> Codec[Any]:
    def decode(value: object) -> object:
        if type(value) is python or (
            isinstance(value, kinds) and not (isinstance(value, bool) and python is not bool)
        ):
            return value
        raise _expected(name, value)

    return Codec(name, decode, _same, python)


STR: Codec[str] = _scalar("str", str, str)
INT: Codec[int] = _scalar("int", int, int)
FLOAT: Codec[float] = _scalar("number", (int, float), float)
BOOL: Codec[bool] = _scalar("bool", bool, bool)
ANY: Codec[Any] = Codec("any JSON value", _same, _same)
"""Any JSON value, kept as it is."""


def _none(value: object) -> None:
    if value is not None:
        raise _expected("null", value)


_EXACT: dict[Codec[Any], type] = {STR: str, INT: int, FLOAT: float, BOOL: bool}
"""Codecs that take a value of exactly this type as it is (a shortcut when reading)."""

_NONE: Codec[None] = Codec("null", _none, _same, type(None))


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
    raise _expected("list of rows", value)


CELLS: Codec[Grid] = Codec("list of rows", _decode_cells, _encode_grid, tuple)
"""A list of rows, read as written: no rule on the cells (what a first failure shows)."""


def _enum(cls: type[enum.StrEnum]) -> Codec[Any]:
    members = cls._value2member_map_
    allowed = ", ".join(m.value for m in cls)

    def decode(value: object) -> enum.StrEnum:
        if isinstance(value, str) and value in members:
            return cast(enum.StrEnum, members[value])
        raise RecordError(f"expected one of {allowed}, got {str(value)[:40]!r}")

    return Codec(cls.__name__, decode, _same, cls)


def _literal(values: tuple[object, ...]) -> Codec[Any]:
    def decode(value: object) -> object:
        if value in values:
            return value
        raise RecordError(f"expected one of {values}, got {str(value)[:40]!r}")

    return Codec(" or ".join(map(repr, values)), decode, _same, tuple({type(v) for v in values}))


def _optional(inner: Codec[T]) -> Codec[T | None]:
    def decode(value: object) -> T | None:
        return None if value is None else inner.decode(value)

    def encode(value: T | None) -> object:
        return None if value is None else inner.encode(value)

    python = inner.python if isinstance(inner.python, tuple) else (inner.python,)
    return Codec(f"{inner.name} or null", decode, encode, (*python, type(None)))


def _union(members: tuple[Codec[Any], ...]) -> Codec[Any]:
    name = " or ".join(c.name for c in members)

    def decode(value: object) -> object:
        for codec in members:
            try:
                return codec.decode(value)
            except RecordError:
                continue
        raise _expected(name, value)

    def encode(value: object) -> object:
        for codec in members:
            if isinstance(value, codec.python):
                return codec.encode(value)
        raise TypeError(f"{value!r:.40} is none of {name}")

    return Codec(name, decode, encode, tuple(t for c in members for t in _types(c)))


def _types(codec: Codec[Any]) -> tuple[type, ...]:
    return codec.python if isinstance(codec.python, tuple) else (codec.python,)


def _sequence(inner: Codec[T]) -> Codec[tuple[T, ...]]:
    plain = inner.encode is _same

    def decode(value: object) -> tuple[T, ...]:
        if not isinstance(value, list):
            raise _expected(f"list of {inner.name}", value)
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


def _fixed(members: tuple[Codec[Any], ...]) -> Codec[tuple[Any, ...]]:
    size = len(members)
    name = f"list of {size}"

    exact = tuple(_EXACT.get(c, _ABSENT) for c in members)

    def decode(value: object) -> tuple[Any, ...]:
        if not isinstance(value, list) or len(value) != size:
            raise _expected(name, value)
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


def _mapping(keys: Codec[Any], values: Codec[Any]) -> Codec[Mapping[Any, Any]]:
    plain = keys.encode is _same and values.encode is _same
    as_is = plain and keys is STR and values is ANY
    exact = {_EXACT[values]} if keys is STR and values in _EXACT else _ABSENT
    name = f"object of {values.name}"

    def decode(value: object) -> Mapping[Any, Any]:
        if not isinstance(value, Mapping):
            raise _expected("object", value)
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


def _nested(cls: type[Record]) -> Codec[Any]:
    def decode(value: object) -> Record:
        if not isinstance(value, Mapping):
            raise _expected("object", value)
        return cls.from_json(value)

    def encode(value: Record) -> dict[str, Any]:
        return value.to_json()

    return Codec(cls.__name__, decode, encode, cls)


_PRIMITIVES: dict[object, Codec[Any]] = {
    str: STR,
    int: INT,
    float: FLOAT,
    bool: BOOL,
    type(None): _NONE,
    Any: ANY,
    object: ANY,
    Grid: GRID,
}


def codec_for(annotation: object) -> Codec[Any]:
    """The codec of a field's type annotation (resolved, not a string).

    ``str``, ``int``, ``float`` (an int is a number too), ``bool``; ``Any`` and
    ``object`` (any JSON value, as it is); :data:`~arcjudge.grids.Grid` (:data:`GRID`);
    a :class:`~enum.StrEnum` (its values); ``Literal[...]``; ``X | None`` and other unions
    (the first member that reads the value); ``tuple[X, ...]`` and ``tuple[X, Y]``
    (lists); ``Mapping[K, V]`` and ``dict[K, V]`` (objects; ``K`` a string or an enum);
    a :class:`Record` (its object).

    Raises:
        TypeError: The annotation is none of these (a programmer error in a record).
    """
    if annotation in _PRIMITIVES:
        return _PRIMITIVES[annotation]
    if isinstance(annotation, type):
        if issubclass(annotation, enum.StrEnum):
            return _enum(annotation)
        if issubclass(annotation, Record):
            return _nested(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return _literal(args)
    if origin in (typing.Union, types.UnionType):
        members = tuple(codec_for(a) for a in args if a is not type(None))
        inner = members[0] if len(members) == 1 else _union(members)
        return _optional(inner) if type(None) in args else inner
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(codec_for(args[0]))
        return _fixed(tuple(codec_for(a) for a in args))
    if origin in (Mapping, dict, typing.Mapping):
        return _mapping(codec_for(args[0]), codec_for(args[1]))
    raise TypeError(f"no JSON codec for {annotation!r}")


OMIT_DEFAULT: Literal["default"] = "default"
"""``spec(omit=OMIT_DEFAULT)``: the key is left out when the value is the default."""

_SPEC = "arcjudge.record"


def spec(
    *,
    key: str | tuple[str, ...] | None = None,
    omit: Literal["default"] | Callable[[Any], bool] | None = None,
    codec: Codec[Any] | None = None,
    flatten: bool = False,
    extra: bool = False,
    derived: bool | Callable[[Any], Any] = False,
) -> Mapping[str, Any]:
    """A field's JSON options, for ``dataclasses.field(metadata=spec(...))``.

    Args:
        key: The JSON key (the field's name when ``None``), or a path of keys into
            nested objects (``("limits", "wall_seconds")``).
        omit: :data:`OMIT_DEFAULT`: leave the key out when the value equals the field's
            default; a function of the record: leave it out when it says so (the key is
            then required, when read, exactly when it is written).
        codec: The codec to use instead of the annotation's.
        flatten: The field is a record whose keys are written into this object (read
            when its first key is there).
        extra: The field is a mapping of the keys this record does not own: written
            first (the record's own keys win), read as every key not the record's. A
            key the record writes only sometimes is the record's when it holds what the
            record would write there, else a carried key: either way the object is
            written again as it was read.
        derived: The key is written from the other fields, never given: ``True`` for a
            constant (the field's default, as a ``kind`` tag), or a function of the
            record. The field must be ``init=False``. When read, the key must hold what
            would be written.

    Returns:
        The metadata mapping.
    """
    return {
        _SPEC: _FieldSpec(
            key=key, omit=omit, codec=codec, flatten=flatten, extra=extra, derived=derived
        )
    }


@dataclass(frozen=True)
class _FieldSpec:
    key: str | tuple[str, ...] | None = None
    omit: Literal["default"] | Callable[[Any], bool] | None = None
    codec: Codec[Any] | None = None
    flatten: bool = False
    extra: bool = False
    derived: bool | Callable[[Any], Any] = False


@dataclass(frozen=True)
class _Field:
    """A field's plan: how its key is read and written."""

    name: str
    key: str
    path: tuple[str, ...]  # more than one key: a key path into nested objects
    codec: Codec[Any]
    default: Any  # _ABSENT: required (a factory's value, made once, for comparisons)
    omit_default: bool
    omit_when: Callable[[Any], bool] | None
    flatten: type[Record] | None
    derive: Callable[[Any], Any] | None
    derived: bool

    def lookup(self, data: Mapping[str, Any]) -> Any:
        """The value at the field's key (path), or ``_ABSENT``."""
        value: Any = data
        for step in self.path:
            if not isinstance(value, Mapping):
                raise _expected("object", value).at(self.path[: self.path.index(step)])
            value = value.get(step, _ABSENT)
            if value is _ABSENT:
                break
        return value


_Writer = tuple[str, str, tuple[str, ...] | None, Callable[[Any], Any] | None, Any, Any, bool]
_Reader = tuple[str, str, tuple[str, ...] | None, Callable[[Any], Any], bool, Any, Any]


@dataclass(frozen=True)
class _Plan:
    """A record class's plan: its fields' plans, in order, and the loops' tuples."""

    fields: tuple[_Field, ...]
    extra: str | None
    derived: tuple[_Field, ...]
    computed: tuple[_Field, ...]  # derived by a function: set after __init__
    conditional: tuple[_Field, ...]  # omitted when a predicate of the record says so
    writers: tuple[_Writer, ...]  # (name, key, path, encode, omitted value, omit_when, flat)
    readers: tuple[_Reader, ...]  # (name, key, path, decode, required, flat, exact type)
    flat_keys: Mapping[str, tuple[str, ...]]  # a flattened field's keys


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _ABSENT


def _plan(cls: type[Record]) -> _Plan:
    hints = typing.get_type_hints(cls)
    fields, extra = [], None
    for f in dataclasses.fields(cast(Any, cls)):
        options = f.metadata.get(_SPEC, _FieldSpec())
        if options.extra:
            extra = f.name
            continue
        annotation = hints[f.name]
        key = options.key or f.name
        path = key if isinstance(key, tuple) else (key,)
        fields.append(
            _Field(
                name=f.name,
                key=path[0],
                path=path,
                codec=options.codec or codec_for(annotation),
                default=_default(f),
                omit_default=options.omit == OMIT_DEFAULT,
                omit_when=options.omit if callable(options.omit) else None,
                flatten=_record_type(annotation) if options.flatten else None,
                derive=options.derived if callable(options.derived) else None,
                derived=bool(options.derived),
            )
        )
    writers = tuple(
        (
            f.name,
            f.key,
            f.path if len(f.path) > 1 else None,
            None if f.codec.encode is _same else f.codec.encode,
            f.default if f.omit_default else _ABSENT,
            f.omit_when,
            f.flatten is not None,
        )
        for f in fields
    )
    readers = tuple(
        (
            f.name,
            f.key,
            f.path if len(f.path) > 1 else None,
            f.codec.decode,
            f.default is _ABSENT,
            f.flatten,
            _EXACT.get(f.codec, _ABSENT) if len(f.path) == 1 else _ABSENT,
        )
        for f in fields
        if not f.derived
    )
    flat_keys = {
        f.name: tuple(g.key for g in _plan_of(f.flatten).fields) for f in fields if f.flatten
    }
    derived = tuple(f for f in fields if f.derived)
    return _Plan(
        fields=tuple(fields),
        extra=extra,
        derived=derived,
        computed=tuple(f for f in derived if f.derive),
        conditional=tuple(f for f in fields if f.omit_when is not None),
        writers=writers,
        readers=readers,
        flat_keys=flat_keys,
    )


def _record_type(annotation: object) -> type[Record]:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, Record):
            return candidate
    raise TypeError(f"only a record can be flattened, not {annotation!r}")


_PLANS: dict[type, _Plan] = {}


def _plan_of(cls: type[Record]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _plan(cls)
    return plan


class Record:
    """The base of a record: ``to_json`` and ``from_json`` from its dataclass fields.

    Subclasses are ``@dataclass(frozen=True)``; see the module docstring for the fields'
    options. A subclass's ``__post_init__`` (invariants across fields) calls
    ``super().__post_init__()``, which sets the fields derived by a function.
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        for f in _plan_of(type(self)).computed:
            object.__setattr__(self, f.name, f.derive(self))  # type: ignore[misc]

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object (keys in field order; carried keys first)."""
        plan = _PLANS.get(type(self)) or _plan_of(type(self))
        data: dict[str, Any] = {} if plan.extra is None else dict(getattr(self, plan.extra))
        for name, key, path, encode, omitted, omit_when, flat in plan.writers:
            value = getattr(self, name)
            if omitted is not _ABSENT and value == omitted:
                continue
            if omit_when is not None and omit_when(self):
                continue
            if flat:
                if value is not None:
                    data.update(value.to_json())
                continue
            if encode is not None:
                value = encode(value)
            if path is None:
                data[key] = value
                continue
            inner = data
            for step in path[:-1]:
                inner = inner.setdefault(step, {})
            inner[path[-1]] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Read what :meth:`to_json` writes (keys the record does not know are ignored).

        Raises:
            RecordError: A key is missing, a value is not what the field holds, or a
                derived key does not hold what the other fields give.
        """
        if type(data) is not dict and not isinstance(data, Mapping):
            raise _expected("object", data)
        plan = _PLANS.get(cls) or _plan_of(cls)
        if plan.extra is not None:
            return _read_carrying(cls, plan, data)
        values: dict[str, Any] = {}
        for name, key, path, decode, required, flattened, exact in plan.readers:
            if flattened is not None:
                first = plan.flat_keys[name][0]
                if first in data:
                    values[name] = flattened.from_json(data)
                elif required:
                    raise RecordError("missing", (first,))
                continue
            raw = data.get(key, _ABSENT)
            if type(raw) is exact:  # a plain str, int, float or bool: as it is
                values[name] = raw
                continue
            if path is not None and raw is not _ABSENT:
                raw = _plan_field(plan, name).lookup(data)
            if raw is _ABSENT:
                if required:
                    raise RecordError("missing", path or (key,))
                continue
            try:
                values[name] = decode(raw)
            except RecordError as exc:
                raise exc.at(path or key) from None
        record = cls(**values)
        if plan.derived or plan.conditional:
            _check_read(record, plan, data, values)
        return record


def _plan_field(plan: _Plan, name: str) -> _Field:
    return next(f for f in plan.fields if f.name == name)


def _check_read(
    record: Record, plan: _Plan, data: Mapping[str, Any], given: Mapping[str, Any]
) -> None:
    """Derived keys hold what the record writes; a conditional key is there when written."""
    for f in plan.derived:
        written = f.codec.encode(getattr(record, f.name))
        raw = f.lookup(data)
        if raw is _ABSENT:
            raise RecordError("missing", f.path)
        if raw != written:
            shown = written.value if isinstance(written, enum.Enum) else written
            problem = f"expected {shown!r:.60} (from the other fields), got {raw!r:.60}"
            raise RecordError(problem, f.path)
    for f in plan.conditional:
        if f.name not in given and not f.omit_when(record):  # type: ignore[misc]
            raise RecordError("missing", f.path)


def _read_carrying(cls: type[R], plan: _Plan, data: Mapping[str, Any]) -> R:
    """Read a record with an ``extra`` field (see :func:`spec`)."""
    values: dict[str, Any] = {}
    owned: dict[str, tuple[str, ...]] = {}  # field -> the keys it took
    for f in plan.fields:
        if f.derived:
            owned[f.name] = (f.key,)
            continue
        if f.flatten is not None:
            keys = plan.flat_keys[f.name]
            if all(k in data for k in keys):
                part = {k: data[k] for k in keys}
                try:
                    nested = f.flatten.from_json(part)
                except RecordError:
                    continue
                if nested.to_json() == part:
                    values[f.name], owned[f.name] = nested, keys
            continue
        raw = data.get(f.key, _ABSENT)
        if raw is _ABSENT:
            if f.default is _ABSENT:
                raise RecordError("missing", (f.key,))
            continue
        if f.default is _ABSENT:
            try:
                values[f.name] = f.codec.decode(raw)
            except RecordError as exc:
                raise exc.at(f.key) from None
            owned[f.name] = (f.key,)
            continue
        try:
            value = f.codec.decode(raw)
        except RecordError:
            continue  # not what the record writes there: a carried key
        if (f.omit_default and value == f.default) or f.codec.encode(value) != raw:
            continue
        values[f.name], owned[f.name] = value, (f.key,)
    assert plan.extra is not None
    while True:
        taken = {k for keys in owned.values() for k in keys}
        extra = {k: v for k, v in data.items() if k not in taken}
        record = cls(**values, **{plan.extra: extra})
        dropped = [f.name for f in plan.conditional if f.name in values and f.omit_when(record)]  # type: ignore[misc]
        if not dropped:
            break
        for name in dropped:  # the record would not write it: a carried key
            del values[name], owned[name]
    _check_read(record, plan, data, values)
    return record


def tagged(tag: str, *classes: type[R]) -> Callable[[Mapping[str, Any]], R]:
    """A reader of objects that are one of ``classes``, told apart by their ``tag`` key.

    Each class has ``tag`` as a constant derived field (``spec(derived=True)``), its
    default the class's value.

    Raises:
        TypeError: A class has no constant ``tag`` (a programmer error).
    """
    by_value: dict[object, type[R]] = {}
    for cls in classes:
        value = getattr(cls, tag, _ABSENT)
        if value is _ABSENT:
            raise TypeError(f"{cls.__name__} has no {tag!r} tag")
        by_value[value] = cls
    allowed = ", ".join(map(str, by_value))

    def read(data: Mapping[str, Any]) -> R:
        if not isinstance(data, Mapping):
            raise _expected("object", data)
        value = data.get(tag, _ABSENT)
        if value is _ABSENT:
            raise RecordError("missing", (tag,))
        if not isinstance(value, str) or value not in by_value:
            raise RecordError(f"expected one of {allowed}, got {str(value)[:40]!r}", (tag,))
        return by_value[value].from_json(data)

    return read
