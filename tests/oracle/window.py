"""Window contents at an evaluation instant (SPEC §3), for one sub-stream.

Holds the trips that matter to one query (e.g. its valid trips) in arrival order.
Out-of-order lines are rejected, so their dropoff times are non-decreasing and a
window is a slice found by bisection. Contents are still rebuilt at every instant;
the columns (one list per trip attribute) only let the counting run in C.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any

from .clock import Instant
from .records import Trip


class SubStream:
    """The accepted trips for which ``keep`` holds, with per-instant window views."""

    def __init__(self, trips: Sequence[Trip], keep: Callable[[Trip], bool]) -> None:
        flags = [keep(t) for t in trips]
        self.trips = [t for t, ok in zip(trips, flags) if ok]
        self.times = [t.dropoff for t in self.trips]
        # kept_before[k] = how many kept trips are among the first k accepted trips
        self.kept_before = [0, *accumulate(int(ok) for ok in flags)]
        self._columns: dict[str, list[Any]] = {}

    def column(self, name: str) -> list[Any]:
        """Attribute ``name`` of every kept trip, in seq order."""
        if name not in self._columns:
            self._columns[name] = [getattr(t, name) for t in self.trips]
        return self._columns[name]

    def bounds(self, instant: Instant, window_s: int) -> slice:
        """Kept trips that have arrived (seq <= last processed) and lie in the window
        instant - W < dropoff <= instant."""
        arrived = self.kept_before[instant.processed]
        hi = bisect_right(self.times, instant.time, 0, arrived)
        lo = bisect_right(self.times, instant.time - window_s, 0, hi)
        return slice(lo, hi)
