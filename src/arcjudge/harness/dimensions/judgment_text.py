"""Five valid/invalid judgments read from the way a model writes them.

A Classification reply names five judgments, in one of many styles. This module reads them
line by line into *findings*, each tagged with the line it ends on:

- **lists of words**: ``valid, invalid, invalid, valid, invalid`` alone, after a lead-in
  (``My judgments: ...``, ``Final answer - ...``, ``... are valid, invalid, ...``, inside
  unquoted brackets), one word a line, or a table row of judgments;
- **per-candidate statements**: ``Candidate 3: invalid``, ``3. valid``, ``#4 is not valid``,
  several on one line (``Candidate 1 is valid, candidate 2 is invalid``), groups
  (``Candidates 1, 3 and 5 are valid; 2 and 4 are invalid``), a list item whose one judgment
  comes at its end (``1. The colours are swapped, so invalid.``), table rows
  (``| 2 | rotated | invalid |``) and sections (a heading ``### Candidate 3`` or ``Candidate 3:``
  and, below it, a line such as ``Verdict: valid`` or ``So this pair is invalid.``).

Statements gather across the reply (a later one for a candidate replaces an earlier one) and
make a finding whenever they name 1..5 (or 0..4). :mod:`.strategies.classification` adds the
JSON lists and takes the last complete finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arcjudge.harness.dimensions.records import CLASSIFICATION_SIZE as CANDIDATES
from arcjudge.vocabulary import Judgment

__all__ = ["JUDGMENT_WORDS", "JudgmentFinding", "line_findings"]


JUDGMENT_WORDS = {
    "valid": Judgment.VALID,
    "invalid": Judgment.INVALID,
    "true": Judgment.VALID,
    "false": Judgment.INVALID,
    "correct": Judgment.VALID,
    "incorrect": Judgment.INVALID,
}
"""The judgment words (in any case) a reply or an answer may use."""

_STEMS = ("valid", "true", "false", "correct")  # every judgment word holds one
_LABELS = frozenset(
    {"candidate", "candidates", "pair", "pairs", "item", "items", "no", "number"}
    | {"example", "examples", "c", "p"}
)
_NEGATIONS = frozenset({"not", "non", "never", "isn", "aren", "wasn", "doesn", "don"})
_FILLERS = frozenset(
    {"is", "are", "was", "be", "s", "t", "a", "an", "the", "it", "this", "that", "one"}
    | {"verdict", "judgment", "judgement", "answer", "label", "classification", "conclusion"}
    | {"result", "final", "pair", "candidate", "output", "overall", "so", "therefore", "thus"}
    | {"hence", "then", "both", "all", "also", "i", "think", "would", "say", "seems", "seem"}
    | {"appears", "appear", "looks", "look", "to", "clearly", "likely", "probably"}
    | {"definitely", "considered", "classified", "as", "marked", "judged", "and", "my"}
)
"""Words that may stand between a candidate's number (or a line's start) and its judgment."""
_LEAD_WORDS = frozenset(
    {"is", "are", "be", "judgments", "judgements", "answers", "answer", "verdicts"}
    | {"labels", "classifications", "judgment", "judgement", "verdict"}
)
"""A list of judgments may follow these words without a colon (``my answer is valid, ...``)."""
_LEAD_MARKS = frozenset(":=[(>-\u2013\u2014")
"""...or these marks (``Judgments: valid, ...``, ``Final answer - valid, ...``)."""
_JOINERS = frozenset({"and", "or"})
_WORD = re.compile(r"[a-z0-9]+")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]\s*)?\(?#?(\d{1,2})[.):]")
_MAX_FILLERS = 8
_QUESTION = re.compile(r"\b(?:in)?(?:valid|correct)\s*\?|\b(?:true|false)\s*\?")


@dataclass(frozen=True)
class JudgmentFinding:
    """Judgments found in a reply, or why a would-be list of them is not one.

    Attributes:
        line: The index of the line it ends on.
        rank: Which finding wins at one line: words 0 < candidate lines 1 (< JSON 2).
        judgments: Five judgment words in candidate order, or ``None``.
        reason: Why it is not five judgments (with ``judgments`` ``None``).
        how: ``"words"`` or ``"candidate lines"``.
    """

    line: int
    rank: int
    judgments: list[str] | None
    reason: str | None
    how: str


@dataclass(frozen=True)
class _Tokens:
    words: list[str]
    ends: list[int]  # where each word ends in the (lower-cased) line


def _tokens(text: str) -> _Tokens:
    found = list(_WORD.finditer(text))
    return _Tokens([m.group() for m in found], [m.end() for m in found])


def _flip(judgment: Judgment) -> Judgment:
    return Judgment.INVALID if judgment is Judgment.VALID else Judgment.VALID


def _phrase(words: Sequence[str], i: int) -> tuple[Judgment, int] | None:
    """The judgment at ``words[i:]`` after fillers and negations, and the index after it."""
    negated = False
    for _ in range(_MAX_FILLERS + 1):
        if i >= len(words):
            return None
        word = words[i]
        if word in JUDGMENT_WORDS:
            judgment = JUDGMENT_WORDS[word]
            return (_flip(judgment) if negated else judgment), i + 1
        if word in _NEGATIONS:
            negated = not negated
        elif word not in _FILLERS:
            return None
        i += 1
    return None


def _numbers(words: Sequence[str], i: int) -> tuple[list[int], int]:
    """The candidate numbers at ``words[i:]`` (``1``, ``1 3 and 5``) and the index after."""
    numbers: list[int] = []
    while i < len(words):
        word = words[i]
        if word.isdigit() and len(word) <= 2:
            numbers.append(int(word))
        elif not (numbers and word in _JOINERS and i + 1 < len(words) and words[i + 1].isdigit()):
            break
        i += 1
    return numbers, i


def _statements(words: Sequence[str]) -> list[tuple[int, Judgment]]:
    """``(number, judgment)`` statements of one line.

    A statement is a candidate label (``Candidate``, ``Pairs``) or the line's start, its
    numbers, and a judgment after at most a few fillers. Once the line has made one, numbers
    without a label make more (``Candidates 1 and 3 are valid; 2 is invalid``).
    """
    found: list[tuple[int, Judgment]] = []
    i = 0
    while i < len(words):
        start = i
        while i < len(words) and words[i] in _LABELS and i - start < 2:
            i += 1
        labelled = i > start or start == 0 or bool(found)
        numbers, after = _numbers(words, i)
        if not numbers or not labelled:
            i = max(start + 1, after)
            continue
        judged = _phrase(words, after)
        if judged is None:
            i = after
            continue
        found.extend((n, judged[0]) for n in numbers)
        i = judged[1]
    return found


def _tail_list(line: str, tokens: _Tokens) -> tuple[list[Judgment], bool] | None:
    """The list of judgments that ends a line, and whether a lead-in stands before it.

    ``None`` when the line does not end in a list: a word other than a judgment, a negation
    or ``and``/``or`` ends it, and a lead-in (``My judgments:``, ``... are``) must stand before
    a list that does not fill the line.
    """
    words = tokens.words
    judgments: list[Judgment] = []
    i = len(words) - 1
    while i >= 0:
        word = words[i]
        if word in JUDGMENT_WORDS:
            judgments.append(JUDGMENT_WORDS[word])
        elif word in _NEGATIONS and judgments and words[i + 1] in JUDGMENT_WORDS:
            judgments[-1] = _flip(judgments[-1])
        elif not (word in _JOINERS and judgments):
            break
        i -= 1
    if not judgments:
        return None
    judgments.reverse()
    if i < 0:
        return judgments, False
    between = line[tokens.ends[i] : _start_of(tokens, i + 1)]
    if any(mark in _LEAD_MARKS for mark in between) or words[i] in _LEAD_WORDS:
        return judgments, True
    return None


def _start_of(tokens: _Tokens, index: int) -> int:
    return tokens.ends[index] - len(tokens.words[index])


def _heading(words: Sequence[str]) -> int | None:
    """The number of a heading (``Candidate 3:``, ``**Pair 2** (rotated)``), else ``None``."""
    if len(words) >= 2 and words[0] in _LABELS and words[1].isdigit() and len(words[1]) <= 2:
        return int(words[1])
    if len(words) >= 3 and words[:2] == ["candidate", "no"] and words[2].isdigit():
        return int(words[2])
    return None


def _table_row(line: str) -> tuple[int | None, list[Judgment]] | None:
    """A table row's candidate number (if a cell holds one) and its judgment cells."""
    cells = line.strip().strip("|").split("|")
    if len(cells) < 2:
        return None
    number: int | None = None
    judgments: list[Judgment] = []
    for cell in cells:
        words = _tokens(cell).words
        if not words:
            continue
        judged = _phrase(words, 0)
        if judged is not None and judged[1] == len(words):
            judgments.append(judged[0])
            continue
        labels = [w for w in words[:-1] if w in _LABELS]
        if number is None and len(labels) == len(words) - 1 and words[-1].isdigit():
            number = int(words[-1]) if len(words[-1]) <= 2 else None
    return number, judgments


class _Reader:
    """Findings, line by line: lists of words close, statements gather."""

    def __init__(self) -> None:
        self.found: list[JudgmentFinding] = []
        self.numbered: dict[int, Judgment] = {}
        self.words: list[Judgment] = []
        self.words_end = -1
        self.section: int | None = None

    def close_words(self) -> None:
        if self.words:
            n = len(self.words)
            if n == CANDIDATES:
                judged = [str(w) for w in self.words]
                self.found.append(JudgmentFinding(self.words_end, 0, judged, None, "words"))
            else:
                why = f"a list of {n} judgments, need 5"
                self.found.append(JudgmentFinding(self.words_end, 0, None, why, "words"))
        self.words = []

    def add_words(self, index: int, judgments: list[Judgment], *, fresh: bool) -> None:
        if fresh:
            self.close_words()
        self.words.extend(judgments)
        self.words_end = index
        self.section = None

    def state(self, index: int, statements: list[tuple[int, Judgment]]) -> None:
        self.close_words()
        for number, judgment in statements:
            self.numbered[number] = judgment
        for base in (1, 0):
            keys = range(base, base + CANDIDATES)
            if all(k in self.numbered for k in keys) and set(self.numbered) <= set(keys):
                judged = [str(self.numbered[k]) for k in keys]
                self.found.append(JudgmentFinding(index, 1, judged, None, "candidate lines"))
                return
        shown = ", ".join(map(str, sorted(self.numbered)[:8]))
        why = f"candidate lines for {shown} only, need 1..5"
        self.found.append(JudgmentFinding(index, 1, None, why, "candidate lines"))

    def read(self, index: int, line: str) -> None:
        low = _QUESTION.sub("?", line.lower())  # "is it valid?" judges nothing
        tokens = _tokens(low)
        if not tokens.words:
            return  # blank lines (and lines of punctuation) end nothing
        if not any(stem in low for stem in _STEMS):
            self.close_words()
            self.section = self._section_of(low, tokens.words, self.section)
            return
        if low.count("|") >= 2 and self._table(index, low):
            return
        tail = _tail_list(low, tokens)
        if tail is not None and (len(tail[0]) >= 2 or (not tail[1] and self.section is None)):
            self.add_words(index, tail[0], fresh=tail[1])
            return
        list_item = _LIST_ITEM.match(low) is not None
        statements = _statements(tokens.words)
        if not statements and self.section is not None:
            # under a heading: a line that ends in one judgment ("No: invalid.", "valid") or
            # starts with one ("Verdict: valid", "So this pair is not valid because ...")
            judged = (tail[0][0], 0) if tail is not None else _phrase(tokens.words, 0)
            statements = [(self.section, judged[0])] if judged is not None else []
        if not statements and list_item:
            statements = self._concluding(tokens.words)
        if statements:
            self.section = None
            self.state(index, statements)
        else:
            self.close_words()
            self.section = self._section_of(low, tokens.words, self.section)

    def _table(self, index: int, low: str) -> bool:
        row = _table_row(low)
        if row is None or not row[1]:
            return False
        number, judgments = row
        if number is not None:
            self.state(index, [(number, judgments[-1])])
        elif len(judgments) >= 2:
            self.add_words(index, judgments, fresh=True)
        else:
            return False
        return True

    @staticmethod
    def _concluding(words: Sequence[str]) -> list[tuple[int, Judgment]]:
        """A list item's one judgment at its end: ``1. The colours swap, so invalid.``."""
        judged = {
            _flip(JUDGMENT_WORDS[w])
            if _NEGATIONS & set(words[max(0, i - 3) : i])
            else JUDGMENT_WORDS[w]
            for i, w in enumerate(words)
            if w in JUDGMENT_WORDS
        }
        if len(judged) == 1 and words[0].isdigit() and len(words[0]) <= 2:
            return [(int(words[0]), judged.pop())]
        return []

    @staticmethod
    def _section_of(low: str, words: Sequence[str], current: int | None) -> int | None:
        heading = _heading(words)
        if heading is not None:
            return heading
        item = _LIST_ITEM.match(low)
        return int(item.group(1)) if item is not None else current


def line_findings(lines: Sequence[str]) -> list[JudgmentFinding]:
    """Every list of judgments and every complete (or not) set of statements, in order.

    Args:
        lines: The reply's lines.

    Returns:
        The findings; a complete one has ``judgments``, an incomplete one a ``reason``.
    """
    whole = "\n".join(lines).lower()
    if not any(stem in whole for stem in _STEMS):
        return []
    reader = _Reader()
    for index, line in enumerate(lines):
        reader.read(index, line)
    reader.close_words()
    return reader.found
