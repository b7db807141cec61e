"""Neighbour tasks for retrieval: the baseline embedding, cosine top-k, embedding files."""

from __future__ import annotations

import io
import json
import math
import os
import random
import zipfile

import numpy as np
import pytest

from arcjudge.errors import InputError
from arcjudge.harness.dimensions import arrayfiles
from arcjudge.harness.dimensions.embeddings import (
    BASELINE_FEATURES,
    baseline_embedding,
    baseline_embeddings,
    nearest_neighbours,
    read_embeddings,
)
from arcjudge.tasks import Pair
from tests.support.helpers import deadline


def grid(*rows: str):
    return tuple(tuple(int(c) for c in row) for row in rows)


def feature(vector, name):
    return vector[BASELINE_FEATURES.index(name)]


def test_the_baseline_features_of_a_pair_are_what_they_say():
    # a 2x3 input with two objects (a 1-cell and a 2-cell one) doubled in width, mirrored
    pair = Pair(grid("100", "022"), grid("100001", "022220"))
    vector = baseline_embedding([pair])
    assert len(vector) == len(BASELINE_FEATURES)
    assert feature(vector, "log_height_ratio") == 0.0
    assert feature(vector, "log_width_ratio") == pytest.approx(math.log(2))
    assert feature(vector, "same_shape") == 0.0
    assert feature(vector, "changed_cells") == 1.0  # not the same shape
    assert feature(vector, "input_color_0") == pytest.approx(3 / 6)
    assert feature(vector, "input_color_2") == pytest.approx(2 / 6)
    assert feature(vector, "input_colors") == 3.0
    assert feature(vector, "input_objects") == pytest.approx(math.log1p(2))
    assert feature(vector, "output_objects") == pytest.approx(math.log1p(3))  # 1, 1, 2222
    assert feature(vector, "input_density") == pytest.approx(3 / 6)
    assert feature(vector, "output_mirror_lr") == 1.0 and feature(vector, "input_mirror_lr") == 0
    same = baseline_embedding([Pair(grid("12", "34"), grid("12", "35")), pair])
    assert feature(same, "same_shape") == 0.5  # the mean over the demonstrations
    assert feature(same, "changed_cells") == pytest.approx((1 / 4 + 1) / 2)
    with pytest.raises(ValueError):
        baseline_embedding([Pair(grid("1"), None)])


def brute_cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def test_nearest_neighbours_rank_by_cosine_with_ties_by_id():
    rng = random.Random(4)
    vectors = {f"t{i:02d}": [rng.uniform(-1, 1) for _ in range(6)] for i in range(30)}
    vectors["zero"] = [0.0] * 6
    vectors["twin_a"] = vectors["twin_b"] = [1.0, 2, 3, 4, 5, 6]
    found = nearest_neighbours(vectors, k=4)
    for task, vector in vectors.items():
        others = sorted(
            (t for t in vectors if t != task),
            key=lambda t: (-round(brute_cosine(vector, vectors[t]), 12), t),
        )
        assert found[task] == others[:4]
    assert found["twin_a"][0] == "twin_b"
    assert nearest_neighbours({}, 3) == {}
    with pytest.raises(ValueError):
        nearest_neighbours(vectors, 0)
    with pytest.raises(ValueError, match="lengths"):
        nearest_neighbours({"a": [1.0], "b": [1.0, 2.0]})


def test_standardizing_makes_scale_not_matter_and_constant_features_zero():
    tasks = {
        "small": [Pair(grid("1"), grid("1"))],
        "wide": [Pair(grid("1"), grid("11"))],
        "tall": [Pair(grid("1"), grid("1", "1"))],
    }
    vectors = baseline_embeddings({**tasks, "none": [Pair(grid("1"), None)]})
    assert sorted(vectors) == ["small", "tall", "wide"]
    matrix = np.array([vectors[t] for t in sorted(vectors)])
    for j, name in enumerate(BASELINE_FEATURES):
        column = matrix[:, j]
        if np.allclose(column, 0):
            continue
        assert column.mean() == pytest.approx(0, abs=1e-9), name
        assert column.std() == pytest.approx(1), name
    assert all(v == 0 for v in matrix[:, BASELINE_FEATURES.index("input_colors")])


def test_embedding_files_in_each_format(tmp_path):
    ids = ["a", "b", "c"]
    rows = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]
    npz = tmp_path / "e.npz"
    np.savez(npz, task_ids=np.array(ids), vectors=np.array(rows))
    npy = tmp_path / "e.npy"
    np.save(npy, np.array(rows))
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text("".join(json.dumps({"task_id": f"{t}.json", "embedding": r}) + "\n"
                             for t, r in zip(ids, rows, strict=True)))  # fmt: skip
    want = dict(zip(ids, rows, strict=True))
    assert read_embeddings(npz) == want
    assert read_embeddings(npy, ids) == want
    assert read_embeddings(jsonl) == want
    assert nearest_neighbours(read_embeddings(npz), 1) == {"a": ["b"], "b": ["a"], "c": ["b"]}
    bad_cases = {
        "short.npy": (lambda p: np.save(p, np.array(rows[:2])), "one row per task"),
        "objects.npy": (lambda p: np.save(p, np.array([{"a": 1}], dtype=object)), "numeric"),
        "nan.npz": (
            lambda p: np.savez(p, task_ids=np.array(ids), vectors=np.array([[1, math.nan]] * 3)),
            "finite",
        ),
        "keys.npz": (lambda p: np.savez(p, ids=np.array(ids)), "task_ids"),
        "twice.jsonl": (
            lambda p: p.write_text('{"task_id": "a", "embedding": [1]}\n' * 2),
            "twice",
        ),
        "ragged.jsonl": (
            lambda p: p.write_text(
                '{"task_id": "a", "embedding": [1]}\n{"task_id": "b", "embedding": [1, 2]}\n'
            ),
            "lengths",
        ),
        "text.jsonl": (lambda p: p.write_text('{"task_id": "a", "embedding": ["x"]}\n'), ":1:"),
        "missing.npz": (lambda p: None, "no such file"),
    }
    for name, (write, message) in bad_cases.items():
        path = tmp_path / name
        write(path)
        with pytest.raises(InputError, match=message):
            read_embeddings(path, ids)


def _npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    """A .npy header (version 1.0) declaring ``shape`` of ``dtype``, with no data after it."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return out.getvalue()


def test_an_object_array_is_bad_input_naming_the_file_and_array(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, task_ids=np.array(["a", {"b": 1}], dtype=object), vectors=np.eye(2))
    with pytest.raises(InputError) as exc:  # nothing is unpickled
        read_embeddings(path)
    message = str(exc.value)
    assert str(path) in message and "'task_ids'" in message and "pickle" in message


def test_a_header_declaring_4_gib_is_refused_before_any_data_is_read(tmp_path):
    lying = _npy_header((1 << 29, 1))  # 4 GiB of float64 declared, no data
    npy = tmp_path / "bomb.npy"
    npy.write_bytes(lying)
    with pytest.raises(InputError, match=r"refused: its header declares 4,294,967,296 bytes"):
        read_embeddings(npy, ["a"])
    npz = tmp_path / "bomb.npz"
    with zipfile.ZipFile(npz, "w") as archive:
        archive.writestr("task_ids.npy", _npy_header((1,), "<U1") + "a".encode("utf-32-le"))
        archive.writestr("vectors.npy", lying)
    with pytest.raises(InputError, match=r"array 'vectors': refused: its header declares"):
        read_embeddings(npz)


def test_members_declaring_more_than_the_cap_are_never_inflated(tmp_path, monkeypatch):
    # 8 MiB of zeros packs to a few KiB: over a 1 MiB cap by the zip directory alone.
    path = tmp_path / "zeros.npz"
    np.savez_compressed(path, task_ids=np.array(["a"]), vectors=np.zeros((1, 1 << 20)))
    assert path.stat().st_size < 64 << 10
    monkeypatch.setattr(arrayfiles, "ARRAY_FILE_BYTES", 1 << 20)
    opened: list[str] = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(
        zipfile.ZipFile,
        "open",
        lambda self, name, *a, **k: opened.append(name) or real_open(self, name, *a, **k),
    )
    with pytest.raises(InputError, match=r"refused: its members declare 8,388,[0-9,]+ bytes"):
        read_embeddings(path)
    assert opened == []
    monkeypatch.setattr(arrayfiles, "ARRAY_FILE_BYTES", 16 << 20)
    assert len(read_embeddings(path)["a"]) == 1 << 20


def test_a_fifo_or_a_device_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "e.npz"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(InputError, match=r"refused: not a regular file \(a FIFO\)"):
        read_embeddings(fifo)
    zero = tmp_path / "z.npy"
    zero.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"refused: not a regular file \(a character device\)"):
        read_embeddings(zero, ["a"])
