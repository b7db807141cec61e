"""The libcst mutation engine: operators, content-based ids, splicing, dedup, errors."""

from __future__ import annotations

import ast
import difflib
import random
import warnings
from pathlib import Path
from typing import Any, ClassVar

import pytest

with warnings.catch_warnings():  # libcst 1.0 imports mypy_extensions.TypedDict (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst

    from arcjudge.mutation import (
        OPERATORS,
        Site,
        default_operators,
        diffing,
        enumerate_mutants,
        mutant_id,
        parse_mutant_id,
    )
    from arcjudge.mutation.anchors import escape_id_part, normalize_code, unescape_id_part
    from arcjudge.mutation.cstindex import ModuleIndex
    from arcjudge.mutation.operators import NodeOperator, Operator
    from arcjudge.mutation.parsing import parse_source
    from arcjudge.mutation.render import IncrementalRenderer

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "arcjudge" / "data" / "sample"
VERIFIERS = (SAMPLE / "re-arc" / "verifiers.py").read_text()
GOLF = sorted((SAMPLE / "golf").glob("*.py"))
MODULES = sorted((SAMPLE / "module").glob("*.py"))

RICH = '''"""A bit of everything."""
from dsl import *


def verify_x(I):
    x0 = vmirror(I)
    x1 = hconcat(I, x0)
    x2 = replace(x1, SEVEN, FIVE)
    return x2


def transform(g):
    h, w = len(g), len(g[0])
    out = [row + row[:h] for row in g[::-1]]
    cells = [v for v in out[0] if v != 0 if v < 9]
    n = (h - 1) * 2 + len(cells)
    return [r[1:-1] for r in out if n >= 0 and 0 <= w < 30]


p = lambda g: [[c * 2 for c in r if c in (1, 2)] for r in g[::2]]
'''


NESTED = (
    "import os\n"
    "@deco(3)\n"
    "def solve(g, k=2):\n"
    "    h = len(g); w = len(g[0]) - 1\n"
    "    if h > 3:\n"
    "        out = [r[1:] for r in g if r]\n"
    "    elif h == 2:\n"
    "        out = g[::-1]\n"
    "    else:\n"
    "        out = [[c + 1 for c in r]\n"
    "               for r in g]  # trailing comment\n"
    "    try:\n"
    "        for i in range(h):\n"
    "            while i < w:\n"
    "                i += 1\n"
    "            else:\n"
    "                pass\n"
    "    except (ValueError, KeyError) as exc:\n"
    "        raise RuntimeError(exc) from None\n"
    "    finally:\n"
    "        n = h + \\\n"
    "            w\n"
    "    if n: out = out[:n]\n"
    "    return out\n"
    "\n"
    "class Solver:\n"
    "\tdef run(self, g):\n"
    "\t\tm = [v for v in g[0] if v != 0]\n"
    "\t\treturn self.f(m, -1 if m else 2)\n"
    "x = solve([[1, 2]], k=1 * 2)"
)

# ---------------------------------------------------------------- operator examples


def _example_cases() -> list[object]:
    cases = []
    for op in default_operators():
        for i, example in enumerate(op.examples):
            cases.append(pytest.param(op, example, id=f"{op.name}-{i}"))
    return cases


def _select(sites: list[Site], selector: str | None) -> Site:
    if selector is None:
        return sites[0]
    for site in sites:
        if selector in (site.variant, site.key):
            return site
    raise AssertionError(f"no site {selector!r} in {[s.key for s in sites]}")


@pytest.mark.parametrize(("op", "example"), _example_cases())
def test_operator_examples(op: Operator, example: tuple[str, ...]) -> None:
    before, after = example[0], example[1]
    selector = example[2] if len(example) > 2 else None
    module = cst.parse_module(before)
    sites = op.sites(module)
    assert sites, f"{op.name}: no site in {before!r}"
    mutated = op.apply(module, _select(sites, selector))
    assert mutated.code == after
    assert module.code == before  # apply is pure
    compile(mutated.code, "<after>", "exec")


@pytest.mark.parametrize(
    ("op", "source"),
    [pytest.param(op, s, id=op.name) for op in default_operators() for s in op.counter_examples],
)
def test_operator_counter_examples(op: Operator, source: str) -> None:
    assert op.sites(cst.parse_module(source)) == []


def test_every_operator_is_documented_and_exemplified() -> None:
    names = [op.name for op in default_operators()]
    assert len(names) == len(set(names)) >= 6
    for op in default_operators():
        assert "." in op.name and ":" not in op.name
        assert OPERATORS[op.name] is op
        assert type(op).__doc__ and len(type(op).__doc__.split()) > 20
        assert op.examples


# ---------------------------------------------------------------- sites


def _site_keys(op: Operator, source: str) -> list[tuple[str | None, str, str | None]]:
    return [(s.scope, s.anchor, s.variant) for s in op.sites(cst.parse_module(source))]


@pytest.mark.parametrize("op", default_operators(), ids=lambda op: op.name)
def test_sites_deterministic_and_in_source_order(op: Operator) -> None:
    first = _site_keys(op, RICH)
    assert first == _site_keys(op, RICH)
    assert len(first) == len(set(first)), "duplicate (scope, anchor, variant)"
    from libcst.metadata import MetadataWrapper, PositionProvider

    module = cst.parse_module(RICH)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    starts = [
        (positions[s.node].start.line, positions[s.node].start.column) for s in op.sites(module)
    ]
    assert starts == sorted(starts)


def test_rich_source_has_sites_for_every_operator() -> None:
    source = RICH + "y = shift(obj, ONE)\nz = g(a, b)[2:]\n"
    for op in default_operators():
        assert op.sites(cst.parse_module(source)), op.name


def test_apply_on_a_reparsed_module_finds_the_site_again() -> None:
    op = OPERATORS["stmt.drop_assign_rewire"]
    site = op.sites(cst.parse_module(RICH))[1]
    again = cst.parse_module(RICH)
    assert op.apply(again, site).code == op.apply(cst.parse_module(RICH), site).code
    with pytest.raises(KeyError):
        op.apply(again, Site("nope", None, "verify_x"))


def test_anchor_normalization_and_escaping() -> None:
    assert normalize_code("a  +  b # c") == "a+b"
    assert normalize_code("[v for v in r\n   if v != 0]") == "[v for v in r if v!=0]"
    assert normalize_code("f( 'a  b' )") == "f('a  b')"
    assert normalize_code("not  x") == "not x"
    for text in ["r[::-1]#0", "a%b\nc", "ü\x85\u2028x", "plain"]:
        escaped = escape_id_part(text)
        assert ":" not in escaped and "\n" not in escaped and "\u2028" not in escaped
        assert unescape_id_part(escaped) == text


def test_long_anchors_are_hashed_and_ids_parse() -> None:
    body = " + ".join(f"value_{i}" for i in range(30))
    source = f"def verify_t(I):\n    return {body}\n"
    result = enumerate_mutants(source, task_id="t", source_name="s", function="verify_t")
    assert result
    for m in result:
        assert "\n" not in m.id and len(m.id) < 160
        assert parse_mutant_id(m.id) == ("t", "s", m.operator, m.anchor, m.variant)
    assert any("~" in m.anchor for m in result)


# ---------------------------------------------------------------- ids


def test_id_format() -> None:
    result = enumerate_mutants(
        VERIFIERS, task_id="aabf363d", source_name="re-arc", function="verify_aabf363d"
    )
    ids = set(result.by_id())
    assert "aabf363d:re-arc:stmt.drop_assign_rewire:x3:x2" in ids
    assert "aabf363d:re-arc:stmt.drop_assign_rewire:x1..x3:x0" in ids
    assert "aabf363d:re-arc:call.swap_args:astuple(x1,ZERO)#0:0-1" in ids
    assert "aabf363d:re-arc:const.dsl_neighbour:ZERO#1:ONE" in ids
    assert "aabf363d:re-arc:name.dsl_sibling:fill#0:underfill" in ids
    assert mutant_id("t", "golf", "slice.bound", "r[::-1]#0", "nostep") == (
        "t:golf:slice.bound:r[%3A%3A-1]#0:nostep"
    )
    golf = enumerate_mutants(
        "p = lambda g: [r + r[::-1] for r in g]\n", task_id="t", source_name="golf"
    )
    assert "t:golf:expr.binop_left:r+r[%3A%3A-1]#0" in golf.by_id()


class _FortyTwo(NodeOperator):
    """Throwaway operator for the id-stability test: every integer literal becomes 42.

    Its mutants never coincide with a built-in operator's, so deduplication cannot
    hide any of the ids it is meant to leave alone.
    """

    name = "test.forty_two"
    node_types = (cst.Integer,)
    examples: ClassVar[list[tuple[str, str]]] = [("x = 1\n", "x = 42\n")]

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> list[str | None]:
        return [None] if isinstance(node, cst.Integer) and node.value != "42" else []

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        return node.with_changes(value="42")


def _ids(source: str, **kwargs: object) -> list[str]:
    result = enumerate_mutants(source, task_id="t", source_name="s", **kwargs)  # type: ignore[arg-type]
    assert result.error is None
    return [m.id for m in result]


def test_ids_stable_when_an_operator_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _ids(RICH)
    before_fn = _ids(RICH, function="transform")
    monkeypatch.setitem(OPERATORS, _FortyTwo.name, _FortyTwo())
    after = _ids(RICH)
    assert [i for i in after if ":test.forty_two:" not in i] == before
    assert any(":test.forty_two:" in i for i in after)
    # also when the new operator runs first
    first = _ids(RICH, function="transform", operators=[_FortyTwo(), *default_operators()])
    assert [i for i in first if ":test.forty_two:" not in i] == [
        i for i in before_fn if ":test.forty_two:" not in i
    ]


def test_ids_stable_when_an_unrelated_statement_is_inserted_above() -> None:
    extra_function = "\n\ndef verify_new(I):\n    x0 = vmirror(I)\n    return f(x0, 2)\n"
    at = RICH.index("\n\ndef verify_x")
    moved = RICH[:at] + extra_function + RICH[at:]
    for name in ("verify_x", "transform"):
        assert _ids(moved, function=name) == _ids(RICH, function=name)
    # whole module: every old id survives (the new function only adds ids)
    old = _ids(RICH)
    new = _ids(moved)
    assert set(old) <= set(new)
    assert all("@verify_new/" in i for i in set(new) - set(old))
    # a new line inside the function: old ids survive, it may only add rewire variants
    inside = RICH.replace("def transform(g):\n", "def transform(g):\n    k = len(g) + 3\n")
    assert set(_ids(RICH, function="transform")) <= set(_ids(inside, function="transform"))
    # module-level golf code
    golf = "p = lambda g: [r[::-1] + r for r in g if r[0] != 3]\n"
    assert _ids(golf) == _ids("import os\n" + golf)


# ---------------------------------------------------------------- drop_assign_rewire safety


def _fake_dsl(source: str) -> dict[str, object]:
    """Globals that define every free name of ``source``: CAPS are ints, the rest functions."""
    tree = ast.parse(source)
    bound = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    bound |= {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    env: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in bound:
            name = node.id
            if name.isupper():
                env[name] = sum(map(ord, name)) % 10
            else:
                env[name] = lambda *args, _n=name: (_n, args)
    return env


def _unbound_reads(function_source: str) -> list[str]:
    """Locals read before any assignment, by a straight-line def-use scan."""
    fdef = ast.parse(function_source).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    local = {a.arg for a in fdef.args.args}
    local |= {
        n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    ready = {a.arg for a in fdef.args.args}
    bad = []
    for stmt in fdef.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id in local and node.id not in ready:
                    bad.append(node.id)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ready.add(node.id)
    return bad


def _straight_line(seed: int, functions: int = 12) -> str:
    rng = random.Random(seed)
    out = ["from dsl import *\n"]
    for k in range(functions):
        out.append(f"\n\ndef verify_{k:04d}(I):\n")
        names = ["I"]
        for j in range(rng.randint(1, 12)):
            args = [
                rng.choice(names) if rng.random() < 0.7 else rng.choice(["ONE", "TWO", "T"])
                for _ in range(rng.randint(1, 3))
            ]
            out.append(f"    x{j} = f{rng.randint(0, 9)}({', '.join(args)})\n")
            names.append(f"x{j}")
        out.append(f"    return {names[-1]}\n")
    return "".join(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drop_assign_rewire_never_reads_an_unbound_name(seed: int) -> None:
    source = VERIFIERS if seed == 0 else _straight_line(seed)
    env = _fake_dsl(source)
    op = OPERATORS["stmt.drop_assign_rewire"]
    functions = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    count = 0
    for name in functions:
        result = enumerate_mutants(
            source, task_id=name, source_name="re-arc", operators=[op], function=name
        )
        for m in result:
            count += 1
            assert _unbound_reads(m.snippet) == [], m.id
            scope = dict(env)
            exec(compile(m.source.replace("from dsl import *", ""), m.id, "exec"), scope)
            scope[name](((1, 2), (3, 4)))  # runs: no NameError / UnboundLocalError
            deleted = set(m.anchor.split("..")) - {m.variant}
            returned = ast.parse(m.snippet).body[0].body[-1]  # type: ignore[attr-defined]
            assert isinstance(returned, ast.Return)
            assert not deleted & {n.id for n in ast.walk(returned) if isinstance(n, ast.Name)}
    assert count > 20


def test_drop_assign_rewire_candidates_and_spans() -> None:
    op = OPERATORS["stmt.drop_assign_rewire"]
    module = cst.parse_module(VERIFIERS)
    keys = [s.key for s in op.sites(module) if s.scope == "verify_aabf363d"]
    # x3 = index(I, x2): its own arguments first, then earlier names most recent first
    assert [k for k in keys if k.startswith("x3:")] == ["x3:I", "x3:x2", "x3:x1", "x3:x0"]
    assert "x3..x4:I" in keys and "x3..x5:I" in keys
    # the returned name is deleted only with a rewire, and a name nobody reads is no site
    dead = "def f(I):\n    x0 = g(I)\n    x1 = h(I)\n    return x1\n"
    assert [s.key for s in op.sites(cst.parse_module(dead))] == ["x1:I", "x1:x0"]
    # names bound twice, globals and loop-bound names are neither deleted nor used to rewire
    messy = (
        "def f(I):\n    global G\n    G = a(I)\n    y = b(I)\n    y = c(y)\n"
        "    for i in I:\n        z = i\n    w = d(z, G, y)\n    return w\n"
    )
    assert [s.key for s in op.sites(cst.parse_module(messy))] == ["w:I"]


# ---------------------------------------------------------------- engine


def test_dedup_and_identical_are_dropped() -> None:
    result = enumerate_mutants("p = lambda g: [r + r for r in g]\n", task_id="t", source_name="g")
    assert [m.id for m in result] == ["t:g:expr.binop_left:r+r#0"]
    assert result.stats["duplicate"] == 1
    for path in [*GOLF, *MODULES]:
        source = path.read_bytes()
        result = enumerate_mutants(source, task_id=path.stem, source_name=path.parent.name)
        assert result.error is None, path
        texts = [m.source for m in result]
        assert len(set(texts)) == len(texts)
        assert result.original not in texts
        assert result.stats["failed"] == 0, result.failures


def test_all_sample_mutants_compile_and_diff_like_difflib() -> None:
    functions = [n.name for n in ast.parse(VERIFIERS).body if isinstance(n, ast.FunctionDef)]
    seen = 0
    for name in functions:
        result = enumerate_mutants(VERIFIERS, task_id=name, source_name="re-arc", function=name)
        assert result.stats["failed"] == 0 and result.stats["invalid"] == 0
        for m in result[::7]:
            compile(m.source, m.id, "exec")
            expected = "".join(
                difflib.unified_diff(
                    VERIFIERS.splitlines(True),
                    m.source.splitlines(True),
                    f"a/re-arc/{name}",
                    f"b/re-arc/{name}",
                )
            )
            assert m.diff == expected
            seen += 1
    assert seen > 10


@pytest.mark.parametrize("seed", range(6))
def test_splice_diff_cut_or_quick_equals_difflib_on_the_window(seed: int) -> None:
    def plain(original: str, start: int, end: int, replacement: str) -> str:
        with pytest.MonkeyPatch.context() as patch:  # difflib on the whole window
            patch.setattr(diffing, "_trim", lambda before, after: None)
            patch.setattr(diffing, "_one_replacement", lambda *args: None)
            return diffing.splice_diff(original, start, end, replacement)

    # Few distinct lines, many repeated (blank) ones: where cutting shared lines, or
    # writing the hunk without difflib, could change difflib's answer if the guards let
    # it (it fails without any of their tests but the one for autojunk, which is kept to
    # be safe).
    rng = random.Random(seed)
    taken: list[str] = []
    trim, quick = diffing._trim, diffing._one_replacement

    def counted_trim(before: list[str], after: list[str]) -> tuple[int, int] | None:
        cut = trim(before, after)
        taken.extend(["cut"] if cut else [])
        return cut

    def counted_quick(*args: Any) -> str | None:
        text = quick(*args)
        taken.extend(["quick"] if text is not None else [])
        return text

    for _ in range(400):
        alphabet = ["\n", "a\n", "b\n", "c\n", "d\n"][: rng.randint(2, 5)]
        unique = rng.random()  # unique lines let the guards allow a cut or the quick way
        lines = [
            f"u{i}\n" if rng.random() < unique else rng.choice(alphabet)
            for i in range(rng.randint(0, 40))
        ]
        lines = ["\n"] * rng.randint(0, 30) + lines + ["\n"] * rng.randint(0, 8)
        original = "".join(lines) + rng.choice(["", "z"])
        starts = [0] + [i + 1 for i, ch in enumerate(original) if ch == "\n"]
        start, end = sorted(rng.sample(starts, 2)) if len(starts) > 1 else (0, 0)
        kept = original[start:end].splitlines(True)
        changed = [rng.choice([*alphabet, "x\n", "y\n", "x", f"v{_}\n"])
                   for _ in range(rng.randint(0, 4))]  # fmt: skip
        at = rng.randint(0, len(kept))
        drop = rng.randint(0, min(3, len(kept) - at))
        replacement = "".join(kept[:at] + changed + kept[at + drop :])
        expected = plain(original, start, end, replacement)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(diffing, "_trim", counted_trim)
            patch.setattr(diffing, "_one_replacement", counted_quick)
            assert diffing.splice_diff(original, start, end, replacement) == expected
            patch.setattr(diffing, "_one_replacement", lambda *args: None)  # the cut alone
            assert diffing.splice_diff(original, start, end, replacement) == expected
    assert "cut" in taken and "quick" in taken  # both ways are taken, not always refused


def test_splice_diff_cuts_a_blank_run_and_keeps_line_numbers() -> None:
    original = "\n" * 150 + "def f(I):\n    x0 = g(I)\n    return x0\n"
    start = original.index("def")
    replacement = "def f(I):\n    x0 = h(I)\n    return x0\n"
    before = original.splitlines(True)
    after = (original[:start] + replacement).splitlines(True)
    assert diffing._trim(before, after) == (148, 0)
    expected = "".join(difflib.unified_diff(before, after, "a", "b"))
    assert diffing.splice_diff(original, start, len(original), replacement) == expected
    assert "@@ -149,5 +149,5 @@" in expected


def test_parse_error_is_reported_not_raised() -> None:
    result = enumerate_mutants("def f(:\n  return 1\n", task_id="t", source_name="golf")
    assert not result.ok and result.error and len(result) == 0
    assert result.error.startswith("does not parse (line 1: ")  # Python's parser says so
    bad_bytes = enumerate_mutants(b"# coding: nope\nx = 1\n", task_id="t", source_name="g")
    assert bad_bytes.error and list(bad_bytes) == []
    missing = enumerate_mutants(VERIFIERS, task_id="t", source_name="s", function="verify_no")
    assert missing.error and "verify_no" in missing.error


def test_one_function_mutated_rest_byte_identical() -> None:
    tree = ast.parse(VERIFIERS)
    lines = VERIFIERS.splitlines(keepends=True)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        result = enumerate_mutants(
            VERIFIERS, task_id=node.name, source_name="re-arc", function=node.name
        )
        assert result, node.name
        head = "".join(lines[: node.lineno - 1])
        tail = "".join(lines[node.end_lineno :])
        for m in result:
            assert m.function == node.name
            assert m.source.startswith(head) and m.source.endswith(tail)
            assert m.source != VERIFIERS


def test_incremental_render_equals_full_render() -> None:
    for source in (VERIFIERS, RICH):
        parsed = parse_source(source)
        assert not hasattr(parsed, "error")
        module = parsed.module  # type: ignore[union-attr]
        for k, stmt in enumerate(module.body):
            if not isinstance(stmt, cst.FunctionDef):
                continue
            renderer = parsed.renderer(k)  # type: ignore[union-attr]
            assert isinstance(renderer, IncrementalRenderer)
            unit = module.with_changes(body=(stmt,), header=(), footer=())
            for op in default_operators():
                for site in op.sites(unit):
                    new = op.apply(unit, site).body[0]
                    assert renderer.render(new).text == unit.code_for_node(new), site


@pytest.mark.parametrize("source", [NESTED, RICH, VERIFIERS])
def test_whole_module_mutants_equal_libcst_rendering(source: str) -> None:
    result = enumerate_mutants(source, task_id="t", source_name="s")
    assert result.error is None and result.stats["failed"] == 0, result.failures
    by_id = result.by_id()
    module = cst.parse_module(source)
    checked = 0
    for op in default_operators():
        for site in op.sites(module):
            anchor = site.anchor if site.scope is None else f"@{site.scope}/{site.anchor}"
            mutant = by_id.get(mutant_id("t", "s", op.name, anchor, site.variant))
            if mutant is not None:
                assert mutant.source == op.apply(module, site).code, mutant.id
                checked += 1
    assert checked == len(result) > 20


class _Broken(NodeOperator):
    """Throwaway operator that writes a keyword where a name was, so mutants do not parse."""

    name = "test.broken"
    node_types = (cst.Name,)

    def variants(self, index: ModuleIndex, node: cst.CSTNode) -> list[str | None]:
        return [None] if isinstance(node, cst.Name) and node.value == "out" else []

    def mutate(self, index: ModuleIndex, node: cst.CSTNode, variant: str | None) -> cst.CSTNode:
        return node.with_changes(value="lambda")


def test_mutants_that_do_not_parse_are_dropped() -> None:
    result = enumerate_mutants(NESTED, task_id="t", source_name="s", operators=[_Broken()])
    assert len(result) == 0 and result.stats["invalid"] == result.stats["sites"] > 3
    unchecked = enumerate_mutants(
        NESTED, task_id="t", source_name="s", operators=[_Broken()], check_syntax=False
    )
    assert len(unchecked) == result.stats["invalid"]


def test_bytes_no_trailing_newline_and_whole_module_mode() -> None:
    source = (
        b"def verify_a(I):\n    x0 = f(I)\n    return x0\n\n"
        b"def verify_b(I):\n    x0 = g(I, ONE)\n    x1 = h(x0)\n    return x1"
    )
    result = enumerate_mutants(source, task_id="b", source_name="s", function="verify_b")
    assert result and result.error is None
    for m in result:
        assert not m.source.endswith("\n")
        assert m.source.startswith(source.decode()[: source.index(b"def verify_b")])
        compile(m.source, m.id, "exec")
    whole = enumerate_mutants(source, task_id="b", source_name="s")
    anchors = {m.anchor for m in whole}
    assert "@verify_a/x0" in anchors and "@verify_b/x0" in anchors
    latin = (SAMPLE / "golf" / "task307.py").read_bytes()
    golf = enumerate_mutants(latin, task_id="t307", source_name="golf")
    assert golf.error is None
    for m in golf:
        assert "\n" not in m.id
        assert m.source.encode("latin-1").startswith(b"#coding:L1")
