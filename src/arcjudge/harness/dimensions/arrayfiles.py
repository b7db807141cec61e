"""Numeric arrays from ``.npy`` and ``.npz`` files a third party made, checked before reading.

An embeddings file comes from elsewhere, and numpy would read what it declares: a 1 MiB
``.npz`` whose member inflates to 4 GiB is read whole, an array of Python objects needs
pickle (``allow_pickle=False`` refuses it, with a ``ValueError`` that names nothing). So:

- the file is opened by the rule for untrusted paths (a regular file, symlinks followed,
  at most ``max_bytes``);
- in an ``.npz``, every member's declared uncompressed size (the zip directory) must fit,
  in all at most ``max_bytes``, before any member is inflated;
- each array's header (shape and dtype: ``numpy.lib.format``) is read first: an object
  dtype is refused (nothing is unpickled), and so is a shape whose bytes (elements x item
  size) would take the arrays read past ``max_bytes``; only then is the array read,
  ``allow_pickle=False``.

Every refusal is an :class:`~arcjudge.errors.InputError` naming the file and the array.
"""

from __future__ import annotations

import math
import os
import zipfile
from typing import IO, TYPE_CHECKING, Any

from arcjudge.errors import InputError
from arcjudge.sandbox.runtime.untrusted_files import RefusedPath, open_regular

if TYPE_CHECKING:  # numpy is imported where it is used: most commands never need it
    from numpy.typing import NDArray

__all__ = ["ARRAY_FILE_BYTES", "read_npy", "read_npz"]

ARRAY_FILE_BYTES = 1 << 30
"""The most an array file may hold, packed and unpacked (1 GiB: 400 tasks x 4,096
float64 dimensions is 13 MiB)."""


def _open(path: os.PathLike[str] | str, max_bytes: int) -> IO[bytes]:
    try:
        return open_regular(os.path.realpath(path), max_bytes=max_bytes)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except RefusedPath as exc:
        raise InputError(f"{path}: refused: {exc.reason}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def _array(fp: IO[bytes], where: str, budget: int) -> tuple[NDArray[Any], int]:
    """The array at ``fp`` (checked by its header first) and the bytes it took."""
    import numpy as np

    fmt: Any = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, _, dtype = fmt.read_array_header_2_0(fp)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"{where}: not a .npy array ({exc})") from None
    if dtype.hasobject:
        raise InputError(
            f"{where}: not a numeric array: an array of Python objects (reading it needs pickle)"
        )
    size = math.prod(shape) * dtype.itemsize
    if size > budget:
        raise InputError(
            f"{where}: refused: its header declares {size:,} bytes ({'x'.join(map(str, shape))} "
            f"of {dtype.itemsize}-byte {dtype}; at most {budget:,} more are read)"
        )
    try:
        fp.seek(0)
        array = fmt.read_array(fp, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"{where}: not a readable .npy array ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise InputError(f"{where}: not a .npy array")
    return array, size


def read_npy(path: os.PathLike[str] | str, max_bytes: int | None = None) -> NDArray[Any]:
    """The array of a ``.npy`` file (see the module docstring).

    Args:
        path: The file.
        max_bytes: Its size on disk and the array's are each at most this (``None``:
            :data:`ARRAY_FILE_BYTES`).

    Raises:
        InputError: Missing, not a regular file, too large (declared or on disk), an
            object array, or not a ``.npy`` array.
    """
    max_bytes = ARRAY_FILE_BYTES if max_bytes is None else max_bytes
    with _open(path, max_bytes) as fh:
        return _array(fh, str(path), max_bytes)[0]


def read_npz(
    path: os.PathLike[str] | str, names: tuple[str, ...], max_bytes: int | None = None
) -> dict[str, NDArray[Any]]:
    """The arrays ``names`` of a ``.npz`` file (see the module docstring).

    Args:
        path: The file.
        names: The arrays wanted (members ``<name>.npy``); each must be there.
        max_bytes: The file's size on disk, the members' declared uncompressed sizes and
            the arrays read are each at most this (``None``: :data:`ARRAY_FILE_BYTES`).

    Raises:
        InputError: Missing, not a regular file, not a zip of arrays, an array missing,
            too large (declared or read), or an object array (naming the array).
    """
    max_bytes = ARRAY_FILE_BYTES if max_bytes is None else max_bytes
    with _open(path, max_bytes) as fh:
        try:
            archive = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise InputError(f"{path}: not a numeric array file ({exc})") from None
        with archive:
            members = archive.infolist()
            declared = sum(m.file_size for m in members)
            if declared > max_bytes:
                raise InputError(
                    f"{path}: refused: its members declare {declared:,} bytes uncompressed "
                    f"(at most {max_bytes:,})"
                )
            present = {m.filename for m in members}
            missing = [n for n in names if f"{n}.npy" not in present]
            if missing:
                raise InputError(f"{path}: needs arrays {', '.join(map(repr, names))}")
            arrays: dict[str, NDArray[Any]] = {}
            budget = max_bytes
            for name in names:
                with archive.open(f"{name}.npy") as member:
                    arrays[name], size = _array(member, f"{path}: array {name!r}", budget)
                budget -= size
    return arrays
