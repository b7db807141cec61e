"""The dimension table: every dimension has one strategy module, and nothing else names one.

A new dimension is one new module under ``harness/dimensions/strategies/`` (with its word
in the vocabulary and its template): these tests fail when the table misses a dimension,
lists one twice or out of order, leaves a strategy module out, or when the prompt
renderer branches on a dimension instead of asking the table.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from arcjudge.harness.dimensions import prompts, strategies
from arcjudge.harness.dimensions.prompts import PLACEHOLDERS, TEMPLATE_DIR, load_templates
from arcjudge.harness.dimensions.replies import ParsedReply
from arcjudge.harness.dimensions.strategies import (
    STRATEGIES,
    DimensionStrategy,
    inversion,
    parse_reply,
)
from arcjudge.vocabulary import (
    ANSWER_DIMENSIONS,
    BUILT_DIMENSIONS,
    CONSISTENCY_DIMENSIONS,
    Dimension,
)

PACKAGE = Path(strategies.__file__).resolve().parent
SHARED = {"strategy"}  # modules of the package that hold no dimension
PROTOCOL = (
    "DIMENSION",
    "PLACEHOLDERS",
    "consistency",
    "draw",
    "parse_answer",
    "read_reply",
    "rule",
    "texts",
    "verifier_input",
    "visible",
)


def _strategy_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(PACKAGE)]) if m.name not in SHARED)


def test_the_table_covers_every_dimension_once_in_build_order():
    assert tuple(STRATEGIES) == BUILT_DIMENSIONS
    assert set(STRATEGIES) == set(Dimension)


@pytest.mark.parametrize("dimension", list(Dimension))
def test_each_strategy_is_its_dimensions(dimension):
    strategy = STRATEGIES[dimension]
    members = [name for name in vars(DimensionStrategy) if not name.startswith("_")]
    assert sorted(members) == sorted(PROTOCOL)  # the protocol is what this test checks
    for name in members:
        assert hasattr(strategy, name), f"{dimension}: no {name}"
    assert strategy.DIMENSION is dimension
    functions = (strategy.draw, strategy.visible, strategy.texts, strategy.consistency)
    for function in functions:
        assert callable(function)
    answered = dimension in ANSWER_DIMENSIONS  # Definition: programs, score's rule
    assert (strategy.read_reply is not None) == answered
    assert (strategy.parse_answer is not None) == answered
    assert (strategy.rule is not None) == answered
    assert (TEMPLATE_DIR / f"{dimension}.txt").is_file()


@pytest.mark.parametrize("dimension", [d for d in Dimension if d not in CONSISTENCY_DIMENSIONS])
def test_only_the_consistency_dimensions_check_a_models_program(dimension):
    assert STRATEGIES[dimension].consistency(None, None) is None


@pytest.mark.parametrize("dimension", list(ANSWER_DIMENSIONS))
def test_the_verifier_runs_on_a_proposed_input_only(dimension):
    strategy = STRATEGIES[dimension]
    answers = {
        "classification": ["valid", "invalid", "valid", "valid", "invalid"],
        "generation": {"input": [[1]], "output": [[2]]},
        "editing": {"input": [[1]], "output": [[2]]},
        "inversion": [[1]],
        "output_grid": [[1]],
    }
    value, problem = strategy.parse_answer(answers[dimension])
    assert problem is None
    proposed = dimension in ("generation", "editing", "inversion")
    assert (strategy.verifier_input is not None) == proposed
    if strategy.verifier_input is not None:
        assert strategy.verifier_input(value) == ((1,),)


def test_every_strategy_module_is_in_the_table():
    listed = {id(s) for s in STRATEGIES.values()}
    modules = _strategy_modules()
    assert len(modules) == len(STRATEGIES)
    for name in modules:
        module = importlib.import_module(f"{strategies.__name__}.{name}")
        assert id(module) in listed, f"{name} is not in STRATEGIES"
        assert module.DIMENSION == name  # one module per dimension, named for it


def test_templates_use_what_their_strategy_fills():
    templates = load_templates()
    for dimension, strategy in STRATEGIES.items():
        used = set(templates.templates[dimension].get_identifiers())
        assert used <= PLACEHOLDERS[dimension]
        assert strategy.PLACEHOLDERS <= PLACEHOLDERS[dimension]


def test_parse_reply_dispatches_through_the_table():
    assert parse_reply(Dimension.INVERSION, "```\n12\n34\n```").answer == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="no reply parser"):
        parse_reply(Dimension.DEFINITION, "def transform(grid): return grid")
    with pytest.raises(ValueError, match="no reply parser"):
        parse_reply("not a dimension", "")


def test_prompts_never_branch_on_a_dimension():
    path = PACKAGE.parent / "prompts.py"
    named = [
        f"prompts.py:{node.lineno}: Dimension.{node.attr}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Dimension"
    ]
    assert named == []


def test_prompts_and_replies_ask_the_table(monkeypatch):
    """Swap one dimension's module for another object with the members: its texts and its
    reader are what rendering and reply reading use (nothing else knows the dimension)."""
    fake = SimpleNamespace(**{name: getattr(inversion, name) for name in PROTOCOL})
    fake.texts = lambda visible, demonstrations, grid_format: {"output": "FAKE OUTPUT"}
    fake.read_reply = lambda reply, tests, attempts: ParsedReply("read by the fake", "fake")
    swapped = {**STRATEGIES, Dimension.INVERSION: fake}
    monkeypatch.setattr(prompts, "STRATEGIES", swapped)
    monkeypatch.setattr(strategies, "STRATEGIES", swapped)
    visible = {"demonstrations": [{"input": [[1]], "output": [[2]]}], "output": [[2]]}
    _, user = prompts.render_messages(Dimension.INVERSION, visible)
    assert "FAKE OUTPUT" in user["content"]
    assert parse_reply(Dimension.INVERSION, "```\n1\n```").answer == "read by the fake"
