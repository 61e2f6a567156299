"""Dirty lines: a small share of corrupted trips, so validation runs at scale.

Each corruption breaks exactly one thing, so the SPEC §1.1 reason a Feeder must give
is known in advance (``reason``), or, for money defects, that the line is accepted
but excluded from Q2's profit (``reason`` None). Corruptions never touch the first
line written for a drop-off minute: that line is clean and accepted, so a line moved
back in time after it is out of order for certain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from taxi_rsp.data.clock import RunClock
from taxi_rsp.spec import FIELD_INDEX

_PICKUP = FIELD_INDEX["pickup_datetime"]
_DROPOFF = FIELD_INDEX["dropoff_datetime"]
_COORDS = tuple(FIELD_INDEX[n] for n in ("pickup_longitude", "pickup_latitude", "dropoff_longitude", "dropoff_latitude"))
_FARE = FIELD_INDEX["fare_amount"]
_TIP = FIELD_INDEX["tip_amount"]

_BAD_TIMESTAMPS = ("2013-01-01 24:00:00", "2013-02-30 10:00:00", "2013-01-01T00:05:00", "2013-1-1 0:05:00", "NULL", "")
_BAD_NUMBERS = ("nan", "NaN", "inf", "-7.3956528e1", "", "NULL", "40.71.6", "\u0664\u0660.\u0667\u0661", "1_000", "- 73.95")
_BAD_TIPS = ("", "N/A", "-1.00", "1.O0")

Editor = Callable[[list[str], int, np.random.Generator, RunClock], str]


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _truncated(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    return ",".join(f[: int(rng.integers(1, len(f)))])


def _extra_field(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    return ",".join(f) + ",0.00"


def _empty(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    return ""


def _no_medallion(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    return ",".join(["  "] + f[1:])


def _bad_timestamp(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    f[_PICKUP if rng.integers(2) else _DROPOFF] = _pick(rng, _BAD_TIMESTAMPS)
    return ",".join(f)


def _pickup_after_dropoff(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    f[_PICKUP] = clock.stamp(minute + int(rng.integers(1, 30)))
    return ",".join(f)


def _bad_coordinate(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    f[_COORDS[int(rng.integers(4))]] = _pick(rng, _BAD_NUMBERS)
    return ",".join(f)


def _out_of_order(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    dropoff = minute - int(rng.integers(1, 11))
    f[_DROPOFF] = clock.stamp(dropoff)
    f[_PICKUP] = clock.stamp(dropoff - int(rng.integers(0, 16)))
    return ",".join(f)


def _negative_fare(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    fare = f[_FARE].lstrip("-")
    f[_FARE] = "-" + (fare if fare.strip("0.") else "2.50")
    return ",".join(f)


def _bad_tip(f: list[str], minute: int, rng: np.random.Generator, clock: RunClock) -> str:
    f = list(f)
    f[_TIP] = _pick(rng, _BAD_TIPS)
    return ",".join(f)


@dataclass(frozen=True)
class Corruption:
    """One way to damage a line, and what a Feeder must make of it."""

    name: str
    reason: str | None  # SPEC §1.1 reject reason; None: accepted, excluded from profit
    weight: float
    edit: Editor


CORRUPTIONS: tuple[Corruption, ...] = (
    Corruption("truncated_line", "field_count", 0.06, _truncated),
    Corruption("extra_field", "field_count", 0.04, _extra_field),
    Corruption("empty_line", "field_count", 0.02, _empty),
    Corruption("empty_medallion", "bad_medallion", 0.05, _no_medallion),
    Corruption("bad_timestamp", "bad_timestamp", 0.10, _bad_timestamp),
    Corruption("pickup_after_dropoff", "pickup_after_dropoff", 0.08, _pickup_after_dropoff),
    Corruption("bad_coordinate", "bad_coordinate", 0.15, _bad_coordinate),
    Corruption("out_of_order", "out_of_order", 0.10, _out_of_order),
    Corruption("negative_fare", None, 0.25, _negative_fare),
    Corruption("bad_tip", None, 0.15, _bad_tip),
)
_WEIGHTS = np.array([c.weight for c in CORRUPTIONS]) / sum(c.weight for c in CORRUPTIONS)


class Corruptor:
    """Damages about ``rate`` of the lines of each drop-off minute, counting kinds."""

    def __init__(self, rate: float, clock: RunClock, rng: np.random.Generator) -> None:
        if not 0.0 <= rate <= 0.5:
            raise ValueError("the dirty rate must be between 0 and 0.5")
        self.rate = rate
        self._clock = clock
        self._rng = rng
        self.counts: Counter[str] = Counter()

    def apply(self, lines: list[str], minute: int) -> None:
        """Corrupt lines of one drop-off minute in place (never the first one)."""
        if self.rate == 0.0 or len(lines) < 2:
            return
        hits = np.flatnonzero(self._rng.random(len(lines) - 1) < self.rate) + 1
        if hits.size == 0:
            return
        kinds = self._rng.choice(len(CORRUPTIONS), size=hits.size, p=_WEIGHTS)
        for index, kind in zip(hits.tolist(), kinds.tolist()):
            corruption = CORRUPTIONS[kind]
            lines[index] = corruption.edit(lines[index].split(","), minute, self._rng, self._clock)
            self.counts[corruption.name] += 1

    def expected_rejects(self) -> Counter[str]:
        """Reject reasons a SPEC-conformant Feeder reports for the damaged lines."""
        reasons: Counter[str] = Counter()
        for c in CORRUPTIONS:
            if c.reason is not None and self.counts[c.name]:
                reasons[c.reason] += self.counts[c.name]
        return reasons

    def expected_profit_exclusions(self) -> int:
        """Accepted lines whose fare or tip is negative or not a number."""
        return sum(self.counts[c.name] for c in CORRUPTIONS if c.reason is None)
