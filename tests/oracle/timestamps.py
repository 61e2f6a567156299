"""Naive ``YYYY-MM-DD HH:MM:SS`` timestamps as integer seconds (SPEC §1).

Compared as written: no time zone or DST, so a proleptic-Gregorian seconds count
is exact, and adding a window is plain integer addition.
"""

from __future__ import annotations

import datetime as dt
import re

_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_DAY = 86_400


def parse_timestamp(text: str) -> int | None:
    """Seconds since 0001-01-01 00:00:00 (day 1), or None when not a valid timestamp.

    The calendar check (month length, leap years, hour < 24, second < 60, year >= 1)
    is delegated to ``datetime``; the fixed pattern is checked first because
    ``datetime`` would accept other spellings.
    """
    if _PATTERN.fullmatch(text) is None:
        return None
    try:
        moment = dt.datetime(int(text[0:4]), int(text[5:7]), int(text[8:10]),
                             int(text[11:13]), int(text[14:16]), int(text[17:19]))
    except ValueError:
        return None
    return moment.date().toordinal() * _DAY + moment.hour * 3600 + moment.minute * 60 + moment.second


def format_timestamp(seconds: int) -> str:
    """Inverse of :func:`parse_timestamp`."""
    days, rest = divmod(seconds, _DAY)
    day = dt.date.fromordinal(days)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{day.isoformat()} {hours:02d}:{minutes:02d}:{secs:02d}"
