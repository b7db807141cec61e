"""Classification: judge five candidate pairs valid or invalid.

Build: five candidates drawn by the build's mixture of candidate types over the types the
task has confirmed pairs of (``valid`` from the valid pool but the Inversion pair), by the
build's :class:`~arcjudge.vocabulary.MixtureRule`.
Prompt: the candidates as ``Candidate N`` pairs. Reply: five judgments (a JSON list,
per-candidate lines or a list of words). Rule: :func:`..rules.classification_verdict`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from arcjudge.grids import Grid
from arcjudge.harness.dimensions.gridtext import pairs_text, read_pairs
from arcjudge.harness.dimensions.judgment_text import JUDGMENT_WORDS, JudgmentFinding, line_findings
from arcjudge.harness.dimensions.mixture import draw as draw_kind
from arcjudge.harness.dimensions.mixture import for_all_available, unused_weights
from arcjudge.harness.dimensions.plan import DrawSettings, Payload, TaskPlan, pair_json
from arcjudge.harness.dimensions.records import CLASSIFICATION_SIZE, DimensionInstance
from arcjudge.harness.dimensions.replies import ParsedReply, ReplyLines, split_reply, unparsable
from arcjudge.harness.dimensions.rules import RuleVerdict, classification_verdict
from arcjudge.harness.dimensions.strategies.strategy import (
    ConsistencyCheck,
    RuleCase,
    VerifierInput,
    whole_reply,
)
from arcjudge.tasks import Task
from arcjudge.vocabulary import INVALID_KINDS, Dimension, GridFormat, Judgment, MixtureRule

__all__ = ["DIMENSION", "PLACEHOLDERS", "draw", "parse_answer", "read_reply", "rule", "texts"]
__all__ += ["consistency", "verifier_input", "visible"]
__all__ += ["CLASSIFICATION_CANDIDATES", "parse_judgments"]

DIMENSION = Dimension.CLASSIFICATION

PLACEHOLDERS = frozenset({"candidates", "candidate_count"})


# ---------------------------------------------------------------------------- build


def draw(plan: TaskPlan, settings: DrawSettings, rng: random.Random) -> Payload | None:
    """Five candidates by the mixture's weights over the types the task has.

    ``settings.mixture_rule`` says how (:class:`~arcjudge.vocabulary.MixtureRule`): by
    default no candidate repeats while an unused one of any type remains, a used-up type's
    weight going to the remaining types (``valid`` included); ``fixed-valid`` draws every
    slot from the same weights and repeats a candidate of a used-up type.
    """
    available = [k for k in INVALID_KINDS if plan.confirmed.get(k)]
    rule = settings.mixture_rule
    if rule is MixtureRule.RENORMALIZED:
        weights, moved = for_all_available(settings.mixture, available)
    else:
        weights, moved = settings.mixture.for_available(available)
    if not weights:
        return None
    # the candidates of each type a slot may take: valid[0] is the Inversion instance (see
    # the builder's plan), shown here only when it is the task's one valid pair
    pools: dict[str, list[int]] = {k: list(range(len(plan.confirmed[k]))) for k in available}
    pools["valid"] = list(range(1, len(plan.valid))) or [0]
    used: dict[str, set[int]] = {}
    candidates, labels, kinds, provenance = [], [], [], []
    for _ in range(CLASSIFICATION_SIZE):
        if rule is MixtureRule.FIXED_VALID:
            kind = draw_kind(weights, rng)
        else:
            unused = [k for k in weights if len(used.get(k, ())) < len(pools[k])]
            kind = draw_kind(unused_weights(weights, unused), rng)
        indices = pools[kind]
        taken = used.setdefault(kind, set())
        fresh = [i for i in indices if i not in taken]
        index = rng.choice(fresh or indices)
        taken.add(index)
        if kind == "valid":
            valid = plan.valid[index]
            assert valid.pair.output is not None
            candidates.append(pair_json(valid.pair.input, valid.pair.output))
            provenance.append({**valid.provenance(), "reused": not fresh})
        else:
            cand, _ = plan.confirmed[kind][index]
            candidates.append(pair_json(cand.input, cand.output))
            provenance.append({**cand.detail, "reused": not fresh})
        labels.append("valid" if kind == "valid" else "invalid")
        kinds.append(kind)
    key = {
        "labels": labels,
        "kinds": kinds,
        "provenance": provenance,
        "weights": weights,
        "redistributed": moved,
    }
    return Payload({"candidates": candidates}, key)


# ---------------------------------------------------------------------------- prompt


def visible(instance: DimensionInstance, task: Task) -> dict[str, Any]:
    """``candidates``: the five pairs."""
    return {"candidates": [pair_json(*c) for c in instance.candidates()]}


def texts(
    visible: Mapping[str, Any], demonstrations: Sequence[tuple[Grid, Grid]], grid_format: GridFormat
) -> dict[str, str]:
    """``$candidates`` (``Candidate N`` pairs) and ``$candidate_count``."""
    candidates = read_pairs(visible["candidates"])
    return {
        "candidates": pairs_text(candidates, "Candidate", grid_format),
        "candidate_count": str(len(candidates)),
    }


# ---------------------------------------------------------------------------- reply

_JSON_LIST = re.compile(r"\[[^\[\]]*\]")
CLASSIFICATION_CANDIDATES = 5


def _judgment_of(item: object) -> Judgment | None:
    if isinstance(item, bool):
        return Judgment.VALID if item else Judgment.INVALID
    if isinstance(item, str):
        return JUDGMENT_WORDS.get(item.strip().lower())
    return None


def _json_judgments(reply: ReplyLines) -> list[JudgmentFinding]:
    found = []
    for match in _JSON_LIST.finditer(reply.text):
        body = match.group()
        if not any(c.isalpha() for c in body):
            continue
        try:
            value = json.loads(body)
        except ValueError:
            continue
        judged = [_judgment_of(item) for item in value] if isinstance(value, list) else []
        if not judged or any(j is None for j in judged):
            continue
        line = reply.line_of(match.end() - 1)
        if len(judged) != CLASSIFICATION_CANDIDATES:
            found.append(
                JudgmentFinding(
                    line, 2, None, f"a JSON list of {len(judged)} judgments, need 5", "json"
                )
            )
        else:
            found.append(JudgmentFinding(line, 2, [str(j) for j in judged], None, "json"))
    return found


def parse_judgments(reply: object) -> ParsedReply[list[str]]:
    """Five judgments (``"valid"``/``"invalid"``), in candidate order, from a reply.

    Read as a JSON list (``["valid", false, ...]``, also inside ``{"judgments": ...}``),
    or as :mod:`..judgment_text` reads prose: per-candidate statements ("Candidate 3:
    invalid", "3. valid", "#4 is not valid", "Candidates 1 and 3 are valid", table rows,
    a heading and a verdict line below it; numbered 1..5 or 0..4; a later statement for a
    candidate replaces an earlier one) or lists of words ("My judgments: valid, invalid,
    ...", one word a line, a table row). The words are those :func:`parse_answer` takes
    (valid/invalid, correct/incorrect, true/false, any case); a judgment asked as a
    question ("is it valid?") is none. The last complete set of 5 wins.

    Args:
        reply: The raw reply.

    Returns:
        The judgments and how they were read, or ``unparsable: <why>``.
    """
    if not isinstance(reply, str):
        return unparsable("the reply is not text")
    parsed = split_reply(reply)
    found = sorted(
        [*_json_judgments(parsed), *line_findings(parsed.lines)], key=lambda j: (j.line, j.rank)
    )
    good = [j for j in found if j.judgments is not None]
    if good:
        return ParsedReply(good[-1].judgments, good[-1].how)
    if found:
        return unparsable(found[-1].reason or "no judgments found")
    return unparsable("no judgments found")


read_reply = whole_reply(parse_judgments)


# ---------------------------------------------------------------------------- grade


def parse_answer(answer: object) -> tuple[tuple[bool, ...] | None, str | None]:
    """Five judgments (``True``: valid): a list of words or booleans, or ``{"judgments": ...}``."""
    if isinstance(answer, Mapping) and "judgments" in answer:
        answer = answer["judgments"]
    if not isinstance(answer, list):
        return None, "classification answer must be a list of 5 judgments"
    if len(answer) != CLASSIFICATION_SIZE:
        return None, f"classification answer must have 5 judgments, got {len(answer)}"
    judgments = []
    for i, item in enumerate(answer):
        word = item.strip().lower() if isinstance(item, str) else None
        if isinstance(item, bool):
            judgments.append(item)
        elif word in JUDGMENT_WORDS:
            judgments.append(JUDGMENT_WORDS[word] is Judgment.VALID)
        else:
            return None, f"judgment {i} must be 'valid', 'invalid', true or false"
    return tuple(judgments), None


verifier_input: VerifierInput | None = None
"""No verifier runs: judgments are checked against the hidden labels."""


def rule(case: RuleCase) -> RuleVerdict:
    """:func:`..rules.classification_verdict`, with the candidate type per slot (``kinds``)."""
    judgments = cast(tuple[bool, ...], case.answer)
    verdict = classification_verdict(case.instance.labels(), judgments)
    # the candidate type per slot, for failure rates per type (dimensions analyze)
    return replace(verdict, detail={**verdict.detail, "kinds": list(case.instance.kinds())})


def consistency(instance: DimensionInstance, answer: object) -> ConsistencyCheck:
    """Every candidate, with the answer's judgment and the hidden label of each."""
    truths = tuple(label == Judgment.VALID for label in instance.labels())
    return ConsistencyCheck(instance.candidates(), cast(tuple[bool, ...], answer), truths)
