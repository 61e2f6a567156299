"""Inputs for the scale-out tests (no tests here): hand-made files whose interesting
lines sit where a time-partitioned run cuts.

``adversarial_lines`` returns the lines and, by name, the line numbers at which a chunk
should start to hit each hazard; ``time_jump_lines`` puts a far-future drop-off early,
so the out-of-order state of a late chunk comes from far before its start.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

BASE = dt.datetime(2013, 1, 1, 0, 0, 0)
POINTS = (
    ("-73.973145", "40.752827"), ("-73.956528", "40.716976"), ("-73.980000", "40.750000"),
    ("-73.990000", "40.730000"), ("-73.950000", "40.780000"), ("-73.870000", "40.770000"),
)


def trip(medallion: str, seconds: int, start: int, end: int, fare: str = "10.00", tip: str = "1.00") -> str:
    """A valid trip dropped off ``seconds`` after midnight, between two of POINTS."""
    dropoff = BASE + dt.timedelta(seconds=seconds)
    pickup = dropoff - dt.timedelta(seconds=60)
    stamp = "%Y-%m-%d %H:%M:%S"
    return ",".join([medallion, "H" + medallion, pickup.strftime(stamp), dropoff.strftime(stamp), "60", "1.0",
                     *POINTS[start], *POINTS[end], "CSH", fare, "0.50", "0.50", tip, "0.00", "12.00"])


def adversarial_lines() -> tuple[list[str], dict[str, int]]:
    lines: list[str] = []
    marks: dict[str, int] = {}

    def add(line: str, mark: str | None = None) -> None:
        lines.append(line)
        if mark:
            marks[mark] = len(lines)  # 1-based number of the line just added

    # Minutes 0-10: a changing top-10 of routes and taxis that come back.
    for minute in range(11):
        for k in range(3):
            add(trip(f"M{(minute + k) % 5}", 60 * minute, (minute + k) % 6, (minute * k + 1) % 6,
                     fare=f"{5 + minute}.{k}5"))
    # 00:12:00, eight equal drop-offs: a chunk starts in the middle of them.
    for k in range(8):
        add(trip(f"M{k % 4}", 720, k % 6, (k + 2) % 6), "equal_timestamps" if k == 4 else None)
    # Taxi M9 empty in its drop-off cell from 00:14; a chunk starts inside that period
    # (00:20) and M9's next trip (00:27) ends it.
    add(trip("M9", 840, 1, 2, fare="40.00"))
    for minute in range(16, 27):
        add(trip(f"M{minute % 4}", 60 * minute, minute % 6, (minute + 3) % 6), "empty_period" if minute == 20 else None)
    add(trip("M9", 1620, 2, 3))
    # A dirty line and a late (out-of-order) line, each the first line of a chunk.
    add(",".join(["M1"] * 16), "dirty_first")
    add(trip("M2", 1630, 0, 1))
    add(trip("M3", 1500, 1, 1), "out_of_order_first")
    add(trip("M4", 1650, 3, 4))
    add("", None)  # an empty line: field_count
    # A gap: the 00:12 burst (Q1 30 min) and much else expire at 00:42-00:56 between
    # 00:27:30 and 00:58; a chunk starts right after the gap.
    add(trip("M0", 3480, 4, 5), "expiry_burst")
    for second in (3480, 3480, 3490, 3540, 3600):
        add(trip(f"M{second % 3}", second, 5, second % 6))
    # Another gap shorter than the longest window: some expire, some remain.
    add(trip("M1", 4500, 0, 2), "partial_expiry")
    add(trip("M2", 4560, 0, 2, fare="bad"))
    return lines, marks


def time_jump_lines() -> list[str]:
    """Line 3 jumps to 02:00; the lines after it before 02:00 are out of order."""
    lines = [trip("M0", 0, 0, 1), trip("M1", 60, 1, 2), trip("M2", 7200, 2, 3)]
    lines += [trip(f"M{k % 4}", 120 + 60 * k, k % 6, (k + 1) % 6) for k in range(40)]
    lines += [trip(f"M{k % 4}", 7200 + 60 * k, k % 6, (k + 2) % 6) for k in range(20)]
    return lines


def write_lines(path: Path, lines: list[str], ending: str = "\n", final: bool = True) -> Path:
    path.write_bytes((ending.join(lines) + (ending if final else "")).encode("utf-8"))
    return path
