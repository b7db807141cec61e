"""The errors arcjudge raises for problems with what a user gave it.

Library code raises :class:`InputError` (or a subclass) with a message about the data: the
file, the line, what is wrong with it; never about command-line flags, which the library
does not know. The command line (and only it) maps every :class:`ArcjudgeError` to one
line ``arcjudge: error: ...`` and exit code 2; :class:`UsageError` is its own kind, for
mistakes in how a command was called. Failures of programs under test are never errors:
they are statuses in results.
"""

from __future__ import annotations

__all__ = ["ArcjudgeError", "InputError", "UsageError"]


class ArcjudgeError(Exception):
    """A problem the user can fix; the message says what and is shown as is."""


class InputError(ArcjudgeError, ValueError):
    """A file or value given to arcjudge is missing, unreadable or malformed."""


class UsageError(ArcjudgeError):
    """A command was called in a way that cannot work (raised by the command line only)."""
