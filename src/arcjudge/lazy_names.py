"""A package's public names imported from their modules on first use.

A package whose ``__init__`` lists each public name's home module (a ``_HOMES`` mapping)
gets its ``__getattr__`` and ``__dir__`` from :func:`lazy_names`, so importing the package
stays cheap and each name is imported once, when first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any], public: Collection[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` over the homes of its public names.

    Args:
        package: The package's ``__name__``.
        homes: Each public name's module, relative to the package (``"types"``).
        namespace: The package's ``globals()``: a name is kept there once imported.
        public: The package's ``__all__``.

    Returns:
        ``__getattr__`` (a name imported from its home, then kept; ``AttributeError`` for
        a name without one) and ``__dir__`` (what the package holds and its public names).
    """

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_
