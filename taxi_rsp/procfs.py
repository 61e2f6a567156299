"""How far a process has read a file, from Linux /proc (progress displays only).

    >>> ReadOffset(Path("/nonexistent")).position() is None
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
