"""Neighbour tasks for ``retrieval`` candidates: task embeddings and cosine top-k.

A ``retrieval`` candidate is a demonstration of a *neighbouring* task (a similar-looking
task with another rule). The neighbours come from one of:

* ``--neighbours FILE``: given outright (JSONL ``{task_id, neighbour_task_ids}``);
* ``--embeddings FILE``: task id -> vector, computed elsewhere (e.g. V-ARC task
  embeddings), read by :func:`read_embeddings`: ``.npz`` (arrays ``task_ids`` and
  ``vectors``, one row per id), ``.npy`` (a 2-D array, one row per task file of
  ``--tasks`` in sorted id order) or JSONL (``{"task_id", "embedding": [numbers]}``);
  array files are checked before they are read (``arrayfiles``: no object arrays, at
  most 1 GiB declared);
* neither: :func:`baseline_embedding`, computed here from each task's demonstrations
  alone (below).

:func:`nearest_neighbours` ranks every other task by cosine similarity (ties by task id)
and keeps the top ``k``.

The baseline embedding is the mean over a task's demonstration pairs of cheap features
(:data:`BASELINE_FEATURES`, in order): how the output's height and width relate to the
input's (log ratios, same shape), the colors of input and output (the share of cells of
each of the ten colors, how many colors), the share of cells that change (same shape
only), the number of 4-connected non-zero objects (log), the share of non-zero cells,
and whether the grids are left-right or top-bottom mirror symmetric. Each feature is then
standardized over the task set (zero mean, unit variance; a constant feature is 0), so
no feature dominates by its scale. It knows nothing of a task's rule; it only makes tasks
that *look* alike neighbours, which is what a retrieval distractor needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arcjudge.errors import InputError
from arcjudge.grids import Grid
from arcjudge.harness.core.jsonl import read_records
from arcjudge.harness.dimensions.arrayfiles import read_npy, read_npz
from arcjudge.tasks import Pair

if TYPE_CHECKING:  # numpy is imported where it is used: most commands never need it
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "BASELINE_FEATURES",
    "DEFAULT_NEIGHBOURS",
    "baseline_embedding",
    "baseline_embeddings",
    "nearest_neighbours",
    "read_embeddings",
]

DEFAULT_NEIGHBOURS = 5
"""Neighbours kept per task (``k``)."""

BASELINE_FEATURES: tuple[str, ...] = (
    "log_height_ratio",
    "log_width_ratio",
    "same_shape",
    *(f"input_color_{c}" for c in range(10)),
    *(f"output_color_{c}" for c in range(10)),
    "input_colors",
    "output_colors",
    "changed_cells",
    "input_objects",
    "output_objects",
    "input_density",
    "output_density",
    "input_mirror_lr",
    "input_mirror_tb",
    "output_mirror_lr",
    "output_mirror_tb",
)
"""The baseline embedding's features, in vector order."""


def _objects(grid: Grid) -> int:
    """4-connected components of non-zero cells (any color: same-colored neighbours)."""
    height, width = len(grid), len(grid[0])
    seen = [[False] * width for _ in range(height)]
    count = 0
    for r in range(height):
        for c in range(width):
            if grid[r][c] == 0 or seen[r][c]:
                continue
            count += 1
            color, stack = grid[r][c], [(r, c)]
            seen[r][c] = True
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    if 0 <= ny < height and 0 <= nx < width and not seen[ny][nx]:
                        if grid[ny][nx] == color:
                            seen[ny][nx] = True
                            stack.append((ny, nx))
    return count


def _colors(grid: Grid) -> list[float]:
    cells = [v for row in grid for v in row]
    return [cells.count(c) / len(cells) for c in range(10)]


def _grid_features(grid: Grid) -> tuple[list[float], float, float, float, float, float]:
    shares = _colors(grid)
    mirror_lr = float(all(row == row[::-1] for row in grid))
    mirror_tb = float(grid == grid[::-1])
    return (
        shares,
        float(sum(s > 0 for s in shares)),
        math.log1p(_objects(grid)),
        1.0 - shares[0],
        mirror_lr,
        mirror_tb,
    )


def _pair_features(pair: Pair) -> list[float]:
    grid_in, grid_out = pair.input, pair.output
    assert grid_out is not None
    same = len(grid_in) == len(grid_out) and len(grid_in[0]) == len(grid_out[0])
    changed = 1.0
    if same:
        cells = len(grid_in) * len(grid_in[0])
        changed = sum(a != b for ra, rb in zip(grid_in, grid_out, strict=True)
                      for a, b in zip(ra, rb, strict=True)) / cells  # fmt: skip
    colors_in, n_in, objects_in, density_in, lr_in, tb_in = _grid_features(grid_in)
    colors_out, n_out, objects_out, density_out, lr_out, tb_out = _grid_features(grid_out)
    return [
        math.log(len(grid_out) / len(grid_in)),
        math.log(len(grid_out[0]) / len(grid_in[0])),
        float(same),
        *colors_in,
        *colors_out,
        n_in,
        n_out,
        changed,
        objects_in,
        objects_out,
        density_in,
        density_out,
        lr_in,
        tb_in,
        lr_out,
        tb_out,
    ]


def baseline_embedding(demonstrations: Sequence[Pair]) -> list[float]:
    """The unstandardized baseline features of a task: the mean over its demonstrations.

    Raises:
        ValueError: No demonstration with an output.
    """
    rows = [_pair_features(p) for p in demonstrations if p.output is not None]
    if not rows:
        raise ValueError("no demonstration with an output")
    return [sum(column) / len(rows) for column in zip(*rows, strict=True)]


def baseline_embeddings(tasks: Mapping[str, Sequence[Pair]]) -> dict[str, list[float]]:
    """:func:`baseline_embedding` of every task, standardized over them (see the module).

    Tasks without a demonstration output are left out.
    """
    import numpy as np

    raw: dict[str, list[float]] = {}
    for task_id in sorted(tasks):
        try:
            raw[task_id] = baseline_embedding(tasks[task_id])
        except ValueError:
            continue
    if not raw:
        return {}
    matrix = np.array([raw[t] for t in raw], dtype=np.float64)
    spread = matrix.std(axis=0)
    standard = np.where(
        spread > 0, (matrix - matrix.mean(axis=0)) / np.where(spread > 0, spread, 1), 0.0
    )
    return {task_id: [float(v) for v in standard[i]] for i, task_id in enumerate(raw)}


def nearest_neighbours(
    vectors: Mapping[str, Sequence[float] | NDArray[np.float64]], k: int = DEFAULT_NEIGHBOURS
) -> dict[str, list[str]]:
    """Each task's ``k`` most cosine-similar other tasks, most similar first.

    Ties are broken by task id; a zero vector is similar to nothing (similarity 0).

    Raises:
        ValueError: ``k`` is not positive, or the vectors differ in length.
    """
    import numpy as np

    if k < 1:
        raise ValueError("k must be >= 1")
    ids = sorted(vectors)
    if not ids:
        return {}
    lengths = {len(vectors[t]) for t in ids}
    if len(lengths) != 1:
        raise ValueError(f"embeddings of different lengths: {sorted(lengths)}")
    matrix = np.array([np.asarray(vectors[t], dtype=np.float64) for t in ids])
    norms = np.linalg.norm(matrix, axis=1)
    unit = matrix / np.where(norms > 0, norms, 1.0)[:, None]
    similarity = unit @ unit.T
    result: dict[str, list[str]] = {}
    for i, task_id in enumerate(ids):
        ranked = sorted((j for j in range(len(ids)) if j != i),
                        key=lambda j: (-round(float(similarity[i, j]), 12), ids[j]))  # fmt: skip
        result[task_id] = [ids[j] for j in ranked[:k]]
    return result


def _vector(value: object, where: str) -> list[float]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: 'embedding' must be a non-empty list of numbers")
    numbers = []
    for v in value:
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
            raise ValueError(f"{where}: 'embedding' must be a non-empty list of numbers")
        numbers.append(float(v))
    return numbers


def read_embeddings(path: Path, task_ids: Iterable[str] = ()) -> dict[str, list[float]]:
    """Read task embeddings (formats in the module docstring).

    Args:
        path: ``.npz``, ``.npy`` or JSONL (any other suffix).
        task_ids: For ``.npy``: the task ids its rows are, in order (sorted ids of the
            task files).

    Raises:
        InputError: The file is missing or not of its format, an array file is refused
            (an object array, or over ``arrayfiles.ARRAY_FILE_BYTES`` declared), a vector
            is not finite numbers, the vectors differ in length, an id repeats, or
            ``.npy`` rows do not match the task ids.
    """
    import numpy as np

    suffix = path.suffix.lower()
    found: dict[str, list[float]] = {}
    if suffix in (".npz", ".npy"):
        if suffix == ".npz":  # headers and sizes checked before anything is read
            arrays = read_npz(path, ("task_ids", "vectors"))
            ids = [str(t) for t in arrays["task_ids"].tolist()]
            matrix = np.asarray(arrays["vectors"])
        else:
            ids, matrix = list(task_ids), np.asarray(read_npy(path))
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise InputError(
                f"{path}: {matrix.shape} vectors for {len(ids)} task ids (one row per task)"
            )
        if not np.issubdtype(matrix.dtype, np.number) or not np.all(np.isfinite(matrix)):
            raise InputError(f"{path}: vectors must be finite numbers")
        for task_id, row in zip(ids, matrix.tolist(), strict=True):
            if task_id in found:
                raise InputError(f"{path}: task {task_id!r} twice")
            found[task_id] = [float(v) for v in row]
        return found
    for number, (task_id, vector) in read_records(path, _embedding_line, "an embedding line"):
        if task_id in found:
            raise InputError(f"{path}:{number}: task {task_id!r} twice")
        found[task_id] = vector
    lengths = {len(v) for v in found.values()}
    if len(lengths) > 1:
        raise InputError(f"{path}: embeddings of different lengths {sorted(lengths)}")
    return found


def _embedding_line(data: Mapping[str, object]) -> tuple[str, list[float]]:
    task_id = data.get("task_id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise ValueError("'task_id' must be a non-empty string")
    name = task_id.strip()
    return (name[:-5] if name.endswith(".json") else name), _vector(data.get("embedding"), name)
