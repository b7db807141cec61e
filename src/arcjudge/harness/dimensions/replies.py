r"""Raw model replies -> grids and pairs: the parsing every dimension's reply reader shares.

Each dimension reads its replies in its strategy module (:mod:`.strategies`: the five
judgments of Classification, the grids per test input of the output grid) with the
helpers here: a reply cut into lines once (:func:`split_reply`), the grids in it
(:func:`find_grids`), one grid (:func:`parse_grid`, Inversion) and one pair
(:func:`parse_pair`, Generation and Editing); :func:`.strategies.parse_reply` dispatches.
Pure functions, linear time.

Nothing here runs reply text, and no parser raises on any reply: each returns a
:class:`ParsedReply` holding the answer (``None`` when there is none) and ``how`` it was
read (``"json"``, ``"code block rows"``, ``"rows of digits"``, ... or
``"unparsable: <why>"``). The answers are the JSON values :func:`.strategies.parse_answer`
takes: a grid as a list of lists of ints, five judgments as ``"valid"``/``"invalid"``,
a pair as ``{"input": grid, "output": grid}``.

Grids (:func:`parse_grid`) are read from the whole reply in one pass over its lines
(``\r\n`` and ``\r`` count as line ends):

* JSON nested lists ``[[0, 1], [2, 3]]`` anywhere, in a code block or in prose, over any
  number of lines;
* rows of digits, one row a line, with or without separators (spaces, commas, ``|``,
  ``;``), optionally bracketed (``[0, 1]``), with a trailing comma, or labelled
  (``Row 1: 0 1``); a run of such lines is one grid, ended by any other line or a blank
  line, except that rows of one width each set apart by blank lines (a double-spaced
  grid) are one grid;
* cells are the digits 0..9 only, sides 1..:data:`MAX_REPLY_SIDE`.

The last well-formed grid of the reply wins (a model that corrects itself gives its
correction last); a reply with no well-formed grid is unparsable with the reason of its
last malformed one (rows of different lengths, a value outside 0..9, too many rows...).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from arcjudge.grids import MAX_SIDE
from arcjudge.harness.core.extract import fence_spans

__all__ = [
    "MAX_GRIDS",
    "MAX_REPLY_SIDE",
    "FoundGrid",
    "FoundGrids",
    "GridAnswer",
    "PairAnswer",
    "ParsedReply",
    "ReplyLines",
    "find_grids",
    "parse_grid",
    "parse_pair",
    "split_reply",
    "unparsable",
]

MAX_REPLY_SIDE = MAX_SIDE
"""The largest side a grid read from a reply may have: the harness's grid limit (100).

ARC's grids are at most 30 per side, but ARC-GEN's go up to 75, and instances built from
them show such grids and expect them back (an Editing repair, an Inversion input), so a
reply may hold any grid the harness can hold.
"""

MAX_GRIDS = 4096
"""Grids read per reply: the last ones (every parser wants answers near the end); earlier
grids are counted, not read (a reply of a million characters can hold 100,000 tiny ones)."""

GridAnswer = list[list[int]]
"""A grid as :func:`.strategies.parse_answer` takes it."""

PairAnswer = dict[str, GridAnswer]
"""``{"input": grid, "output": grid}``."""

T = TypeVar("T", covariant=True)

UNPARSABLE = "unparsable: "


@dataclass(frozen=True)
class ParsedReply(Generic[T]):
    """What a parser made of one reply.

    Attributes:
        answer: The answer in the shape :func:`.strategies.parse_answer` takes, or ``None``.
        how: How it was read (``"json"``, ``"code block rows"``, ...), or
            ``"unparsable: <why>"`` when ``answer`` is ``None``.
    """

    answer: T | None
    how: str

    @property
    def ok(self) -> bool:
        """Whether the reply held an answer."""
        return self.answer is not None


def unparsable(why: str) -> ParsedReply[T]:
    """A reply without an answer, and why (``"unparsable: <why>"``)."""
    return ParsedReply(None, UNPARSABLE + why)


# ---------------------------------------------------------------------------- the reply


@dataclass(frozen=True)
class ReplyLines:
    """A reply cut into lines once, with where each line starts and the code blocks."""

    text: str
    lines: list[str]
    starts: list[int]
    blocks: list[tuple[int, int]]  # (first body line, last body line + 1), in order

    def line_of(self, offset: int) -> int:
        """The index of the line holding character ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def block_of(self, line: int) -> int | None:
        """The index of the code block whose body holds ``line``, if any."""
        i = bisect.bisect_right(self.blocks, (line, 1 << 62)) - 1
        if i >= 0 and self.blocks[i][0] <= line < self.blocks[i][1]:
            return i
        return None


def split_reply(text: str) -> ReplyLines:
    r"""The reply cut into lines (``\r\n`` and ``\r`` end lines too), with its code blocks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    starts = [0, *itertools.accumulate(len(line) + 1 for line in lines[:-1])]
    fenced = "```" in text or "~~~" in text
    return ReplyLines(text, lines, starts, _block_lines(lines) if fenced else [])


def _block_lines(lines: list[str]) -> list[tuple[int, int]]:
    """The body line ranges of the fenced code blocks, as :mod:`.extract` reads fences."""
    return [(span.start + 1, span.end) for span in fence_spans(lines)]


# ---------------------------------------------------------------------------- grids


@dataclass(slots=True)
class FoundGrid:
    """One grid (or would-be grid) found in a reply."""

    start: int  # first line
    end: int  # last line + 1
    at: int  # offset of its first character
    grid: GridAnswer | None
    reason: str | None
    json: bool
    block: int | None = None

    @property
    def source(self) -> str:
        """How it was written: ``json``, ``json in code block``, ``code block rows``, ..."""
        if self.json:
            return "json in code block" if self.block is not None else "json"
        return "code block rows" if self.block is not None else "rows of digits"


def _check(rows: Sequence[list[int] | str], count: int) -> tuple[GridAnswer | None, str | None]:
    """A grid from parsed rows (a row may be the reason it is not one), or the reason."""
    if count > MAX_REPLY_SIDE:
        return None, f"{count} rows: more than {MAX_REPLY_SIDE}"
    grid: GridAnswer = []
    for i, row in enumerate(rows):
        if isinstance(row, str):
            return None, f"row {i + 1}: {row}"
        grid.append(row)
    widths = [len(row) for row in grid]
    if any(w != widths[0] for w in widths):
        shown = ", ".join(map(str, widths[:10])) + (", ..." if len(widths) > 10 else "")
        return None, f"rows of different lengths ({shown})"
    if widths[0] > MAX_REPLY_SIDE:
        return None, f"rows of {widths[0]} cells: more than {MAX_REPLY_SIDE}"
    return grid, None


def _cell(token: str) -> int | str:
    """A cell from a token of ASCII digits, or why it is not one (no int() of long text)."""
    if len(token) == 1:
        return ord(token) - 48
    shown = token if len(token) <= 8 else token[:8] + "..."
    return f"value {shown} outside 0..9"


_JSON_RUN = re.compile(r"[0-9\s,\[\]]+")
# Tokens: a whole row "[d, d, ...]"; a run of "[" before another "[" (the last of them may
# open a grid); then single "[", "]", "," and numbers. A failed row attempt stops at the
# first character no row holds, so every character is read a bounded number of times.
_JSON_TOKEN = re.compile(
    r"(?P<row>\[\s*[0-9]+(?:\s*,\s*[0-9]+)*\s*\])"
    r"|(?P<opens>(?:\[\s*)+(?=\[))"
    r"|\[|\]|,|[0-9]+"
)
_NUMBER = re.compile(r"[0-9]+")
_GRID_END = re.compile(r"\]\s*\]")


def _json_row(text: str) -> list[int] | str:
    cells = []
    for number in _NUMBER.findall(text):
        cell = _cell(number)
        if isinstance(cell, str):
            return cell
        cells.append(cell)
    return cells


def _json_grids(reply: ReplyLines) -> tuple[list[FoundGrid], int]:
    """Every ``[[...], ...]`` of digits in the reply, by an automaton over its tokens.

    Only runs of digits, spaces, commas and brackets can hold one, so the automaton reads
    those; a token that breaks a grid drops it, and a ``[`` before a row may start a new
    one. States: 0 outside, 1 after the grid's ``[``, 2 after a row, 3 after a comma.
    Returns the last :data:`MAX_GRIDS` grids and how many came before them.
    """
    found: deque[FoundGrid] = deque(maxlen=MAX_GRIDS)
    seen = 0
    for run in _JSON_RUN.finditer(reply.text):
        body = run.group()
        if "[" not in body:
            continue
        # A grid ends with "]" "]" (blanks between): none completes after the last such
        # pair, so the automaton stops there (and skips a run without one). Searched in the
        # reversed run: "]\s*]" reads the same both ways.
        closing = _GRID_END.search(body[::-1])
        if closing is None:
            continue
        stop = run.end() - closing.start()
        state, start, count = 0, 0, 0
        rows: list[list[int] | str] = []
        for token in _JSON_TOKEN.finditer(reply.text, run.start(), stop):
            text = token.group()
            if token.lastgroup == "opens":  # from any state: the last "[" may open a grid
                state, start, rows, count = 1, token.start() + text.rstrip().rfind("["), [], 0
            elif token.lastgroup == "row" and state in (1, 3):
                state, count = 2, count + 1
                if count <= MAX_REPLY_SIDE + 1:
                    rows.append(_json_row(text))
            elif text == "," and state == 2:
                state = 3
            elif text == "]" and state == 2:
                grid, reason = _check(rows, count)
                first, last = reply.line_of(start), reply.line_of(token.start())
                block = reply.block_of(first)
                found.append(FoundGrid(first, last + 1, start, grid, reason, True, block))
                seen += 1
                state = 0
            elif text == "[":
                state, start, rows, count = 1, token.start(), [], 0
            else:
                state = 0
    return list(found), seen - len(found)


_ROW_LABEL = re.compile(r"row[ \t]*[0-9]{1,2}[ \t]*[:.)=-]", re.IGNORECASE)
_ROW_START = frozenset("0123456789[(|rR")
_SIMPLE_ROW = re.compile(r"[0-9](?:[ \t,|;]+[0-9])*|[0-9]+")
_ROW_CHARS = re.compile(r"[0-9,|;\s]+")
_ROW_SPLIT = re.compile(r"[,|;\s]+")
_DIGITS = frozenset("0123456789")


def _row(line: str) -> list[int] | str | None:
    """A row of digits from one line, why it is a broken one, or ``None`` if it is none."""
    text = line.strip()
    if not text or text[0] not in _ROW_START:
        return None
    if _SIMPLE_ROW.fullmatch(text) is not None:  # the common case: single digits apart
        if len(text) > 2 * MAX_REPLY_SIDE and len(_ROW_SPLIT.split(text)) > MAX_REPLY_SIDE:
            return f"{len(_ROW_SPLIT.split(text))} cells: more than {MAX_REPLY_SIDE}"
        cells = [ord(c) - 48 for c in text if c in _DIGITS]
        if len(cells) > MAX_REPLY_SIDE:
            return f"{len(cells)} cells: more than {MAX_REPLY_SIDE}"
        return cells
    label = _ROW_LABEL.match(text)
    if label:
        text = text[label.end() :].strip()
    if text.endswith(","):
        text = text[:-1].rstrip()
    if len(text) >= 2 and (text[0], text[-1]) in (("[", "]"), ("(", ")"), ("|", "|")):
        text = text[1:-1].strip()
    if not text or text[0] not in _DIGITS or text[-1] not in _DIGITS:
        return None
    if _ROW_CHARS.fullmatch(text) is None:
        return None
    if text.isdigit():  # ASCII digits only (checked above): one cell a character
        if len(text) > MAX_REPLY_SIDE:
            return f"{len(text)} cells: more than {MAX_REPLY_SIDE}"
        return [ord(c) - 48 for c in text]
    tokens = _ROW_SPLIT.split(text)
    if len(tokens) > MAX_REPLY_SIDE:
        return f"{len(tokens)} cells: more than {MAX_REPLY_SIDE}"
    cells = []
    for token in tokens:
        cell = _cell(token)
        if isinstance(cell, str):
            return cell
        cells.append(cell)
    return cells


# A run of lines that may be rows: each starts, after blanks, with a digit, a bracket, "|"
# or "R" (a "Row 1:" label). Runs are found in C; only the last ones are read in Python.
_ROW_RUN = re.compile(r"(?:^[ \t\f\v]*[0-9\[(|rR][^\n]*(?:\n|\Z))+", re.MULTILINE)
# A plain row of single digits (the common case), with the blanks around it.
_PLAIN_ROW = re.compile(r"[ \t\f\v]*([0-9](?:[ \t,|;]+[0-9])*|[0-9]+)[ \t\f\v]*")


def _line_row(line: str) -> list[int] | str | None:
    """:func:`_row` with a fast path for plain rows of digits."""
    plain = _PLAIN_ROW.fullmatch(line)
    if plain is None or len(plain.group(1)) > 2 * MAX_REPLY_SIDE:
        return _row(line)
    cells = [c - 48 for c in plain.group(1).encode() if 47 < c < 58]  # the digits' bytes
    if len(cells) > MAX_REPLY_SIDE:
        return f"{len(cells)} cells: more than {MAX_REPLY_SIDE}"
    return cells


def _row_grids(reply: ReplyLines) -> tuple[list[FoundGrid], int]:
    """Runs of digit rows; single rows of one width set apart by blank lines are one run.

    Returns the grids of the last :data:`MAX_GRIDS` runs of candidate lines and how many
    runs came before (not read).
    """
    text = reply.text
    spans = [m.span() for m in _ROW_RUN.finditer(text)]
    skipped = max(0, len(spans) - MAX_GRIDS)
    # (first line, end line, rows, row count, only blank lines since the previous run)
    chunks: list[tuple[int, int, list[list[int] | str], int, bool]] = []
    previous_end = spans[skipped - 1][1] if skipped else -1  # offset after the last run
    for begin, end in spans[skipped:]:
        # Runs are maximal: only lines that cannot be rows lie between two of them.
        gap = previous_end >= 0 and text[previous_end:begin].isspace()
        previous_end = end
        line = reply.line_of(begin)
        start, count = -1, 0
        rows: list[list[int] | str] = []
        parts = text[begin:end].split("\n")
        if not parts[-1]:
            parts.pop()  # the run's last line ended with its newline
        for part in parts:
            row = _line_row(part)
            if row is None:  # a line that looked like a row (not blank) and is none
                if start >= 0:
                    chunks.append((start, line, rows, count, gap))
                    start = -1
                gap = False
            else:
                if start < 0:
                    start, rows, count = line, [], 0
                count += 1
                if count <= MAX_REPLY_SIDE + 1:
                    rows.append(row)
            line += 1
        if start >= 0:
            chunks.append((start, line, rows, count, gap))
    found: list[FoundGrid] = []
    blocks, block, starts = reply.blocks, 0, reply.starts  # chunks come in line order
    i, n = 0, len(chunks)
    while i < n:
        first_line, end, rows, count, _ = chunks[i]
        j = i + 1
        head = rows[0]
        if count == 1 and not isinstance(head, str):
            width = len(head)
            merged = None
            while j < n:
                _, nxt_end, nxt_rows, nxt_count, nxt_gap = chunks[j]
                nxt = nxt_rows[0]
                if not nxt_gap or nxt_count != 1 or isinstance(nxt, str) or len(nxt) != width:
                    break
                if merged is None:
                    merged = [head]
                merged.append(nxt)
                end = nxt_end
                j += 1
            if merged is None:  # one row alone: a 1-row grid (the common case, made fast)
                grid: GridAnswer | None = [head] if width <= MAX_REPLY_SIDE else None
                reason = None if grid is not None else _check(rows, count)[1]
            else:
                grid, reason = _check(merged, len(merged))
        else:
            grid, reason = _check(rows, count)
        while block < len(blocks) and blocks[block][1] <= first_line:
            block += 1
        inside = block < len(blocks) and blocks[block][0] <= first_line
        found.append(
            FoundGrid(first_line, end, starts[first_line], grid, reason, False,
                  block if inside else None)
        )  # fmt: skip
        i = j
    return found, skipped


@dataclass(frozen=True)
class FoundGrids:
    """The last grids of a reply (at most :data:`MAX_GRIDS`), in order of where they end."""

    grids: list[FoundGrid]
    skipped: int  # grids before them, counted but not read

    def of(self, good: int) -> str:
        """``" (last of N grids)"`` for ``good`` well-formed grids read (and those skipped)."""
        if self.skipped:
            return f" (last of {good} grids read; {self.skipped} earlier skipped)"
        return f" (last of {good} grids)" if good > 1 else ""


def find_grids(reply: ReplyLines) -> FoundGrids:
    """The grids of the reply, in order of where they end; rows inside a JSON grid dropped."""
    json_grids, json_skipped = _json_grids(reply)
    row_grids, rows_skipped = _row_grids(reply)
    if not json_grids:
        merged = row_grids
    elif not row_grids:
        merged = json_grids
    else:
        starts = [g.start for g in json_grids]

        def inside_json(grid: FoundGrid) -> bool:
            # Row lines never start a JSON grid: only the last one starting before may hold it.
            i = bisect.bisect_left(starts, grid.start) - 1
            return i >= 0 and json_grids[i].end >= grid.end

        rows = [g for g in row_grids if not inside_json(g)]
        merged = sorted([*json_grids, *rows], key=lambda g: (g.end, g.at))
    cut = max(0, len(merged) - MAX_GRIDS)
    return FoundGrids(merged[cut:], json_skipped + rows_skipped + cut)


def _last(found: FoundGrids) -> ParsedReply[GridAnswer]:
    grids = found.grids
    good = [g for g in grids if g.grid is not None]
    if good:
        chosen = good[-1]
        return ParsedReply(chosen.grid, chosen.source + found.of(len(good)))
    if grids:
        return unparsable(f"{grids[-1].source}: {grids[-1].reason}")
    return unparsable("no grid found")


def parse_grid(reply: object) -> ParsedReply[GridAnswer]:
    """The last well-formed grid of a reply (see the module docstring for the formats).

    Args:
        reply: The raw reply (anything that is not a ``str`` is unparsable).

    Returns:
        The grid as lists of ints and how it was read, or ``unparsable: <why>``.
    """
    if not isinstance(reply, str):
        return unparsable("the reply is not text")
    return _last(find_grids(split_reply(reply)))


# ---------------------------------------------------------------------------- pairs

_SIDE = re.compile(r"\b(input|output)\b", re.IGNORECASE)


def _labelled(
    reply: ReplyLines, grids: list[FoundGrid]
) -> list[tuple[str | None, bool, FoundGrid]]:
    """Each grid with the nearest label before it ("input"/"output") and whether quoted.

    A label labels at most one grid (the first after it).
    """
    labels = []
    for match in _SIDE.finditer(reply.text):
        quoted = match.start() > 0 and reply.text[match.start() - 1] in "\"'"
        labels.append((match.start(), match.group().lower(), quoted))
    offsets = [offset for offset, _, _ in labels]
    out: list[tuple[str | None, bool, FoundGrid]] = []
    taken = -1
    for grid in sorted(grids, key=lambda g: g.at):
        i = bisect.bisect_left(offsets, grid.at) - 1
        if i >= 0 and i > taken:
            out.append((labels[i][1], labels[i][2], grid))
            taken = i
        else:
            out.append((None, False, grid))
    return out


def parse_pair(reply: object) -> ParsedReply[PairAnswer]:
    """A generated or edited pair: an input grid and an output grid.

    Read as two labelled grids (a grid is labelled by the nearest "input" or "output"
    before it that labels no other grid: "Input:", "**Output grid**", ``"input": [[...]]``
    in a JSON object), the last input grid directly followed by an output grid winning;
    failing labels, as the grids of the last two consecutive code blocks holding one grid
    each (input first).

    Args:
        reply: The raw reply.

    Returns:
        ``{"input": grid, "output": grid}`` and how it was read, or ``unparsable: <why>``.
    """
    if not isinstance(reply, str):
        return unparsable("the reply is not text")
    parsed = split_reply(reply)
    grids = find_grids(parsed).grids
    labelled = _labelled(parsed, grids)
    chosen: ParsedReply[PairAnswer] | None = None
    reason: str | None = None
    for (side_a, quoted, a), (side_b, _, b) in itertools.pairwise(labelled):
        if side_a != "input" or side_b != "output":
            continue
        if a.grid is None or b.grid is None:
            broken = a if a.grid is None else b
            reason = f"{'input' if broken is a else 'output'} grid: {broken.reason}"
            continue
        how = "json" if quoted and a.json and b.json else "labelled grids"
        chosen = ParsedReply({"input": a.grid, "output": b.grid}, how)
    if chosen is not None:
        return chosen
    if reason is not None:
        return unparsable(reason)
    per_block: dict[int, list[FoundGrid]] = {}
    for grid in grids:
        if grid.block is not None:
            per_block.setdefault(grid.block, []).append(grid)
    for block in sorted(per_block, reverse=True):
        first, second = per_block.get(block - 1), per_block[block]
        if first and len(first) == 1 and len(second) == 1:
            a, b = first[0], second[0]
            if a.grid is not None and b.grid is not None:
                return ParsedReply({"input": a.grid, "output": b.grid}, "two code blocks")
    if not grids:
        return unparsable("no grid found")
    malformed = [g for g in grids if g.grid is None]
    if malformed:
        return unparsable(f"{malformed[-1].source}: {malformed[-1].reason}")
    return unparsable(f"no labelled input and output grids among {len(grids)} grid(s)")
