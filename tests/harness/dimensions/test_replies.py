"""The reply parsers over a corpus of reply styles, and properties over any text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge.harness.dimensions.replies import MAX_GRIDS, MAX_REPLY_SIDE, parse_grid, parse_pair
from arcjudge.harness.dimensions.strategies import parse_answer, parse_reply
from arcjudge.harness.dimensions.strategies.classification import parse_judgments
from arcjudge.harness.dimensions.strategies.output_grid import parse_outputs

G2 = [[1, 2], [3, 4]]
G3 = [[0, 0, 5], [0, 5, 0], [5, 0, 0]]
FIVE = ["valid", "invalid", "invalid", "valid", "invalid"]
PAIR = {"input": [[1, 1], [0, 0]], "output": [[2, 2], [0, 0]]}
BIG = [[(r * 7 + c) % 10 for c in range(32)] for r in range(48)]  # an ARC-GEN-sized grid

# (id, reply, expected grid or None, how or the start of the unparsable reason)
GRID_EXAMPLES = [
    ("code block rows", "Here it is:\n```\n1 2\n3 4\n```\nHope that helps!", G2, "code block rows"),
    ("json in prose", "I believe the answer is [[1, 2], [3, 4]] based on the rule.", G2, "json"),
    ("json in code block", "```json\n[[1,2],[3,4]]\n```", G2, "json in code block"),
    ("pretty json", "```json\n[\n  [0, 0, 5],\n  [0, 5, 0],\n  [5, 0, 0]\n]\n```", G3, "json"),
    ("json over lines", "[[0,0,5],\n [0,5,0],\n [5,0,0]]", G3, "json"),
    ("digits no separators", "Output:\n005\n050\n500", G3, "rows of digits"),
    ("comma rows", "0, 0, 5\n0, 5, 0\n5, 0, 0", G3, "rows of digits"),
    ("pipe table", "| 0 | 0 | 5 |\n| 0 | 5 | 0 |\n| 5 | 0 | 0 |", G3, "rows of digits"),
    ("bracketed rows", "[0, 0, 5]\n[0, 5, 0]\n[5, 0, 0]", G3, "rows of digits"),
    ("bracketed rows with commas", "[0, 0, 5],\n[0, 5, 0],\n[5, 0, 0],", G3, "rows of digits"),
    ("labelled rows", "Row 1: 0 0 5\nRow 2: 0 5 0\nRow 3: 5 0 0", G3, "rows of digits"),
    ("tabs", "0\t0\t5\n0\t5\t0\n5\t0\t0", G3, "rows of digits"),
    ("semicolons", "0;0;5\n0;5;0\n5;0;0", G3, "rows of digits"),
    ("crlf", "```\r\n1 2\r\n3 4\r\n```\r\n", G2, "code block rows"),
    ("bare cr", "1 2\r3 4\r", G2, "rows of digits"),
    ("double spaced", "1 2\n\n3 4\n", G2, "rows of digits"),
    ("blank lines around", "\n\n\n```\n\n1 2\n3 4\n\n```\n\n\n", G2, "code block rows"),
    (
        "self-correction rows",
        "```\n1 1\n1 1\n```\nWait, that is wrong. Corrected:\n```\n1 2\n3 4\n```",
        G2,
        "code block rows (last of 2 grids)",
    ),
    (
        "self-correction json after rows",
        "```\n9 9\n9 9\n```\nActually the answer is [[1,2],[3,4]].",
        G2,
        "json (last of 2 grids)",
    ),
    (
        "correction then truncation",
        "[[1,2],[3,4]]\nHmm, let me redo it:\n[[5,5],[5",
        G2,
        "json",
    ),
    ("truncated rows only", "```\n1 2 3\n4 5 6\n7 8", None, "unparsable: code block rows: rows of"),
    (
        "wrong row lengths",
        "1 2 3\n4 5\n6 7 8",
        None,
        "unparsable: rows of digits: rows of different",
    ),
    (
        "wrong row lengths json",
        "[[1,2,3],[4,5]]",
        None,
        "unparsable: json: rows of different lengths (3, 2)",
    ),
    ("value 10", "1 10\n2 3", None, "unparsable: rows of digits: row 1: value 10 outside 0..9"),
    ("value 12 json", "[[1, 12]]", None, "unparsable: json: row 1: value 12 outside 0..9"),
    ("too many rows", "\n".join(["1"] * 101), None, "unparsable: rows of digits: 101 rows"),
    ("too wide", "1" * 101, None, "unparsable: rows of digits: row 1: 101 cells"),
    ("30 is fine", "\n".join(["7" * 30] * 30), [[7] * 30] * 30, "rows of digits"),
    # ARC-GEN grids go past ARC's 30 (1190e5a7's inputs have up to 48 rows, 780d0b14's 32
    # columns); instances built from them expect such grids back
    ("ARC-GEN sized json", json.dumps(BIG), BIG, "json"),
    ("ARC-GEN sized rows", "```\n" + "\n".join(map(str, BIG)) + "\n```", BIG, "code block rows"),
    ("100 is fine", "\n".join(["7" * 100] * 100), [[7] * 100] * 100, "rows of digits"),
    ("1x1", "The output is a single cell:\n```\n4\n```", [[4]], "code block rows"),
    ("3d list", "[[[1,2],[3,4]]]", G2, "json"),
    ("negative", "[[1,-2],[3,4]]", None, "unparsable: no grid found"),
    ("empty", "", None, "unparsable: no grid found"),
    ("prose only", "I cannot determine the output for this task.", None, "unparsable: no grid"),
    ("unicode digits", "\uff11\uff12\n\uff13\uff14", None, "unparsable: no grid found"),
    (
        "unicode noise",
        "✨ Here you go ✨\n```\n1 2\n3 4\n```\n— done ✓ ü",
        G2,
        "code block rows",
    ),
    ("nbsp separators", "1\u00a02\n3\u00a04", G2, "rows of digits"),
    ("not text", None, None, "unparsable: the reply is not text"),
    ("huge value", "[[" + "9" * 5000 + "]]", None, "unparsable: json: row 1: value 99999999..."),
]

JUDGMENT_EXAMPLES = [
    (
        "headings then judgments",
        "".join(f"**Candidate {i + 1}:**\n{j}\n\n" for i, j in enumerate(FIVE)),
        FIVE,
        "candidate lines",
    ),
    (
        "headings with reasoning between",
        "".join(
            f"### Pair {i + 1}\nThe colors change.\nVerdict: {j}\n" for i, j in enumerate(FIVE)
        ),
        FIVE,
        "candidate lines",
    ),
    (
        "heading then a negated judgment",
        "Candidate 1:\nnot valid\n" + "\n".join(f"Candidate {i}: valid" for i in range(2, 6)),
        ["invalid", "valid", "valid", "valid", "valid"],
        "candidate lines",
    ),
    ("json list", 'Answer: ["valid", "invalid", "invalid", "valid", "invalid"]', FIVE, "json"),
    ("json bools", "[true, false, false, true, false]", FIVE, "json"),
    (
        "json object",
        '```json\n{"judgments": ["VALID","invalid","Invalid","valid","invalid"]}\n```',
        FIVE,
        "json",
    ),
    ("synonyms", '["correct", "incorrect", "false", "true", "incorrect"]', FIVE, "json"),
    (
        "candidate lines",
        "Candidate 1: valid\nCandidate 2: invalid\nCandidate 3: invalid\n"
        "Candidate 4: valid\nCandidate 5: invalid",
        FIVE,
        "candidate lines",
    ),
    ("numbered", "1. valid\n2. invalid\n3. invalid\n4. valid\n5. invalid", FIVE, "candidate lines"),
    (
        "markdown bold and prose",
        "Let me check each.\n**Candidate 1**: VALID, the rule holds.\n**Candidate 2**: invalid\n"
        "**Candidate 3** is invalid\n**Candidate 4**: valid ✅\n**Candidate 5**: not valid ❌",
        FIVE,
        "candidate lines",
    ),
    (
        "zero based",
        "0: valid\n1: invalid\n2: invalid\n3: valid\n4: invalid",
        FIVE,
        "candidate lines",
    ),
    (
        "corrected line",
        "1. valid\n2. invalid\n3. valid\n4. valid\n5. invalid\nOn reflection:\n3. invalid",
        FIVE,
        "candidate lines",
    ),
    ("words one line", "valid, invalid, invalid, valid, invalid", FIVE, "words"),
    ("words bulleted", "- valid\n- invalid\n\n- invalid\n- valid\n- invalid\n", FIVE, "words"),
    (
        "summary after analysis",
        "1. valid\n2. valid\n3. valid\n4. valid\n5. valid\n"
        "Final answer:\nvalid invalid invalid valid invalid",
        FIVE,
        "words",
    ),
    ("crlf words", "valid\r\ninvalid\r\ninvalid\r\nvalid\r\ninvalid\r\n", FIVE, "words"),
    ("four", '["valid", "invalid", "valid", "valid"]', None, "unparsable: a JSON list of 4"),
    ("six words", "valid valid valid valid valid valid", None, "unparsable: a list of 6"),
    (
        "missing candidate",
        "1. valid\n2. valid\n4. valid\n5. valid",
        None,
        "unparsable: candidate lines",
    ),
    ("empty", "", None, "unparsable: no judgments found"),
    ("garbage", "I am not sure about any of these.", None, "unparsable: no judgments found"),
]

PAIR_EXAMPLES = [
    (
        "labelled blocks",
        "Input:\n```\n1 1\n0 0\n```\nOutput:\n```\n2 2\n0 0\n```",
        PAIR,
        "labelled grids",
    ),
    ("json object", '{"input": [[1,1],[0,0]], "output": [[2,2],[0,0]]}', PAIR, "json"),
    (
        "json in prose",
        'Here is my pair: {"input": [[1, 1], [0, 0]],\n "output": [[2, 2], [0, 0]]} done.',
        PAIR,
        "json",
    ),
    ("one block labelled", "```\nInput:\n11\n00\nOutput:\n22\n00\n```", PAIR, "labelled grids"),
    ("two blocks", "```\n1 1\n0 0\n```\nand then\n```\n2 2\n0 0\n```", PAIR, "two code blocks"),
    (
        "bold labels corrected",
        "**Input grid:** [[9]]\n**Output grid:** [[9]]\nNo, better:\n**Input grid:**\n"
        "[[1,1],[0,0]]\n**Output grid:**\n[[2,2],[0,0]]",
        PAIR,
        "labelled grids",
    ),
    (
        "ARC-GEN sized repair",  # a 41-row edited input, as 1190e5a7's Editing instance wants
        "Input:\n```\n" + "\n".join(["6686"] * 41) + "\n```\nOutput:\n```\n22\n```",
        {"input": [[6, 6, 8, 6]] * 41, "output": [[2, 2]]},
        "labelled grids",
    ),
    ("ragged output", "Input:\n1 1\n0 0\nOutput:\n2 2\n0", None, "unparsable: output grid: rows"),
    ("one grid", "Input:\n1 1\n0 0", None, "unparsable: no labelled input and output"),
    ("empty", "", None, "unparsable: no grid found"),
]


def _check(parser, reply, expected, how):
    result = parser(reply)
    assert result.answer == expected
    assert result.ok is (expected is not None)
    assert result.how.startswith(how), result.how


@pytest.mark.parametrize(
    ("reply", "expected", "how"),
    [case[1:] for case in GRID_EXAMPLES],
    ids=[case[0] for case in GRID_EXAMPLES],
)
def test_grid_examples(reply, expected, how):
    _check(parse_grid, reply, expected, how)


@pytest.mark.parametrize(
    ("reply", "expected", "how"),
    [case[1:] for case in JUDGMENT_EXAMPLES],
    ids=[case[0] for case in JUDGMENT_EXAMPLES],
)
def test_judgment_examples(reply, expected, how):
    _check(parse_judgments, reply, expected, how)


@pytest.mark.parametrize(
    ("reply", "expected", "how"),
    [case[1:] for case in PAIR_EXAMPLES],
    ids=[case[0] for case in PAIR_EXAMPLES],
)
def test_pair_examples(reply, expected, how):
    _check(parse_pair, reply, expected, how)


G1 = [[5]]

# (id, reply, tests, attempts, expected outputs or None, how or the start of the reason)
OUTPUT_EXAMPLES = [
    ("one test", "```\n1 2\n3 4\n```", 1, 1, [[G2]], "code block rows"),
    (
        "two labelled tests",
        "Test 1:\n```\n1 2\n3 4\n```\nTest 2:\n```\n5\n```\n",
        2, 1, [[G2], [G1]], "code block rows",
    ),
    ("json list of grids", "Outputs: [[[1, 2], [3, 4]], [[5]]]", 2, 1, [[G2], [G1]], "json"),
    (
        "a correction wins",
        "Test 1:\n```\n9 9\n9 9\n```\nWait, no. Corrected:\n```\n1 2\n3 4\n```",
        1, 1, [[G2]], "code block rows (last 1 of 2 grids)",
    ),
    (
        "a correction of both tests",
        "[[0]] [[0]] Sorry, corrected: [[1, 2], [3, 4]] and [[5]]",
        2, 1, [[G2], [G1]], "json (last 2 of 4 grids)",
    ),
    (
        "two attempts per test",
        "Attempt 1: [[0]]\nAttempt 2: [[1, 2], [3, 4]]\nTest 2: [[5]] or [[6]]",
        2, 2, [[[[0]], G2], [G1, [[6]]]], "json",
    ),
    ("fewer grids than attempts", "[[1, 2], [3, 4]]", 1, 2, [[G2]], "json"),
    ("mixed sources", "```\n1 2\n3 4\n```\nand [[5]]", 2, 1, [[G2], [G1]], "code block rows/json"),
    ("too few", "Test 1: [[1]]", 2, 1, None, "unparsable: 1 grid(s) found, need 2"),
    ("none", "I cannot solve this.", 1, 1, None, "unparsable: no grid found, need 1"),
    ("malformed only", "```\n1 2\n3\n```", 1, 1, None, "unparsable: code block rows: rows of"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "tests", "attempts", "expected", "how"),
    [case[1:] for case in OUTPUT_EXAMPLES],
    ids=[case[0] for case in OUTPUT_EXAMPLES],
)
def test_output_examples(reply, tests, attempts, expected, how):
    result = parse_outputs(reply, tests, attempts)
    assert result.answer == expected
    assert result.how.startswith(how), result.how
    if expected is not None:
        parsed, reason = parse_answer("output_grid", result.answer)
        assert reason is None and len(parsed) == tests


def test_output_parser_needs_positive_counts():
    with pytest.raises(ValueError):
        parse_outputs("[[1]]", 0)


def test_the_corpus_is_large_enough_and_its_ids_unique():
    for corpus in (GRID_EXAMPLES, JUDGMENT_EXAMPLES, PAIR_EXAMPLES):
        ids = [case[0] for case in corpus]
        assert len(ids) == len(set(ids))
    assert len(GRID_EXAMPLES) + len(JUDGMENT_EXAMPLES) + len(PAIR_EXAMPLES) >= 40


@pytest.mark.parametrize(
    ("dimension", "reply"),
    [
        ("inversion", "[[1,2],[3,4]]"),
        ("classification", "valid invalid invalid valid invalid"),
        ("generation", '{"input": [[1]], "output": [[2]]}'),
        ("editing", "Input:\n1\nOutput:\n2"),
        ("output_grid", "The output:\n```\n1 2\n```"),
    ],
)
def test_parsed_answers_are_what_the_rules_take(dimension, reply):
    result = parse_reply(dimension, reply)
    assert result.ok
    parsed, reason = parse_answer(dimension, result.answer)
    assert reason is None and parsed is not None


def test_definition_has_no_reply_parser():
    with pytest.raises(ValueError, match="definition"):
        parse_reply("definition", "def transform(g): return g")


def test_a_megabyte_of_garbage_is_unparsable():
    garbage = ("lorem [ipsum] 3,4 [[ 1, ]] | ```\n" * 40_000)[:1_000_000]
    assert not parse_grid(garbage).ok
    assert not parse_judgments(garbage).ok
    assert not parse_pair(garbage).ok


def test_only_the_last_grids_are_read_and_the_rest_counted():
    many = MAX_GRIDS + 10
    reply = "```\n7\n```\n" * many + "[[1, 2], [3, 4]]\n" * 5 + "Final:\n```\n1 2\n3 4\n```\n"
    result = parse_grid(reply)
    assert result.answer == G2
    assert result.how == f"code block rows (last of {MAX_GRIDS} grids read; 16 earlier skipped)"
    pair = parse_pair(reply + "Input:\n```\n5\n```\nOutput:\n```\n6\n```\n")
    assert pair.answer == {"input": [[5]], "output": [[6]]}
    outputs = parse_outputs(reply, 2)
    assert outputs.answer == [[G2], [G2]] and "earlier skipped" in outputs.how


def test_the_answer_after_a_megabyte_of_chatter_is_found():
    reply = "Thinking... " * 90_000 + "\n```\n1 2\n3 4\n```\n"
    assert len(reply) > 1_000_000
    assert parse_grid(reply).answer == G2


# ---------------------------------------------------------------------------- properties

ARC_SIDE = min(30, MAX_REPLY_SIDE)  # ARC-sized grids: larger ones make the examples slow
grids = st.integers(1, ARC_SIDE).flatmap(
    lambda width: st.lists(
        st.lists(st.integers(0, 9), min_size=width, max_size=width),
        min_size=1,
        max_size=ARC_SIDE,
    )
)


@settings(max_examples=300)
@given(st.text())
def test_any_text_never_raises(text):
    for parser in (parse_grid, parse_judgments, parse_pair, lambda t: parse_outputs(t, 2, 2)):
        result = parser(text)
        assert result.ok or result.how.startswith("unparsable: ")


@settings(max_examples=200)
@given(st.text(alphabet="0123456789 ,|;[]\n\r\t`~{}\"':inputoutvalid-"))
def test_reply_like_text_never_raises(text):
    for parser in (parse_grid, parse_judgments, parse_pair):
        result = parser(text)
        assert result.ok or result.how.startswith("unparsable: ")


@given(grids, st.sampled_from(["", " ", ", ", " | ", "\t"]), st.booleans())
def test_a_grid_as_rows_of_digits_parses_back(grid, separator, fenced):
    text = "\n".join(separator.join(map(str, row)) for row in grid)
    if fenced:
        text = f"Here is the grid:\n```\n{text}\n```\n"
    assert parse_grid(text).answer == grid


@given(grids, st.sampled_from([None, 1, 2]))
def test_a_grid_as_json_parses_back(grid, indent):
    text = f"My answer: {json.dumps(grid, indent=indent)} (final)"
    assert parse_grid(text).answer == grid


@given(grids, grids)
def test_a_pair_as_json_parses_back(grid_in, grid_out):
    text = json.dumps({"input": grid_in, "output": grid_out})
    assert parse_pair(text).answer == {"input": grid_in, "output": grid_out}


@given(st.lists(st.sampled_from(["valid", "invalid"]), min_size=5, max_size=5))
def test_five_judgments_parse_back(judgments):
    assert parse_judgments(json.dumps(judgments)).answer == judgments
    lines = "\n".join(f"Candidate {i + 1}: {j}" for i, j in enumerate(judgments))
    assert parse_judgments(lines).answer == judgments
