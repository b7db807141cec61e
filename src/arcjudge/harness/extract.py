"""Pull the program out of a raw model reply (Markdown with fenced code blocks)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
_NON_PYTHON = {"json", "text", "txt", "output", "bash", "sh", "shell", "console", "plaintext"}


@dataclass(frozen=True)
class Extraction:
    """What was taken from a reply.

    Attributes:
        code: The program text ("" when the reply has no code block).
        block: Index of the chosen block among the code blocks (``None`` if none).
        blocks: How many code blocks the reply has.
        reason: How the block was chosen.
    """

    code: str
    block: int | None
    blocks: int
    reason: str


def _defines(code: str, name: str) -> bool:
    pattern = rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(|^\s*{re.escape(name)}\s*="
    return re.search(pattern, code, re.MULTILINE) is not None


def code_blocks(text: str) -> list[str]:
    """Return the bodies of the fenced code blocks that may hold Python, in order."""
    blocks = []
    for match in _FENCE.finditer(text):
        info = match.group("info").strip().lower().split()
        if info and info[0] in _NON_PYTHON:
            continue
        indent = match.group("indent")
        lines = match.group("body").splitlines(keepends=True)
        blocks.append("".join(line[len(indent) :] if line.startswith(indent) else line
                              for line in lines))  # fmt: skip
    return blocks


def extract_program(response: str, entry_points: tuple[str, ...]) -> Extraction:
    """Choose the program in a model reply.

    The last fenced block that defines one of the entry points wins; failing that, the last
    block; a reply with no fence at all is taken whole if it defines an entry point.

    Args:
        response: The raw reply.
        entry_points: Names that count as the program's entry point.

    Returns:
        The extraction, with the chosen block recorded.
    """
    blocks = code_blocks(response)
    for index in range(len(blocks) - 1, -1, -1):
        if any(_defines(blocks[index], name) for name in entry_points):
            return Extraction(
                blocks[index], index, len(blocks), "last block defining the entry point"
            )
    if blocks:
        return Extraction(
            blocks[-1], len(blocks) - 1, len(blocks), "last block (none defines the entry point)"
        )
    if any(_defines(response, name) for name in entry_points):
        return Extraction(response, None, 0, "whole reply (no code block)")
    return Extraction("", None, 0, "no code found")
