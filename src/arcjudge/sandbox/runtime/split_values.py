"""Which values a variant may share with its base's run, and when two are the same (stdlib only).

What ``splitstream.py`` keeps and compares: an environment is shared only while every
value in it is deeply immutable (:func:`frozen`), and values are compared strictly
(:func:`same`: same types, equal, the same ``repr``).
"""

from __future__ import annotations

import functools
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import pinned
else:
    try:  # tests import this module from the package, the supervisor by bare name
        from . import pinned
    except ImportError:
        import pinned

pinned.pin(globals())  # this module runs beside programs: see pinned.py

_PLAIN = (int, bool, str, bytes, float, complex, type(None))
_PLAIN_SET = frozenset(_PLAIN)
_PLAIN_OR_TUPLE = _PLAIN_SET | {tuple}


def frozen(value: object) -> bool:
    """Whether a value is deeply immutable.

    Plain scalars, tuples and frozensets of such, builtin types, and functions, builtins
    and partials over such.
    """
    todo = [value]
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        kind = type(v)
        if kind in _PLAIN:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if kind is tuple or kind is frozenset:
            if not set(map(type, v)) <= _PLAIN_SET:  # type: ignore[call-overload]
                todo.extend(v)  # type: ignore[arg-type]
        elif kind is types.FunctionType:
            fn: types.FunctionType = v  # type: ignore[assignment]
            for cell in fn.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:  # an empty cell: filled later, by someone
                    return False
            todo.append(fn.__defaults__)
            if fn.__kwdefaults__:
                todo.extend(fn.__kwdefaults__.values())
            if fn.__dict__:
                return False
        elif kind is types.BuiltinFunctionType:
            owner = getattr(v, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                todo.append(owner)
        elif kind is functools.partial:
            part: functools.partial[object] = v  # type: ignore[assignment]
            todo.append(part.func)
            todo.extend(part.args)
            todo.extend(part.keywords.values())
        elif kind is type:
            if getattr(v, "__module__", None) != "builtins":
                return False
        else:
            return False
    return True


def same(a: object, b: object) -> bool:
    """Whether two values are the same for any computation that follows (strictly)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    try:
        if kind is types.FunctionType:
            fa: types.FunctionType = a  # type: ignore[assignment]
            fb: types.FunctionType = b  # type: ignore[assignment]
            if (
                fa.__code__ is not fb.__code__
                or fa.__globals__ is not fb.__globals__
                or fa.__dict__
                or fb.__dict__
                or not same(fa.__defaults__, fb.__defaults__)
                or not same(fa.__kwdefaults__ or None, fb.__kwdefaults__ or None)
            ):
                return False
            ca, cb = fa.__closure__ or (), fb.__closure__ or ()
            return len(ca) == len(cb) and all(
                same(x.cell_contents, y.cell_contents) for x, y in zip(ca, cb, strict=True)
            )
        if kind is functools.partial:
            pa: functools.partial[object] = a  # type: ignore[assignment]
            pb: functools.partial[object] = b  # type: ignore[assignment]
            return (
                same(pa.func, pb.func)
                and same(pa.args, pb.args)
                and list(pa.keywords) == list(pb.keywords)
                and all(same(pa.keywords[k], pb.keywords[k]) for k in pa.keywords)
            )
        if kind is types.BuiltinFunctionType:
            return bool(a == b)
        if kind is tuple:
            ta: tuple[object, ...] = a  # type: ignore[assignment]
            tb: tuple[object, ...] = b  # type: ignore[assignment]
            if len(ta) != len(tb):
                return False
            if not set(map(type, ta)) <= _PLAIN_OR_TUPLE:
                return all(same(x, y) for x, y in zip(ta, tb, strict=True))
        elif kind is frozenset:
            if sys.getsizeof(a) != sys.getsizeof(b):
                return False
        elif kind not in _PLAIN:
            return False  # mutable or unknown: never the same for what follows
        return bool(a == b) and repr(a) == repr(b)
    except Exception:
        return False
