"""A program's exceptions as the text its results carry (standard library only).

Runs in the program process (``program.py``), beside the program's code: the text leaves
out the runtime's own frames (they differ per backend), is cut to :data:`ERROR_CHARS`,
and a plain exception's text is kept by what decides it, so variants of one program that
raise the same exceptions at the same places are formatted once.
"""

from __future__ import annotations

import itertools
import os
import traceback
import types
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from . import pinned
else:
    import pinned

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

ERROR_CHARS = 2000
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))


_DESCRIBED: dict[tuple[object, ...], str] = {}
_SCALARS = (int, str, float, bool, type(None))


def _description_key(exc: BaseException) -> tuple[object, ...] | None:
    """All that decides a plain exception's description (``None``: not a plain one).

    Plain: a builtin exception type other than the ones whose text may name things from
    the frames (``NameError``, ``AttributeError``, ``ImportError``), scalar arguments,
    nothing chained, no notes. Its text is then decided by its type, arguments and each
    frame's file, function, line and position (the source lines are the files').
    """
    kind = type(exc)
    if (
        kind.__module__ != "builtins"
        or issubclass(kind, NameError | AttributeError | ImportError | SyntaxError)
        or exc.__cause__ is not None
        or exc.__context__ is not None
        or "__notes__" in vars(exc)
        or not all(type(a) in _SCALARS for a in exc.args)
    ):
        return None
    frames: list[object] = [kind, exc.args]
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, code.co_name, tb.tb_lineno, _position(code, tb.tb_lasti)))
        tb = tb.tb_next
    return tuple(frames)


_POSITIONS: dict[tuple[int, int], tuple[object, object]] = {}


def _position(code: types.CodeType, lasti: int) -> object:
    """Where in its line an instruction is (kept with its code: the id stays its own)."""
    key = (id(code), lasti)
    kept = _POSITIONS.get(key)
    if kept is None or kept[0] is not code:
        if len(_POSITIONS) >= 65536:
            _POSITIONS.clear()
        position = next(itertools.islice(code.co_positions(), lasti // 2, None), None)
        kept = _POSITIONS[key] = (code, position)
    return kept[1]


def describe(exc: BaseException) -> str:
    """The exception as text, without the runtime's own frames (they differ per backend).

    A plain exception's text is kept by what decides it (:func:`_description_key`):
    variants of one program raise the same exceptions at the same places, and the
    formatting (source lines, position carets) costs more than most calls.
    """
    try:
        key = _description_key(exc)
    except BaseException:
        key = None
    if key is not None and key in _DESCRIBED:
        return _DESCRIBED[key]
    text = _format(exc)
    if key is not None:
        if len(_DESCRIBED) >= 4096:
            _DESCRIBED.clear()
        _DESCRIBED[key] = text
    return text


def _format(exc: BaseException) -> str:
    try:
        report = traceback.TracebackException.from_exception(exc, limit=-8)
        report.stack = traceback.StackSummary.from_list(
            [
                f
                for f in report.stack
                if os.path.dirname(os.path.abspath(f.filename)) != _RUNTIME_DIR
            ]
        )
        text = "".join(report.format())
    except BaseException:
        text = f"{type(exc).__name__} (could not format the exception)"
    return text[-ERROR_CHARS:]
