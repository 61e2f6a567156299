"""Statistics of a trip file, in one streaming pass, for the fidelity check.

The real sample covers drop-offs 00:02..00:56 of 1 January 2013, so every statistic
that depends on the rate is compared on that same window of the synthetic file (the
window is read off the sample, not hard-coded): drop-off rate, distinct cells and
routes and top-route counts over the last 30 minutes, trips per taxi, the taxis'
wait and move between a drop-off and their next pickup. Distributions (trip time,
fare + tip, payment, tips, outliers, zero coordinates) are compared on the same
window too. Whole-file counts (days, trips per day, taxis, hourly cycle, order,
whole-minute timestamps) feed the 20-day facts of :mod:`.fidelity`.

This is a statistics tool, not a Feeder: a line counts when it has 17 fields and two
well-formed timestamps; coordinates are read as floats (cell edges do not matter here).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

from taxi_rsp.spec import FIELD_COUNT, Q1_GRID, Q2_GRID, Grid

_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d [0-2]\d:[0-5]\d:[0-5]\d")
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_M_PER_DEG_LAT = 111_200.0
_M_PER_DEG_LON = 84_300.0
WINDOW_MINUTES = 30  # Q1's window: cells and routes are counted over this span
RAMP = (2, 20)  # drop-off minutes of the midnight ramp (trips from before 00:00 are absent)


def _cell(grid: Grid, lon: float, lat: float) -> tuple[int, int] | None:
    x = math.floor((lon * 1e9 - grid.west) / grid.lon_step) + 1
    y = math.floor((grid.north - lat * 1e9) / grid.lat_step) + 1
    if 1 <= x <= grid.cells and 1 <= y <= grid.cells:
        return x, y
    return None


@dataclass
class Profile:
    """Statistics of one file; ``window_*`` fields cover drop-offs up to ``window_end``."""

    window_end: int
    lines: int = 0
    malformed: int = 0
    out_of_order: int = 0
    whole_minute: int = 0
    days: set[int] = field(default_factory=set)  # drop-off days, 0 = the first
    pickup_dates: set[str] = field(default_factory=set)
    per_day: Counter[int] = field(default_factory=Counter)
    per_hour: Counter[int] = field(default_factory=Counter)  # hour of day -> trips
    medallions: set[str] = field(default_factory=set)
    per_minute: Counter[int] = field(default_factory=Counter)  # window: minute -> drop-offs
    routes: Counter[tuple] = field(default_factory=Counter)  # last 30 min: Q1 routes
    q1_cells: set[tuple[int, int]] = field(default_factory=set)
    q2_cells: set[tuple[int, int]] = field(default_factory=set)
    trips: list[tuple] = field(default_factory=list)  # window trips (see window_trip)

    @property
    def window_count(self) -> int:
        return len(self.trips)


def profile_python(path: Path, window_end: int) -> Profile:
    """One streaming pass over ``path``; memory is O(window + days + medallions)."""
    p = Profile(window_end=window_end)
    day_index: dict[str, int] = {}
    first_day: date | None = None
    last = ""
    with open(path, encoding="utf-8", errors="replace", newline="") as source:
        for raw in source:
            p.lines += 1
            f = raw.rstrip("\r\n").split(",")
            if len(f) != FIELD_COUNT:
                p.malformed += 1
                continue
            pickup, dropoff = f[2].strip(), f[3].strip()
            if (not (_TIMESTAMP.fullmatch(pickup) and _TIMESTAMP.fullmatch(dropoff)) or not f[0].strip()
                    or pickup > dropoff):
                p.malformed += 1
                continue
            hour = int(dropoff[11:13])
            day_text = dropoff[:10]
            day = day_index.get(day_text)
            if day is None:
                try:
                    parsed = date.fromisoformat(day_text)
                except ValueError:
                    parsed = None
                if parsed is None or hour > 23 or int(pickup[11:13]) > 23:
                    p.malformed += 1
                    continue
                first_day = first_day or parsed
                day = day_index[day_text] = (parsed - first_day).days
            if hour > 23 or int(pickup[11:13]) > 23:
                p.malformed += 1
                continue
            if dropoff < last:
                p.out_of_order += 1
                continue
            last = dropoff
            minute = day * 1440 + hour * 60 + int(dropoff[14:16])
            p.days.add(day)
            p.pickup_dates.add(pickup[:10])
            p.per_day[day] += 1
            p.per_hour[hour] += 1
            p.medallions.add(f[0])
            if pickup.endswith(":00") and dropoff.endswith(":00"):
                p.whole_minute += 1
            if minute <= window_end:
                window_trip(p, f, pickup, dropoff, minute)
    return p


def _seconds(stamp: str) -> int:
    return (int(stamp[8:10]) * 24 + int(stamp[11:13])) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])


def window_trip(p: Profile, f: list[str], pickup: str, dropoff: str, minute: int) -> None:
    coords = [c.strip() for c in f[6:10]]
    if not all(_DECIMAL.fullmatch(c) for c in coords):
        return
    plon, plat, dlon, dlat = (float(c) for c in coords)
    p.per_minute[minute] += 1
    a, b = _cell(Q1_GRID, plon, plat), _cell(Q1_GRID, dlon, dlat)
    zero = 0.0 in (plon, plat, dlon, dlat)
    if minute > p.window_end - WINDOW_MINUTES and a and b:
        p.routes[(a, b)] += 1
        p.q1_cells.update((a, b))
        a2, b2 = _cell(Q2_GRID, plon, plat), _cell(Q2_GRID, dlon, dlat)
        if a2 and b2:
            p.q2_cells.update((a2, b2))
    try:
        money = round(float(f[11]) * 100) + round(float(f[14]) * 100)
    except ValueError:
        money = None
    p.trips.append(
        (f[0], _seconds(pickup), _seconds(dropoff), plon, plat, dlon, dlat, a is None or b is None, zero,
         f[10].strip(), money, f[14].strip() not in ("0", "0.00", "0.0"))
    )


def _reuse(trips: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """Minutes and metres from a taxi's drop-off to its next pickup, within the window."""
    by_taxi: dict[str, list[tuple]] = defaultdict(list)
    for trip in trips:
        by_taxi[trip[0]].append(trip)
    gaps, moves = [], []
    for mine in by_taxi.values():
        mine.sort(key=lambda t: t[1])
        for before, after in zip(mine, mine[1:]):
            gaps.append((after[1] - before[2]) / 60)
            points = (before[5], before[6], after[3], after[4])
            if 0.0 not in points:
                moves.append(math.hypot((points[2] - points[0]) * _M_PER_DEG_LON, (points[3] - points[1]) * _M_PER_DEG_LAT))
    return np.array(gaps or [math.nan]), np.array(moves or [math.nan])


def window_stats(p: Profile) -> dict[str, float]:
    """Rate-dependent and distribution statistics over the window (see module doc)."""
    trips = p.trips
    n = max(len(trips), 1)
    top = [count for _, count in p.routes.most_common(10)] + [0] * 10
    gaps, moves = _reuse(trips)
    money = np.array([t[10] for t in trips if t[10] is not None] or [0]) / 100
    card = [t for t in trips if t[9] == "CRD"]
    steady_from = p.window_end - WINDOW_MINUTES + 1
    return {
        "rate_steady": sum(p.per_minute[m] for m in range(steady_from, p.window_end + 1)) / WINDOW_MINUTES,
        "rate_ramp": sum(p.per_minute[m] for m in range(RAMP[0], RAMP[1] + 1)) / (RAMP[1] - RAMP[0] + 1),
        "routes": len(p.routes),
        "q1_cells": len(p.q1_cells),
        "q2_cells": len(p.q2_cells),
        "top1": top[0],
        "top10": top[9],
        "trips_per_taxi": len(trips) / max(len({t[0] for t in trips}), 1),
        "gap_p50": float(np.nanpercentile(gaps, 50)),
        "gap_p90": float(np.nanpercentile(gaps, 90)),
        "move_p50": float(np.nanpercentile(moves, 50)),
        "trip_minutes": float(np.mean([(t[2] - t[1]) / 60 for t in trips])) if trips else math.nan,
        "fare_tip_p10": float(np.percentile(money, 10)),
        "fare_tip_p50": float(np.percentile(money, 50)),
        "fare_tip_p90": float(np.percentile(money, 90)),
        "fare_tip_p99": float(np.percentile(money, 99)),
        "card_pct": 100 * len(card) / n,
        "card_tipped_pct": 100 * sum(1 for t in card if t[11]) / max(len(card), 1),
        "outlier_pct": 100 * sum(1 for t in trips if t[7]) / n,
        "zero_pct": 100 * sum(1 for t in trips if t[8]) / n,
    }
