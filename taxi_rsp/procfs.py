"""Facts about a process from Linux /proc: how far it has read a file (progress
displays only) and its resident memory, now and at its peak.

    >>> ReadOffset(Path("/nonexistent")).position() is None
    True
    >>> peak_rss_kib("nonexistent") is None
    True
"""

from __future__ import annotations

import os
from pathlib import Path


class ReadOffset:
    """The ``pos`` of the descriptor through which process ``pid`` (default: this one)
    has ``path`` open; at most one read buffer ahead of what was parsed. None when the
    file is not open (yet) or /proc cannot tell."""

    def __init__(self, path: Path, pid: int | str = "self") -> None:
        self.target = str(path.resolve())
        self.proc = f"/proc/{pid}"
        self.fd: str | None = None

    def position(self) -> int | None:
        if self.fd is None:
            self.fd = self._find()
            if self.fd is None:
                return None
        try:
            with open(f"{self.proc}/fdinfo/{self.fd}", encoding="ascii") as handle:
                return int(handle.readline().split()[1])  # first line: "pos:\t<offset>"
        except (OSError, ValueError, IndexError):
            self.fd = None
            return None

    def _find(self) -> str | None:
        try:
            for name in os.listdir(f"{self.proc}/fd"):
                try:
                    if os.readlink(f"{self.proc}/fd/{name}") == self.target:
                        return name
                except OSError:
                    continue
        except OSError:
            return None
        return None


def peak_rss_kib(pid: int | str = "self") -> int | None:
    """The peak resident set size of process ``pid`` in KiB (``VmHWM``), or None when
    /proc cannot tell.

    Not ``ru_maxrss``: Linux carries it over ``fork`` and ``exec``, so a run started by
    a large process (``taxi-rsp report``, a benchmark under pytest) would report its
    parent's memory at the fork as its own. ``VmHWM`` belongs to the process's own
    address space, which ``exec`` replaces.
    """
    return _status_kib("VmHWM:", pid)


def rss_kib(pid: int | str = "self") -> int | None:
    """The resident set size of process ``pid`` now, in KiB (``VmRSS``), or None when
    /proc cannot tell: what a long-lived process (a Spark worker that ran other tasks
    first) holds at a moment, which its peak cannot say.

    >>> rss_kib() > 0
    True
    """
    return _status_kib("VmRSS:", pid)


def _status_kib(field: str, pid: int | str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
