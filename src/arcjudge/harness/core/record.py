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
from typing import Any, Literal, Self, TypeVar, cast

from arcjudge.grids import Grid
from arcjudge.harness.core.codecs import (
    ANY,
    BOOL,
    CELLS,
    EXACT,
    FLOAT,
    GRID,
    INT,
    NONE,
    STR,
    Codec,
    RecordError,
    enum_codec,
    expected,
    fixed,
    literal,
    mapping,
    optional,
    same,
    sequence,
    union,
)

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
_ABSENT: Any = object()  # no value (a missing key, a required field's default)
_STR_KEYS = frozenset({str})


def _nested(cls: type[Record]) -> Codec[Any]:
    def decode(value: object) -> Record:
        if not isinstance(value, Mapping):
            raise expected("object", value)
        return cls.from_json(value)

    def encode(value: Record) -> dict[str, Any]:
        return value.to_json()

    return Codec(cls.__name__, decode, encode, cls)


_PRIMITIVES: dict[object, Codec[Any]] = {
    str: STR,
    int: INT,
    float: FLOAT,
    bool: BOOL,
    type(None): NONE,
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
            return enum_codec(annotation)
        if issubclass(annotation, Record):
            return _nested(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return literal(args)
    if origin in (typing.Union, types.UnionType):
        members = tuple(codec_for(a) for a in args if a is not type(None))
        inner = members[0] if len(members) == 1 else union(members)
        return optional(inner) if type(None) in args else inner
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return sequence(codec_for(args[0]))
        return fixed(tuple(codec_for(a) for a in args))
    if origin in (Mapping, dict, typing.Mapping):
        return mapping(codec_for(args[0]), codec_for(args[1]))
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
                raise expected("object", value).at(self.path[: self.path.index(step)])
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
            None if f.codec.encode is same else f.codec.encode,
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
            EXACT.get(f.codec, _ABSENT) if len(f.path) == 1 else _ABSENT,
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
            raise expected("object", data)
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
            raise expected("object", data)
        value = data.get(tag, _ABSENT)
        if value is _ABSENT:
            raise RecordError("missing", (tag,))
        if not isinstance(value, str) or value not in by_value:
            raise RecordError(f"expected one of {allowed}, got {str(value)[:40]!r}", (tag,))
        return by_value[value].from_json(data)

    return read
