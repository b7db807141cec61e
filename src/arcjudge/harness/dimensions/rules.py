"""The pass rules of the dimensions, as pure functions over answers and verifier outputs.

Nothing here runs a program: the scorer runs the task's verifier in the sandbox and hands
its result for the relevant input to these functions as a :data:`VerifierOutput`
``(status, grid)``. Every rule returns a :class:`RuleVerdict` whose ``reason`` says why an
item failed. Answers are parsed by their dimension's strategy (``parse_answer``, through
:func:`..strategies.parse_answer`), which never raises: a malformed answer becomes a failed
item with the reason; :func:`grid_answer` and :func:`pair_answer` are the shapes they share.

Answer shapes (the ``answer`` field of an answers JSONL line):

* ``classification``: a list of 5 judgments, one per candidate in order; each is
  ``"valid"`` / ``"invalid"`` (also ``"correct"`` / ``"incorrect"``, ``"true"`` /
  ``"false"``; any case, surrounding spaces ignored) or ``true`` (valid) / ``false``.
  ``{"judgments": [...]}`` is accepted too.
* ``generation``: ``{"input": grid, "output": grid}``.
* ``editing``: ``{"input": grid, "output": grid}``: the edited pair.
* ``inversion``: ``{"input": grid}`` or the grid itself.
* ``output_grid``: one entry per test input, in order, each a grid or a list of attempts
  (grids; ARC's pass@2 gives two); ``{"outputs": [...]}`` is accepted too, and so is a bare
  grid for a task with one test input.

Distances are padded normalized Hamming distances, compared exactly (as fractions), so an
edit at distance exactly 0.70 is allowed and a generated grid at exactly the threshold
counts as near its demonstration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from arcjudge.grids import Grid, canonicalize
from arcjudge.sandbox.types import Status
from arcjudge.vocabulary import ANSWER_DIMENSIONS

__all__ = [
    "ANSWER_DIMENSIONS",
    "DIMENSION_ALIASES",
    "RuleVerdict",
    "VerifierOutput",
    "classification_verdict",
    "distance",
    "editing_verdict",
    "generation_verdict",
    "grid_answer",
    "inversion_verdict",
    "is_copy",
    "normalize_dimension",
    "output_grid_verdict",
    "pair_answer",
    "pair_input",
]

VerifierOutput = tuple[Status, Grid | None]
"""What the verifier did on one input: its status and, when ``ok``, its grid."""

"""Dimensions answered in the answers file (Definition comes from ``arcjudge score``)."""

DIMENSION_ALIASES: dict[str, str] = {
    "constrained_generation": "generation",
    "constrained-generation": "generation",
    "edit": "editing",
    "output-grid": "output_grid",
    "invert": "inversion",
    "classify": "classification",
}


@dataclass(frozen=True)
class RuleVerdict:
    """The outcome of one item.

    Attributes:
        passed: Whether the item passed.
        reason: Why it failed (``None`` when it passed).
        detail: JSON-friendly facts (distances, counts of right judgments...).
    """

    passed: bool
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def normalize_dimension(name: object) -> str | None:
    """The canonical dimension name, or ``None`` for an unknown one."""
    if not isinstance(name, str):
        return None
    text = name.strip().lower()
    text = DIMENSION_ALIASES.get(text, text)
    return text if text in (*ANSWER_DIMENSIONS, "definition") else None


def grid_answer(value: object, what: str) -> tuple[Grid | None, str | None]:
    """An answer's grid, or why ``value`` is none (``what``: the grid's name in it)."""
    grid, reason = canonicalize(value)
    if grid is None:
        return None, f"{what} is not a grid: {reason}"
    return grid, None


def pair_answer(answer: object, what: str) -> tuple[tuple[Grid, Grid] | None, str | None]:
    """An answer's ``{"input", "output"}`` pair, or why it is none (``what``: its dimension)."""
    if not isinstance(answer, Mapping) or "input" not in answer or "output" not in answer:
        return None, f"{what} answer must be an object with 'input' and 'output' grids"
    grid_in, reason = grid_answer(answer["input"], "input")
    if grid_in is None:
        return None, reason
    grid_out, reason = grid_answer(answer["output"], "output")
    if grid_out is None:
        return None, reason
    return (grid_in, grid_out), None


def pair_input(answer: object) -> Grid | None:
    """The input grid of a parsed pair answer (what the verifier runs on)."""
    return cast(tuple[Grid, Grid], answer)[0]


def _differing(a: Grid, b: Grid) -> tuple[int, int]:
    height, width = max(len(a), len(b)), max(len(a[0]), len(b[0]))
    differing = 0
    for r in range(height):
        row_a = a[r] if r < len(a) else ()
        row_b = b[r] if r < len(b) else ()
        for c in range(width):
            va = row_a[c] if c < len(row_a) else -1
            vb = row_b[c] if c < len(row_b) else -1
            differing += va != vb
    return differing, height * width


def distance(a: Grid, b: Grid) -> Fraction:
    """Exact padded normalized Hamming distance (see :func:`arcjudge.grids.hamming_distance`)."""
    differing, cells = _differing(a, b)
    return Fraction(differing, cells)


def _exact(threshold: float) -> Fraction:
    """A threshold as the decimal the user wrote (0.7 means 7/10, not the nearest double)."""
    return Fraction(str(threshold))


def _verifier_says(output: VerifierOutput, expected: Grid, what: str) -> str | None:
    status, grid = output
    if status is not Status.OK or grid is None:
        return f"the verifier gave no grid for the {what} ({status.value})"
    if grid != expected:
        return f"the verifier maps the {what} to a different output"
    return None


def classification_verdict(labels: Sequence[str], judgments: Sequence[bool]) -> RuleVerdict:
    """Passes only when all judgments match the hidden labels.

    ``detail``: ``right`` (how many judgments were right), ``judgments`` and
    ``wrong_slots`` (the positions judged wrong, in order).

    Args:
        labels: ``"valid"`` / ``"invalid"`` per candidate.
        judgments: ``True`` (valid) / ``False`` per candidate, same length.
    """
    if len(labels) != len(judgments):
        raise ValueError("labels and judgments differ in length")
    right = [(label == "valid") == judged for label, judged in zip(labels, judgments, strict=True)]
    wrong = [i for i, ok in enumerate(right) if not ok]
    detail = {"right": sum(right), "judgments": len(right), "wrong_slots": wrong}
    if all(right):
        return RuleVerdict(True, None, detail)
    return RuleVerdict(False, f"wrong judgment on candidate(s) {wrong}", detail)


def is_copy(
    pair: tuple[Grid, Grid], demo: tuple[Grid, Grid], min_distance: float, strict: bool = False
) -> tuple[bool, Fraction, Fraction]:
    """Whether ``pair`` copies ``demo``, with the input and output distances.

    By default a pair copies a demonstration when *both* its input and its output are
    within ``min_distance`` of the demonstration's (a fresh instance of a task with sparse,
    same-sized inputs may well have a near input but a different output, and tasks whose
    outputs take only a few values reuse a demonstration's output). With ``strict``,
    either side within the threshold makes a copy.
    """
    limit = _exact(min_distance)
    d_in, d_out = distance(pair[0], demo[0]), distance(pair[1], demo[1])
    near_in, near_out = d_in <= limit, d_out <= limit
    return ((near_in or near_out) if strict else (near_in and near_out)), d_in, d_out


def generation_verdict(
    pair: tuple[Grid, Grid],
    verifier: VerifierOutput,
    avoid: Iterable[tuple[Grid, Grid]],
    min_distance: float,
    arcgen_digests: set[str] | None = None,
    digest: str | None = None,
    strict: bool = False,
    earlier: Iterable[tuple[Grid, Grid]] = (),
) -> RuleVerdict:
    """verifier(input) == output, and the pair is no copy of a demonstration.

    See :func:`is_copy` for when a pair copies a demonstration (distances compared
    exactly; a distance equal to ``min_distance`` counts as near).

    Args:
        pair: The generated ``(input, output)``.
        verifier: The verifier's result on the generated input.
        avoid: The demonstrations.
        min_distance: The threshold.
        arcgen_digests: When given, digests of ARC-GEN pairs the pair must not equal.
        digest: The pair's digest (needed with ``arcgen_digests``).
        strict: Input and output must each be farther than the threshold from every
            demonstration.
        earlier: Pairs the model had accepted in earlier configurations: a copy of one of
            them fails as a copy of a demonstration does (``detail.earlier_pair`` its index).
    """
    nearest = None
    for what, name, shown in (
        ("demonstration", "demonstration", avoid),
        ("earlier_pair", "earlier accepted pair", earlier),
    ):
        for i, other in enumerate(shown):
            copied, d_in, d_out = is_copy(pair, other, min_distance, strict)
            low = max(d_in, d_out) if not strict else min(d_in, d_out)
            nearest = low if nearest is None else min(nearest, low)
            if copied:
                return RuleVerdict(
                    False,
                    f"copy of {name} {i}: input distance {float(d_in):.4f}, output "
                    f"distance {float(d_out):.4f} (threshold {min_distance}"
                    f"{', strict' if strict else ''})",
                    {what: i, "input_distance": float(d_in), "output_distance": float(d_out)},
                )
    detail = {"nearest_distance": None if nearest is None else float(nearest)}
    if arcgen_digests is not None and digest in arcgen_digests:
        return RuleVerdict(False, "the pair is an ARC-GEN stable pair", detail)
    reason = _verifier_says(verifier, pair[1], "generated input")
    return RuleVerdict(reason is None, reason, detail)


def editing_verdict(
    corrupted: tuple[Grid, Grid],
    edited: tuple[Grid, Grid],
    verifier: VerifierOutput,
    max_distance: float,
) -> RuleVerdict:
    """Both edited grids within ``max_distance`` of the corrupted ones, and the pair valid."""
    d_in, d_out = distance(edited[0], corrupted[0]), distance(edited[1], corrupted[1])
    detail = {"input_distance": float(d_in), "output_distance": float(d_out)}
    limit = _exact(max_distance)
    for side, value in (("input", d_in), ("output", d_out)):
        if value > limit:
            return RuleVerdict(
                False,
                f"edited {side} too far from the corrupted one: "
                f"{float(value):.4f} > {max_distance}",
                detail,
            )
    reason = _verifier_says(verifier, edited[1], "edited input")
    return RuleVerdict(reason is None, reason, detail)


def output_grid_verdict(
    expected: Sequence[Grid], answers: Sequence[Sequence[Grid]], attempts: int = 1
) -> RuleVerdict:
    """Every test output exact, each within its first ``attempts`` candidates (pass@k).

    Args:
        expected: The hidden test outputs, one per test input.
        answers: Per test input, the candidate outputs in the order given.
        attempts: How many candidates count per test input (ARC's pass@2 is 2).
    """
    if attempts < 1:
        raise ValueError("attempts must be >= 1")
    detail: dict[str, Any] = {"tests": len(expected), "attempts": attempts}
    if len(answers) != len(expected):
        return RuleVerdict(
            False, f"{len(answers)} output(s) for {len(expected)} test input(s)", detail
        )
    right = [want in tuple(got[:attempts]) for want, got in zip(expected, answers, strict=True)]
    detail["right"] = sum(right)
    extra = sum(max(0, len(got) - attempts) for got in answers)
    if extra:
        detail["ignored_attempts"] = extra
    if all(right):
        return RuleVerdict(True, None, detail)
    wrong = [i for i, ok in enumerate(right) if not ok]
    return RuleVerdict(False, f"wrong output for test input(s) {wrong}", detail)


def inversion_verdict(given_output: Grid, verifier: VerifierOutput) -> RuleVerdict:
    """verifier(proposed input) == the given output."""
    reason = _verifier_says(verifier, given_output, "proposed input")
    return RuleVerdict(reason is None, reason, {})
