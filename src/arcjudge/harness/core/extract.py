"""Pull the program out of a raw model reply (Markdown with fenced code blocks).

Fences follow CommonMark, read line by line in one pass (linear time, whatever the reply):

* an opening fence is a line of 3 or more backticks or 3 or more tildes, then an info
  string (whose first word is the language); a backtick fence's info string may not hold
  a backtick (``` ```x``` ``` on one line is inline code, not a fence). Unlike CommonMark
  the fence may be indented by any run of spaces and tabs (replies put fences inside list
  items); that indentation is removed from the block's lines that start with it;
* the block ends at a closing fence: a line of the same character, at least as long as the
  opening run, with only spaces and tabs after it, indented by at most 3 columns more than
  the opening fence (as in CommonMark, where 4 columns would make it code: a docstring's
  indented fence does not end the block);
* a fence that is never closed runs to the end of the reply; its code is still used, and
  the extraction records that it was unclosed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

_NON_PYTHON = {"json", "text", "txt", "output", "bash", "sh", "shell", "console", "plaintext"}
_BLANK = " \t\r"  # around fences: spaces, tabs, and the \r of a CRLF line end


@dataclass(frozen=True)
class Extraction:
    """What was taken from a reply.

    Attributes:
        code: The program text ("" when the reply has no code block).
        block: Index of the chosen block among the code blocks (``None`` if none).
        blocks: How many code blocks the reply has.
        reason: How the block was chosen.
        unclosed: Whether the chosen block's fence was never closed (it ran to the end).
    """

    code: str
    block: int | None
    blocks: int
    reason: str
    unclosed: bool = False


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block of a reply.

    Attributes:
        code: Its lines, the opening fence's indentation removed.
        info: The opening fence's info string (stripped).
        unclosed: Whether the reply ended before a closing fence.
    """

    code: str
    info: str
    unclosed: bool

    @property
    def language(self) -> str:
        """The info string's first word, lower-cased ("" when there is none)."""
        words = self.info.split()
        return words[0].lower() if words else ""


def _opening(line: str) -> tuple[str, str, int, str] | None:
    """``(indent, fence character, fence length, info)`` if ``line`` opens a fence."""
    body = line.lstrip(" \t")
    if not body or body[0] not in "`~":
        return None
    char = body[0]
    length = len(body) - len(body.lstrip(char))
    if length < 3:
        return None
    info = body[length:]
    if char == "`" and "`" in info:
        return None
    return line[: len(line) - len(body)], char, length, info.strip(_BLANK)


def _width(indent: str) -> int:
    """Columns of an indentation (tabs to the next multiple of 4, as CommonMark counts)."""
    return len(indent.expandtabs(4))


def _closes(line: str, char: str, length: int, max_indent: int) -> bool:
    """Whether ``line`` is a closing fence of ``length`` or more ``char``."""
    body = line.lstrip(" \t")
    if len(body) < length or body[0] != char:
        return False
    rest = body.lstrip(char)
    if len(body) - len(rest) < length or rest.strip(_BLANK):
        return False
    return _width(line[: len(line) - len(body)]) <= max_indent


def _dedent(lines: list[str], indent: str) -> str:
    if not indent:
        return "".join(lines)
    cut = len(indent)
    return "".join(line[cut:] if line.startswith(indent) else line for line in lines)


class FenceSpan(NamedTuple):
    """Where one fenced block of a document is, by line index.

    Attributes:
        start: The opening fence's line.
        end: The closing fence's line, or the number of lines for an unclosed block (the
            body is the lines strictly between).
        indent: The opening fence's indentation (removed from the body's lines).
        info: The opening fence's info string (stripped).
        unclosed: Whether the document ended before a closing fence.
    """

    start: int
    end: int
    indent: str
    info: str
    unclosed: bool


def fence_spans(lines: Iterable[str]) -> Iterator[FenceSpan]:
    r"""Yield where the fenced blocks of a document are, reading each line once.

    CommonMark's fences: an opening line of 3 or more backticks (no backtick after them)
    or tildes, indented by anything; a closing line of at least as many of the same
    character, nothing else but blanks, indented at most 3 columns more than the opening.

    Args:
        lines: The document's lines, with or without their ``"\n"``. Any iterable: it is
            consumed in a single pass.

    Yields:
        Every fenced block, in order, whatever its language.
    """
    fence: tuple[str, str, int, str] | None = None
    start = 0
    max_indent = 0
    count = 0
    for index, line in enumerate(lines):
        count = index + 1
        if fence is None:
            if "`" in line or "~" in line:  # (a fast test: most lines open nothing)
                fence = _opening(line.rstrip("\n"))
                start = index
                max_indent = 0 if fence is None else _width(fence[0]) + 3
        elif fence[1] in line and _closes(line.rstrip("\n"), fence[1], fence[2], max_indent):
            yield FenceSpan(start, index, fence[0], fence[3], False)
            fence = None
    if fence is not None:
        yield FenceSpan(start, count, fence[0], fence[3], True)


def scan_blocks(lines: Iterable[str]) -> Iterator[CodeBlock]:
    r"""Yield the fenced blocks of a document given as lines, reading each line once.

    Args:
        lines: The document's lines, each with its ``"\n"`` (the last one may lack it).
            Any iterable: it is consumed in a single pass.

    Yields:
        Every fenced block (see :func:`fence_spans`), in order, whatever its language.
    """
    read: list[str] = []

    def kept() -> Iterator[str]:
        for line in lines:
            read.append(line)
            yield line

    for span in fence_spans(kept()):
        body = read[span.start + 1 : span.end]
        yield CodeBlock(_dedent(body, span.indent), span.info, span.unclosed)


def fenced_blocks(text: str) -> list[CodeBlock]:
    """Return the fenced blocks of ``text`` that may hold Python, in order."""
    return [b for b in scan_blocks(_lines(text)) if b.language not in _NON_PYTHON]


def _lines(text: str) -> list[str]:
    r"""``text`` cut after each ``"\n"`` only (``str.splitlines`` also cuts at ``\r``, ...)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def code_blocks(text: str) -> list[str]:
    """Return the bodies of the fenced code blocks that may hold Python, in order."""
    return [block.code for block in fenced_blocks(text)]


def _definition(entry_points: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern for a line defining (or assigning) any of the entry points."""
    # [ \t\f] and not \s: "^\s*" can run over many blank lines from every line start, which
    # is quadratic on a reply of blank lines.
    words = "|".join(re.escape(name) for name in entry_points)
    return re.compile(
        rf"^[ \t\f]*(?:async[ \t]+)?def[ \t]+(?:{words})[ \t]*\(|^[ \t\f]*(?:{words})[ \t]*=",
        re.MULTILINE,
    )


def extract_program(response: str, entry_points: tuple[str, ...]) -> Extraction:
    """Choose the program in a model reply.

    The last fenced block that defines one of the entry points wins; failing that, the last
    block with some code (the last block if all are blank); a reply with no fence at all is
    taken whole if it defines an entry point.

    Args:
        response: The raw reply.
        entry_points: Names that count as the program's entry point.

    Returns:
        The extraction, with the chosen block recorded.
    """
    defines = _definition(entry_points)
    # A block's lines are the reply's (less an indent the pattern allows): when the reply
    # defines no entry point, no block does, and none is searched.
    anywhere = defines.search(response) is not None
    blocks = fenced_blocks(response)
    n = len(blocks)
    for index in range(n - 1, -1, -1) if anywhere else ():
        block = blocks[index]
        if defines.search(block.code) is not None:
            return Extraction(
                block.code, index, n, "last block defining the entry point", block.unclosed
            )
    if blocks:
        index = next((i for i in range(n - 1, -1, -1) if blocks[i].code.strip()), n - 1)
        block = blocks[index]
        return Extraction(
            block.code, index, n, "last block (none defines the entry point)", block.unclosed
        )
    if anywhere:
        return Extraction(response, None, 0, "whole reply (no code block)")
    return Extraction("", None, 0, "no code found")
