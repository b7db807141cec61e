"""Tests for grid canonicalization (arcjudge.grids and the sandbox runtime core)."""

from __future__ import annotations

import ast
import builtins
import json
import math
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arcjudge.sandbox.runtime.canonical as canonical_module
from arcjudge.grids import (
    MAX_SIDE,
    GridRejected,
    canonical_distance,
    canonicalize,
    hamming_distance,
    is_grid,
    same_shape,
    to_grid,
    to_lists,
    validate_plain,
    wire_distance,
)
from arcjudge.sandbox.runtime.canonical import canonical_wire, exact_grid, from_wire, to_wire
from arcjudge.sandbox.types import wire_of

CANONICAL_PATH = Path(canonical_module.__file__)


def assert_canonical(grid: object) -> None:
    """Assert that ``grid`` is an exact, immutable, well-formed canonical grid."""
    assert type(grid) is tuple
    assert 1 <= len(grid) <= MAX_SIDE
    width = len(grid[0])
    assert 1 <= width <= MAX_SIDE
    for row in grid:
        assert type(row) is tuple
        assert len(row) == width
        for cell in row:
            assert type(cell) is int
            assert 0 <= cell <= 9


def accepted(value: object) -> tuple:
    grid, reason = canonicalize(value)
    assert reason is None, reason
    assert_canonical(grid)
    return grid


def rejected(value: object) -> str:
    grid, reason = canonicalize(value)
    assert grid is None
    assert type(reason) is str and reason
    return reason


# --------------------------------------------------------------------------- strategies

ARC_SIDE = 30  # generated grids stay ARC-sized; the limit itself is tested below
sides = st.integers(min_value=1, max_value=ARC_SIDE)


@st.composite
def grids(draw: st.DrawFn, max_side: int = ARC_SIDE) -> tuple[tuple[int, ...], ...]:
    h = draw(st.integers(min_value=1, max_value=max_side))
    w = draw(st.integers(min_value=1, max_value=max_side))
    row = st.lists(st.integers(0, 9), min_size=w, max_size=w).map(tuple)
    return tuple(draw(st.lists(row, min_size=h, max_size=h)))


small_grids = grids(max_side=6)


@st.composite
def renderings(draw: st.DrawFn, grid: tuple[tuple[int, ...], ...]) -> object:
    """Some acceptable non-canonical representation of ``grid``."""
    outer = draw(st.sampled_from(["list", "tuple", "array"]))
    if outer == "array":
        dtype = draw(st.sampled_from([np.int8, np.uint8, np.int64, np.float32, np.float64]))
        return np.array(grid, dtype=dtype)

    def cell(v: int) -> object:
        kinds = ["int", "float", "np_int", "np_uint", "np_float"]
        if v in (0, 1):
            kinds += ["bool", "np_bool"]
        kind = draw(st.sampled_from(kinds))
        return {
            "int": lambda: v,
            "float": lambda: float(v),
            "np_int": lambda: np.int64(v),
            "np_uint": lambda: np.uint8(v),
            "np_float": lambda: np.float32(v),
            "bool": lambda: bool(v),
            "np_bool": lambda: np.bool_(v),
        }[kind]()

    rows: list[object] = []
    for row in grid:
        kind = draw(st.sampled_from(["list", "tuple", "array"]))
        if kind == "array":
            rows.append(np.array(row, dtype=draw(st.sampled_from([np.int16, np.float64]))))
        else:
            cells = [cell(v) for v in row]
            rows.append(cells if kind == "list" else tuple(cells))
    return rows if outer == "list" else tuple(rows)


junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=2), children, max_size=2)
    ),
    max_leaves=20,
)

json_junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=2),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=2), children, max_size=2)
    ),
    max_leaves=20,
)


def reference_hamming(a: tuple, b: tuple) -> float:
    h = max(len(a), len(b))
    w = max(len(a[0]), len(b[0]))
    pa = np.full((h, w), -1)
    pb = np.full((h, w), -1)
    pa[: len(a), : len(a[0])] = np.array(a)
    pb[: len(b), : len(b[0])] = np.array(b)
    return float((pa != pb).sum()) / (h * w)


# --------------------------------------------------------------------- accepted examples


def test_list_of_lists_is_canonicalized_to_tuples() -> None:
    assert accepted([[1, 2], [3, 4]]) == ((1, 2), (3, 4))


def test_tuple_of_tuples_and_mixed_rows() -> None:
    assert accepted(((0, 9), [8, 7])) == ((0, 9), (8, 7))


def test_single_cell_and_max_size() -> None:
    assert accepted([[5]]) == ((5,),)
    big = [[(r + c) % 10 for c in range(MAX_SIDE)] for r in range(MAX_SIDE)]
    assert accepted(big) == tuple(tuple(row) for row in big)


def test_bools_become_ints() -> None:
    grid = accepted([[True, False]])
    assert grid == ((1, 0),)
    assert all(type(c) is int for c in grid[0])


def test_integral_floats_become_ints() -> None:
    grid = accepted([[2.0, 0.0, -0.0, 9.0]])
    assert grid == ((2, 0, 0, 9),)
    assert all(type(c) is int for c in grid[0])


def test_numpy_int_array() -> None:
    for dtype in (np.int8, np.int32, np.int64, np.uint8, np.uint64):
        grid = accepted(np.array([[1, 2], [3, 4]], dtype=dtype))
        assert grid == ((1, 2), (3, 4))


def test_numpy_bool_and_float_arrays() -> None:
    assert accepted(np.array([[True, False]])) == ((1, 0),)
    assert accepted(np.array([[2.0, 3.0]], dtype=np.float32)) == ((2, 3),)
    assert accepted(np.array([[2.0, 3.0]], dtype=np.float16)) == ((2, 3),)


def test_numpy_rows_and_scalars_in_lists() -> None:
    value = [np.array([1, 2]), (np.int64(3), np.uint8(4))]
    assert accepted(value) == ((1, 2), (3, 4))
    assert accepted([[np.bool_(True), np.float64(2.0), np.float32(9.0), np.int16(0)]]) == (
        (1, 2, 9, 0),
    )


def test_result_is_a_snapshot() -> None:
    value = [[1, 2], [3, 4]]
    grid = accepted(value)
    value[0][0] = 9
    value.append([5, 6])
    assert grid == ((1, 2), (3, 4))


def test_canonical_grid_is_returned_equal() -> None:
    grid = ((1, 2), (3, 4))
    assert canonicalize(grid) == (grid, None)


# --------------------------------------------------------------------- rejected examples


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([[2.5]], "non-integral cell: 2.5"),
        ([[float("nan")]], "NaN cell"),
        ([[float("inf")]], "infinite cell: inf"),
        ([[float("-inf")]], "infinite cell: -inf"),
        ([[-1]], "cell out of range: -1"),
        ([[10]], "cell out of range: 10"),
        ([[12]], "cell out of range: 12"),
        ([[12.0]], "cell out of range: 12"),
        ([[-1.0]], "cell out of range: -1"),
        ([[1], [1, 2]], "ragged rows"),
        ([(1, 2), (1,)], "ragged rows"),
        ([], "empty grid"),
        ((), "empty grid"),
        ([[]], "empty row"),
        ([[1], []], "empty row"),
        ([[0]] * (MAX_SIDE + 1), f"too big: {MAX_SIDE + 1} rows"),
        ([[0] * (MAX_SIDE + 1)], f"too big: {MAX_SIDE + 1} columns"),
        ("abc", "not a grid: str"),
        ({0: [1]}, "not a grid: dict"),
        ({(1,)}, "not a grid: set"),
        (None, "not a grid: NoneType"),
        (5, "not a grid: int"),
        (b"\x01", "not a grid: bytes"),
        ([[1], "2"], "not a grid row: str"),
        ([[1], None], "not a grid row: NoneType"),
        ([["1"]], "unsupported cell type: str"),
        ([[None]], "unsupported cell type: NoneType"),
        ([[[1]]], "unsupported cell type: list"),
        ([[1 + 0j]], "unsupported cell type: complex"),
    ],
)
def test_rejection_reasons(value: object, expected: str) -> None:
    assert canonicalize(value) == (None, expected)


def test_huge_integers_and_floats_are_rejected_briefly() -> None:
    reason = rejected([[10**5000]])
    assert reason.startswith("cell out of range")
    assert len(reason) < 100
    assert rejected([[1e300]]) == "cell out of range: 1e+300"


def test_generator_is_rejected_without_being_consumed() -> None:
    consumed = []

    def gen():
        consumed.append(True)
        yield [1]

    assert rejected(gen()) == "not a grid: generator"
    assert consumed == []
    assert rejected([gen()]) == "not a grid row: generator"
    assert consumed == []


def test_ten_million_rows_rejected_fast() -> None:
    rows = [[0]] * 10**7
    start = time.perf_counter()
    reason = rejected(rows)
    elapsed = time.perf_counter() - start
    assert reason == "too big: 10000000 rows"
    assert elapsed < 0.1


def test_ten_million_columns_rejected_fast() -> None:
    row = [0] * 10**7
    for value in ([row], (tuple(row),), [[1], row]):
        start = time.perf_counter()
        reason = rejected(value)
        elapsed = time.perf_counter() - start
        assert reason == "too big: 10000000 columns"
        assert elapsed < 0.1


def test_huge_numpy_arrays_rejected_fast() -> None:
    tall = np.zeros((10**7, 1), dtype=np.int8)
    wide = np.zeros((1, 10**7), dtype=np.int8)
    long_row = np.zeros(10**7, dtype=np.int8)
    start = time.perf_counter()
    assert rejected(tall) == "too big: 10000000 rows"
    assert rejected(wide) == "too big: 10000000 columns"
    assert rejected([long_row]) == "too big: 10000000 columns"
    assert time.perf_counter() - start < 0.1


# --------------------------------------------------------------------- lying objects


class LyingList(list):
    def __len__(self) -> int:
        return 1

    def __iter__(self):
        return iter([[1]])

    def __getitem__(self, index):
        return [1]

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class LyingTuple(tuple):
    def __len__(self) -> int:
        return 1

    def __iter__(self):
        return iter([1])

    def __getitem__(self, index):
        return 1

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = tuple.__hash__


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


class LyingInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class PlainListSubclass(list):
    pass


def test_list_and_tuple_subclasses_are_rejected_as_grids() -> None:
    assert rejected(LyingList([[1] * 40] * 40)) == "not a grid: LyingList"
    assert rejected(LyingTuple(((1,),))) == "not a grid: LyingTuple"
    assert rejected(PlainListSubclass([[1]])) == "not a grid: PlainListSubclass"


def test_list_and_tuple_subclasses_are_rejected_as_rows() -> None:
    assert rejected([LyingList([1])]) == "not a grid row: LyingList"
    assert rejected([LyingTuple((1,))]) == "not a grid row: LyingTuple"
    assert rejected([PlainListSubclass([1])]) == "not a grid row: PlainListSubclass"


def test_always_equal_objects_are_rejected() -> None:
    assert rejected(AlwaysEqual()) == "not a grid: AlwaysEqual"
    assert rejected([[AlwaysEqual()]]) == "unsupported cell type: AlwaysEqual"
    assert rejected([[LyingInt(3)]]) == "unsupported cell type: LyingInt"
    assert rejected([AlwaysEqual()]) == "not a grid row: AlwaysEqual"


def test_float_subclass_cells_are_rejected() -> None:
    class Weird(float):
        def is_integer(self) -> bool:
            return True

    assert rejected([[Weird(2.5)]]) == "unsupported cell type: Weird"


def test_metaclass_cannot_fake_the_type_name() -> None:
    class Meta(type):
        @property
        def __name__(cls):
            raise RuntimeError("boom")

    class Sneaky(metaclass=Meta):
        pass

    assert rejected(Sneaky()) == "not a grid: Sneaky"
    assert rejected([[Sneaky()]]) == "unsupported cell type: Sneaky"


def test_object_with_lying_class_attribute_is_rejected() -> None:
    class Disguised:
        @property
        def __class__(self):
            return list

    assert isinstance(Disguised(), list)  # fools isinstance ...
    assert rejected(Disguised()) == "not a grid: Disguised"  # ... but not canonicalize
    assert rejected([[Disguised()]]) == "unsupported cell type: Disguised"


def test_numpy_scalar_subclass_raising_does_not_escape() -> None:
    class BadInt(np.int64):
        def __int__(self) -> int:
            raise RuntimeError("no")

    class ExitInt(np.int64):
        def __int__(self) -> int:
            raise SystemExit(3)

    class BigInt(np.int64):
        def __int__(self) -> int:
            return 42

    assert rejected([[BadInt(1)]]) == "could not read output: RuntimeError"
    assert rejected([[ExitInt(1)]]) == "could not read output: SystemExit"
    assert rejected([[BigInt(1)]]) == "cell out of range: 42"


def test_numpy_scalar_subclass_mutating_its_row_cannot_change_the_result() -> None:
    row: list[object] = []

    class Mutating(np.int64):
        def __int__(self) -> int:
            row.clear()
            row.extend([7] * 40)
            return 1

    row.extend([Mutating(1), 2])
    assert accepted([row]) == ((1, 2),)


def test_keyboard_interrupt_propagates() -> None:
    class Interrupting(np.int64):
        def __int__(self) -> int:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        canonicalize([[Interrupting(1)]])


# --------------------------------------------------------------------- numpy specifics


def test_numpy_three_dimensional_and_other_ranks_rejected() -> None:
    assert rejected(np.zeros((2, 2, 2), dtype=int)) == "not a grid: 3-D array"
    assert rejected(np.zeros(3, dtype=int)) == "not a grid: 1-D array"
    assert rejected(np.array(3)) == "not a grid: 0-D array"
    assert rejected([np.zeros((1, 2), dtype=int)]) == "not a grid row: 2-D array"


def test_numpy_object_arrays_rejected() -> None:
    arr = np.empty((1, 2), dtype=object)
    arr[0, 0] = 1
    arr[0, 1] = 2
    assert rejected(arr) == "unsupported array dtype: object"
    assert rejected([np.array([1, 2], dtype=object)]) == "unsupported array dtype: object"


def test_numpy_other_dtypes_rejected() -> None:
    assert rejected(np.zeros((1, 1), dtype=complex)).startswith("unsupported array dtype")
    assert rejected(np.array([["1"]])).startswith("unsupported array dtype")
    assert rejected(np.zeros((1, 1), dtype="m8[s]")).startswith("unsupported array dtype")
    assert rejected([[np.timedelta64(1, "s")]]) == "unsupported cell type: timedelta64"
    assert rejected([[np.complex64(1)]]) == "unsupported cell type: complex64"


def test_numpy_float_arrays_with_nan_inf_or_fractions() -> None:
    assert rejected(np.array([[1.0, np.nan]])) == "NaN cell"
    assert rejected(np.array([[1.0, np.inf]])) == "infinite cell: inf"
    assert rejected(np.array([[1.5]])) == "non-integral cell: 1.5"
    assert rejected([[np.float64("nan")]]) == "NaN cell"
    assert rejected([[np.float32(2.5)]]) == "non-integral cell: 2.5"
    assert rejected([np.array([np.nan])]) == "NaN cell"


def test_numpy_out_of_range_and_empty_arrays() -> None:
    assert rejected(np.array([[10]])) == "cell out of range: 10"
    assert rejected(np.array([[-1]], dtype=np.int8)) == "cell out of range: -1"
    assert rejected(np.array([[np.uint64(2**64 - 1)]])).startswith("cell out of range")
    assert rejected(np.zeros((0, 3), dtype=int)) == "empty grid"
    assert rejected(np.zeros((3, 0), dtype=int)) == "empty row"
    assert rejected(np.zeros((MAX_SIDE + 1, 1), dtype=int)) == f"too big: {MAX_SIDE + 1} rows"
    assert rejected(np.zeros((1, MAX_SIDE + 1), dtype=int)) == f"too big: {MAX_SIDE + 1} columns"
    assert rejected([np.zeros(0, dtype=int)]) == "empty row"
    assert rejected([np.zeros(2, dtype=int), np.zeros(3, dtype=int)]) == "ragged rows"


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_numpy_array_subclasses_rejected() -> None:
    assert rejected(np.matrix([[1, 2]])) == "not a grid: matrix"
    assert rejected(np.ma.masked_array([[1, 2]])) == "not a grid: MaskedArray"

    class MyArray(np.ndarray):
        pass

    assert rejected(np.zeros((1, 1), dtype=int).view(MyArray)) == "not a grid: MyArray"
    assert rejected([np.zeros(1, dtype=int).view(MyArray)]) == "not a grid row: MyArray"


def test_non_contiguous_numpy_views_are_fine() -> None:
    base = np.arange(16).reshape(4, 4) % 10
    assert accepted(base[::2, ::-1]) == ((3, 2, 1, 0), (1, 0, 9, 8))
    assert accepted(base.T[:2, :2]) == ((0, 4), (1, 5))


def test_fake_numpy_module_in_sys_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    real_array = np.array([[1, 2]])
    monkeypatch.setitem(sys.modules, "numpy", types.SimpleNamespace(ndarray=list))
    assert accepted([[1, 2]]) == ((1, 2),)
    assert rejected(real_array) == "not a grid: ndarray"

    class Exploding(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            raise RuntimeError(name)

    monkeypatch.setitem(sys.modules, "numpy", Exploding("numpy"))
    assert accepted(((3,),)) == ((3,),)
    assert rejected(real_array) == "not a grid: ndarray"


# --------------------------------------------------------------------- hostile builtins


def _hostile(*args: object, **kwargs: object) -> object:
    raise RuntimeError("patched builtin called")


HOSTILE_CASES: list[object] = [
    [[1, 2], [3, 4]],
    ((0,), (9,)),
    [[True, 2.0, np.int64(3), np.float32(4.0), np.bool_(False)]],
    np.array([[1, 2], [3, 4]]),
    [np.array([5, 6])],
    [[1], [1, 2]],
    [[12]],
    [[2.5]],
    [[float("nan")]],
    [[0]] * 40,
    "not a grid",
    LyingList([[1]]),
    [[AlwaysEqual()]],
    np.zeros((2, 2, 2)),
]


def test_monkeypatched_builtins_do_not_change_results() -> None:
    names = [
        "len",
        "isinstance",
        "issubclass",
        "int",
        "float",
        "bool",
        "str",
        "repr",
        "list",
        "tuple",
        "range",
        "getattr",
        "type",
    ]
    expected = [canonicalize(v) for v in HOSTILE_CASES]
    expected_plain = [validate_plain(v) for v in HOSTILE_CASES]
    saved = {name: getattr(builtins, name) for name in names}
    try:
        for name in names:
            setattr(builtins, name, _hostile)
        got = [canonicalize(v) for v in HOSTILE_CASES]
        got_plain = [validate_plain(v) for v in HOSTILE_CASES]
    finally:
        for name, original in saved.items():
            setattr(builtins, name, original)
    assert all(getattr(builtins, name) is saved[name] for name in names)
    assert got == expected
    assert got_plain == expected_plain
    assert expected[0] == (((1, 2), (3, 4)), None)


def test_monkeypatched_len_and_isinstance_returning_lies() -> None:
    expected = [canonicalize(v) for v in HOSTILE_CASES]
    saved_len, saved_isinstance = builtins.len, builtins.isinstance
    try:
        builtins.len = lambda obj: 1  # type: ignore[assignment]
        builtins.isinstance = lambda obj, cls: True  # type: ignore[assignment]
        got = [canonicalize(v) for v in HOSTILE_CASES]
    finally:
        builtins.len, builtins.isinstance = saved_len, saved_isinstance
    assert builtins.len is saved_len and builtins.isinstance is saved_isinstance
    assert got == expected


def _run_isolated(code: str) -> str:
    """Run ``code`` in a bare ``python -I`` with only the runtime directory importable."""
    prelude = f"import sys\nsys.path.insert(0, {str(CANONICAL_PATH.parent)!r})\n"
    proc = subprocess.run(
        [sys.executable, "-I", "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_runtime_module_works_standalone_without_numpy() -> None:
    out = _run_isolated(
        "import canonical\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
        "assert not any(m.startswith('arcjudge') for m in sys.modules)\n"
        "print(canonical.canonicalize([[1, 2.0, True]]))\n"
        "print(canonical.canonicalize('x'))\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
    )
    assert out.splitlines() == ["(((1, 2, 1),), None)", "(None, 'not a grid: str')"]


def test_runtime_module_resists_builtins_patched_by_untrusted_code() -> None:
    out = _run_isolated(
        "import canonical, builtins\n"
        "def evil(*a, **k):\n"
        "    raise RuntimeError('evil')\n"
        "for name in ('len', 'isinstance', 'int', 'float', 'tuple', 'list', 'type',"
        " 'range', 'repr', 'str', 'bool', 'getattr', 'issubclass'):\n"
        "    setattr(builtins, name, evil)\n"
        "print(canonical.canonicalize([[1, 2.0], (3, 4)]))\n"
        "print(canonical.canonicalize([[1], [2, 3]]))\n"
        "print(canonical.validate_plain([[0, 9]]))\n"
    )
    assert out.splitlines() == [
        "(((1, 2), (3, 4)), None)",
        "(None, 'ragged rows')",
        "(((0, 9),), None)",
    ]


# The runtime modules canonical.py may import besides the standard library (by bare name
# in the supervisor, relatively in the harness); each of them is checked the same way.
RUNTIME_SIBLINGS = {"pinned"}


@pytest.mark.parametrize("name", ["canonical", *sorted(RUNTIME_SIBLINGS)])
def test_runtime_module_imports_only_the_standard_library(name: str) -> None:
    tree = ast.parse((CANONICAL_PATH.parent / f"{name}.py").read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # ``from . import pinned``: a sibling in the runtime directory
                assert node.level == 1 and node.module is None
                assert {alias.name for alias in node.names} <= RUNTIME_SIBLINGS
                continue
            assert node.module is not None
            imported.add(node.module.split(".")[0])
    imported.discard("__future__")
    assert imported, "expected at least one import"
    assert imported <= set(sys.stdlib_module_names) | RUNTIME_SIBLINGS, imported
    assert "numpy" not in imported and "arcjudge" not in imported


# --------------------------------------------------------------------- validate_plain


def test_validate_plain_accepts_lists_of_ints() -> None:
    assert validate_plain([[0, 1], [2, 9]]) == (((0, 1), (2, 9)), None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([[True]], "unsupported cell type: bool"),
        ([[1.0]], "unsupported cell type: float"),
        ([[np.int64(1)]], "unsupported cell type: int64"),
        ([[LyingInt(1)]], "unsupported cell type: LyingInt"),
        ([(1,)], "not a grid row: tuple"),
        (((1,),), "not a grid: tuple"),
        (PlainListSubclass([[1]]), "not a grid: PlainListSubclass"),
        ([PlainListSubclass([1])], "not a grid row: PlainListSubclass"),
        (np.array([[1]]), "not a grid: ndarray"),
        ([np.array([1])], "not a grid row: ndarray"),
        ([[10]], "cell out of range: 10"),
        ([[-1]], "cell out of range: -1"),
        ([[1], [1, 1]], "ragged rows"),
        ([], "empty grid"),
        ([[]], "empty row"),
        ([[0]] * (MAX_SIDE + 1), f"too big: {MAX_SIDE + 1} rows"),
        ([[0] * (MAX_SIDE + 1)], f"too big: {MAX_SIDE + 1} columns"),
        ({"a": 1}, "not a grid: dict"),
        ("[[1]]", "not a grid: str"),
        (None, "not a grid: NoneType"),
        ([["1"]], "unsupported cell type: str"),
        ([[None]], "unsupported cell type: NoneType"),
    ],
)
def test_validate_plain_rejections(value: object, expected: str) -> None:
    assert validate_plain(value) == (None, expected)


def test_validate_plain_rejects_huge_input_fast() -> None:
    rows = [[0]] * 10**7
    wide = [[0] * 10**7]
    start = time.perf_counter()
    assert validate_plain(rows) == (None, "too big: 10000000 rows")
    assert validate_plain(wide) == (None, "too big: 10000000 columns")
    assert time.perf_counter() - start < 0.1


# --------------------------------------------------------------------- grids.py helpers


def test_to_grid_and_grid_rejected() -> None:
    assert to_grid([[1]]) == ((1,),)
    with pytest.raises(GridRejected, match="ragged rows") as info:
        to_grid([[1], [1, 2]])
    assert isinstance(info.value, ValueError)
    assert info.value.reason == "ragged rows"


def test_is_grid() -> None:
    assert is_grid([[1, 2]]) is True
    assert is_grid(np.array([[0]])) is True
    assert is_grid([[1, 2.5]]) is False
    assert is_grid(LyingList([[1]])) is False
    assert is_grid(None) is False


def test_to_lists() -> None:
    grid = ((1, 2), (3, 4))
    lists = to_lists(grid)
    assert lists == [[1, 2], [3, 4]]
    assert type(lists) is list and all(type(row) is list for row in lists)
    lists[0][0] = 9
    assert grid == ((1, 2), (3, 4))
    with pytest.raises(GridRejected):
        to_lists([[1], [2, 3]])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (((1,),), ((1,),), 0.0),
        (((1,),), ((2,),), 1.0),
        (((1,),), ((1, 2),), 0.5),
        (((1, 2),), ((1,), (2,)), 0.5),
        (((1, 2),), ((3,), (4,)), 0.75),
        (((1, 2), (3, 4)), ((1, 2), (3, 5)), 0.25),
        (((0,),), ((0, 0), (0, 0)), 0.75),
    ],
)
def test_hamming_distance_examples(a: tuple, b: tuple, expected: float) -> None:
    assert hamming_distance(a, b) == pytest.approx(expected)
    assert hamming_distance(b, a) == pytest.approx(expected)


def test_hamming_distance_rejects_non_grids() -> None:
    with pytest.raises(GridRejected):
        hamming_distance(((1,),), [[1], [2, 3]])  # type: ignore[arg-type]
    assert hamming_distance([[1, 2]], np.array([[1, 3]])) == 0.5  # type: ignore[arg-type]


# --------------------------------------------------------------------- properties


@given(grids())
def test_prop_canonical_grids_are_fixed_points(grid: tuple) -> None:
    assert canonicalize(grid) == (grid, None)
    assert_canonical(grid)


@given(grids())
def test_prop_to_lists_round_trip(grid: tuple) -> None:
    lists = to_lists(grid)
    assert canonicalize(lists) == (grid, None)
    assert validate_plain(lists) == (grid, None)
    assert validate_plain(json.loads(json.dumps(lists))) == (grid, None)


@given(st.data(), small_grids)
def test_prop_renderings_canonicalize_to_the_grid(data: st.DataObject, grid: tuple) -> None:
    value = data.draw(renderings(grid))
    result, reason = canonicalize(value)
    assert reason is None
    assert result == grid
    assert_canonical(result)


@given(junk)
@settings(max_examples=300)
def test_prop_canonicalize_never_raises_and_is_idempotent(value: object) -> None:
    result = canonicalize(value)
    assert type(result) is tuple and len(result) == 2
    grid, reason = result
    assert (grid is None) != (reason is None)
    if grid is None:
        assert type(reason) is str and reason
    else:
        assert_canonical(grid)
        assert canonicalize(grid) == (grid, None)
        assert canonicalize(to_lists(grid)) == (grid, None)


@given(json_junk)
@settings(max_examples=300)
def test_prop_validate_plain_is_stricter_than_canonicalize(value: object) -> None:
    grid, reason = validate_plain(value)
    assert (grid is None) != (reason is None)
    if grid is not None:
        assert_canonical(grid)
        assert canonicalize(value) == (grid, None)
        assert to_lists(grid) == value


@given(
    st.lists(
        st.lists(st.one_of(st.integers(-2, 11), st.floats(-2, 11)), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_prop_cells_accepted_exactly_when_integral_in_range(value: list) -> None:
    grid, reason = canonicalize(value)
    widths = {len(row) for row in value}
    ok = len(widths) == 1 and all(
        (not isinstance(c, float) or (math.isfinite(c) and c.is_integer())) and 0 <= c <= 9
        for row in value
        for c in row
    )
    assert (grid is not None) == ok, reason
    if grid is not None:
        assert grid == tuple(tuple(int(c) for c in row) for row in value)


@given(small_grids, small_grids)
def test_prop_hamming_matches_reference(a: tuple, b: tuple) -> None:
    d = hamming_distance(a, b)
    assert type(d) is float
    assert 0.0 <= d <= 1.0
    assert d == pytest.approx(reference_hamming(a, b))
    assert d == hamming_distance(b, a)
    assert (d == 0.0) == (a == b)
    assert canonical_distance(a, b) == d  # the unchecked fast version: the same float
    wa, wb = wire_of(a), wire_of(b)
    assert wire_distance(wa, wb) == d  # on the compact forms: the same float again
    assert same_shape(wa, wb) == (len(a) == len(b) and len(a[0]) == len(b[0]))


@given(small_grids, st.data())
def test_prop_wire_distance_of_same_shapes_matches_the_grids(
    grid: tuple, data: st.DataObject
) -> None:
    cells = [list(row) for row in grid]
    for _ in range(data.draw(st.integers(0, 8))):
        r = data.draw(st.integers(0, len(cells) - 1))
        c = data.draw(st.integers(0, len(cells[0]) - 1))
        cells[r][c] = data.draw(st.integers(0, 9))
    other = tuple(tuple(row) for row in cells)
    assert wire_distance(wire_of(grid), wire_of(other)) == canonical_distance(grid, other)
    assert same_shape(wire_of(grid), wire_of(other))


@given(small_grids)
def test_prop_hamming_zero_on_self(grid: tuple) -> None:
    assert hamming_distance(grid, grid) == 0.0
    assert hamming_distance(grid, to_lists(grid)) == 0.0  # type: ignore[arg-type]


@given(small_grids, st.data())
def test_prop_hamming_single_change(grid: tuple, data: st.DataObject) -> None:
    r = data.draw(st.integers(0, len(grid) - 1))
    c = data.draw(st.integers(0, len(grid[0]) - 1))
    new = data.draw(st.integers(0, 9).filter(lambda v: v != grid[r][c]))
    rows = [list(row) for row in grid]
    rows[r][c] = new
    changed = to_grid(rows)
    expected = 1 / (len(grid) * len(grid[0]))
    assert hamming_distance(grid, changed) == pytest.approx(expected)


# --------------------------------------------------------------------- wire form


@pytest.mark.parametrize(
    "grid", [((0,),), ((1, 2, 3), (4, 5, 9)), tuple(tuple(range(10)) for _ in range(MAX_SIDE))]
)
def test_wire_round_trip(grid: tuple) -> None:
    wire = to_wire(grid)
    assert wire[0] == len(grid[0])
    assert from_wire(json.loads(json.dumps(wire))) == (grid, None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([2, "1\u00b2"], "cells other than the digits 0-9"),  # str.isdigit alone says yes
        ([2, "1\u0663"], "cells other than the digits 0-9"),  # Arabic-Indic three
        ([1, "a"], "cells other than the digits 0-9"),
        ([True, "1"], "not a [width, digits] pair"),
        ([1.0, "1"], "not a [width, digits] pair"),
        ([1, 1], "not a [width, digits] pair"),
        ([1, "1", 1], "not a [width, digits] pair"),
        ((1, "1"), "not a [width, digits] pair"),
        ([[1]], "not a [width, digits] pair"),
        ([0, ""], "bad shape: 0 cells in rows of 0"),
        ([2, "123"], "bad shape: 3 cells in rows of 2"),
        ([1, ""], "bad shape: 0 cells in rows of 1"),
        ([MAX_SIDE + 1, "0" * (MAX_SIDE + 1)], f"bad shape: {MAX_SIDE + 1} cells in rows of 101"),
        ([1, "0" * (MAX_SIDE + 1)], f"bad shape: {MAX_SIDE + 1} cells in rows of 1"),
        (None, "not a [width, digits] pair"),
    ],
)
def test_from_wire_rejections(value: object, expected: str) -> None:
    assert from_wire(value) == (None, expected)


def test_exact_grid_only_takes_grids_needing_no_conversion() -> None:
    assert exact_grid([[1, 2], [3, 4]]) == ((1, 2), (3, 4))
    assert exact_grid(((0,),)) == ((0,),)
    for value in ([[True]], [[1.0]], [[10]], [[1], [1, 2]], [], [[]], [[np.int64(1)]]):
        assert exact_grid(value) is None, value


def _reference_wire(value: object) -> tuple[object, object]:
    grid, reason = canonicalize(value)
    return (None, reason) if grid is None else (to_wire(grid), None)


@given(st.data(), small_grids)
def test_prop_canonical_wire_is_canonicalize_then_to_wire(data: st.DataObject, grid: tuple) -> None:
    value = data.draw(renderings(grid))
    assert canonical_wire(value) == _reference_wire(value) == (to_wire(grid), None)


@given(junk)
@settings(max_examples=300)
def test_prop_canonical_wire_agrees_on_junk(value: object) -> None:
    assert canonical_wire(value) == _reference_wire(value)


@pytest.mark.parametrize(
    "value",
    [[[True, 0]], [[256]], [[-1, 2]], [[10]], [[48]], [[1, 57]], [[1], [1, 2]], [[1.0]],
     [[1, 2], (3, 4)],
     [[0] * (MAX_SIDE + 1)], [[np.int64(3)]], [np.array([1, 2])], np.array([[1, 2]]),
     [[2**70]], [], [[]]],
)  # fmt: skip
def test_canonical_wire_off_the_fast_path(value: object) -> None:
    assert canonical_wire(value) == _reference_wire(value)


def test_canonical_wire_runs_no_code_of_the_program() -> None:
    class Sneaky(int):
        def __index__(self) -> int:
            raise AssertionError("called")

    class Cell:
        def __index__(self) -> int:
            raise AssertionError("called")

    assert canonical_wire([[Sneaky(3)]]) == _reference_wire([[Sneaky(3)]])
    assert canonical_wire([[Cell()]]) == (None, "unsupported cell type: Cell")
