"""Builtins as they were when the runtime loaded (standard library only).

The runtime's modules that run inside a program's process, beside its code (``program``,
``program_setup``, ``entry_calls``, ``exception_text``, ``shared_state``, ``splitstream``,
``split_syntax``, ``split_values``, ``framing``, ``canonical``, ``modcode``), call
:func:`pin` on their own globals before they define anything: every function they define
then looks builtins up in :data:`BUILTINS`, a copy made when the supervisor started, never
in the ``builtins`` module a program may change (``builtins.len = ...``). Module functions
they call are bound at import time the same way (``_write = os.write``). A program that
goes further (it may change this copy too: it is its own process) only spoils its own
answers; the harness decodes and checks everything it receives.
"""

from __future__ import annotations

import builtins

BUILTINS: dict[str, object] = dict(vars(builtins))
"""The builtins, copied once, before any program ran."""


def pin(namespace: dict[str, object]) -> None:
    """Make the functions defined after this call in ``namespace`` use :data:`BUILTINS`.

    Args:
        namespace: A module's ``globals()`` (functions take their builtins from it when
            they are created, Python 3.10 and later).
    """
    namespace["__builtins__"] = BUILTINS
