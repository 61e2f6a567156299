"""Line validation and exact number conversion of SPEC §1 (no floats anywhere).

>>> to_scaled("-73.956528", 9), to_scaled("1.0000000005", 9), to_scaled("1.0000000015", 9)
(-73956528000, 1000000000, 1000000002)
>>> to_scaled("-0.004", 2), to_scaled(".5", 2), to_scaled("1.", 2)
(0, 50, 100)
>>> to_scaled("1e3", 2) is None, to_scaled("٤٠.7", 2) is None, to_scaled("nan", 2) is None
(True, True, True)
"""

from __future__ import annotations

import re
from datetime import date

_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})\Z")


def to_scaled(text: str, places: int) -> int | None:
    """``text`` in xsd:decimal syntax (``[+-]?[0-9]*(.[0-9]*)?`` with at least one
    digit) as an integer count of 10^-places, rounded once half to even; None when it
    is not a decimal number. (String methods, not a regex: this runs on every cache
    miss of the Feeder's coordinate and money codecs.)"""
    negative = False
    if text[:1] in ("+", "-"):
        negative = text[0] == "-"
        text = text[1:]
    whole, _, frac = text.partition(".")
    number = whole + frac
    # "", "+", ".", "-." are not numbers; isdigit alone would take "²" and "٤"
    if not (number.isascii() and number.isdigit()):
        return None
    digits = int(number)
    shift = places - len(frac)
    if shift >= 0:
        value = digits * 10**shift
    else:
        unit = 10**-shift
        value, rest = divmod(digits, unit)
        if 2 * rest > unit or (2 * rest == unit and value % 2 == 1):  # half to even
            value += 1
    return -value if negative else value


def timestamp_millis(text: str) -> int | None:
    """Milliseconds since 1970-01-01 of a strict ``YYYY-MM-DD HH:MM:SS`` (ASCII digits,
    a real calendar date and time of day), or None when ``text`` is not one.

    >>> timestamp_millis("1970-01-02 00:00:01"), timestamp_millis("2013-02-29 00:00:00")
    (86401000, None)
    """
    match = _TIMESTAMP.match(text)
    if match is None:
        return None
    try:
        day = date(int(match[1]), int(match[2]), int(match[3])).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None
    hour, minute, second = int(match[4]), int(match[5]), int(match[6])
    if hour > 23 or minute > 59 or second > 59:  # no leap seconds, no 24:00:00
        return None
    return ((day * 24 + hour) * 60 + minute) * 60_000 + second * 1000


def timestamp_valid(text: str) -> bool:
    """Strict ``YYYY-MM-DD HH:MM:SS`` with ASCII digits and a real calendar instant."""
    return timestamp_millis(text) is not None


def format_scaled(value: int, places: int) -> str:
    """A scaled integer as a decimal with exactly ``places`` decimals.

    >>> format_scaled(-73956528000, 9), format_scaled(-1, 2)
    ('-73.956528000', '-0.01')
    """
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**places)
    return f"{sign}{whole}.{frac:0{places}d}"
