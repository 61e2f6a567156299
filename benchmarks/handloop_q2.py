"""DEBS 2015 Q2 (profitable areas) as a plain hand-written Python loop.

A yardstick for the engine's speed, not a product path: what a competent user
would write in an afternoon for this one query — dicts per cell and per taxi, a
sorted list of fares per cell for the median, a sorted list of ranking keys — and
nothing from ``taxi_rsp``. Issue 15 asks the engine to be at least as fast
(``benchmarks/bench_handloop.py``). It follows SPEC.md §1-§5: every
reject reason, exact nano-degree cells and cents, expiry instants of both windows,
exact profitability order, emit iff the ordered top-10 changed, NULL padding, and
a delay measured from reading the line to formatting its output line. The file is
self-contained on purpose (the input part repeats handloop_q1.py): one file, one query.

    python benchmarks/handloop_q2.py INPUT.csv OUTPUT.csv
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import time
from bisect import bisect_left, insort
from collections import deque

PROFIT_S, EMPTY_S = 15 * 60, 30 * 60
TOP_K = 10
REASONS = ("field_count", "bad_medallion", "bad_timestamp", "pickup_after_dropoff",
           "bad_coordinate", "out_of_order")
# SPEC §2, Q2 grid (250 m), nano-degrees
LON_STEP, LAT_STEP, WEST, NORTH, CELLS = 2_993_000, 2_245_778, -74_915_081_500, 41_476_059_889, 600

_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")  # xsd:decimal, ASCII digits
_stamps: dict[str, int | None] = {}  # timestamps repeat a lot: parse each text once


def seconds(text: str) -> int | None:
    """``YYYY-MM-DD HH:MM:SS`` as seconds since 0001-01-01 (day 1), or None if invalid."""
    if text in _stamps:
        return _stamps[text]
    value = None
    if _STAMP.fullmatch(text):
        try:
            moment = dt.datetime(int(text[:4]), int(text[5:7]), int(text[8:10]),
                                 int(text[11:13]), int(text[14:16]), int(text[17:19]))
            value = moment.toordinal() * 86_400 + moment.hour * 3600 + moment.minute * 60 + moment.second
        except ValueError:
            pass
    if len(_stamps) > 100_000:
        _stamps.clear()
    _stamps[text] = value
    return value


def stamp(secs: int) -> str:
    """Inverse of :func:`seconds`, for expiry instants."""
    day, rest = divmod(secs, 86_400)
    return f"{dt.date.fromordinal(day).isoformat()} {rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"


def scaled(text: str, places: int) -> int | None:
    """A decimal number as an exact integer count of 10**-places (half to even), or None."""
    if _NUMBER.fullmatch(text) is None:
        return None
    whole, _, frac = text.lstrip("+-").partition(".")
    digits = (whole or "0") + frac[:places].ljust(places, "0")
    value = int(digits) if len(digits) < 4000 else _long_int(digits)
    dropped = frac[places:].rstrip("0")
    if dropped and (dropped > "5" or (dropped == "5" and value % 2)):
        value += 1  # more than half, or exactly half onto an odd last digit
    return -value if text[0] == "-" else value


def _long_int(digits: str) -> int:
    """int() of a digit string beyond Python's 4300-digit conversion limit."""
    value = 0
    for start in range(0, len(digits), 1000):
        chunk = digits[start:start + 1000]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def cell(lon: int, lat: int) -> int | None:
    """The Q2 cell of a point as ``x * 1000 + y`` (so integer order is x, then y), or None."""
    x = (lon - WEST) // LON_STEP + 1
    y = (NORTH - lat) // LAT_STEP + 1
    return x * 1000 + y if 1 <= x <= CELLS and 1 <= y <= CELLS else None


class Ratio:
    """median / empty, exact, ordered *descending*; consulted only when the floats in
    front of it in a ranking key tie (rounding keeps the order of unequal floats)."""

    __slots__ = ("num", "den")

    def __init__(self, num: int, den: int) -> None:
        self.num, self.den = num, den

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ratio) and self.num * other.den == other.num * self.den

    def __lt__(self, other: Ratio) -> bool:
        return self.num * other.den > other.num * self.den


def money(half_cents: int) -> str:
    """Dollars with 2 decimals, or 3 when the amount ends in half a cent."""
    if half_cents % 2:
        return f"{half_cents * 5 // 1000}.{half_cents * 5 % 1000:03d}"
    return f"{half_cents // 200}.{half_cents // 2 % 100:02d}"


def profitability(half_cents: int, empty: int) -> str:
    """half_cents / (200 * empty) dollars, rounded half to even to 4 decimals."""
    q, r = divmod(half_cents * 50, empty)
    if 2 * r > empty or (2 * r == empty and q % 2):
        q += 1
    return f"{q // 10_000}.{q % 10_000:04d}"


def run(path: str, out_path: str, profit_s: int = PROFIT_S, empty_s: int = EMPTY_S) -> dict:
    """Read the taxi CSV at ``path``, write Q2's output to ``out_path``; return counts
    and the CPU seconds of the loop."""
    cpu_started = time.process_time()
    rejected = dict.fromkeys(REASONS, 0)
    lines_read = accepted = outliers = excluded = emitted = 0
    delays: list[int] = []
    latest = None  # latest accepted dropoff, seconds
    fares: dict[int, list[int]] = {}  # pickup cell -> sorted fare + tip (cents) in the profit window
    fare_fresh: dict[int, int] = {}  # pickup cell -> seq of its newest fare in the window
    taxis: dict[str, tuple[int, int]] = {}  # medallion -> (seq, dropoff cell) of its latest trip, in window
    empties: dict[int, dict[int, None]] = {}  # dropoff cell -> seqs of empty taxis' latest trips (in order)
    keys: dict[int, tuple] = {}  # ranked cell -> its key in ranking
    ranking: list[tuple] = []  # sorted (-float ratio, Ratio, -fresh, cell)
    paid: deque[tuple[int, int, int]] = deque()  # (expiry, pickup cell, cents)
    dropped: deque[tuple[int, str, int, int]] = deque()  # (expiry, medallion, seq, dropoff cell)
    last: list[int] = []  # cells of the last line emitted

    def refresh(c: int) -> None:
        """Re-rank cell c after its fares or its empty taxis changed."""
        old = keys.pop(c, None)
        if old is not None:
            del ranking[bisect_left(ranking, old)]
        prices, taxis_here = fares.get(c), empties.get(c)
        if prices and taxis_here:
            n = len(prices)
            half = 2 * prices[n // 2] if n % 2 else prices[n // 2 - 1] + prices[n // 2]
            e = len(taxis_here)
            fresh = max(fare_fresh[c], next(reversed(taxis_here)))
            try:
                approx = half / e  # correctly rounded, so it orders like the exact ratio
            except OverflowError:  # a fare of hundreds of digits
                approx = float("inf")
            keys[c] = key = (-approx, Ratio(half, e), -fresh, c)
            insort(ranking, key)

    def expire(until: int, changed: set[int]) -> None:
        """Trips whose expiry instant is <= until leave their windows."""
        while paid and paid[0][0] <= until:
            _, c, cents = paid.popleft()
            prices = fares[c]
            del prices[bisect_left(prices, cents)]
            if not prices:
                del fares[c], fare_fresh[c]
            changed.add(c)
        while dropped and dropped[0][0] <= until:
            _, medallion, seq, c = dropped.popleft()
            if taxis.get(medallion, (0,))[0] == seq:  # still the taxi's latest trip
                del taxis[medallion], empties[c][seq]
                if not empties[c]:
                    del empties[c]
                changed.add(c)

    def evaluate(pickup: str | None, dropoff: str | int, started: int | None) -> None:
        """Emit a line iff the ordered top 10 changed; an expiry passes (None, instant, None)."""
        nonlocal last, emitted
        top = ranking[:TOP_K]
        cells = [key[3] for key in top]
        if cells == last:
            return
        last = cells
        groups = [f"{c // 1000}.{c % 1000},{r.den},{money(r.num)},{profitability(r.num, r.den)}"
                  for _, r, _, c in top]
        body = ",".join(groups + ["NULL,NULL,NULL,NULL"] * (TOP_K - len(top)))
        if started is None:
            text = stamp(dropoff)
            out.write(f"{text},{text},{body},NULL\n")
        else:
            line = f"{pickup},{dropoff},{body}"
            delay = time.perf_counter_ns() - started
            delays.append(delay)
            out.write(f"{line},{delay / 1e6:.3f}\n")
        emitted += 1

    with open(path, "rb") as source, open(out_path, "w", encoding="utf-8", newline="\n") as out:
        for seq, raw in enumerate(source, start=1):
            started = time.perf_counter_ns()
            lines_read += 1
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
            fields = [f.strip() for f in raw.decode("utf-8", "replace").split(",")]
            if len(fields) != 17:
                rejected["field_count"] += 1
                continue
            if not fields[0]:
                rejected["bad_medallion"] += 1
                continue
            pickup, dropoff = seconds(fields[2]), seconds(fields[3])
            if pickup is None or dropoff is None:
                rejected["bad_timestamp"] += 1
                continue
            if pickup > dropoff:
                rejected["pickup_after_dropoff"] += 1
                continue
            coords = [scaled(fields[i], 9) for i in (6, 7, 8, 9)]
            if None in coords:
                rejected["bad_coordinate"] += 1
                continue
            if latest is not None and dropoff < latest:
                rejected["out_of_order"] += 1
                continue
            latest = dropoff
            accepted += 1
            fare, tip = scaled(fields[11], 2), scaled(fields[14], 2)
            cents = fare + tip if fare is not None and tip is not None and fare >= 0 and tip >= 0 else None
            excluded += cents is None
            # expiry instants before this event, each evaluated on its own (SPEC §3)
            while (paid and paid[0][0] < dropoff) or (dropped and dropped[0][0] < dropoff):
                tau = min(q[0][0] for q in (paid, dropped) if q)
                changed: set[int] = set()
                expire(tau, changed)
                for c in changed:
                    refresh(c)
                evaluate(None, tau, None)
            changed = set()
            expire(dropoff, changed)  # instants at this event's time merge into its evaluation
            start, end = cell(coords[0], coords[1]), cell(coords[2], coords[3])
            if start is None or end is None:
                outliers += 1
            else:
                if cents is not None:
                    insort(fares.setdefault(start, []), cents)
                    fare_fresh[start] = seq
                    paid.append((dropoff + profit_s, start, cents))
                    changed.add(start)
                before = taxis.get(fields[0])
                if before is not None:  # the taxi is no longer empty where it was
                    del empties[before[1]][before[0]]
                    if not empties[before[1]]:
                        del empties[before[1]]
                    changed.add(before[1])
                taxis[fields[0]] = (seq, end)
                empties.setdefault(end, {})[seq] = None
                dropped.append((dropoff + empty_s, fields[0], seq, end))
                changed.add(end)
            for c in changed:
                refresh(c)
            evaluate(fields[2], fields[3], started)
    return {
        "lines_read": lines_read, "accepted": accepted, "rejected": rejected,
        "outliers": outliers, "profit_excluded": excluded, "emitted": emitted,
        "delay_ms_mean": sum(delays) / len(delays) / 1e6 if delays else None,
        "cpu_seconds": time.process_time() - cpu_started,
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python benchmarks/handloop_q2.py INPUT.csv OUTPUT.csv")
    print(run(sys.argv[1], sys.argv[2]))
