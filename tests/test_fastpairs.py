"""ARC-GEN's compact spelling read without the JSON decoder: the same pairs, or the slow way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcjudge.fastpairs import compact_pairs, compact_pairs_with_wires
from arcjudge.sandbox.types import compact
from arcjudge.tasks import TaskFormatError, load_arcgen_pairs, read_pairs


def spelled(value: object) -> bytes:
    """ARC-GEN's spelling: JSON without spaces."""
    return json.dumps(value, separators=(",", ":")).encode()


def strict(data: bytes) -> list[tuple[object, object]]:
    """What decoding the JSON and checking every grid strictly gives."""
    return [(p.input, p.output) for p in read_pairs(json.loads(data), "f")]


grids = st.integers(1, 6).flatmap(
    lambda width: st.lists(
        st.lists(st.integers(0, 9), min_size=width, max_size=width), min_size=1, max_size=6
    )
)
pair_lists = st.lists(st.builds(lambda i, o: {"input": i, "output": o}, grids, grids), max_size=4)


@settings(max_examples=200, deadline=None)
@given(pair_lists)
def test_compact_files_read_as_the_strict_reader_reads_them(pairs):
    data = spelled(pairs)
    assert compact_pairs(data) == strict(data)


@settings(max_examples=200, deadline=None)
@given(pair_lists)
def test_the_compact_forms_read_with_the_grids_are_the_grids_compact_forms(pairs):
    wired = compact_pairs_with_wires(spelled(pairs))
    assert wired is not None
    assert [grids for grids, _ in wired] == strict(spelled(pairs))
    for (grid_in, grid_out), (wire_in, wire_out) in wired:
        assert (wire_in, wire_out) == (compact(grid_in), compact(grid_out))


def test_arcgen_pairs_carry_their_compact_forms_outside_equality(tmp_path: Path):
    path = tmp_path / "t.json"
    path.write_bytes(spelled([{"input": [[1, 2], [3, 4]], "output": [[5]]}]))
    (pair,) = load_arcgen_pairs(path)
    assert pair.wires == ((2, "1234"), (1, "5"))
    assert pair == type(pair)(pair.input, pair.output)  # the wires are not compared


@pytest.mark.parametrize(
    "text",
    [
        '[{"input": [[1]], "output": [[2]]}]',  # a space
        '[{"input":[[1]],"output":[[2]]}]\n',  # a trailing newline
        '[{"output":[[2]],"input":[[1]]}]',  # keys in the other order
        '[{"input":[[1]],"output":[[2]],"x":1}]',  # another key
        '[{"input":[[1,2],[3]],"output":[[2]]}]',  # ragged
        '[{"input":[[1],[3,4]],"output":[[2]]}]',  # ragged, the other way
        '[{"input":[[1,2],[3,4],[5]],"output":[[2]]}]',  # ragged, right total length
        '[{"input":[[10]],"output":[[2]]}]',  # a cell of two digits
        '[{"input":[[1]]}]',  # no output
        '[{"input":[[1]],"output":[[2]]},]',  # a trailing comma
        "[[[1]]]",  # not pairs
        '{"input":[[1]],"output":[[2]]}',  # not a list
    ],
)
def test_anything_else_is_left_to_the_strict_reader(text):
    assert compact_pairs(text.encode()) is None


def test_sides_past_the_limit_are_left_to_the_strict_reader():
    wide = spelled([{"input": [[1] * 101], "output": [[2]]}])
    tall = spelled([{"input": [[1]] * 101, "output": [[2]]}])
    assert compact_pairs(wide) is None and compact_pairs(tall) is None
    fits = spelled([{"input": [[1] * 100] * 100, "output": [[2]]}])
    assert compact_pairs(fits) == strict(fits)


def test_an_empty_list_is_no_pairs():
    assert compact_pairs(b"[]") == []


def test_load_arcgen_pairs_gives_the_same_pairs_and_errors_either_way(tmp_path: Path):
    pairs = [{"input": [[1, 2], [3, 4]], "output": [[5]]}, {"input": [[0]], "output": [[9, 9]]}]
    fast, slow = tmp_path / "fast.json", tmp_path / "slow.json"
    fast.write_bytes(spelled(pairs))
    slow.write_text(json.dumps(pairs))  # with spaces: the strict reader
    assert compact_pairs(fast.read_bytes()) is not None
    assert compact_pairs(slow.read_bytes()) is None
    assert load_arcgen_pairs(fast) == load_arcgen_pairs(slow)
    ragged = tmp_path / "ragged.json"
    ragged.write_bytes(b'[{"input":[[1,2],[3]],"output":[[2]]}]')
    with pytest.raises(TaskFormatError, match=r"ragged.json: pairs\[0\].input is not a grid"):
        load_arcgen_pairs(ragged)
    with pytest.raises(TaskFormatError, match="no such file"):
        load_arcgen_pairs(tmp_path / "missing.json")
