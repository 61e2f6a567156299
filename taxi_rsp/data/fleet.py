"""Which taxi serves a trip: the one waiting longest near its pickup point.

This is what makes Q2's "empty taxis" realistic: a taxi drops off, waits (cruises)
near that drop-off, and its next pickup is close by and a few minutes later. The
real sample shows median 2 minutes and ≈350 m between a drop-off and the same
taxi's next pickup on New Year's night; quieter hours stretch the wait on their own
because fewer trips start near each waiting taxi.

Zones are Q1-sized cells (500 m) on an unbounded grid, keyed ``x * ZONE_KEY + y``.
A trip takes the longest-waiting taxi in its own zone, else in the ring of 8 zones
around it, else in the ring of 16 beyond; failing that a taxi comes on duty from the
depot (the off-duty fleet, least recently used first). A taxi idle for
``idle_timeout`` minutes goes off duty, back to the depot, which is how all
≈13,000 medallions take turns over the 20 days.

Every structure is FIFO in release order, so going off duty always takes the head
of the taxi's zone queue and nothing is searched: bounded memory, O(1) per trip.
"""

from __future__ import annotations

import hashlib
from collections import deque

ZONE_KEY = 100_000  # x * ZONE_KEY + y; x, y stay far below it for any coordinate
_RING_1 = tuple(dx * ZONE_KEY + dy for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)
_RING_2 = tuple(
    dx * ZONE_KEY + dy for dx in range(-2, 3) for dy in range(-2, 3) if max(abs(dx), abs(dy)) == 2
)


def hex_id(seed: int, kind: str, number: int) -> str:
    """A 32-digit upper-case hex id, like the md5 sums of the real data."""
    return hashlib.md5(f"taxi-rsp synth {seed} {kind} {number}".encode()).hexdigest().upper()


class Fleet:
    """Taxis, their drivers, and the queues of waiting taxis per zone."""

    def __init__(self, size: int, drivers: int, seed: int, idle_timeout: int) -> None:
        if size < 1 or drivers < 1:
            raise ValueError("a fleet needs at least one taxi and one driver")
        self.medallions = [hex_id(seed, "medallion", i) for i in range(size)]
        self._licenses = [hex_id(seed, "hack_license", i) for i in range(drivers)]
        self._driver = [i % drivers for i in range(size)]
        self._next_driver = size % drivers
        self._idle_timeout = idle_timeout
        self._token = [0] * size  # bumped whenever a taxi changes state
        self._order = [0] * size  # release order, to compare queue heads
        self._released = 0
        self._now = -1
        self._pools: dict[int, deque[int]] = {}
        self._pending: dict[int, list[tuple[int, int]]] = {}  # minute -> [(taxi, zone)]
        self._timeouts: deque[tuple[int, int, int, int]] = deque()  # (minute, taxi, token, zone)
        self._depot: deque[int] = deque(range(size))
        self.used: set[int] = set()

    def license(self, taxi: int) -> str:
        """The hack license of the driver currently on this taxi."""
        return self._licenses[self._driver[taxi]]

    def release_at(self, taxi: int, minute: int, zone: int) -> None:
        """The taxi starts waiting in ``zone`` from ``minute`` on (at the earliest next minute)."""
        minute = max(minute, self._now + 1)
        self._pending.setdefault(minute, []).append((taxi, zone))

    def advance(self, minute: int) -> None:
        """Release the taxis due at ``minute`` and send long-idle ones off duty."""
        self._now = minute
        for taxi, zone in self._pending.pop(minute, ()):
            self._released += 1
            self._order[taxi] = self._released
            self._pools.setdefault(zone, deque()).append(taxi)
            self._timeouts.append((minute + self._idle_timeout, taxi, self._token[taxi], zone))
        timeouts = self._timeouts
        while timeouts and timeouts[0][0] <= minute:
            _, taxi, token, zone = timeouts.popleft()
            if self._token[taxi] == token:
                pool = self._pools[zone]
                pool.popleft()  # FIFO everywhere: the timed-out taxi is the head
                if not pool:
                    del self._pools[zone]
                self._token[taxi] += 1
                self._depot.append(taxi)

    def take_depot(self) -> int:
        """A taxi comes on duty (shift change: the next driver takes it)."""
        taxi = self._depot.popleft()
        self._driver[taxi] = self._next_driver
        self._next_driver = (self._next_driver + 1) % len(self._licenses)
        return taxi

    def assign(self, zone: int) -> int:
        """Pick the taxi for a trip starting in ``zone``; it is busy until released."""
        taxi = self._take_near(zone)
        if taxi is None:
            taxi = self.take_depot() if self._depot else self._take_anywhere()
        self._token[taxi] += 1
        self.used.add(taxi)
        return taxi

    def _take_near(self, zone: int) -> int | None:
        pools = self._pools
        pool = pools.get(zone)
        if pool:
            return self._pop(zone, pool)
        for ring in (_RING_1, _RING_2):
            best_zone, best_pool, best_order = 0, None, 0
            for offset in ring:
                pool = pools.get(zone + offset)
                if pool and (best_pool is None or self._order[pool[0]] < best_order):
                    best_zone, best_pool, best_order = zone + offset, pool, self._order[pool[0]]
            if best_pool is not None:
                return self._pop(best_zone, best_pool)
        return None

    def _take_anywhere(self) -> int:
        # Only when the whole fleet is busy or waiting: take the longest-waiting taxi.
        if not self._pools:
            raise RuntimeError("every taxi is on a trip: the fleet is too small for this demand")
        zone = min(self._pools, key=lambda z: self._order[self._pools[z][0]])
        return self._pop(zone, self._pools[zone])

    def _pop(self, zone: int, pool: deque[int]) -> int:
        taxi = pool.popleft()
        if not pool:
            del self._pools[zone]
        return taxi
