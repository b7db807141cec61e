"""Module-directory files compiled once per supervisor, not per program (standard library).

A fresh program process imports its module directories' files from source: the sandbox
writes no bytecode, so RE-ARC's 3,289-line ``dsl.py`` is compiled (about 30 ms) by every
program that says ``from dsl import *``. The supervisor instead compiles such a file
itself (``compile``, as ``importlib`` does; the file is never executed here), keeps the
code by the file's content and the path the program sees it at, and sends it with each
job that may import it (``ModuleCode.for_job``). The program's import system uses it only
for that very path and only when the file it reads there has the same SHA-256 as the one
compiled (``install``), so a program gets exactly the code an import from source would
compile, and nothing flows from one program to another: the code comes from files the
supervisor reads itself, never from a program.

The job frame holds only what the program could read itself (the program can read all
of it, imported or not): a file is compiled only when it is a regular file whose path,
symlinks resolved, stays inside its module directory, and whose mode lets every user read
it (``untrusted_files``). The supervisor is root (with ``CAP_DAC_OVERRIDE`` in a
container) and sees the host's tree: a ``leak.py`` symlinked to a task file, a credential
or another source's directory, or a file only its owner may read, is left to the program,
which meets there what its own view of the files gives it.

Which files a job gets is a guess from the text alone: the modules named by ``import X``
and ``from X import`` lines of the program and, in turn, of those files (top-level module
files ``X.py`` of the module directories only). A file the guess misses, one larger than
``MAX_FILE_BYTES``, one past the job's ``MAX_JOB_CODE`` or one that does not compile is
compiled by the program as before.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import importlib.machinery
import marshal
import os
import re
import sys
import warnings
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from . import pinned, untrusted_files
else:
    try:  # tests import this module from the package, the supervisor by bare name
        from . import pinned, untrusted_files
    except ImportError:
        import pinned
        import untrusted_files

pinned.pin(globals())  # the loader runs beside programs: see pinned.py

MAX_FILE_BYTES = 2 << 20
"""Larger module files are left to the program (the supervisor's compile stays bounded)."""
MAX_FILES = 32
"""Module files sent with one job, and compiled files kept per supervisor."""
MAX_JOB_CODE = 16 << 20
"""Encoded code sent with one job (the job frame stays far below the program's cap)."""
MAX_KEPT_CODE = 64 << 20
"""Encoded code kept per supervisor (in a container it shares the memory limit)."""
_IMPORTS = re.compile(
    rb"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_][\w \t,]*))",
    re.MULTILINE,
)
_NAME = re.compile(r"[A-Za-z_]\w*")


def imported_names(text: bytes) -> list[str]:
    """Top-level module names a text imports, by its ``import`` and ``from`` lines."""
    names: list[str] = []
    for found in _IMPORTS.finditer(text):
        if found.group(1):
            names.append(found.group(1).decode("ascii", "replace"))
        else:
            listed = found.group(2).decode("ascii", "replace")
            pieces = (piece.strip() for piece in listed.split(","))
            names.extend(m.group() for m in map(_NAME.match, pieces) if m)
    return names


class ModuleCode:
    """The supervisor's compiled module files, by content and program-visible path."""

    def __init__(self) -> None:
        self._compiled: collections.OrderedDict[tuple[str, str], tuple[str | None, list[str]]] = (
            collections.OrderedDict()
        )
        self._kept = 0  # characters of code in _compiled

    def for_job(
        self, source: bytes, module_dirs: list[str], visible_dirs: list[str]
    ) -> dict[str, list[str]]:
        """The compiled module files a program may import, for its job frame.

        Args:
            source: The program's source.
            module_dirs: Its module directories, as this process sees them.
            visible_dirs: The same directories as the program will see them.

        Returns:
            ``{path the program sees: [SHA-256 of the file (hex), its code (marshal,
            base64)]}``.
        """
        found: dict[str, list[str]] = {}
        queue = imported_names(source)
        seen: set[str] = set()
        size = 0
        while queue and len(found) < MAX_FILES:
            name = queue.pop(0)
            if name in seen:
                continue
            seen.add(name)
            for here, there in zip(module_dirs, visible_dirs, strict=True):
                data = _read(here, name + ".py")
                if data is None:
                    continue
                path = os.path.join(there, name + ".py")
                digest = hashlib.sha256(data).hexdigest()
                code, names = self._code(data, digest, path)
                if code is not None and size + len(code) <= MAX_JOB_CODE:
                    found[path] = [digest, code]
                    size += len(code)
                    queue.extend(names)
                break  # the first directory on sys.path that has it is the one imported
        return found

    def _code(self, data: bytes, digest: str, path: str) -> tuple[str | None, list[str]]:
        """The file's code (``None``: it does not compile) and the modules it imports."""
        key = (digest, path)
        if key in self._compiled:
            self._compiled.move_to_end(key)
            return self._compiled[key]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = compile(data, path, "exec", dont_inherit=True)
            code: str | None = base64.b64encode(marshal.dumps(compiled)).decode("ascii")
        except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
            code = None  # the program compiles it and meets the error itself
        entry = (code, imported_names(data))
        self._compiled[key] = entry
        self._kept += len(code or "")
        while len(self._compiled) > MAX_FILES or self._kept > MAX_KEPT_CODE:
            _, (dropped, _names) = self._compiled.popitem(last=False)
            self._kept -= len(dropped or "")
        return entry


def _read(directory: str, name: str) -> bytes | None:
    """A module file's bytes when the program may read it too (see the module's text).

    ``None``: missing, refused (a symlink out of ``directory``, not a regular file, not
    readable by every user, over ``MAX_FILE_BYTES``) or unreadable.
    """
    try:
        return untrusted_files.read_regular(
            os.path.join(directory, name),
            within=directory,
            max_bytes=MAX_FILE_BYTES,
            others_may_read=True,
        )
    except OSError:
        return None


class _PrecompiledLoader(importlib.machinery.SourceFileLoader):
    """A source loader that takes the supervisor's code for a file with the same bytes."""

    code: ClassVar[dict[str, list[str]]] = {}

    def get_code(self, fullname: str) -> object:  # type: ignore[override]
        path = self.get_filename(fullname)
        entry = self.code.get(path)
        if entry is not None:
            digest, blob = entry
            if hashlib.sha256(self.get_data(path)).hexdigest() == digest:
                return marshal.loads(base64.b64decode(blob))
        return super().get_code(fullname)


def install(code: dict[str, list[str]], module_dirs: list[str]) -> None:
    """In a program's process: import ``module_dirs``' files with ``code`` where it fits.

    Must run before those directories are first imported from (their finders are made
    on first use). Other directories keep the default finder.
    """
    if not code:
        return
    _PrecompiledLoader.code = dict(code)
    loaders = [
        (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
        (_PrecompiledLoader, importlib.machinery.SOURCE_SUFFIXES),
        (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
    ]  # the default finder's order
    default_hook = importlib.machinery.FileFinder.path_hook(*loaders)
    ours = set(module_dirs)

    def hook(path: str) -> importlib.machinery.FileFinder:
        if path not in ours:
            raise ImportError("not a module directory")  # the next hook takes it
        return default_hook(path)  # type: ignore[return-value]

    sys.path_hooks.insert(0, hook)
    for path in ours:
        sys.path_importer_cache.pop(path, None)
