"""The one error type of RDF stream input: it names the file, line and column."""

from __future__ import annotations

from pathlib import Path

from taxi_rsp.errors import UserError


class StreamInputError(UserError):
    """Malformed or out-of-order stream input, located as ``file:line:col: reason``."""

    def __init__(self, path: Path | str, line: int, column: int, reason: str) -> None:
        super().__init__(f"{path}:{line}:{column}: {reason}")
        self.path = str(path)
        self.line = line
        self.column = column
        self.reason = reason
