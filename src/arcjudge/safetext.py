r"""Text from untrusted programs made safe to store, serialize and show.

Programs control much of the text the harness handles: exception messages, printed output,
ids and names in input files. Two things can go wrong with such text:

* It may hold lone surrogates (``"\ud800"``): a Python ``str`` can, UTF-8 cannot, so
  SQLite, ``str.encode("utf-8")`` and every file writer would raise
  ``UnicodeEncodeError``. ``clean_text`` replaces each one by its visible escape (the six
  characters ``\ud800``), so nothing is dropped silently.
* Printed to a terminal, control characters and escape sequences can move the cursor,
  clear the screen or rewrite earlier lines. ``terminal_safe`` shows them as escapes.

Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["clean_json", "clean_text", "encode_utf8", "json_dumps", "terminal_safe"]


def clean_text(value: str) -> str:
    r"""Return ``value`` with every lone surrogate replaced by its backslash escape.

    Everything else is unchanged; text that is already valid (the usual case) is returned
    as is after one ``encode`` attempt.

    Args:
        value: Any string, e.g. an error text a program produced.

    Returns:
        A string that encodes to UTF-8 without error: ``"a\ud800b"`` (a lone surrogate)
        becomes ``"a\\ud800b"`` (a backslash, ``ud800``).
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def encode_utf8(value: str) -> bytes:
    """Return ``clean_text(value)`` encoded as UTF-8 (encoding only once when it is valid).

    Args:
        value: Any string.

    Returns:
        The UTF-8 bytes, lone surrogates written as their backslash escapes.
    """
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace")


def clean_json(value: Any) -> Any:
    """Return a copy of a JSON-like value with ``clean_text`` applied to every string.

    Dicts (keys and values), lists and tuples are walked recursively (tuples come back as
    lists, as ``json`` would write them anyway); other values are returned unchanged.

    Args:
        value: A value about to be serialized.

    Returns:
        The cleaned value.
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {
            (clean_text(k) if isinstance(k, str) else k): clean_json(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        if set(map(type, value)) <= _PLAIN:  # a grid row: nothing to clean, at C speed
            return list(value)
        return [clean_json(v) for v in value]
    return value


_PLAIN = frozenset({int, float, bool, type(None)})


def json_dumps(value: Any, **kwargs: Any) -> str:
    r"""``json.dumps`` that never writes a lone surrogate (see ``clean_text``).

    With the default ``ensure_ascii=True`` ``json`` writes every surrogate as a ``\udXXX``
    escape; only when the text holds one is the value cleaned and serialized again, so
    valid values cost a single substring search.

    Args:
        value: The value to serialize.
        **kwargs: Passed to ``json.dumps``.

    Returns:
        The JSON text; it decodes to strings that are all valid UTF-8.
    """
    text = json.dumps(value, **kwargs)
    if kwargs.get("ensure_ascii", True):
        if "\\ud" not in text:
            return text
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return text
    return json.dumps(clean_json(value), **kwargs)


# C0 controls, DEL, C1 controls (U+009B is a one-character CSI on some terminals), the line
# and paragraph separators, and the bidirectional embedding, override and isolate controls
# (which can make a terminal show text in another order than it is).
_CONTROL_POINTS = [
    *range(0x00, 0x20),
    *range(0x7F, 0xA0),
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
]
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(point: int) -> str:
    if point in _NAMED:
        return _NAMED[point]
    return f"\\x{point:02x}" if point <= 0xFF else f"\\u{point:04x}"


_TABLE = {p: _escape(p) for p in _CONTROL_POINTS}
_TABLE_KEEP = {p: e for p, e in _TABLE.items() if p not in (0x09, 0x0A)}
_CONTROL = re.compile("[" + "".join(re.escape(chr(p)) for p in _CONTROL_POINTS) + "]")


def terminal_safe(value: str, keep_newlines: bool = False) -> str:
    r"""Return ``value`` safe to print on a terminal: no character can control it.

    On top of ``clean_text``, every C0 control character, DEL, every C1 control
    (U+0080..U+009F), the line and paragraph separators and the bidirectional controls are
    written as visible escapes (``\x1b``, ``\x9b``, ``\r``, ``\u202e``), so an error
    text cannot clear the screen, move the cursor or overwrite what was printed before.

    Args:
        value: Text that may come from an untrusted program or input file.
        keep_newlines: Keep ``"\n"`` and ``"\t"`` as they are (for multi-line text);
            by default they are escaped too, so the text stays on one line (table cells).

    Returns:
        The printable text.
    """
    value = clean_text(value)
    if _CONTROL.search(value) is None:
        return value
    return value.translate(_TABLE_KEEP if keep_newlines else _TABLE)
