"""DEBS 2015 Q1 (frequent routes) as a plain hand-written Python loop.

A yardstick for the engine's speed, not a product path: what a competent user
would write in an afternoon for this one query, with a dict of counts and a
sorted list of ranking keys, and nothing from ``taxi_rsp``. Issue 15 asks the
engine to come within 1.5x of it (``benchmarks/bench_handloop.py``). It follows
SPEC.md §1-§5: every reject reason, exact nano-degree cells, expiry
instants, emit iff the ordered top-10 changed, NULL padding, and a delay measured
from reading the line to formatting its output line. The file is self-contained
on purpose (handloop_q2.py repeats the input part): one file, one query.

    python benchmarks/handloop_q1.py INPUT.csv OUTPUT.csv
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import time
from bisect import bisect_left, insort
from collections import deque

WINDOW_S = 30 * 60
TOP_K = 10
REASONS = ("field_count", "bad_medallion", "bad_timestamp", "pickup_after_dropoff",
           "bad_coordinate", "out_of_order")
# SPEC §2, Q1 grid (500 m), nano-degrees
LON_STEP, LAT_STEP, WEST, NORTH, CELLS = 5_986_000, 4_491_556, -74_916_578_000, 41_477_182_778, 300

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


def cell(lon: int, lat: int) -> str | None:
    """The Q1 cell ``"x.y"`` of a point, or None outside the grid."""
    x = (lon - WEST) // LON_STEP + 1
    y = (NORTH - lat) // LAT_STEP + 1
    return f"{x}.{y}" if 1 <= x <= CELLS and 1 <= y <= CELLS else None


def run(path: str, out_path: str, window_s: int = WINDOW_S) -> dict:
    """Read the taxi CSV at ``path``, write Q1's output to ``out_path``; return counts
    and the CPU seconds of the loop."""
    cpu_started = time.process_time()
    rejected = dict.fromkeys(REASONS, 0)
    lines_read = accepted = outliers = emitted = 0
    delays: list[int] = []
    latest = None  # latest accepted dropoff, seconds
    count: dict[str, int] = {}  # route -> trips in the window
    fresh: dict[str, int] = {}  # route -> largest seq in the window (its newest trip)
    ranking: list[tuple[int, int, str]] = []  # sorted (-count, -fresh, route)
    window: deque[tuple[int, str]] = deque()  # (expiry instant, route), in arrival order
    last: list[str] = []  # route ids of the last line emitted

    def leave(route: str) -> None:
        # the oldest trip of the route leaves: the newest one (fresh) stays
        n, f = count[route], fresh[route]
        del ranking[bisect_left(ranking, (-n, -f, route))]
        if n == 1:
            del count[route], fresh[route]
        else:
            count[route] = n - 1
            insort(ranking, (1 - n, -f, route))

    def evaluate(pickup: str | None, dropoff: str | int, started: int | None) -> None:
        """Emit a line iff the ordered top 10 changed; an expiry passes (None, instant, None)."""
        nonlocal last, emitted
        top = [key[2] for key in ranking[:TOP_K]]
        if top == last:
            return
        last = top
        routes = ",".join(top + ["NULL,NULL"] * (TOP_K - len(top)))
        if started is None:
            text = stamp(dropoff)
            out.write(f"{text},{text},{routes},NULL\n")
        else:
            line = f"{pickup},{dropoff},{routes}"
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
            # expiry instants before this event, each evaluated on its own (SPEC §3)
            while window and window[0][0] < dropoff:
                tau = window[0][0]
                while window and window[0][0] == tau:
                    leave(window.popleft()[1])
                evaluate(None, tau, None)
            while window and window[0][0] == dropoff:  # merged into this arrival
                leave(window.popleft()[1])
            start, end = cell(coords[0], coords[1]), cell(coords[2], coords[3])
            if start is None or end is None:
                outliers += 1
            else:
                route = f"{start},{end}"
                n = count.get(route, 0)
                if n:
                    del ranking[bisect_left(ranking, (-n, -fresh[route], route))]
                count[route], fresh[route] = n + 1, seq
                insort(ranking, (-n - 1, -seq, route))
                window.append((dropoff + window_s, route))
            evaluate(fields[2], fields[3], started)
    return {
        "lines_read": lines_read, "accepted": accepted, "rejected": rejected,
        "outliers": outliers, "emitted": emitted,
        "delay_ms_mean": sum(delays) / len(delays) / 1e6 if delays else None,
        "cpu_seconds": time.process_time() - cpu_started,
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python benchmarks/handloop_q1.py INPUT.csv OUTPUT.csv")
    print(run(sys.argv[1], sys.argv[2]))
