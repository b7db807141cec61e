"""Candidate invalid pairs: color flips, instance mismatches, H-ARC errors, retrieval."""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge.grids import hamming_distance, is_grid
from arcjudge.harness.dimensions.corruptions import (
    CandidatePair,
    color_flip,
    human_error,
    instance_mismatch,
    load_neighbours,
    normalize_task_id,
    retrieval,
)
from arcjudge.harness.dimensions.human_errors import (
    HumanErrors,
    collect_human_errors,
    load_human_errors,
    parse_harc_grid,
    read_human_errors_json,
)
from arcjudge.tasks import Pair
from tests.support.helpers import deadline


def g(*rows: str):
    """Grid from digit strings: g("01", "23") == ((0, 1), (2, 3))."""
    return tuple(tuple(int(ch) for ch in row) for row in rows)


def changed_cells(a, b):
    return {(r, c) for r, row in enumerate(a) for c, v in enumerate(row) if b[r][c] != v}


def component(grid, start):
    """Independent BFS: 4-connected same-color component of ``start``."""
    color = grid[start[0]][start[1]]
    todo, found = [start], {start}
    while todo:
        r, c = todo.pop(0)
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nr, nc = r + dr, c + dc
            if (
                0 <= nr < len(grid)
                and 0 <= nc < len(grid[0])
                and grid[nr][nc] == color
                and (nr, nc) not in found
            ):
                found.add((nr, nc))
                todo.append((nr, nc))
    return found


# ------------------------------------------------------------------------ CandidatePair


def test_candidate_to_json_and_kind_check():
    cand = CandidatePair("t1", "retrieval", g("12"), g("3"), None, {"a": 1})
    data = cand.to_json()
    assert data == {
        "task_id": "t1",
        "kind": "retrieval",
        "input": [[1, 2]],
        "output": [[3]],
        "correct_output": None,
        "detail": {"a": 1},
    }
    assert json.loads(json.dumps(data)) == data
    with_correct = CandidatePair("t1", "color_flip", g("1"), g("2"), g("1"), {})
    assert with_correct.to_json()["correct_output"] == [[1]]
    assert len({cand, cand}) == 1  # hashable despite the dict field
    with pytest.raises(ValueError, match="unknown candidate kind"):
        CandidatePair("t1", "bogus", g("1"), g("1"), None, {})


# --------------------------------------------------------------------------- color_flip

# Two separate regions of color 1 (top-left pair, right column), a lone 2, and a 3 that
# touches the right-column 1s only diagonally.
REGION_GRID = g(
    "1103",
    "0001",
    "2001",
    "0001",
)
REGIONS = [
    {(0, 0), (0, 1)},
    {(1, 3), (2, 3), (3, 3)},
    {(2, 0)},
    {(0, 3)},
]


def test_color_flip_recolors_exactly_one_region():
    pair = Pair(REGION_GRID, g("5"))
    seen = []
    for seed in range(80):
        (cand,) = color_flip("t", [pair], random.Random(seed), side="input")
        diff = changed_cells(REGION_GRID, cand.input)
        assert diff in REGIONS, (seed, diff)
        new_colors = {cand.input[r][c] for r, c in diff}
        old_colors = {REGION_GRID[r][c] for r, c in diff}
        assert len(new_colors) == 1 and len(old_colors) == 1
        assert new_colors != old_colors
        assert cand.detail["region_size"] == len(diff)
        assert cand.detail["old_color"] == REGION_GRID[cand.detail["row"]][cand.detail["col"]]
        assert cand.detail["new_color"] == next(iter(new_colors))
        seen.append(diff)
    # both separate regions of color 1 get chosen, but never together
    assert REGIONS[0] in seen and REGIONS[1] in seen


def test_color_flip_avoids_zero_when_nonzero_cells_exist():
    grid = g("000", "050", "000")
    for seed in range(100):
        (cand,) = color_flip("t", [Pair(g("1"), grid)], random.Random(seed), side="output")
        assert cand.detail["old_color"] == 5
        assert changed_cells(grid, cand.output) == {(1, 1)}
        assert cand.output[1][1] != 5


def test_color_flip_all_zero_grid_recolors_whole_grid():
    grid = g("00", "00")
    for seed in range(20):
        (cand,) = color_flip("t", [Pair(grid, g("1"))], random.Random(seed), side="input")
        assert cand.detail["old_color"] == 0
        new = cand.detail["new_color"]
        assert new != 0
        assert cand.input == g(str(new) * 2, str(new) * 2)


def test_color_flip_new_color_uniform_over_other_colors():
    rng = random.Random(7)
    colors = set()
    for _ in range(300):
        (cand,) = color_flip("t", [Pair(g("4"), g("4"))], rng, side="output")
        colors.add(cand.output[0][0])
    assert colors == set(range(10)) - {4}


def test_color_flip_correct_output_depends_on_side():
    pair = Pair(g("12", "34"), g("56", "78"))
    (out,) = color_flip("t", [pair], random.Random(1), side="output")
    assert out.input == pair.input
    assert out.output != pair.output
    assert out.correct_output == pair.output
    assert out.detail["side"] == "output"
    (inp,) = color_flip("t", [pair], random.Random(1), side="input")
    assert inp.output == pair.output
    assert inp.input != pair.input
    assert inp.correct_output is None
    assert inp.detail["side"] == "input"
    sides = {color_flip("t", [pair], random.Random(s))[0].detail["side"] for s in range(40)}
    assert sides == {"input", "output"}


def test_color_flip_deterministic_under_seed():
    pairs = [Pair(REGION_GRID, g("12", "34")), Pair(g("678"), g("9"))]
    a = [c.to_json() for c in color_flip("t", pairs, random.Random(42), count=4)]
    b = [c.to_json() for c in color_flip("t", pairs, random.Random(42), count=4)]
    assert a == b
    runs = {
        json.dumps([c.to_json() for c in color_flip("t", pairs, random.Random(s), count=2)])
        for s in range(10)
    }
    assert len(runs) > 1


def test_color_flip_count_distinct_and_bounded():
    pairs = [Pair(REGION_GRID, g("12", "34"))]
    cands = color_flip("t", pairs, random.Random(3), count=5)
    assert len(cands) == 5
    assert len({(c.input, c.output) for c in cands}) == 5
    assert all((c.input, c.output) != (pairs[0].input, pairs[0].output) for c in cands)
    # a 1x1 pair has only 2 sides x 9 colors = 18 distinct flips
    tiny = color_flip("t", [Pair(g("1"), g("2"))], random.Random(0), count=100)
    assert 0 < len(tiny) <= 18
    assert len({(c.input, c.output) for c in tiny}) == len(tiny)
    assert color_flip("t", pairs, random.Random(0), count=0) == []


def test_color_flip_skips_pairs_without_output_and_validates_args():
    assert color_flip("t", [], random.Random(0)) == []
    assert color_flip("t", [Pair(g("1"), None)], random.Random(0)) == []
    pairs = [Pair(g("1"), None), Pair(g("2"), g("3"))]
    for seed in range(10):
        (cand,) = color_flip("t", pairs, random.Random(seed))
        assert cand.detail["source_index"] == 1
        assert cand.task_id == "t" and cand.kind == "color_flip"
    with pytest.raises(ValueError, match="count"):
        color_flip("t", pairs, random.Random(0), count=-1)
    with pytest.raises(ValueError, match="side"):
        color_flip("t", pairs, random.Random(0), side="both")


grids = st.integers(1, 7).flatmap(
    lambda h: st.integers(1, 7).flatmap(
        lambda w: st.lists(
            st.lists(st.integers(0, 3), min_size=w, max_size=w), min_size=h, max_size=h
        ).map(lambda rows: tuple(tuple(r) for r in rows))
    )
)


@settings(max_examples=200, deadline=None)
@given(grids, grids, st.sampled_from([None, "input", "output"]), st.integers(0, 2**32))
def test_color_flip_property_one_connected_region(grid_in, grid_out, side, seed):
    pair = Pair(grid_in, grid_out)
    (cand,) = color_flip("t", [pair], random.Random(seed), side=side)
    assert is_grid(cand.input) and is_grid(cand.output)
    assert (cand.input, cand.output) != (pair.input, pair.output)
    if cand.detail["side"] == "input":
        before, after = pair.input, cand.input
        assert cand.output == pair.output and cand.correct_output is None
    else:
        before, after = pair.output, cand.output
        assert cand.input == pair.input and cand.correct_output == pair.output
    assert len(after) == len(before) and len(after[0]) == len(before[0])
    diff = changed_cells(before, after)
    assert diff
    assert diff == component(before, next(iter(diff)))
    assert len({before[r][c] for r, c in diff}) == 1
    assert len({after[r][c] for r, c in diff}) == 1
    old = before[next(iter(diff))[0]][next(iter(diff))[1]]
    assert after[next(iter(diff))[0]][next(iter(diff))[1]] != old
    if any(v != 0 for row in before for v in row):
        assert old != 0


# -------------------------------------------------------------------- instance_mismatch

TARGET = Pair(g("1"), g("000", "000", "000"))
NEAR1 = g("100", "000", "000")  # 1/9
NEAR2 = g("110", "000", "000")  # 2/9
NEAR3 = g("111", "000", "000")  # 3/9
FAR_SHAPE = g("00", "00")  # 5/9 after padding
FAR = g("111", "111", "111")  # 9/9
POOL = [
    Pair(g("2"), FAR),
    Pair(g("3"), TARGET.output),  # identical output: excluded
    Pair(g("4"), NEAR3),
    Pair(g("5"), FAR_SHAPE),
    Pair(g("6"), NEAR1),
    Pair(g("7"), NEAR1),  # duplicate output: does not take a slot
    Pair(g("8"), None),
    Pair(g("9"), NEAR2),
    TARGET,
]


def test_instance_mismatch_picks_among_three_nearest():
    assert hamming_distance(TARGET.output, FAR_SHAPE) == pytest.approx(5 / 9)
    chosen = set()
    for seed in range(60):
        cand = instance_mismatch("t", TARGET, POOL, random.Random(seed))
        assert cand is not None
        assert cand.input == TARGET.input
        assert cand.correct_output == TARGET.output
        assert cand.kind == "instance_mismatch"
        assert cand.output in {NEAR1, NEAR2, NEAR3}
        assert cand.detail["distance"] == hamming_distance(TARGET.output, cand.output)
        assert POOL[cand.detail["source_index"]].output == cand.output
        assert cand.detail["choices"] == 3
        chosen.add(cand.output)
    assert chosen == {NEAR1, NEAR2, NEAR3}
    first = instance_mismatch("t", TARGET, POOL, random.Random(0), nearest=1)
    assert first is not None and first.output == NEAR1
    assert first.detail["source_index"] == 4 and first.detail["rank"] == 0


def test_instance_mismatch_deterministic_and_wider_nearest():
    a = instance_mismatch("t", TARGET, POOL, random.Random(5), nearest=5)
    b = instance_mismatch("t", TARGET, POOL, random.Random(5), nearest=5)
    assert a == b and a is not None
    outs = {
        instance_mismatch("t", TARGET, POOL, random.Random(s), nearest=10).output
        for s in range(100)
    }
    assert outs == {NEAR1, NEAR2, NEAR3, FAR_SHAPE, FAR}


def test_instance_mismatch_none_when_impossible():
    same = [Pair(g("3"), TARGET.output), TARGET, Pair(g("4"), None)]
    assert instance_mismatch("t", TARGET, same, random.Random(0)) is None
    assert instance_mismatch("t", TARGET, [], random.Random(0)) is None
    with pytest.raises(ValueError, match="known output"):
        instance_mismatch("t", Pair(g("1"), None), POOL, random.Random(0))
    with pytest.raises(ValueError, match="nearest"):
        instance_mismatch("t", TARGET, POOL, random.Random(0), nearest=0)


@settings(max_examples=100, deadline=None)
@given(grids, st.lists(grids, max_size=8), st.integers(1, 4), st.integers(0, 2**32))
def test_instance_mismatch_property(target_out, outs, nearest, seed):
    target = Pair(g("1"), target_out)
    pool = [Pair(g("2"), o) for o in outs]
    cand = instance_mismatch("t", target, pool, random.Random(seed), nearest=nearest)
    # distances of the distinct other outputs, with repeats for equal distances
    distinct = sorted(hamming_distance(target_out, o) for o in set(outs) if o != target_out)
    if not distinct:
        assert cand is None
        return
    assert cand is not None
    assert cand.output != target_out and cand.output in outs
    assert hamming_distance(target_out, cand.output) <= distinct[min(nearest, len(distinct)) - 1]


# ------------------------------------------------------------------------------ H-ARC


def test_parse_harc_grid_valid():
    assert parse_harc_grid("|077|777|077|") == ((0, 7, 7), (7, 7, 7), (0, 7, 7))
    assert parse_harc_grid(" |5|\n") == ((5,),)
    assert parse_harc_grid("|0123456789|") == (tuple(range(10)),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "between pipes"),
        ("|", "between pipes"),
        ("077|777", "between pipes"),
        ("|077|777", "between pipes"),
        ("[[0, 1]]", "between pipes"),
        ("||", "row 0 is empty"),
        ("|12||34|", "row 1 is empty"),
        ("|07|777|", "row 1 has 3 cells but row 0 has 2"),
        ("|0a7|", "'a', not a digit"),
        ("|1 2|", "' ', not a digit"),
        ("|-1|", "'-', not a digit"),
        ("|\u00b2|", "not a digit"),
        ("|" + "1" * 101 + "|", "101 columns"),
        ("|" + "1|" * 101, "101 rows"),
    ],
)
def test_parse_harc_grid_malformed(text, message):
    with pytest.raises(ValueError, match=message) as info:
        parse_harc_grid(text)
    assert str(info.value).startswith("bad H-ARC grid")
    assert "\n" not in str(info.value)


def test_parse_harc_grid_non_string():
    with pytest.raises(ValueError, match="must be a string"):
        parse_harc_grid(None)  # type: ignore[arg-type]


@given(grids)
def test_parse_harc_grid_round_trip(grid):
    text = "|" + "|".join("".join(map(str, row)) for row in grid) + "|"
    assert parse_harc_grid(text) == grid


def test_normalize_task_id():
    assert normalize_task_id("007bbfc7.json") == "007bbfc7"
    assert normalize_task_id(" 007bbfc7 ") == "007bbfc7"
    assert normalize_task_id("a.json.json") == "a.json"


HARC_CSV = """\
task_name,task_type,test_output_grid,count
007bbfc7.json,training,|12|34|,3
007bbfc7,training,|11|11|,0
abc.json,evaluation,|1a|,2
abc,evaluation,|5|,2
,training,|1|,1
xyz.json,evaluation,|1|,many
xyz.json,evaluation,|1|,-2
007bbfc7.json,training,|12|34|,1
"""


def test_load_human_errors(tmp_path):
    path = tmp_path / "incorrect_submissions.csv"
    path.write_text(HARC_CSV)
    result = load_human_errors(path)
    assert isinstance(result, HumanErrors)
    assert result.by_task == {
        "007bbfc7": [(g("12", "34"), 4), (g("11", "11"), 0)],
        "abc": [(g("5"), 2)],
    }
    assert result.task_types == {"007bbfc7": "training", "abc": "evaluation"}
    assert len(result.skipped) == 4
    assert result.skipped[0].startswith("line 4: task abc: bad H-ARC grid")
    assert result.skipped[1].startswith("line 6: empty task_name")
    assert result.skipped[2].startswith("line 7: task xyz: count 'many'")
    assert result.skipped[3].startswith("line 8: task xyz: count '-2'")


def test_load_human_errors_header_and_bom(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("task_name,grid,count\na,|1|,1\n")
    with pytest.raises(ValueError, match="task_type, test_output_grid"):
        load_human_errors(bad)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(
        "\ufefftask_name,task_type,test_output_grid,count\nq.json,training,|1|,2\n".encode()
    )
    assert load_human_errors(bom).by_task == {"q": [(g("1"), 2)]}
    quoted = tmp_path / "quoted.csv"
    quoted.write_text('task_name,task_type,test_output_grid,count\n"q","training","|12|",3\n')
    assert load_human_errors(quoted).by_task == {"q": [(g("12"), 3)]}


def test_human_errors_json_reads_grids_counts_and_test_indices(tmp_path):
    path = tmp_path / "human_errors.json"
    path.write_text(json.dumps({
        "007bbfc7.json": [
            [[1, 2], [3, 4]],
            {"output": [[1, 2], [3, 4]], "count": 2},  # the same grid again: counts add
            {"output": [[5]], "count": 0},
            {"output": [[7]], "count": 3, "test_index": 1},
            {"output": [[1, 2], [3]]},  # ragged
            {"count": 1},  # no output
            {"output": [[1]], "count": -1},
            {"output": [[1]], "test_index": "1"},
            {"output": [[1]], "colour": "red"},
            "|12|",
        ],
        "abc": "not a list",
        "only_second": [{"output": [[9]], "test_index": 2}],
        "": [[[1]]],
    }))  # fmt: skip
    result = load_human_errors(path)  # .json: this format
    assert result.tests == {
        "007bbfc7": {0: [(g("12", "34"), 3), (g("5"), 0)], 1: [(g("7"), 3)]},
        "only_second": {2: [(g("9"), 1)]},
    }
    assert result.by_task == {"007bbfc7": [(g("12", "34"), 3), (g("5"), 0)]}
    reasons = "\n".join(result.skipped)
    for expected in ("entry 4: field 'output': not a grid", "entry 5: field 'output': missing",
                     "entry 6: field 'count': -1 is not a non-negative integer",
                     "entry 7: field 'test_index': expected int, got str",
                     "entry 8: unknown field(s) colour", "entry 9:", "task abc: not a list",
                     "empty task id"):  # fmt: skip
        assert expected in reasons, expected
    assert len(result.skipped) == 8
    for bad, message in (("[1, 2]", "not an object"), ("{nope", "not JSON")):
        path.write_text(bad)
        with pytest.raises(ValueError, match=message):
            read_human_errors_json(path)


def test_human_errors_from_loose_files_merge_into_one_json(tmp_path):
    from arcjudge import cli

    loose = tmp_path / "errors"
    loose.mkdir()
    (loose / "t1_error_1.json").write_text(json.dumps([[1, 2], [3, 4]]))
    (loose / "t1_error_2.json").write_text(json.dumps([[1, 2], [3, 4]]))  # same grid: 2
    (loose / "t1_error_3.json").write_text(json.dumps([[9]]))
    (loose / "t2.json").write_text(json.dumps([[[5]], {"output": [[6]], "test_index": 1}]))
    (loose / "t3.json").write_text("{broken")
    (loose / "notes.txt").write_text("not read")
    harc = tmp_path / "harc.csv"
    harc.write_text("task_name,task_type,test_output_grid,count\nt1.json,training,|9|,4\n")
    out = tmp_path / "merged" / "human_errors.json"
    assert cli.main(["dimensions", "human-errors", str(loose), str(harc), "--out", str(out)]) == 0
    merged = read_human_errors_json(out)
    assert merged.tests == {
        "t1": {0: [(g("12", "34"), 2), (g("9"), 5)]},
        "t2": {0: [(g("5"), 1)], 1: [(g("6"), 1)]},
    }
    assert merged.skipped == []
    assert cli.main(["dimensions", "human-errors", str(tmp_path / "nope"), "--out", str(out)]) == 2


def test_hostile_files_in_a_human_errors_directory_are_skipped_with_the_reason(tmp_path):
    loose = tmp_path / "errors"
    loose.mkdir()
    (loose / "t1.json").write_text(json.dumps([[1, 2], [3, 4]]))
    os.mkfifo(loose / "t2.json")  # never waited on
    (loose / "t3.json").symlink_to("/dev/zero")  # never read
    (tmp_path / "private.json").write_text(json.dumps([[7]]))
    (loose / "t4.json").symlink_to(tmp_path / "private.json")  # out of the directory
    (loose / "t5.json").write_text("[" * 100_000 + "]" * 100_000)
    (loose / "t6.json").symlink_to("t1.json")  # inside: read
    with deadline(10):
        found = collect_human_errors([loose])
    assert found.tests == {"t1": {0: [(g("12", "34"), 1)]}, "t6": {0: [(g("12", "34"), 1)]}}
    skipped = "\n".join(found.skipped)
    assert "t2.json: refused: not a regular file (a FIFO)" in skipped
    assert "t3.json: refused: a symlink out of its directory (to /dev/zero)" in skipped
    assert "t4.json: refused: a symlink out of its directory" in skipped
    assert "t5.json: not JSON (nested too deeply to decode)" in skipped
    deep = tmp_path / "human_errors.json"
    deep.write_text('{"t1": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match="nested too deeply"):
        read_human_errors_json(deep)


def test_a_human_error_for_a_later_test_input_says_which(tmp_path):
    test_pair = Pair(g("1"), g("2"))
    cand = human_error("t", test_pair, [(g("3"), 1)], random.Random(0), test_index=1)
    assert cand is not None and cand.detail["test_index"] == 1
    first = human_error("t", test_pair, [(g("3"), 1)], random.Random(0))
    assert first is not None and "test_index" not in first.detail


def test_human_error_excludes_zero_count_and_correct_output():
    test_pair = Pair(g("9"), g("12", "34"))
    errors = [(g("5"), 0), (g("6"), 5), (g("12", "34"), 100)]
    for seed in range(100):
        cand = human_error("t", test_pair, errors, random.Random(seed), task_type="training")
        assert cand is not None
        assert cand.output == g("6")
        assert cand.input == test_pair.input
        assert cand.correct_output == test_pair.output
        assert cand.kind == "human_error"
        assert cand.detail == {
            "error_index": 1,
            "count": 5,
            "total_count": 5,
            "task_type": "training",
        }


def test_human_error_weighted_by_count():
    test_pair = Pair(g("9"), g("0"))
    rare, common = g("1"), g("2")
    errors = [(rare, 1), (common, 99)]
    rng = random.Random(11)
    picks = [human_error("t", test_pair, errors, rng).output for _ in range(2000)]
    assert 5 <= picks.count(rare) <= 60
    assert picks.count(common) == 2000 - picks.count(rare)
    again = [human_error("t", test_pair, errors, random.Random(s)).output for s in range(50)]
    assert again == [
        human_error("t", test_pair, errors, random.Random(s)).output for s in range(50)
    ]


def test_human_error_none_cases_and_unknown_output():
    test_pair = Pair(g("9"), g("0"))
    assert human_error("t", test_pair, [], random.Random(0)) is None
    assert human_error("t", test_pair, [(g("1"), 0)], random.Random(0)) is None
    assert human_error("t", test_pair, [(g("0"), 7)], random.Random(0)) is None
    unknown = human_error("t", Pair(g("9"), None), [(g("0"), 7)], random.Random(0))
    assert unknown is not None and unknown.output == g("0") and unknown.correct_output is None


# -------------------------------------------------------------------------- retrieval

OWN = Pair(g("1"), g("2"))
N1A, N1B = Pair(g("3"), g("4")), Pair(g("5"), g("6"))
N3 = Pair(g("7"), g("8"))
DEMOS = {
    "t": [OWN],
    "n1": [N1A, OWN, N1B],  # OWN is also a demo of t: never used
    "n2": [Pair(g("5"), None)],  # no output: unusable
    "n3": [N3],
}


def test_retrieval_draws_from_neighbours_only():
    neighbours = {"t": ["t", "n1", "n2", "missing", "n1"]}
    chosen = set()
    for seed in range(50):
        cand = retrieval("t", neighbours, DEMOS, random.Random(seed))
        assert cand is not None
        assert cand.kind == "retrieval" and cand.task_id == "t"
        assert cand.correct_output is None
        assert cand.detail["neighbour_task_id"] == "n1"
        assert cand.detail["neighbour_rank"] == 1
        pair = DEMOS["n1"][cand.detail["pair_index"]]
        assert (cand.input, cand.output) == (pair.input, pair.output)
        chosen.add(pair)
    assert chosen == {N1A, N1B}


def test_retrieval_deterministic():
    neighbours = {"t": ["n1", "n3"]}
    a = [retrieval("t", neighbours, DEMOS, random.Random(s)) for s in range(30)]
    b = [retrieval("t", neighbours, DEMOS, random.Random(s)) for s in range(30)]
    assert [c.to_json() for c in a] == [c.to_json() for c in b]
    assert {c.detail["neighbour_task_id"] for c in a} == {"n1", "n3"}


def test_retrieval_none_cases():
    assert retrieval("t", {}, DEMOS, random.Random(0)) is None
    assert retrieval("t", {"t": []}, DEMOS, random.Random(0)) is None
    assert retrieval("t", {"t": ["t", "n2", "missing"]}, DEMOS, random.Random(0)) is None
    only_own = {"t": [OWN], "n": [OWN]}
    assert retrieval("t", {"t": ["n"]}, only_own, random.Random(0)) is None


def test_load_neighbours(tmp_path):
    path = tmp_path / "neighbours.jsonl"
    path.write_text(
        '{"task_id": "a.json", "neighbour_task_ids": ["b", "c.json", "b"]}\n'
        "\n"
        '{"task_id": "b", "neighbour_task_ids": []}\n'
    )
    assert load_neighbours(path) == {"a": ["b", "c"], "b": []}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a", ["b"]]', "expected a JSON object, got list"),
        ('{"neighbour_task_ids": ["b"]}', "'task_id' must be a non-empty string"),
        ('{"task_id": 3, "neighbour_task_ids": ["b"]}', "'task_id' must be"),
        ('{"task_id": "", "neighbour_task_ids": ["b"]}', "'task_id' must be"),
        ('{"task_id": "x"}', "'neighbour_task_ids' must be a list"),
        ('{"task_id": "x", "neighbour_task_ids": "b"}', "'neighbour_task_ids' must be"),
        ('{"task_id": "x", "neighbour_task_ids": ["b", 2]}', "'neighbour_task_ids' must be"),
        ('{"task_id": "a", "neighbour_task_ids": []}', "task 'a' is listed twice"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON \\(nested too deeply to decode\\)"),
    ],
    ids=lambda value: value if len(value) < 60 else f"{value[:20]}... ({len(value)} chars)",
)
def test_load_neighbours_malformed(tmp_path, line, message):
    path = tmp_path / "neighbours.jsonl"
    path.write_text('{"task_id": "a", "neighbour_task_ids": ["b"]}\n\n' + line + "\n")
    with pytest.raises(ValueError, match=message) as info:
        load_neighbours(path)
    text = str(info.value)
    assert text.startswith(f"{path}:3: ")
    assert "\n" not in text


def test_load_neighbours_not_utf8(tmp_path):
    path = tmp_path / "neighbours.jsonl"
    path.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="not UTF-8"):
        load_neighbours(path)
