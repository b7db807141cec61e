"""Reading ARC task files, Kaggle-style files and ARC-GEN pair lists."""

from __future__ import annotations

import json
import os

import pytest

from arcjudge import cli
from arcjudge import tasks as tasks_module
from arcjudge.tasks import TaskFormatError, load_arcgen_pairs, load_task, task_files
from tests.support.helpers import deadline


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_arc_task_and_kaggle_arcgen_key(tmp_path):
    pair = {"input": [[1]], "output": [[2]]}
    task = load_task(
        write(tmp_path, "t1.json", {"train": [pair], "test": [pair], "arc-gen": [pair] * 3})
    )
    assert task.task_id == "t1" and task.train[0].output == ((2,),) and len(task.arc_gen) == 3


def test_test_pairs_may_lack_outputs(tmp_path):
    task = load_task(write(tmp_path, "t.json", {"train": [], "test": [{"input": [[1]]}]}))
    assert task.test[0].output is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "not an ARC task"),
        ({"train": {}, "test": []}, "train is not a list"),
        ({"train": [{"output": [[1]]}], "test": []}, "not an {input, output} pair"),
        ({"train": [{"input": [[1]]}], "test": []}, "has no output"),
        (
            {"train": [{"input": [[10]], "output": [[1]]}], "test": []},
            "train[0].input is not a grid",
        ),
        ({"train": [{"input": [[1], [1, 2]], "output": [[1]]}], "test": []}, "ragged"),
    ],
)
def test_bad_files_raise_one_line_errors(tmp_path, data, message):
    with pytest.raises(TaskFormatError, match=None) as exc:
        load_task(write(tmp_path, "bad.json", data))
    assert message in str(exc.value) and "bad.json" in str(exc.value)


def test_arcgen_pairs_and_directories(tmp_path):
    path = write(tmp_path, "x.json", [{"input": [[1]], "output": [[1]]}] * 4)
    assert len(load_arcgen_pairs(path)) == 4
    with pytest.raises(TaskFormatError, match="no such directory"):
        task_files(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskFormatError, match=r"no \*\.json"):
        task_files(tmp_path / "empty")


def test_real_training_tasks_load(shared_data):
    files = task_files(shared_data / "arc-agi-1" / "training")
    assert len(files) == 400
    task = load_task(files[0])
    assert task.task_id == "007bbfb7" and len(task.train) == 5
    pairs = load_arcgen_pairs(shared_data / "arc-gen-100k" / "007bbfb7.json")
    assert len(pairs) > 100


def test_every_arcgen_file_loads_including_grids_over_30(shared_data):
    sizes = []
    for path in sorted((shared_data / "arc-gen-100k").glob("*.json")):
        for pair in load_arcgen_pairs(path):
            sizes.append(max(len(pair.input), len(pair.input[0])))
    assert len(sizes) == 100_000 and max(sizes) > 30


TASK = {"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[3]]}]}


def test_a_fifo_or_a_device_among_task_files_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(TaskFormatError, match=r"fifo.json: refused: .*a FIFO"):
        load_task(fifo)
    with deadline(10), pytest.raises(TaskFormatError, match=r"refused: .*a FIFO"):
        load_arcgen_pairs(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with deadline(10), pytest.raises(TaskFormatError, match=r"zero.json: refused: .*device"):
        load_task(zero)
    linked = tmp_path / "linked.json"  # a symlink to a regular task file is followed
    linked.symlink_to(write(tmp_path, "real.json", TASK))
    assert load_task(linked).task_id == "linked"


def test_a_task_file_over_the_cap_is_refused_saying_the_cap(tmp_path, monkeypatch):
    path = write(tmp_path, "big.json", TASK)
    monkeypatch.setattr(tasks_module, "TASK_FILE_BYTES", 16)
    with pytest.raises(TaskFormatError, match=r"big.json: refused: larger than 16 bytes"):
        load_task(path)


def test_json_nested_too_deeply_is_a_one_line_error(tmp_path, capsys):
    deep = tmp_path / "tasks"
    deep.mkdir()
    (deep / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(TaskFormatError, match=r"deep.json: not valid JSON \(nested too deeply\)"):
        load_task(deep / "deep.json")
    with pytest.raises(TaskFormatError, match="nested too deeply"):
        load_arcgen_pairs(deep / "deep.json")
    argv = ["validate", "--tasks", str(deep), "--source", f"m=module:{tmp_path}",
            "--out", str(tmp_path / "out"), "--backend", "process", "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcjudge: error: ") and "deep.json" in err and "nested too deeply" in err
    assert err.count("\n") == 1 and "Traceback" not in err
