"""Classification replies as models write them: a corpus of styles, each read as meant.

Grow the corpus: a reply style a model used that was not read as it meant goes here, with
the judgments it meant (``None``: it states no five judgments, and must not be read as any).
"""

from __future__ import annotations

import pytest

from arcjudge.harness.dimensions.judgment_text import line_findings
from arcjudge.harness.dimensions.strategies.classification import parse_judgments

V, X = "valid", "invalid"  # X: invalid

# (id, reply, the judgments it means or None)
STYLES: list[tuple[str, str, list[str] | None]] = [
    (
        "prose lead-in list",
        "My judgments: invalid, invalid, invalid, invalid, valid",
        [X, X, X, X, V],
    ),
    (
        "reasoning then a lead-in list",
        "The rule mirrors the grid left to right. Candidate 2 keeps the colours but does not "
        "mirror, and candidate 4 recolours the corner.\n\nFinal answer - valid, invalid, valid, "
        "invalid, valid.",
        [V, X, V, X, V],
    ),
    (
        "is followed by a list",
        "So my answer is valid, valid, invalid, valid, invalid.",
        [V, V, X, V, X],
    ),
    ("unquoted brackets", "Judgments: [invalid, valid, valid, invalid, invalid]", [X, V, V, X, X]),
    ("single quotes", "['valid', 'invalid', 'valid', 'valid', 'invalid']", [V, X, V, V, X]),
    ("slashes", "**Answer:** valid / invalid / invalid / invalid / valid", [V, X, X, X, V]),
    (
        "a list that wraps",
        "Putting it together, my judgments are: invalid, invalid,\ninvalid, valid, valid",
        [X, X, X, V, V],
    ),
    (
        "sentences on one line",
        "Candidate 1 is valid, candidate 2 is invalid, candidate 3 is valid, candidate 4 is "
        "invalid and candidate 5 is invalid.",
        [V, X, V, X, X],
    ),
    (
        "groups of candidates",
        "Candidates 1, 3 and 5 are valid; 2 and 4 are invalid.",
        [V, X, V, X, V],
    ),
    (
        "sentences with hedges",
        "Candidate 1 seems to be valid.\nCandidate 2 is not a valid pair.\nCandidate 3 appears "
        "valid.\nCandidate 4 isn't valid.\nCandidate 5 is clearly incorrect.",
        [V, X, V, X, X],
    ),
    (
        "numbered list, verdict at the end",
        "1. The output mirrors the input, so valid.\n2. The colours are swapped: invalid.\n"
        "3. Mirrored correctly -> valid\n4. One cell is off, which makes it invalid.\n"
        "5. Not mirrored at all; invalid.",
        [V, X, V, X, X],
    ),
    (
        "numbered list, verdict first",
        "1) Invalid - the corner is wrong\n2) Valid, follows the rule\n3) Invalid\n"
        "4) Valid\n5) Valid (same as demonstration 2)",
        [X, V, X, V, V],
    ),
    ("inline numbering", "(1) valid (2) invalid (3) invalid (4) valid (5) valid", [V, X, X, V, V]),
    (
        "markdown table",
        "| Candidate | Reasoning | Verdict |\n|---|---|---|\n| 1 | mirrored | valid |\n"
        "| 2 | colours swapped | invalid |\n| 3 | mirrored | valid |\n"
        "| 4 | one cell off | invalid |\n| 5 | mirrored | valid |",
        [V, X, V, X, V],
    ),
    (
        "table with labels and marks",
        "| Pair | Judgment |\n|:--|:--|\n| Candidate 1 | ✅ Valid |\n"
        "| Candidate 2 | ❌ Not valid |\n"
        "| Candidate 3 | ❌ Invalid |\n| Candidate 4 | ✅ Valid |\n| Candidate 5 | ✅ Valid |",
        [V, X, X, V, V],
    ),
    (
        "transposed table",
        "| Candidate | 1 | 2 | 3 | 4 | 5 |\n|---|---|---|---|---|---|\n"
        "| Verdict | invalid | invalid | valid | valid | invalid |",
        [X, X, V, V, X],
    ),
    (
        "sections with reasoning",
        "### Candidate 1\nThe output is the input mirrored.\n**Verdict:** valid\n\n"
        "### Candidate 2\nThe mirror is vertical instead of horizontal.\n**Verdict:** invalid\n\n"
        "### Candidate 3\nLooks right.\nTherefore, this pair is valid.\n\n"
        "### Candidate 4\nA colour is changed.\nSo it is not valid.\n\n"
        "### Candidate 5\nCorrect mirror.\nVerdict: valid",
        [V, X, V, X, V],
    ),
    (
        "sections that ask first",
        "**Candidate 1** - is it valid?\nYes, the rule holds: valid.\n"
        "**Candidate 2** - is it valid?\nNo: invalid.\n"
        "**Candidate 3** - is it valid?\nvalid\n"
        "**Candidate 4** - is it valid?\ninvalid\n"
        "**Candidate 5** - is it valid?\ninvalid",
        [V, X, V, X, X],
    ),
    (
        "the requested format after analysis",
        "Let me look at each candidate. Candidate 2 might be valid, but its corner differs.\n\n"
        "Candidate 1: valid\nCandidate 2: invalid\nCandidate 3: invalid\nCandidate 4: valid\n"
        "Candidate 5: invalid",
        [V, X, X, V, X],
    ),
    (
        "a later statement corrects one",
        "Candidate 1: valid\nCandidate 2: valid\nCandidate 3: invalid\nCandidate 4: valid\n"
        "Candidate 5: invalid\nWait, looking again, candidate 2 is invalid.",
        [V, X, X, V, X],
    ),
    (
        "true and false",
        "Pair 1: true\nPair 2: false\nPair 3: false\nPair 4: true\nPair 5: true",
        [V, X, X, V, V],
    ),
    (
        "correct and incorrect in capitals",
        "1. CORRECT\n2. INCORRECT\n3. INCORRECT\n4. INCORRECT\n5. CORRECT",
        [V, X, X, X, V],
    ),
    (
        "zero-based statements",
        "Candidate 0 is valid. Candidate 1 is invalid. Candidate 2 is invalid. Candidate 3 is "
        "valid. Candidate 4 is valid.",
        [V, X, X, V, V],
    ),
    ("questions only", "Is candidate 1 valid? Is candidate 2 valid? X cannot tell.", None),
    ("four of five", "My judgments: valid, invalid, valid, invalid", None),
    ("a rule with no judgments", "A valid pair mirrors its input; an invalid one does not.", None),
    (
        "analysis that never concludes",
        "Candidate 1 has 3 valid-looking cells.\nCandidate 2 has the wrong colours.",
        None,
    ),
]


@pytest.mark.parametrize(
    ("reply", "meant"), [case[1:] for case in STYLES], ids=[case[0] for case in STYLES]
)
def test_every_style_reads_as_meant(reply: str, meant: list[str] | None):
    result = parse_judgments(reply)
    assert result.answer == meant, result.how
    assert result.ok is (meant is not None)


def test_the_corpus_has_many_styles_and_unique_ids():
    ids = [case[0] for case in STYLES]
    assert len(ids) == len(set(ids)) and len(ids) >= 25
    assert sum(case[2] is None for case in STYLES) >= 3  # styles that must not be read


def test_a_table_row_takes_its_last_judgment_cell():
    rows = "\n".join(
        f"| {n} | valid at first | {'invalid' if n % 2 else 'valid'} |" for n in range(1, 6)
    )
    findings = line_findings(rows.split("\n"))
    assert findings[-1].judgments == [X, V, X, V, X]


def test_negation_flips_each_style():
    assert parse_judgments(
        "Candidate 1 is not valid.\n" + "\n".join(f"Candidate {n}: valid" for n in range(2, 6))
    ).answer == [X, V, V, V, V]
    assert parse_judgments("Answer: not valid, valid, valid, valid, not invalid").answer == [
        X,
        V,
        V,
        V,
        V,
    ]
