"""Crash-safe output files: written under temporary names, renamed on success.

A run that dies half-way leaves only ``.*.partial`` files, never a file that looks like
a complete result; ``summary.json`` is renamed last, so its presence marks a complete run.
A write that fails (full disk, file size limit, I/O error) raises :class:`OutputError`,
a :class:`UserError` naming the file and the reason, so the CLI prints one line.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from taxi_rsp.outputs.stale import earlier_run, stale_outputs
from taxi_rsp.errors import UserError


class OutputError(UserError):
    """Writing an output file failed; the run's partial files are removed."""


class _OutputFile(io.TextIOWrapper):
    """A text file whose write errors name the output they were meant for."""

    def __init__(self, path: Path, final: Path) -> None:
        super().__init__(path.open("wb"), encoding="utf-8", newline="")
        self.final = final

    def _failed(self, exc: OSError) -> OutputError:
        return OutputError(f"cannot write {self.final}: {exc.strerror or exc} "
                           "(free some space or choose another output folder)")

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as exc:
            raise self._failed(exc) from exc

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            raise self._failed(exc) from exc

    def sync(self) -> None:
        """Flush to the disk: a full disk may only show up here (delayed allocation)."""
        self.flush()
        try:
            os.fsync(self.fileno())
        except OSError as exc:
            raise self._failed(exc) from exc

    def discard(self) -> None:
        """Close without caring whether the buffered text still fits anywhere."""
        with contextlib.suppress(OSError, OutputError):
            self.close()
        if not self.closed:  # close() flushes first; after a failed flush, close the raw file
            with contextlib.suppress(OSError):
                self.buffer.raw.close()


class AtomicOutputs:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # made by this run: an aborted run that leaves it empty removes it
        self._created = not directory.exists()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create output folder {directory}: {exc.strerror}") from None
        if not os.access(directory, os.W_OK):
            raise UserError(f"output folder {directory} is not writable")
        self._open: dict[str, _OutputFile] = {}
        # names whose partial file may exist, recorded before it is created: a Ctrl-C
        # between creating the file and holding its handle still removes it (see abort)
        self._partials: list[str] = []
        self._renamed: list[Path] = []
        self._earlier = earlier_run(directory)  # read before open() removes the earlier summary
        self._earlier_summary = _read_bytes(directory / "summary.json")
        self._stale: list[Path] = []
        self.removed: list[str] = []  # stale outputs of an earlier run removed by the commit

    def claim(self, force: bool = False, protect: Iterable[Path] = ()) -> None:
        """Call once every output is open: the earlier outputs this run does not rewrite
        go at commit; unknown ones refuse the run unless ``force`` (see
        :mod:`taxi_rsp.outputs.stale`). A refused run leaves the folder as it found it."""
        try:
            self._stale = stale_outputs(self.directory, self._open, self._earlier, force, protect)
        except UserError:
            if self._earlier_summary is not None:
                (self.directory / "summary.json").write_bytes(self._earlier_summary)
            raise

    def partial_path(self, name: str) -> Path:
        return self.directory / f".{name}.partial"

    def open(self, name: str) -> TextIO:
        """A text file that becomes ``directory/name`` on :meth:`commit`."""
        # A previous result in the folder is invalid from now on: its summary goes. Its
        # other files stay until replaced at commit (one of them may be this run's input).
        final = self.directory / name
        try:
            (self.directory / "summary.json").unlink(missing_ok=True)
            self._partials.append(name)
            handle = _OutputFile(self.partial_path(name), final)
        except OSError as exc:
            raise OutputError(f"cannot write {final}: {exc.strerror or exc}") from exc
        self._open[name] = handle
        return handle

    def commit(self, summary_name: str | None = None, summary_text: str | None = None) -> None:
        """Sync and close every file, write the summary, then rename: outputs first,
        the summary last. Anything that can run out of space happens before a rename."""
        for handle in self._open.values():
            handle.sync()
            handle.close()
        summary = None
        if summary_name is not None and summary_text is not None:
            self._partials.append(summary_name)
            summary = _OutputFile(self.partial_path(summary_name), self.directory / summary_name)
            self._open[summary_name] = summary
            summary.write(summary_text)
            summary.sync()
            summary.close()
        try:
            for name in self._open:
                if name != summary_name:
                    os.replace(self.partial_path(name), self.directory / name)
                    self._renamed.append(self.directory / name)
            if summary is not None:
                for path in self._stale:  # before the summary: a folder with one holds this run only
                    path.unlink(missing_ok=True)
                    self.removed.append(path.name)
                os.replace(self.partial_path(summary_name), self.directory / summary_name)
        except OSError as exc:
            raise OutputError(f"cannot rename the outputs in {self.directory}: {exc.strerror}") from exc
        self._open.clear()
        self._partials.clear()
        if summary is not None:  # complete: nothing left for abort() to take back
            self._renamed.clear()

    def commit_only(self, names: Iterable[str]) -> None:
        """Keep ``names`` (renamed into place) and drop every other file of this run: a
        run that failed keeps what explains the failure (the rejects), nothing that
        looks like a result, and no summary."""
        keep = set(names)
        for name, handle in self._open.items():
            if name in keep:
                handle.sync()
                handle.close()
            else:
                handle.discard()
        try:
            for name in self._open:
                if name in keep:
                    os.replace(self.partial_path(name), self.directory / name)
                else:
                    self.partial_path(name).unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot rename the outputs in {self.directory}: {exc.strerror}") from exc
        self._open.clear()
        self._partials.clear()
        self._renamed.clear()

    def commit_summary(self, summary: dict) -> None:
        """:meth:`commit` with ``summary.json`` holding ``summary`` (the run is complete)."""
        self.commit("summary.json", json.dumps(summary, indent=2) + "\n")

    def __enter__(self) -> AtomicOutputs:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Leaving the block by an error or an interrupt aborts: no partial file stays."""
        if kind is not None:
            self.abort()

    def abort(self) -> None:
        """Close and remove this run's files (used on errors and Ctrl-C); outputs already
        renamed by a commit that failed later are removed too: they have no summary."""
        for handle in self._open.values():
            handle.discard()
        for name in self._partials:
            self.partial_path(name).unlink(missing_ok=True)
        for path in self._renamed:
            path.unlink(missing_ok=True)
        self._open.clear()
        self._partials.clear()
        self._renamed.clear()
        if self._created:
            with contextlib.suppress(OSError):  # not empty (or gone): leave it
                self.directory.rmdir()


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
