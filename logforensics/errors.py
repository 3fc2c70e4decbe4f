"""Errors the tool raises on purpose. Anything else escaping to the CLI is a bug (exit 3)."""

from __future__ import annotations


class LogForensicsError(Exception):
    """Base class: a message for the user and, optionally, what to try next."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InputError(LogForensicsError):
    """The input cannot be analysed: missing path, nothing readable, unusable options."""


class ImplementationError(LogForensicsError):
    """A developer mistake: a column outside the schema, a rule registered twice."""
