"""``runtime/splitstream.py`` (and its ``split_syntax``, ``split_values``) in this process, on
our own sources (no sandbox needed)."""

from __future__ import annotations

import functools

from arcjudge.sandbox.runtime import splitstream
from arcjudge.sandbox.runtime.split_syntax import read_function
from arcjudge.sandbox.runtime.split_values import frozen, same
from arcjudge.sandbox.runtime.splitstream import FULL, Splitter

BASE = b"""
def inc(g, k):
    return tuple(tuple(c + k for c in r) for r in g)


def verify(I):
    x1 = inc(I, 1)
    x2 = inc(x1, 2)
    x3 = inc(x2, 0)
    x4 = inc(x3, 1)
    O = inc(x4, 3)
    return O
"""
GRID = ((1, 2), (3, 4))


def load(source: bytes) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(source, "program.py", "exec", dont_inherit=True), namespace)
    return namespace


def run(
    splitter: Splitter, source: bytes, marker: bool = True, grid: object = GRID
) -> tuple[bool, object]:
    namespace = load(source)
    plan = splitter.plan(source, namespace)
    assert plan is not None
    return splitter.call(plan, 0, grid, marker)


def test_the_base_never_runs_what_makes_its_output():
    splitter = Splitter(BASE, "verify", load(BASE))
    assert splitter.cut == 4  # O = inc(x4, 3): neither it nor the return
    run(splitter, BASE.replace(b"inc(x4, 3)", b"inc(x4, 4)"))  # a mutant of the output line
    for env in splitter.traces[0].envs:
        assert "O" not in env
    assert len(splitter.traces[0].envs) == 5


def test_equivalent_variants_by_value_and_by_deletion():
    splitter = Splitter(BASE, "verify", load(BASE))
    assert run(splitter, BASE.replace(b"inc(x2, 0)", b"inc(x2, 1 - 1)")) == (True, None)
    deleted = BASE.replace(b"    x3 = inc(x2, 0)\n", b"").replace(b"inc(x3, 1)", b"inc(x2, 1)")
    assert run(splitter, deleted) == (True, None)
    into_output = BASE.replace(b"    x4 = inc(x3, 1)\n", b"").replace(b"inc(x4, 3)", b"inc(x3, 4)")
    # the base's answer too, but computed: nothing is compared after the output's statement
    assert run(splitter, into_output) == (False, ((8, 9), (10, 11)))
    other = run(splitter, BASE.replace(b"inc(x1, 2)", b"inc(x1, 5)"))
    assert other == (False, ((11, 12), (13, 14)))
    assert run(splitter, BASE.replace(b"inc(x2, 0)", b"inc(x2, 1 - 1)"), marker=False)[0] is False


def test_mutable_values_and_late_closures_are_not_shared():
    lists = BASE.replace(b"x2 = inc(x1, 2)", b"x2 = [list(r) for r in inc(x1, 2)]").replace(
        b"x3 = inc(x2, 0)", b"x3 = inc(x2, 0) if x2.append([0, 0]) else inc(x2[:2], 0)"
    )
    splitter = Splitter(lists, "verify", load(lists))
    assert run(splitter, lists.replace(b"inc(x4, 3)", b"inc(x4, 4)")) == (False, FULL)
    late = BASE.replace(b"x2 = inc(x1, 2)", b"x2 = (lambda: x3)")
    assert read_function(late, "verify") is None
    looped = BASE.replace(b"x3 = inc(x2, 0)", b"for x3 in [x2]:\n        pass")
    assert read_function(looped, "verify") is not None  # a statement it cannot step: tail


def test_frozen_and_same_are_strict():
    assert frozen((1, "a", frozenset({(1, (2, 3))}), None, 1.5))
    assert not frozen(([1],)) and not frozen({1: 2}) and not frozen({1})
    assert frozen(functools.partial(max, 1, 2)) and not frozen(functools.partial(max, [1]))
    cell = [1]
    assert not frozen(lambda: cell)
    number = 3
    assert frozen(lambda: number)
    assert same((1, 2), (1, 2)) and not same((1, 2), (1, True)) and not same(1, 1.0)
    assert not same(frozenset({1}), {1}) and not same((frozenset({1}),), ({1},))
    assert not same([1], [1])
    assert splitstream.SAME == "same"


def test_a_variant_of_the_first_statement_is_the_base_again_where_its_values_are():
    splitter = Splitter(BASE, "verify", load(BASE))
    assert run(splitter, BASE.replace(b"inc(I, 1)", b"inc(I, 2 - 1)")) == (True, None)
    assert splitter.traces[0].envs[0]["I"] is GRID  # nothing of the base ran before it
    assert run(splitter, BASE.replace(b"inc(I, 1)", b"inc(I, 2)")) == (False, ((9, 10), (11, 12)))
    deleted = BASE.replace(b"    x1 = inc(I, 1)\n", b"").replace(b"inc(x1, 2)", b"inc(I, 3)")
    assert run(splitter, deleted) == (True, None)


def test_a_mutable_input_is_never_shared_not_even_with_a_variant_of_the_first_statement():
    splitter = Splitter(BASE, "verify", load(BASE))
    rows = [list(r) for r in GRID]
    assert run(splitter, BASE.replace(b"inc(I, 1)", b"inc(I, 2 - 1)"), grid=rows) == (False, FULL)
    assert run(splitter, BASE.replace(b"inc(x1, 2)", b"inc(x1, 1 + 1)"), grid=rows) == (
        False,
        FULL,
    )
