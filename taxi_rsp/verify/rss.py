"""Peak resident memory of a process tree, sampled from /proc (Linux).

The engine's peak RSS is exact (``VmHWM`` of its own process, in its summary). The
Spark baseline's memory lives in a JVM and its Python workers, children of the JVM; the
report samples the resident set of that tree (and of the driver process) every 0.25 s.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4 / 1024


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def tree_rss_mib(roots: list[int]) -> float:
    """Resident MiB of ``roots`` and all their descendants, now."""
    tree = _children()
    seen, stack, total = set(), list(roots), 0
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        stack.extend(tree.get(pid, ()))
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return total * PAGE_MIB


class PeakRss:
    """``with PeakRss(pids) as peak: …``; then ``peak.mib`` is the largest sample (None
    when /proc could not be read)."""

    def __init__(self, roots: list[int], seconds: float = 0.25) -> None:
        self.roots = roots
        self.seconds = seconds
        self.mib: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="peak-rss")

    def _sample(self) -> None:
        while True:
            value = tree_rss_mib(self.roots)
            if value > 0:
                self.mib = max(self.mib or 0.0, value)
            if self._stop.wait(self.seconds):
                return

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.mib is not None:
            self.mib = round(self.mib, 1)
