"""Line validation of SPEC §1 / §1.1 for the baseline, one line at a time.

Pure functions, written for the baseline only (the engine's feeder is a separate
implementation of the same SPEC). Everything except ``out_of_order`` is decided here;
that last reason needs the running maximum of the accepted drop-off times, which the
reader computes with a Spark window over line numbers.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from taxi_rsp.spec import FIELD_COUNT, FIELD_INDEX, Q1_GRID, Q2_GRID

# xsd:decimal: optional sign, digits with an optional ".fraction", or ".fraction" alone.
# ASCII classes on purpose: \d would also match other scripts' digits.
_DECIMAL = re.compile(r"([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))")
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})")
_SECONDS_PER_DAY = 86_400
NANO_PLACES = 9
ROUTE_BASE = 1_000_000  # route code = pickup cell code * ROUTE_BASE + dropoff cell code
CENT_PLACES = 2

_MEDALLION = FIELD_INDEX["medallion"]
_PICKUP = FIELD_INDEX["pickup_datetime"]
_DROPOFF = FIELD_INDEX["dropoff_datetime"]
_COORDS = tuple(FIELD_INDEX[name] for name in
                ("pickup_longitude", "pickup_latitude", "dropoff_longitude", "dropoff_latitude"))
_FARE = FIELD_INDEX["fare_amount"]
_TIP = FIELD_INDEX["tip_amount"]


def decimal_units(text: str, places: int) -> int | None:
    """``text`` as an exact integer number of 10**-places units, or None if not a number.

    Rounded once, half to even, by reading the dropped digits as text (no floats and
    no ``decimal`` precision limit).

    >>> decimal_units("-73.9565285", 6), decimal_units("0.125", 2), decimal_units("1e3", 2)
    (-73956528, 12, None)
    """
    match = _DECIMAL.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction, bare_fraction = match.groups()
    if whole is None:
        whole, fraction = "0", bare_fraction
    fraction = fraction or ""
    kept = fraction[:places].ljust(places, "0")
    rest = fraction[places:].rstrip("0")
    value = _int_of_digits(whole + kept)
    if rest:
        half = "5"
        if rest > half or (rest == half and value % 2 == 1):
            value += 1  # "5" followed by non-zeros sorts after "5": above half
    return -value if sign == "-" else value


def _int_of_digits(digits: str) -> int:
    """int() of a long ASCII digit string (Python caps int(str) at 4300 digits)."""
    value = 0
    for start in range(0, len(digits), 4000):
        piece = digits[start:start + 4000]
        value = value * 10 ** len(piece) + int(piece)
    return value


def timestamp_seconds(text: str) -> int | None:
    """Seconds of a ``YYYY-MM-DD HH:MM:SS`` naive timestamp on a proleptic calendar."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    if hour > 23 or minute > 59 or second > 59:
        return None
    try:
        ordinal = dt.date(year, month, day).toordinal()
    except ValueError:  # month 13, 30 February, year 0, ...
        return None
    return ordinal * _SECONDS_PER_DAY + hour * 3600 + minute * 60 + second


def format_seconds(seconds: int) -> str:
    """Inverse of :func:`timestamp_seconds`."""
    days, rest = divmod(seconds, _SECONDS_PER_DAY)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{dt.date.fromordinal(days).isoformat()} {hour:02d}:{minute:02d}:{second:02d}"


@dataclass(frozen=True)
class Trip:
    """What the two queries need of one line that passed the per-line checks.

    Cells are ``x * 1000 + y`` codes (x then y ascending sorts like the code), or
    None when the trip is an outlier of that query.
    """

    medallion: str
    pickup_text: str
    dropoff_text: str
    dropoff: int
    q1_pickup: int | None
    q1_dropoff: int | None
    q2_pickup: int | None
    q2_dropoff: int | None
    profit_cents: int | None


def decode_line(raw: bytes) -> str:
    """A physical line as SPEC §1 reads it: UTF-8 with U+FFFD, without a CRLF's CR."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


def check_line(line: str) -> Trip | str:
    """The trip, or the first failing reject reason of SPEC §1.1 (out_of_order excepted)."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != FIELD_COUNT:
        return "field_count"
    if not fields[_MEDALLION]:
        return "bad_medallion"
    pickup = timestamp_seconds(fields[_PICKUP])
    dropoff = timestamp_seconds(fields[_DROPOFF])
    if pickup is None or dropoff is None:
        return "bad_timestamp"
    if pickup > dropoff:
        return "pickup_after_dropoff"
    coords = [decimal_units(fields[i], NANO_PLACES) for i in _COORDS]
    if None in coords:
        return "bad_coordinate"
    p_lon, p_lat, d_lon, d_lat = coords
    q1 = _cells(Q1_GRID.cell(p_lon, p_lat), Q1_GRID.cell(d_lon, d_lat))
    q2 = _cells(Q2_GRID.cell(p_lon, p_lat), Q2_GRID.cell(d_lon, d_lat))
    return Trip(fields[_MEDALLION], fields[_PICKUP], fields[_DROPOFF], dropoff,
                *q1, *q2, _profit(fields[_FARE], fields[_TIP]))


def _cells(pickup: tuple[int, int] | None, dropoff: tuple[int, int] | None) -> tuple[int | None, int | None]:
    """Both cell codes when both points are in the grid; (None, None) for an outlier."""
    if pickup is None or dropoff is None:
        return None, None
    return pickup[0] * 1000 + pickup[1], dropoff[0] * 1000 + dropoff[1]


def _profit(fare_text: str, tip_text: str) -> int | None:
    """fare + tip in cents; None when either is missing, unparseable or negative."""
    fare = decimal_units(fare_text, CENT_PLACES)
    tip = decimal_units(tip_text, CENT_PLACES)
    if fare is None or tip is None or fare < 0 or tip < 0:
        return None
    return fare + tip
