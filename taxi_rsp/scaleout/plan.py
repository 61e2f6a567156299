"""From the stage-1 scans to one exact task per chunk (pure, no Spark).

A chunk starting at line L must begin where a sequential run stands just before L:

* ``first_line``: the global number of L (= seq of its event);
* ``latest_dropoff``: the latest accepted drop-off before L, which is the maximum
  well-formed drop-off before L (see :mod:`taxi_rsp.scaleout.scan`); call it M;
* the engine state at M: every accepted event before L with drop-off d > M − W_max can
  still be in a window (W_max = the longest window of the registered queries), and every
  later expiry instant (> M) only looks at such events. The chunk replays, without
  output, the lines from the last checkpoint whose running maximum is <= M − W_max: all
  accepted events before that checkpoint have left every window by M. The replay's own
  Feeder starts with that checkpoint's running maximum, so it accepts and rejects
  exactly the lines a sequential run does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from taxi_rsp.scaleout.scan import RangeScan


@dataclass(frozen=True, slots=True)
class ChunkTask:
    """Bytes [start, end) to run with output, after replaying [warm_start, start)."""

    index: int
    start: int
    end: int
    first_line: int
    lines: int
    latest_dropoff: int | None
    warm_start: int
    warm_first_line: int
    warm_latest_dropoff: int | None

    @property
    def warm_lines(self) -> int:
        return self.first_line - self.warm_first_line


def _max(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


def plan_chunks(scans: Sequence[RangeScan], longest_window_ms: int) -> list[ChunkTask]:
    """One task per scanned range, in file order."""
    checkpoints: list[tuple[int, int, int | None]] = []  # (offset, global line, running max)
    tasks = []
    first_line, latest = 1, None
    for index, scan in enumerate(scans):
        for cp in scan.checkpoints:
            checkpoints.append((cp.offset, first_line + cp.lines_before, _max(latest, cp.max_dropoff)))
        warm = (scan.start, first_line, latest)
        if latest is not None:
            threshold = latest - longest_window_ms
            for offset, line, running in reversed(checkpoints):
                if offset <= scan.start and (running is None or running <= threshold):
                    warm = (offset, line, running)
                    break
        tasks.append(ChunkTask(index, scan.start, scan.end, first_line, scan.lines, latest, *warm))
        first_line += scan.lines
        latest = _max(latest, scan.max_dropoff)
    return tasks
