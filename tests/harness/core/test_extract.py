"""The Markdown fence scanner of extract.py: CommonMark fences, linear on hostile replies."""

from __future__ import annotations

from arcjudge.harness.core.extract import (
    Extraction,
    code_blocks,
    extract_program,
    fenced_blocks,
    scan_blocks,
)

ENTRY = ("transform", "solve", "p", "main")


class CountingLines:
    """An iterator over lines that counts how many were read (no random access)."""

    def __init__(self, lines):
        self._it = iter(lines)
        self.read = 0

    def __iter__(self):
        return self

    def __next__(self):
        line = next(self._it)
        self.read += 1
        return line


def test_hundred_thousand_unclosed_fences_are_read_once():
    lines = ["```python\n"] * 100_000  # ~1 MB; each line would open a fence, none closes
    counted = CountingLines(lines)
    blocks = list(scan_blocks(counted))
    assert counted.read == len(lines)  # a single pass: every line read exactly once
    assert len(blocks) == 1 and blocks[0].unclosed
    assert blocks[0].code == "```python\n" * 99_999


def test_hundred_thousand_bare_fences_pair_up():
    reply = "```\n" * 100_000
    counted = CountingLines(reply.splitlines(keepends=True))
    blocks = list(scan_blocks(counted))
    assert counted.read == 100_000
    assert len(blocks) == 50_000 and not any(b.unclosed for b in blocks)
    ex = extract_program(reply, ENTRY)
    assert ex.blocks == 50_000 and ex.code == ""


def test_megabyte_replies_complete():
    # No timing assertion (bench/ has none for this either): these used to take minutes
    # (the fence regex on unclosed fences, the entry-point regex on blank lines).
    for reply in ("```python\n" * 100_000, "```py\n" + "\n" * 1_000_000, "\n" * 1_000_000):
        ex = extract_program(reply, ENTRY)
        assert isinstance(ex, Extraction)


def test_unclosed_fence_keeps_its_code():
    reply = "Here you go:\n```python\ndef transform(g):\n    return g[::-1]\n"
    ex = extract_program(reply, ENTRY)
    assert ex.unclosed is True
    assert ex.code == "def transform(g):\n    return g[::-1]\n"
    assert ex.reason == "last block defining the entry point"


def test_closed_fence_is_not_unclosed():
    ex = extract_program("```python\ndef p(g):\n    return g\n```\n", ENTRY)
    assert ex.unclosed is False and ex.block == 0


def test_longer_closing_fence_closes():
    assert code_blocks("```python\na = 1\n`````\nafter\n") == ["a = 1\n"]
    assert code_blocks("~~~\na = 1\n~~~~~~\n") == ["a = 1\n"]


def test_shorter_closing_fence_does_not_close():
    blocks = fenced_blocks("````python\na = 1\n```\nb = 2\n````\nafter\n")
    assert [b.code for b in blocks] == ["a = 1\n```\nb = 2\n"]
    assert not blocks[0].unclosed
    unclosed = fenced_blocks("````\nx\n```\n")
    assert unclosed[0].unclosed and unclosed[0].code == "x\n```\n"


def test_tilde_and_backtick_do_not_close_each_other():
    assert code_blocks("~~~\na\n```\nb\n~~~\n") == ["a\n```\nb\n"]
    assert code_blocks("```\na\n~~~\nb\n```\n") == ["a\n~~~\nb\n"]
    block = fenced_blocks("```\na\n~~~\n")[0]
    assert block.unclosed and block.code == "a\n~~~\n"


def test_closing_fence_allows_only_whitespace_after_it():
    blocks = fenced_blocks("```\na\n``` not a close\nb\n```  \t\nafter\n")
    assert [b.code for b in blocks] == ["a\n``` not a close\nb\n"]


def test_backtick_info_may_not_hold_backticks_but_tilde_info_may():
    assert code_blocks("```inline` code\nx\n") == []  # not a fence at all
    assert code_blocks("~~~py `odd`\nx\n~~~\n") == ["x\n"]


def test_info_string_languages():
    blocks = fenced_blocks("```json\n{}\n```\n``` Python3 extra\nx = 1\n```\n")
    assert [(b.info, b.language) for b in blocks] == [("Python3 extra", "python3")]


def test_indented_fences_are_dedented_and_docstring_fences_do_not_close():
    reply = "1. Step:\n    ```python\n    def p(g):\n        return g\n    ```\n"
    assert code_blocks(reply) == ["def p(g):\n    return g\n"]
    code = 'def p(g):\n    """Use it like\n    ```\n    p(g)\n    ```\n    """\n    return g\n'
    assert code_blocks("```python\n" + code + "```\n") == [code]


def test_crlf_replies():
    assert code_blocks("```python\r\nx = 1\r\n```\r\nafter\r\n") == ["x = 1\r\n"]


def test_fence_at_end_without_newline_opens_an_empty_block():
    reply = "```python\ndef helper():\n    pass\n```\nthen\n```"
    ex = extract_program(reply, ENTRY)
    assert ex.blocks == 2
    assert ex.block == 0 and "def helper" in ex.code  # the blank last block is passed over
    assert not ex.unclosed
