"""Crash-safe output files: written under temporary names, renamed on success.

A run that dies half-way leaves only ``.*.partial`` files, never a file that looks like
a complete result; ``summary.json`` is renamed last, so its presence marks a complete run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from taxi_rsp.errors import UserError


class AtomicOutputs:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create output folder {directory}: {exc.strerror}") from None
        if not os.access(directory, os.W_OK):
            raise UserError(f"output folder {directory} is not writable")
        self._open: dict[str, TextIO] = {}

    def partial_path(self, name: str) -> Path:
        return self.directory / f".{name}.partial"

    def open(self, name: str) -> TextIO:
        """A text file that becomes ``directory/name`` on :meth:`commit`."""
        # A previous complete result in the folder is invalid from now on.
        (self.directory / "summary.json").unlink(missing_ok=True)
        handle = self.partial_path(name).open("w", encoding="utf-8", newline="")
        self._open[name] = handle
        return handle

    def commit(self, summary_name: str | None = None, summary_text: str | None = None) -> None:
        """Close and rename every file, then write the summary last."""
        for name, handle in self._open.items():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            os.replace(self.partial_path(name), self.directory / name)
        self._open.clear()
        if summary_name is not None and summary_text is not None:
            path = self.partial_path(summary_name)
            path.write_text(summary_text, encoding="utf-8")
            os.replace(path, self.directory / summary_name)

    def abort(self) -> None:
        """Close files and remove the partial ones (used on errors and Ctrl-C)."""
        for name, handle in self._open.items():
            handle.close()
            self.partial_path(name).unlink(missing_ok=True)
        self._open.clear()
