"""What the variants of one batch share, and whether a variant changed it (stdlib only).

Runs in a variants process (``program.py``), beside the variants' code: after the base
program loaded and after each variant, the modules from the module directories and
``builtins`` are read by identity (:class:`SharedState`); a variant that changed them is
followed by a fresh process.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from . import pinned
else:
    import pinned

pinned.pin(globals())  # builtins as they were before any program ran (see pinned.py)

# Bound before any program ran: the program may replace ``sys.modules`` on ``sys``.
_sys_modules = sys.modules


_CONTAINERS = frozenset((list, dict, set, bytearray))


def _container_state(value: object) -> object:
    """A mutable container's shallow contents as ids (what a variant could have changed)."""
    kind = type(value)
    if kind is list:
        return tuple(map(id, value))  # type: ignore[call-overload]
    if kind is dict:
        return tuple((id(k), id(v)) for k, v in value.items())  # type: ignore[attr-defined]
    if kind is set:
        return frozenset(map(id, value))  # type: ignore[call-overload]
    if kind is bytearray:
        return bytes(value)  # type: ignore[call-overload]
    return None


class SharedState:
    """What variants of one batch share: modules from the module directories, builtins.

    Per module: its identity, the identity of each global and the shallow contents of
    each global list, dict, set or bytearray. Cheap (ids only): read once after the base
    loaded, then after each variant (:meth:`change`). Which modules are tracked is read
    from ``sys.modules`` again only when its names or module objects changed.
    """

    def __init__(self, module_dirs: list[str]) -> None:
        self._roots = tuple(os.path.join(os.path.abspath(d), "") for d in module_dirs)
        self._index = self._modules_index()
        self._tracked = self._scan()
        self._before = self._read(self._tracked, None)

    @staticmethod
    def _modules_index() -> tuple[tuple[str, ...], tuple[int, ...]]:
        """``sys.modules``'s names and module identities, in order."""
        return tuple(_sys_modules), tuple(map(id, _sys_modules.values()))

    def _scan(self) -> tuple[str, ...]:
        """The names of the modules to track: ``builtins`` and any from the directories."""
        return tuple(
            name
            for name, module in list(_sys_modules.items())
            if self._namespace(name, module) is not None
        )

    def _namespace(self, name: str, module: object) -> dict[str, object] | None:
        """A module's globals when it is one to track (``None``: it is not)."""
        try:
            namespace = object.__getattribute__(module, "__dict__")
        except BaseException:
            return None
        if not isinstance(namespace, dict):
            return None
        path = namespace.get("__file__")
        if name == "builtins" or (isinstance(path, str) and path.startswith(self._roots)):
            return namespace
        return None

    def _read(
        self, names: tuple[str, ...], reference: dict[str, object] | None
    ) -> dict[str, object]:
        """The tracked modules' state.

        With the state before (``reference``), a module whose globals are the same objects
        has its containers where they were: only those are looked into.
        """
        state: dict[str, object] = {}
        for name in names:
            module = _sys_modules.get(name)
            namespace = self._namespace(name, module)
            if namespace is None:
                continue
            copy = dict(namespace)
            copy.pop("__builtins__", None)
            head = (id(module), id(namespace), tuple(copy), tuple(map(id, copy.values())))
            before = reference.get(name) if reference is not None else None
            if isinstance(before, tuple) and before[:4] == head:
                where = before[5]
            else:
                where = tuple(k for k, v in copy.items() if type(v) in _CONTAINERS)
            state[name] = (*head, tuple(_container_state(copy[k]) for k in where), where)
        return state

    def change(self) -> str | None:
        """Which shared module a variant changed since the base loaded (``None``: none)."""
        index = self._modules_index()
        names = self._tracked if index == self._index else self._scan()
        after = self._read(names, self._before)
        for name in sorted(set(self._before) | set(after)):
            if self._before.get(name) != after.get(name):
                return (
                    f"module {name!r} changed" if name in self._before else f"module {name!r} added"
                )
        # unchanged: ``sys.modules`` as it is now (a module outside the directories that a
        # variant imported stays) tracks the same modules, and is what the next compares to
        self._index, self._tracked = index, names
        return None
