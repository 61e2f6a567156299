"""Error types a user can act on.

Every error that reaches the command line is a :class:`UserError`: the CLI prints its
one-line message and exits with code 2, without a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error caused by the user's input or environment (exit code 2)."""


class QuerySyntaxError(UserError):
    """A CQELS-QL text that does not parse; carries the 1-based line and column, and
    ``excerpt``: the offending line with a caret under the column (the command line
    prints it below the message; empty when the text is not known)."""

    def __init__(self, message: str, line: int, column: int, source: str = "<query>") -> None:
        super().__init__(f"{source}:{line}:{column}: {message}")
        self.line = line
        self.column = column
        self.source = source
        self.excerpt = ""


class UnsupportedQueryError(UserError):
    """A query that parses but uses a construct the engine cannot evaluate."""
