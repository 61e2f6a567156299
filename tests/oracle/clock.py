"""When a query is evaluated (SPEC §3): each arrival, and each expiry instant.

Literal transcription: before event e (time t) every not-yet-evaluated expiry
instant tau < t is evaluated in increasing order; instants equal to t are merged
into e's own evaluation; nothing happens after the last event.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .records import Trip


@dataclass(frozen=True)
class Instant:
    """One evaluation: its time, the arriving trip (None for an expiry instant) and
    how many accepted trips have been processed (seq <= last processed)."""

    time: int
    trigger: Trip | None
    processed: int


def evaluation_instants(trips: Sequence[Trip], is_valid: Callable[[Trip], bool],
                        windows_s: Sequence[int]) -> Iterator[Instant]:
    """Yield the query's evaluation instants in order.

    Every accepted trip is an arrival instant (an outlier of the query too); only
    trips valid for the query create expiry instants d + W, one per window (an
    outlier's expiry would change no window, hence no line).
    """
    expiries: list[int] = []  # min-heap, may hold duplicates
    for index, trip in enumerate(trips):
        last_evaluated: int | None = None
        while expiries and expiries[0] < trip.dropoff:
            tau = heapq.heappop(expiries)
            if tau != last_evaluated:
                last_evaluated = tau
                yield Instant(tau, None, index)
        while expiries and expiries[0] == trip.dropoff:
            heapq.heappop(expiries)  # merged into this arrival's evaluation
        if is_valid(trip):
            for window in windows_s:
                heapq.heappush(expiries, trip.dropoff + window)
        yield Instant(trip.dropoff, trip, index + 1)
