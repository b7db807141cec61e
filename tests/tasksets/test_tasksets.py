"""Task sets read and materialized: P-ARC's export (CSV, Parquet), task folders, entry points.

No sandbox here: readers and the materialized layout only (the commands on them are in
tests/tasksets/test_commands.py).
"""

from __future__ import annotations

import ast
import csv
import importlib
import json
import os
import sys
from importlib import resources
from pathlib import Path

import pytest

from arcjudge.errors import InputError
from arcjudge.harness.core.materialize import DESCRIPTION_FILE, materialize
from arcjudge.harness.dimensions.human_errors import load_human_errors
from arcjudge.tasks import load_task
from arcjudge.tasksets import detect_format, parc, read_task_set
from arcjudge.tasksets.entrypoints import (
    BY_NAME,
    MAX_SOURCE_BYTES,
    ONLY_PUBLIC_FUNCTION,
    EntryPointError,
    expose_entry_point,
    find_entry_point,
)
from arcjudge.tasksets.folders import read_task_folders
from arcjudge.tasksets.model import stable_pairs
from arcjudge.tasksets.parc import PARC_COLUMNS, read_parc
from arcjudge.vocabulary import VERIFIER_ENTRY_POINTS, TaskSetFormat

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures"))
import parc_export

from tests.support.helpers import deadline

EXAMPLE = Path(str(resources.files("arcjudge.data").joinpath("tasksets/example")))


def _top_level_names(source: bytes) -> set[str]:
    tree = ast.parse(source)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


# ---------------------------------------------------------------- entry points


@pytest.mark.parametrize(
    ("source", "function", "how"),
    [
        (b"def verify(g):\n    return g\n", "verify", BY_NAME),
        (b"def solve(g):\n    return g\ndef verify(g):\n    return g\n", "verify", BY_NAME),
        (b"p = lambda g: g\n", "p", BY_NAME),
        (b"from helpers import transform\n", "transform", BY_NAME),
        (
            b"def _h(g):\n    return g\n\ndef rule(g):\n    return _h(g)\n",
            "rule",
            ONLY_PUBLIC_FUNCTION,
        ),
        (
            b"import os\nX = 1\nclass K: pass\ndef rule(g):\n    return g\n",
            "rule",
            ONLY_PUBLIC_FUNCTION,
        ),
    ],
)
def test_the_entry_point_is_found_by_name_else_the_only_public_function(source, function, how):
    entry = find_entry_point(source, VERIFIER_ENTRY_POINTS)
    assert (entry.function, entry.how) == (function, how)
    exposed = expose_entry_point(source, entry)
    if how == BY_NAME:
        assert exposed == source and entry.exposed_as == function
    else:
        assert exposed.startswith(source) and entry.exposed_as == "verify"
        assert {"verify", function} <= _top_level_names(exposed)
        assert find_entry_point(exposed, VERIFIER_ENTRY_POINTS).how == BY_NAME


def test_an_alias_is_appended_after_a_source_without_a_final_newline():
    source = b"def rule(g):\n    return g"
    exposed = expose_entry_point(source, find_entry_point(source, ("generate",)))
    assert "generate" in _top_level_names(exposed)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"def verify(g)\n    return g\n", "does not parse (line 1"),
        (b"x = 1\x00\n", "does not parse"),
        (b"x = " + b"-" * 200_000 + b"1\n", "does not parse"),
        (b"x = " + b"(" * 500 + b")" * 500 + b"\n", "does not parse"),
        (b"X = 1\n", "defines none of verify, transform, solve, p and no public function"),
        (b"def _private(g):\n    return g\n", "no public function"),
        (b"def a(g):\n    return g\ndef b(g):\n    return g\n", "several public functions (a, b)"),
        (b"#" * (MAX_SOURCE_BYTES + 1), "too large"),
    ],
)
def test_a_source_without_a_findable_entry_point_is_a_clear_error(source, message):
    with pytest.raises(EntryPointError, match=message.replace("(", r"\(").replace(")", r"\)")):
        find_entry_point(source, VERIFIER_ENTRY_POINTS)


def test_entry_points_are_found_without_running_the_source(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\ndef rule(g):\n    return g\n".encode()
    find_entry_point(source, VERIFIER_ENTRY_POINTS)
    assert not marker.exists()


# ---------------------------------------------------------------- stable bundles


def test_a_stable_bundle_is_a_list_or_an_object_of_train_and_test_lists():
    pair = {"input": [[1]], "output": [[2]]}
    other = {"input": [[3]], "output": [[4]]}
    assert stable_pairs([pair, other], "s") == stable_pairs({"train": [pair], "test": [other]}, "s")
    assert len(stable_pairs({"train": [pair, other], "meta": 1}, "s")) == 2
    with pytest.raises(InputError, match="an object without train or test"):
        stable_pairs({"pairs": [pair]}, "s")
    with pytest.raises(InputError, match=r"s\.train\[0\] has no output"):
        stable_pairs({"train": [{"input": [[1]]}]}, "s")


# ---------------------------------------------------------------- P-ARC export


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("parc")
    good, bad = parc_export.good_rows(), parc_export.malformed_rows()
    return {
        "csv": parc_export.write_csv(root / "p-arc.csv", good),
        "parquet": parc_export.write_parquet(root / "p-arc.parquet", good),
        "bad_csv": parc_export.write_csv(root / "bad.csv", good + bad),
        "bad_parquet": parc_export.write_parquet(root / "bad.parquet", good + bad),
    }


def test_the_fixture_has_exactly_the_published_columns(exports):
    with exports["csv"].open(encoding="utf-8", newline="") as fh:
        assert tuple(next(csv.reader(fh))) == PARC_COLUMNS == parc_export.COLUMNS


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_parc_export_is_read_row_by_row(exports, kind):
    task_set = read_parc(exports[kind])
    assert task_set.format is (
        TaskSetFormat.P_ARC_CSV if kind == "csv" else TaskSetFormat.P_ARC_PARQUET
    )
    assert task_set.left_out == ()
    by_id = {e.task_id: e for e in task_set.entries}
    assert sorted(by_id) == ["p1", "p2", "p3", "p4"]
    for task_id, rule in parc_export.RULES.items():
        entry = by_id[task_id]
        assert (len(entry.task.train), len(entry.task.test), len(entry.task.arc_gen)) == (3, 1, 50)
        for pair in (*entry.task.train, *entry.task.test, *entry.task.arc_gen):
            assert [list(r) for r in pair.output] == rule([list(r) for r in pair.input])
        assert entry.verifier is not None
    p2 = by_id["p2"]
    assert (p2.verifier.entry.function, p2.verifier.entry.how) == (
        "solve_transpose",
        ONLY_PUBLIC_FUNCTION,
    )
    assert p2.generator.entry.to_json() == {
        "function": "make_transpose_pair",
        "exposed_as": "generate",
        "how": ONLY_PUBLIC_FUNCTION,
    }
    assert by_id["p1"].generator.data == parc_export.GENERATORS["p1"].encode()
    assert by_id["p4"].generator is None and by_id["p4"].verifier.entry.function == "p"


def test_csv_and_parquet_of_the_same_rows_read_alike(exports):
    a, b = read_parc(exports["csv"]), read_parc(exports["parquet"])
    assert a.entries == b.entries and a.sha256 != b.sha256


@pytest.mark.parametrize("kind", ["bad_csv", "bad_parquet"])
def test_malformed_rows_are_left_out_one_clear_reason_each(exports, kind):
    task_set = read_parc(exports[kind])
    assert [e.task_id for e in task_set.entries] == ["loads-badly", "p1", "p2", "p3", "p4"]
    reasons = {item.task_id: item for item in task_set.left_out}
    assert sorted(reasons) == ["bad-entry", "bad-grid", "bad-json", "bad-verifier", "p2"]
    assert [item.where for item in task_set.left_out] == [
        "row 5",
        "row 6",
        "row 7",
        "row 8",
        "row 10",
    ]
    expected = {
        "bad-json": "train_demonstrations_json: not valid JSON",
        "bad-grid": "test[0].input is not a grid",
        "bad-verifier": "verifier: does not parse (line 1",
        "bad-entry": "verifier: no entry point: defines none of verify, transform, solve, p and "
        "several public functions (rotate, flip)",
        "p2": "task id repeats an earlier row's",
    }
    for task_id, text in expected.items():
        assert reasons[task_id].message.startswith(
            f"{reasons[task_id].where} (task {task_id}): {text}"
        )
    # the first p2 (its own verifier) is the one kept
    p2 = next(e for e in task_set.entries if e.task_id == "p2")
    assert p2.verifier.entry.function == "solve_transpose"


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_missing_column_is_an_error_for_the_whole_file(tmp_path, kind):
    columns = tuple(c for c in PARC_COLUMNS if c != "verifier_py")
    write = parc_export.write_csv if kind == "csv" else parc_export.write_parquet
    path = write(tmp_path / f"x.{kind}", parc_export.good_rows(), columns)
    with pytest.raises(InputError, match="not a P-ARC export: no column verifier_py"):
        read_parc(path)


def test_csv_rows_with_too_few_cells_and_empty_ids_are_left_out(tmp_path):
    path = parc_export.write_csv(
        tmp_path / "x.csv", [parc_export.row("p1"), parc_export.row("p3") | {"task_id": " "}]
    )
    with path.open("a", encoding="utf-8") as fh:
        fh.write("p9,[]\n")
    task_set = read_parc(path)
    assert [e.task_id for e in task_set.entries] == ["p1"]
    assert [i.message for i in task_set.left_out] == [
        "row 2: task_id: empty",
        "row 3: 2 cells, the header has 7",
    ]


def test_a_csv_with_a_bom_and_huge_cells_is_read(tmp_path):
    limit = csv.field_size_limit()
    big = parc_export.row("p1")
    pairs = [{"input": [[1] * 30] * 30, "output": [[1] * 30] * 30}] * 200  # ~ 400 KB cell
    big["stable_instances_50_json"] = json.dumps(pairs)
    path = tmp_path / "bom.csv"
    parc_export.write_csv(path, [big])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (entry,) = read_parc(path).entries
    assert len(entry.task.arc_gen) == 200
    assert csv.field_size_limit() == limit  # put back


def test_parquet_without_pyarrow_says_what_to_install(exports, monkeypatch):
    real = importlib.import_module

    def no_pyarrow(name, *args):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_pyarrow)
    with pytest.raises(InputError, match=r"needs pyarrow: pip install 'arcjudge\[parquet\]'"):
        read_parc(exports["parquet"])


def test_files_that_are_not_exports_are_clear_errors(tmp_path):
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    (tmp_path / "x.csv").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        read_parc(tmp_path / "x.parquet")
    with pytest.raises(InputError, match="not UTF-8"):
        read_parc(tmp_path / "x.csv")
    with pytest.raises(InputError, match="empty"):
        read_parc(tmp_path / "empty.csv")
    with pytest.raises(InputError, match="no such file"):
        read_parc(tmp_path / "missing.csv")


# ---------------------------------------------------------------- task folders and detection


def test_the_example_set_is_read_as_task_folders():
    task_set = read_task_set(EXAMPLE)
    assert task_set is not None and task_set.format is TaskSetFormat.TASK_FOLDERS
    assert task_set.left_out == ()
    by_id = {e.task_id: e for e in task_set.entries}
    assert sorted(by_id) == ["frame", "mirror", "recolor"]
    assert by_id["recolor"].verifier.entry.function == "recolor_blue"
    assert by_id["recolor"].generator.entry.function == "make_pair"
    assert len(by_id["frame"].task.arc_gen) == 10  # its task.json's own arc-gen key
    assert len(by_id["mirror"].task.arc_gen) == 10  # its stable.json
    assert by_id["frame"].human_errors is None and len(by_id["mirror"].human_errors) == 2


def test_bad_folders_are_left_out_and_the_rest_read(tmp_path):
    for name in ("good", "no-task", "bad-stable", "bad-errors", ".hidden"):
        (tmp_path / name).mkdir()
    task = (EXAMPLE / "mirror" / "task.json").read_text()
    for name in ("good", "bad-stable", "bad-errors", ".hidden"):
        (tmp_path / name / "task.json").write_text(task)
    (tmp_path / "bad-stable" / "stable.json").write_text('[{"input": [[1]]}]')
    (tmp_path / "bad-errors" / "human_errors.json").write_text('{"output": [[1]]}')
    (tmp_path / "no-task" / "verifier.py").write_text("def verify(g):\n    return g\n")
    task_set = read_task_folders(tmp_path)
    assert [e.task_id for e in task_set.entries] == ["good"]
    assert [i.message for i in task_set.left_out] == [
        "folder bad-errors: human errors: not a list of wrong outputs",
        "folder bad-stable: stable[0] has no output",
        "folder no-task: no task.json",
    ]


def test_formats_are_told_apart(tmp_path, exports):
    with pytest.raises(InputError, match="no such file or directory"):
        detect_format(tmp_path / "nothing")
    (tmp_path / "arc").mkdir()
    (tmp_path / "arc" / "a.json").write_text("{}")
    assert detect_format(tmp_path / "arc") is TaskSetFormat.ARC_JSON
    assert read_task_set(tmp_path / "arc") is None
    assert detect_format(EXAMPLE) is TaskSetFormat.TASK_FOLDERS
    assert detect_format(exports["csv"]) is TaskSetFormat.P_ARC_CSV
    assert detect_format(exports["parquet"]) is TaskSetFormat.P_ARC_PARQUET
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no task folders"):
        detect_format(tmp_path / "empty")
    with pytest.raises(InputError, match="not a task set"):
        detect_format(tmp_path / "arc" / "a.json")


def test_hostile_files_in_task_folders_leave_their_folder_out(tmp_path):
    # A FIFO task.json is refused at once (never waited on), a verifier.py linked out of
    # the set is refused (another team's file), a link inside the set is read.
    root, elsewhere = tmp_path / "set", tmp_path / "elsewhere"
    for name in ("good", "fifo", "thief", "alias"):
        (root / name).mkdir(parents=True)
    elsewhere.mkdir()
    task = (EXAMPLE / "mirror" / "task.json").read_text()
    for name in ("good", "thief", "alias"):
        (root / name / "task.json").write_text(task)
    os.mkfifo(root / "fifo" / "task.json")
    (elsewhere / "verifier.py").write_text("def verify(g):\n    return g\n")
    (root / "thief" / "verifier.py").symlink_to(elsewhere / "verifier.py")
    (root / "good" / "verifier.py").write_text("def verify(g):\n    return g[::-1]\n")
    (root / "alias" / "verifier.py").symlink_to("../good/verifier.py")
    with deadline(10):
        task_set = read_task_folders(root)
    assert [e.task_id for e in task_set.entries] == ["alias", "good"]
    reasons = {i.task_id: i.message for i in task_set.left_out}
    assert "task.json: refused: not a regular file (a FIFO)" in reasons["fifo"]
    assert "verifier.py: refused: a symlink out of its directory" in reasons["thief"]


def test_a_hostile_export_is_refused(tmp_path, monkeypatch):
    fifo = tmp_path / "export.csv"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(InputError, match=r"export.csv: refused: .*a FIFO"):
        read_parc(fifo)
    with pytest.raises(InputError, match="not a directory or a regular file"):
        detect_format(fifo)
    # A Parquet file whose row groups declare more than the cap uncompressed: refused
    # before pyarrow inflates them (4 MiB of one character packs to a few KiB).
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    cells = {column: ["x"] for column in PARC_COLUMNS}
    cells["verifier_py"] = ["#" * (4 << 20)]
    bomb = tmp_path / "bomb.parquet"
    pq.write_table(pa.table(cells), bomb, compression="gzip")
    assert bomb.stat().st_size < 64 << 10
    monkeypatch.setattr(parc, "EXPORT_BYTES", 1 << 20)
    with pytest.raises(InputError, match=r"bomb.parquet: refused: its columns inflate to 4,"):
        read_parc(bomb)
    monkeypatch.setattr(parc, "EXPORT_BYTES", 8 << 20)
    assert read_parc(bomb).left_out  # read (its one row is not a task)


# ---------------------------------------------------------------- materialized


def test_a_set_is_materialized_once_as_what_the_workflows_read(tmp_path, exports):
    task_set = read_parc(exports["bad_csv"])
    made = materialize(task_set, tmp_path / "taskset")
    assert made.written and made.root.parent == (tmp_path / "taskset").resolve()
    assert sorted(p.name for p in made.tasks_dir.iterdir()) == [
        f"{t}.json" for t in ("loads-badly", "p1", "p2", "p3", "p4")
    ]
    p3 = load_task(made.tasks_dir / "p3.json")
    assert p3.arc_gen == next(e.task for e in task_set.entries if e.task_id == "p3").arc_gen
    assert len(p3.arc_gen) == 50 and p3.test[0].output is not None
    assert sorted(p.name for p in made.verifiers_dir.iterdir()) == [
        f"{t}.py" for t in ("loads-badly", "p1", "p2", "p3", "p4")
    ]
    generators = sorted(p.name for p in (made.generators_dir / "tasks").iterdir())
    assert generators == ["task_loads-badly.py", "task_p1.py", "task_p2.py", "task_p3.py"]
    p2 = (made.verifiers_dir / "p2.py").read_bytes()
    assert p2.startswith(parc_export.VERIFIERS["p2"].encode()) and "verify" in _top_level_names(p2)
    assert made.human_errors_file is None
    description = json.loads((made.root / DESCRIPTION_FILE).read_text())
    assert description["counts"] == {
        "tasks": 5,
        "left_out": 5,
        "with_verifier": 5,
        "with_generator": 4,
        "with_stable_pairs": 5,
        "with_human_errors": 0,
    }
    assert [i["task_id"] for i in description["left_out"]] == [
        "bad-json",
        "bad-grid",
        "bad-verifier",
        "bad-entry",
        "p2",
    ]
    assert description["tasks"]["p2"]["generator"]["function"] == "make_transpose_pair"
    assert (
        made.root.stat().st_mode & 0o777,
        (made.root / DESCRIPTION_FILE).stat().st_mode & 0o777,
    ) == (0o700, 0o600)
    again = materialize(read_parc(exports["bad_csv"]), tmp_path / "taskset")
    assert (again.root, again.written) == (made.root, False)
    other = materialize(read_parc(exports["csv"]), tmp_path / "taskset")
    assert other.root != made.root and other.root.parent == made.root.parent


def test_the_example_sets_human_errors_are_a_human_errors_json(tmp_path):
    made = materialize(read_task_folders(EXAMPLE), tmp_path)
    errors = load_human_errors(made.human_errors_file)
    assert errors.skipped == []
    assert sorted(errors.by_task) == ["mirror", "recolor"]
    assert [count for _, count in errors.by_task["recolor"]] == [3, 1]


def test_arc_json_directories_in_use_are_read_as_they_are(shared_data, tmp_path):
    for name in ("arc-agi-1/training", "arc-agi-2/training", "arc-agi-2/evaluation"):
        assert detect_format(shared_data / name) is TaskSetFormat.ARC_JSON
    kaggle = tmp_path / "kaggle"
    kaggle.mkdir()
    pair = {"input": [[1]], "output": [[2]]}
    (kaggle / "k.json").write_text(json.dumps({"train": [pair], "test": [pair], "arc-gen": [pair]}))
    assert read_task_set(kaggle) is None
