"""Hypothesis strategies for small adversarial taxi CSV files (SPEC §1).

Few points (so few cells and routes: ties are common), few medallions (taxis come
back: Q2 empty-taxi logic), equal and whole-minute timestamps, gaps of exactly a
window and longer than any window, some outliers, fares ending in half a cent,
unusable fares and tips, and bad lines of every reject reason.

Used by the property tests of the oracle, the engine and the baseline:

    @given(csv_files())
    def test_x(tmp_path_factory, data): path = write_csv(tmp_path_factory.mktemp("x"), data)
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import strategies as st

BASE = dt.datetime(2013, 1, 1, 0, 0, 0)

# (lon, lat) texts valid in both grids; few of them, so few cells and routes. Two
# lie exactly on cell corners: the north-west corner of Q1 cell 158.162 and of Q2
# cell 315.324 (a point on a west/north edge belongs to that cell).
VALID_POINTS = (
    ("-73.973145", "40.752827"),
    ("-73.956528", "40.716976"),
    ("-73.980000", "40.750000"),
    ("-73.976776", "40.754042262"),
    ("-73.9752795", "40.750673595"),
    ("-73.990000", "40.730000"),
    ("-73.950000", "40.780000"),
    ("-73.870000", "40.770000"),
)
# Outliers: the real data's zeros, just west of both grids, just east of Q1 only.
OUTLIER_POINTS = (
    ("0.000000", "0.000000"),
    ("-74.916578001", "41.0"),
    ("-73.120778", "40.5"),
)
MEDALLIONS = ("M0", "M1", "M2", "M3")
MONEY = ("10.00", "2.50", "0.00", "4.99", "0.01", "7.005", "7.015", "3.125", "5", ".5", "12.345")
BAD_MONEY = ("", "-1.00", "abc", "1e2", "-0.004")
# Seconds between consecutive dropoffs: equal times, whole minutes, exactly the
# windows (expiry merged with an arrival), longer than every window, odd seconds.
GAPS = (0, 0, 0, 60, 60, 120, 300, 900, 1800, 2700, 3600, 7200, 17)
PICKUP_BEFORE = (0, 60, 600)


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _line(medallion: str, pickup: str, dropoff: str, start: tuple[str, str],
          end: tuple[str, str], fare: str, tip: str) -> str:
    return ",".join([medallion, "H" + medallion, pickup, dropoff, "60", "1.0", *start, *end,
                     "CSH", fare, "0.50", "0.50", tip, "0.00", "12.00"])


@st.composite
def _trip(draw: st.DrawFn, dropoff: dt.datetime) -> str:
    # repetition weights the draw: mostly valid points and usable money
    point = st.sampled_from(VALID_POINTS * 4 + OUTLIER_POINTS)
    money = st.sampled_from(MONEY * 3 + BAD_MONEY)
    pickup = dropoff - dt.timedelta(seconds=draw(st.sampled_from(PICKUP_BEFORE)))
    return _line(draw(st.sampled_from(MEDALLIONS)), _stamp(pickup), _stamp(dropoff),
                 draw(point), draw(point), draw(money), draw(money))


@st.composite
def _bad_line(draw: st.DrawFn, dropoff: dt.datetime) -> str:
    """A line rejected for a chosen reason (out_of_order only once a trip was accepted)."""
    good = draw(_trip(dropoff)).split(",")
    reason = draw(st.sampled_from(("field_count", "bad_medallion", "bad_timestamp",
                                   "pickup_after_dropoff", "bad_coordinate", "out_of_order")))
    if reason == "field_count":
        return draw(st.sampled_from(("", ",".join(good[:16]), ",".join(good) + ",")))
    if reason == "bad_medallion":
        good[0] = draw(st.sampled_from(("", "  ")))
    elif reason == "bad_timestamp":
        good[3] = draw(st.sampled_from(("2013-01-01 00:60:00", "2013-02-29 00:00:00",
                                        "2013-01-01T00:00:00", "")))
    elif reason == "pickup_after_dropoff":
        good[2] = _stamp(dropoff + dt.timedelta(seconds=60))
    elif reason == "bad_coordinate":
        good[draw(st.integers(6, 9))] = draw(st.sampled_from(("1e3", "nan", "", "-", "4\ufffd0.7")))
    else:
        good[2] = good[3] = _stamp(dropoff - dt.timedelta(seconds=draw(st.sampled_from((1, 60, 3600)))))
    return ",".join(good)


@st.composite
def csv_lines(draw: st.DrawFn, max_lines: int = 40) -> list[str]:
    """The lines of a small input file (no line ends)."""
    count = draw(st.integers(0, max_lines))
    lines: list[str] = []
    clock = BASE
    for _ in range(count):
        clock += dt.timedelta(seconds=draw(st.sampled_from(GAPS)))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(_bad_line(clock)))
        else:
            lines.append(draw(_trip(clock)))
    return lines


@st.composite
def csv_files(draw: st.DrawFn, max_lines: int = 40) -> bytes:
    """A whole file: LF or CRLF line ends, with or without a final line end; a
    replacement character may stand for a byte that is not UTF-8."""
    lines = draw(csv_lines(max_lines))
    ending = draw(st.sampled_from(("\n", "\r\n")))
    text = ending.join(lines)
    if lines and draw(st.booleans()):
        text += ending
    return text.encode("utf-8").replace("\ufffd".encode("utf-8"), b"\xff")


def write_csv(directory: Path, data: bytes, name: str = "input.csv") -> Path:
    """Write a generated file and return its path."""
    path = Path(directory) / name
    path.write_bytes(data)
    return path
