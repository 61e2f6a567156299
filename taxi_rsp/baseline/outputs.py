"""Output files written under temporary names and renamed when the run succeeds."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from listener.stale import earlier_run, stale_outputs
from taxi_rsp.errors import UserError


class OutputFolder:
    """``DIR/.NAME.partial`` files that become ``DIR/NAME`` on :meth:`commit`.

    ``summary.json`` is written last by :meth:`commit`, so a folder with a summary
    holds a complete run; an older summary is removed as soon as a new run starts.
    """

    def __init__(self, directory: Path, writing: Sequence[str] = (), force: bool = False,
                 protect: Sequence[Path] = ()) -> None:
        """``writing``: the names this run writes; other output-like files in the folder are
        an earlier run's (removed at commit) or refuse the run unless ``force``
        (:mod:`listener.stale`)."""
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create output folder {directory}: {exc.strerror}") from None
        if not os.access(directory, os.W_OK):
            raise UserError(f"output folder {directory} is not writable")
        self.directory = directory
        self._stale = stale_outputs(directory, writing, earlier_run(directory), force, protect) if writing else []
        self.removed: list[str] = []
        (directory / "summary.json").unlink(missing_ok=True)
        self._written: list[str] = []

    def _partial(self, name: str) -> Path:
        return self.directory / f".{name}.partial"

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[TextIO]:
        """Write ``name`` (as a partial file until commit)."""
        with self._partial(name).open("w", encoding="utf-8", newline="") as handle:
            yield handle
        self._written.append(name)

    def commit(self, summary_text: str) -> None:
        for name in self._written:
            os.replace(self._partial(name), self.directory / name)
        for path in self._stale:  # before the summary: a folder with one holds this run only
            path.unlink(missing_ok=True)
            self.removed.append(path.name)
        summary = self._partial("summary.json")
        summary.write_text(summary_text, encoding="utf-8")
        os.replace(summary, self.directory / "summary.json")

    def abort(self) -> None:
        for path in self.directory.glob(".*.partial"):
            path.unlink(missing_ok=True)
