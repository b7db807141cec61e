"""Content-based anchors: how a mutation site is named so ids survive unrelated edits.

An anchor names a site by what it *is*, not by where it is: the normalized source text
of the mutated expression plus its occurrence number among identical texts in the same
scope (``a+b#0``), or for assignment operators the assigned name (``x3``). Adding an
operator, or a new site with a different text elsewhere, never renumbers the others.

Ids built from anchors are ``:``-separated, so every id part is escaped with
:func:`escape_id_part` (``%``, ``:`` and non-printable characters become ``%XX``).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict

MAX_ANCHOR_TEXT = 40
"""Longer normalized texts are cut to this many characters plus a short hash."""

_TOKEN = re.compile(
    r"""
    (?P<string>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<comment>\#[^\n]*)
    |(?P<space>(?:\s|\\\n)+)
    |(?P<word>\w+)
    |(?P<other>.)
    """,
    re.VERBOSE,
)


def normalize_code(text: str) -> str:
    """Collapse the layout of a code fragment so equal code gives equal text.

    Comments are dropped and whitespace (including line continuations) is removed,
    except one space between two words (``not x``, ``v for v in row``). String literals
    are kept verbatim.

    Args:
        text: Source of an expression or statement.

    Returns:
        The normalized text, for example ``a+b`` for ``a + b``.
    """
    out: list[str] = []
    pending_space = False
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        piece = match.group()
        if kind in ("space", "comment"):
            pending_space = bool(out)
            continue
        if pending_space and (out[-1][-1:].isalnum() or out[-1][-1:] == "_"):
            if piece[:1].isalnum() or piece[:1] in "_'\"":
                out.append(" ")
        pending_space = False
        out.append(piece)
    return "".join(out)


def shorten(text: str, limit: int = MAX_ANCHOR_TEXT) -> str:
    """Cut a long text to ``limit`` characters plus ``~`` and 8 hex digits of its SHA-1.

    Args:
        text: Normalized text.
        limit: Longest text kept whole.

    Returns:
        ``text`` itself when short enough, else the cut form (still unique in practice).
    """
    if len(text) <= limit:
        return text
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{text[:limit]}~{digest}"


_ESCAPE_ASCII = re.compile(r"[%:\x00-\x1f\x7f]")


def _escape_char(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"%{code:02X}"
    return f"%u{code:04X}" if code < 0x10000 else f"%U{code:08X}"


def escape_id_part(text: str) -> str:
    """Make ``text`` safe as one ``:``-separated id part with no line breaks.

    Args:
        text: Any text.

    Returns:
        ``text`` with ``%``, ``:`` and non-printable characters (control characters,
        line separators...) as ``%XX`` (``%uXXXX``/``%UXXXXXXXX`` beyond Latin-1).
    """
    if text.isascii():
        return _ESCAPE_ASCII.sub(lambda m: _escape_char(m.group()), text)
    return "".join(_escape_char(c) if c in "%:" or not c.isprintable() else c for c in text)


_UNESCAPE = re.compile(r"%(?:u([0-9A-F]{4})|U([0-9A-F]{8})|([0-9A-F]{2}))")


def unescape_id_part(text: str) -> str:
    """Invert :func:`escape_id_part`.

    Args:
        text: One escaped id part.

    Returns:
        The original text.
    """
    return _UNESCAPE.sub(lambda m: chr(int(next(g for g in m.groups() if g), 16)), text)


class AnchorCounter:
    """Numbers identical texts per scope, in the order they are seen (source order)."""

    def __init__(self) -> None:
        self._seen: defaultdict[tuple[str | None, str], int] = defaultdict(int)

    def anchor(self, scope: str | None, text: str) -> str:
        """Anchor for the next occurrence of ``text`` in ``scope``.

        Args:
            scope: The top-level definition the site is in (``None`` at module level).
            text: Raw code text of the site; it is normalized here.

        Returns:
            ``<normalized text, shortened>#<occurrence>``.
        """
        norm = normalize_code(text)
        key = (scope, norm)
        number = self._seen[key]
        self._seen[key] = number + 1
        return f"{shorten(norm)}#{number}"

    def name_anchor(self, scope: str | None, name: str) -> str:
        """Anchor for an assigned name: the bare name, ``#n`` only from the 2nd duplicate.

        Args:
            scope: The top-level definition the assignment is in.
            name: The assigned variable.

        Returns:
            ``name`` the first time, ``name#1``, ``name#2``... for later duplicates.
        """
        key = (scope, "=" + name)
        number = self._seen[key]
        self._seen[key] = number + 1
        return name if number == 0 else f"{name}#{number}"
