"""Exceptions for user mistakes, reported by the CLI as one line."""


class UsageError(Exception):
    """A user mistake (bad path, bad option); the message is shown as is."""
