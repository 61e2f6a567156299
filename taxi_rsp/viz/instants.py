"""Which instants the maps show, and the trip counts behind Q1's arrows.

q1.csv names the top-10 routes but not their counts (SPEC §5), so the arrow widths are
counted here from the input: the valid trips of each route with drop-off in
(τ − W, τ], τ the shown line's trigger time. Trips dropped off in the same second after
the trigger are included; with whole-minute timestamps that can add a few trips, never
change which routes are drawn (those come from q1.csv).
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from taxi_rsp.viz.density import FIELDS
from taxi_rsp.viz.grid import Q1, parse_nano

STAMP = "%Y-%m-%d %H:%M:%S"
DROPOFF = 3


def busiest_minute(path: Path) -> str | None:
    """The drop-off minute (``YYYY-MM-DD HH:MM``) with the most trips; the earliest of ties."""
    minutes: Counter[str] = Counter()
    with path.open("rb") as handle:
        for raw in handle:
            fields = raw.split(b",")
            if len(fields) == FIELDS:
                minutes[fields[DROPOFF].decode("ascii", "replace").strip()[:16]] += 1
    if not minutes:
        return None
    top = max(minutes.values())
    return min(m for m, n in minutes.items() if n == top)


def steps(first: str, last: str, every: timedelta = timedelta(hours=2), panels: int = 6,
          most: int = 12) -> list[str]:
    """Instants for the small multiples, ending at ``last``: every two hours of event
    time (a multiple of two hours when that would give more than ``most`` panels); a run
    shorter than ``panels`` two-hour steps is cut into ``panels`` equal whole-minute steps.

    >>> steps("2013-01-01 00:00:00", "2013-01-01 01:00:00")[:2]
    ['2013-01-01 00:10:00', '2013-01-01 00:20:00']
    >>> len(steps("2013-01-01 00:00:00", "2013-01-21 00:00:00"))
    12
    """
    start, end = datetime.strptime(first, STAMP), datetime.strptime(last, STAMP)
    span = end - start
    if span < every * panels:
        step = timedelta(minutes=max(1, round(span.total_seconds() / 60 / panels)))
    else:
        step = every * math.ceil(span / (every * most))
    out, moment = [], end
    while moment > start and len(out) < most:
        out.append(moment.strftime(STAMP))
        moment -= step
    return sorted(out)


def route_counts(path: Path, instants: list[str], window_min: int) -> dict[str, Counter[tuple[str, str]]]:
    """For each instant τ, the number of Q1-valid trips per route with drop-off in (τ − W, τ]."""
    bounds = [((datetime.strptime(t, STAMP) - timedelta(minutes=window_min)).strftime(STAMP), t) for t in instants]
    counts: dict[str, Counter[tuple[str, str]]] = {t: Counter() for t in instants}
    lowest = min((low for low, _ in bounds), default="")
    highest = max(instants, default="")
    with path.open("rb") as handle:
        for raw in handle:
            fields = raw.split(b",")
            if len(fields) != FIELDS:
                continue
            dropoff = fields[DROPOFF].decode("ascii", "replace").strip()
            if not lowest < dropoff <= highest:
                continue
            coords = [parse_nano(f.decode("ascii", "replace")) for f in fields[6:10]]
            if None in coords:
                continue
            start, end = Q1.cell_of(coords[0], coords[1]), Q1.cell_of(coords[2], coords[3])
            if start is None or end is None:
                continue
            route = (f"{start[0]}.{start[1]}", f"{end[0]}.{end[1]}")
            for low, high in bounds:
                if low < dropoff <= high:
                    counts[high][route] += 1
    return counts
