"""``run_variants``: many variants of one program per sandboxed process.

Run on the process backend and, when dockerd answers and the image exists, on docker.
Each attack is tried for real: a variant that hangs, changes a shared module or builtins,
mutates its input or exits must not change what the next variant computes.
"""

from __future__ import annotations

import time

import pytest

from arcjudge.sandbox.interface import VariantSandbox, run_variants
from arcjudge.sandbox.process import ProcessSandbox
from arcjudge.sandbox.types import (
    Limits,
    Program,
    ProgramResult,
    ProgramStatus,
    RunResult,
    Status,
    changed_shared_state,
)
from arcjudge.sandbox.wire import decode_result, decode_variants

LIMITS = Limits(wall_seconds=5.0, total_seconds=20.0)
INPUTS = [((1, 2), (3, 4)), ((5, 6), (7, 8))]
SHARED = (
    "TABLE = [1, 2, 3]\nOFFSET = 1\n\n"
    "def shift(g):\n    return [[c + OFFSET for c in r] for r in g]\n"
)


CHAIN = """
def inc(g, k):
    return tuple(tuple((c + k) % 10 for c in r) for r in g)

def cells(g):
    return frozenset((c, (i, j)) for i, r in enumerate(g) for j, c in enumerate(r))

def size(s):
    return len(s)

def as_rows(g):
    return [list(r) for r in g]

def paint(rows, c):
    rows[0][0] = c  # in place
    return rows

def frozen_rows(rows):
    return tuple(tuple(r) for r in rows)
"""


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("variants") / "mods"
    root.mkdir()
    (root / "shared_mod.py").write_text(SHARED)
    (root / "chain_mod.py").write_text(CHAIN)
    return str(root)


@pytest.fixture(scope="module", params=["process", "docker"])
def box(request, module_dir):
    if request.param == "docker":
        from arcjudge.sandbox.docker import DockerSandbox

        image = request.getfixturevalue("docker_image")
        sb = DockerSandbox(workers=1, image=image, module_dirs=(module_dir,))
    else:
        sb = ProcessSandbox(workers=1)
    yield sb
    sb.close()


def base(module_dir: str) -> Program:
    return Program(
        b"from shared_mod import *\ndef transform(g):\n    return shift(g)\n",
        module_dirs=(module_dir,),
    )


def variant(body: str) -> bytes:
    return ("from shared_mod import *\nimport shared_mod\n" + body).encode()


def same(a: ProgramResult, b: ProgramResult) -> bool:
    """Equal but for timings (and a traceback's line of the runtime, identical anyway)."""
    return (
        a.status == b.status
        and a.error == b.error
        and [(r.status, r.grid, r.error) for r in a.results]
        == [(r.status, r.grid, r.error) for r in b.results]
    )


def test_each_variant_gets_what_it_would_get_alone(box, module_dir):
    bodies = [
        "def transform(g):\n    return shift(g)\n",
        "def transform(g):\n    return [[c * TABLE[1] for c in r] for r in g]\n",
        "def transform(g):\n    raise ValueError('no')\n",
        "def transform(g):\n    return 'not a grid'\n",
        "def transform(g):\n    return [[1]] if g[0][0] == 1 else 1 / 0\n",
        "syntax error(\n",
        "def other(g):\n    return g\n",
        "import os\ndef transform(g):\n    os._exit(3)\n",
        "def transform(g):\n    return [[OFFSET]]\n",
    ]
    sources = [variant(b) for b in bodies]
    batch = box.run_variants(base(module_dir), sources, INPUTS, LIMITS, call_seconds=2.0)
    assert len(batch) == len(sources)
    for source, got in zip(sources, batch, strict=True):
        alone = box.run(Program(source, module_dirs=(module_dir,)), INPUTS, LIMITS)
        assert same(got, alone), (source, got, alone)
    assert batch[1].results[0].grid == ((2, 4), (6, 8))
    assert batch[5].status is ProgramStatus.LOAD_ERROR
    assert batch[8].results[0].grid == ((1,),)


@pytest.mark.parametrize(
    "attack",
    [
        "shared_mod.OFFSET = 5",
        "shared_mod.TABLE.append(4)",
        "import builtins\n    builtins.max = min",
        "import sys\n    sys.modules['shared_mod'] = sys",
        "import chain_mod",  # a module of the directories the batch had not loaded
    ],
)
def test_a_variant_that_changes_shared_state_is_reported_and_contained(box, module_dir, attack):
    sources = [
        variant(f"def transform(g):\n    {attack}\n    return g\n"),
        variant("def transform(g):\n    return [[OFFSET, len(TABLE), max(1, 2)]]\n"),
    ]
    first, second = box.run_variants(base(module_dir), sources, INPUTS, LIMITS, call_seconds=2.0)
    assert changed_shared_state(first), first
    assert second.status is ProgramStatus.LOADED
    assert [r.grid for r in second.results] == [((1, 3, 2),)] * 2


def test_a_change_after_a_variant_imported_an_untracked_module_is_still_reported(box, module_dir):
    sources = [
        variant("def transform(g):\n    import wave, colorsys\n    return g\n"),  # not preloaded
        variant("def transform(g):\n    return shift(g)\n"),
        variant("def transform(g):\n    shared_mod.TABLE.append(4)\n    return g\n"),
        variant("def transform(g):\n    return [[len(TABLE)]]\n"),
    ]
    importer, clean, changer, reader = box.run_variants(
        base(module_dir), sources, INPUTS, LIMITS, call_seconds=2.0
    )
    for result in (importer, clean):
        assert not changed_shared_state(result) and result.status is ProgramStatus.LOADED
    assert changed_shared_state(changer), changer
    assert [r.grid for r in reader.results] == [((3,),)] * 2


def test_a_hanging_variant_stops_at_its_call_deadline(box, module_dir):
    sources = [
        variant("def transform(g):\n    while True:\n        pass\n"),
        variant("def transform(g):\n    return shift(g)\n"),
    ]
    start = time.monotonic()
    hung, after = box.run_variants(base(module_dir), sources, INPUTS, LIMITS, call_seconds=0.3)
    assert time.monotonic() - start < LIMITS.wall_seconds  # far below the wall limit
    assert [r.status for r in hung.results] == [Status.TIMEOUT, Status.TIMEOUT]
    assert "0.3 s" in (hung.results[0].error or "")
    assert "not run" in (hung.results[1].error or "")
    assert [r.grid for r in after.results] == [((2, 3), (4, 5)), ((6, 7), (8, 9))]


def test_every_call_gets_a_fresh_input(box, module_dir):
    sources = [
        variant("def transform(g):\n    g[0][0] = 9\n    g.append([0, 0])\n    return g\n"),
        variant("def transform(g):\n    return g\n"),
    ]
    changer, reader = box.run_variants(base(module_dir), sources, INPUTS, LIMITS, call_seconds=2.0)
    assert [r.grid for r in changer.results] == [((9, 2), (3, 4), (0, 0)), ((9, 6), (7, 8), (0, 0))]
    assert [r.grid for r in reader.results] == list(INPUTS)


def test_the_base_program_is_never_called(box, module_dir, tmp_path):
    noisy = Program(
        b"from shared_mod import *\nimport builtins\nbuiltins.base_loaded = True\n"
        b"def transform(g):\n    builtins.base_called = True\n    return g\n",
        module_dirs=(module_dir,),
    )
    probe = variant(
        "import builtins\ndef transform(g):\n"
        "    seen = [hasattr(builtins, 'base_loaded'), hasattr(builtins, 'base_called')]\n"
        "    return [[int(s) for s in seen]]\n"
    )
    (result,) = box.run_variants(noisy, [probe], INPUTS[:1], LIMITS, call_seconds=2.0)
    assert result.results[0].grid == ((1, 0),)


def test_malformed_replies_are_infra():
    findings = [(), ()]
    assert all(r.status is ProgramStatus.INFRA for r in decode_variants({}, 1, findings))
    wrong_count = {"status": "loaded", "variants": [{"status": "loaded", "results": []}]}
    assert all(r.status is ProgramStatus.INFRA for r in decode_variants(wrong_count, 1, findings))
    bad_grid = {"status": "loaded", "results": [{"s": "ok", "g": [2, "1"]}]}
    reply = {"status": "loaded", "variants": [bad_grid, {"status": "load_error", "error": "x"}]}
    first, second = decode_variants(reply, 1, findings)
    assert first.status is ProgramStatus.INFRA and "malformed" in (first.error or "")
    assert second.status is ProgramStatus.LOAD_ERROR
    shared = {"status": "loaded", "variants": [{"shared_state": "module 'm' changed"}] * 2}
    assert all(changed_shared_state(r) for r in decode_variants(shared, 1, findings))


def test_a_backend_without_batches_runs_each_variant_alone():
    class Plain:  # a third party's Sandbox written before run_variants existed
        def __init__(self):
            self.sources = []

        def run(self, program, inputs, limits, *, policy):
            self.sources.append(program.source)
            return ProgramResult(ProgramStatus.LOADED, ())

    plain = Plain()
    program = Program(b"def transform(g):\n    return g\n", module_dirs=("/x",))
    results = run_variants(plain, program, [b"a = 1", b"b = 2"], INPUTS, LIMITS, call_seconds=1)
    assert plain.sources == [b"a = 1", b"b = 2"] and len(results) == 2
    assert not isinstance(plain, VariantSandbox)
    assert isinstance(ProcessSandbox(workers=1), VariantSandbox)


# ---------------------------------------------------------------- split-stream variants

CHAIN_BASE = """from chain_mod import *


def verify(I):
    x1 = inc(I, 1)
    x2 = cells(x1)
    x3 = size(x2)
    x4 = inc(x1, x3 - x3)
    O = inc(x4, 0)
    return O
"""
SENTINEL = ((7, 7, 7),)  # never computed by any program here: where it shows, "same" was used


def chain(module_dir: str, source: str = CHAIN_BASE) -> Program:
    return Program(source.encode(), ("verify",), (module_dir,), "tuple")


def base_results(n: int) -> tuple[RunResult, ...]:
    """What the harness hands over as the base's answers (here: a sentinel grid)."""
    return tuple(RunResult(i, Status.OK, SENTINEL) for i in range(n))


def mutated(old: str, new: str, source: str = CHAIN_BASE) -> bytes:
    assert old in source
    return source.replace(old, new).encode()


def test_a_variant_equivalent_to_the_base_answers_same_and_gets_the_bases_answer(box, module_dir):
    variants = [
        mutated("x4 = inc(x1, x3 - x3)", "x4 = inc(x1, x3 * 0)"),  # the same values
        mutated("x4 = inc(x1, x3 - x3)", "x4 = inc(x1, x3)"),  # other values
        mutated("    x3 = size(x2)\n", "").replace(b"x3 - x3", b"0"),  # deleted, rewired
        mutated("O = inc(x4, 0)", "O = inc(x4, 2)"),  # the statement of the output: own run
    ]
    base = chain(module_dir)
    split = box.run_variants(base, variants, INPUTS, LIMITS, call_seconds=2.0,
                             same_as=base_results(len(INPUTS)))  # fmt: skip
    plain = box.run_variants(base, variants, INPUTS, LIMITS, call_seconds=2.0)
    assert [r.grid for r in split[0].results] == [SENTINEL, SENTINEL]
    assert [r.grid for r in split[2].results] == [SENTINEL, SENTINEL]
    assert [r.grid for r in plain[0].results] == [((2, 3), (4, 5)), ((6, 7), (8, 9))]
    for k in (1, 3):  # computed, not the base's
        alone = box.run(Program(variants[k], ("verify",), (module_dir,), "tuple"), INPUTS, LIMITS)
        assert same(split[k], alone) and same(plain[k], alone), (k, split[k], alone)
    assert split[1].results[0].grid == ((6, 7), (8, 9))  # inc(x1, 4) on (1, 2), (3, 4)


def test_same_only_on_inputs_where_the_base_answered_a_grid(box, module_dir):
    variant = mutated("x4 = inc(x1, x3 - x3)", "x4 = inc(x1, x3 * 0)")
    failed = RunResult(1, Status.ERROR, error="the base failed here")
    same_as = (base_results(1)[0], failed)
    (result,) = box.run_variants(chain(module_dir), [variant], INPUTS, LIMITS,
                                 call_seconds=2.0, same_as=same_as)  # fmt: skip
    assert result.results[0].grid == SENTINEL
    assert result.results[1].grid == ((6, 7), (8, 9))  # computed in full


def test_a_verifier_that_changes_its_values_in_place_runs_whole(box, module_dir):
    source = CHAIN_BASE.replace(
        "    x4 = inc(x1, x3 - x3)\n    O = inc(x4, 0)\n",
        "    x4 = as_rows(x1)\n    x5 = paint(x4, x3 % 10)\n    x6 = paint(x5, 9)\n"
        "    O = frozen_rows(x6)\n",
    )
    variants = [
        mutated("x6 = paint(x5, 9)", "x6 = paint(x5, 8)", source),
        mutated("x5 = paint(x4, x3 % 10)", "x5 = paint(x4, (x3 + 10) % 10)", source),
        mutated("x6 = paint(x5, 9)", "x6 = paint(x4, 9)", source),
    ]
    base = chain(module_dir, source)
    got = box.run_variants(base, variants, INPUTS, LIMITS, call_seconds=2.0,
                           same_as=base_results(len(INPUTS)))  # fmt: skip
    for variant, result in zip(variants, got, strict=True):
        alone = box.run(Program(variant, ("verify",), (module_dir,), "tuple"), INPUTS, LIMITS)
        assert same(result, alone), (variant, result, alone)
        assert SENTINEL not in [r.grid for r in result.results]
    assert got[0].results[0].grid == ((8, 3), (4, 5))


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [  # each raises on the first input only; on the second it is the base (the sentinel)
        ("inc(x1, x3 - x3)", "inc(x1, x3 - x3 if I[0][0] > 1 else 'a')", "TypeError"),
        ("inc(x1, x3 - x3)", "inc(x1, x3 - x3 if I[0][0] > 1 else x9)", "NameError"),
        ("inc(x1, x3 - x3)", "inc(x1, x3 - x3 if I[0][0] > 1 else O)", "UnboundLocalError"),
        ("x2 = cells(x1)", "x2 = cells(x1 if I[0][0] > 1 else x1[5])", "IndexError"),
        ("x2 = cells(x1)", "x2 = cells(x1) if I[0][0] > 1 else next(iter(()))", "StopIteration"),
    ],
)
def test_a_variant_that_raises_in_its_own_statement_fails_as_alone(
    box, module_dir, old, new, error
):
    variant = mutated(old, new)
    (result,) = box.run_variants(chain(module_dir), [variant], INPUTS, LIMITS,
                                 call_seconds=2.0, same_as=base_results(len(INPUTS)))  # fmt: skip
    alone = box.run(Program(variant, ("verify",), (module_dir,), "tuple"), INPUTS, LIMITS)
    assert result.results[1].grid == SENTINEL  # it ran from the base's run
    assert result.results[0].status is Status.ERROR
    assert error in (result.results[0].error or "")
    assert result.results[0].error == alone.results[0].error


FORGE = (
    "import framing\n"
    "def verify(I):\n"
    "    framing.write_frame(3, {'k': 'out', 'i': 0, 's': 'same'})\n"
    "    import os\n"
    "    os._exit(0)\n"
)


def test_a_forged_same_counts_only_where_the_harness_allows_it(box, module_dir):
    base = chain(module_dir)
    forged = ("from chain_mod import *\n" + FORGE).encode()
    (anywhere,) = box.run_variants(base, [forged], INPUTS, LIMITS, call_seconds=2.0)
    assert anywhere.results[0].status is Status.INVALID_OUTPUT
    assert "corrupted result channel" in (anywhere.results[0].error or "")
    # where the base answered a grid the forger gets the base's answer: it only makes the
    # mutant look equivalent there (no corrupted pair), see confirmed_indexes' test
    (allowed,) = box.run_variants(base, [forged], INPUTS, LIMITS, call_seconds=2.0,
                                  same_as=base_results(len(INPUTS)))  # fmt: skip
    assert allowed.results[0].grid == SENTINEL
    alone = box.run(Program(forged, ("verify",), (module_dir,), "tuple"), INPUTS, LIMITS)
    assert alone.results[0].status is Status.INVALID_OUTPUT  # one program: never accepted


def test_same_in_a_reply_is_malformed_without_the_bases_grid():
    reply = {"status": "loaded", "variants": [{"status": "loaded", "results": [{"s": "same"}]}]}
    (no_base,) = decode_variants(reply, 1, [()])
    assert no_base.status is ProgramStatus.INFRA and "same" in (no_base.error or "")
    failed = (RunResult(0, Status.ERROR, error="x"),)
    (base_failed,) = decode_variants(reply, 1, [()], failed)
    assert base_failed.status is ProgramStatus.INFRA
    (filled,) = decode_variants(reply, 1, [()], base_results(1))
    assert filled.results[0].status is Status.OK and filled.results[0].grid == SENTINEL
    assert decode_result(reply["variants"][0], 1, ()).status is ProgramStatus.INFRA
