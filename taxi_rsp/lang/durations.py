"""CQELS-QL durations: ``30m``, ``15 minutes``, ``1h``, and several units in one
(``1m 30s``, ``1h30m``: the ISWC 2011 grammar's ``Duration ::= (INTEGER unit)+``).

The engine's clock counts milliseconds (event times are whole milliseconds), so a
duration must be a whole number of milliseconds: ``500ns`` or ``1500us`` are refused
with that reason rather than rounded (``500ns`` used to round to 0 and be refused as
"not longer than 0"; ``1500us`` silently became 1 ms).

>>> parse_duration("1m 30s"), parse_duration("1h30m"), parse_duration("2000000ns")
(90000, 5400000, 2)
>>> parse_duration("500ns")
Traceback (most recent call last):
...
ValueError: 500ns is shorter than the engine's time resolution of 1 ms (event times are whole milliseconds)
"""

from __future__ import annotations

import re

# Nanoseconds per unit: the sum is exact whatever the units, then checked against 1 ms.
_NS_PER_MS = 1_000_000
_UNIT_NS = {
    "ns": 1, "nanosecond": 1, "nanoseconds": 1,
    "us": 1_000, "microsecond": 1_000, "microseconds": 1_000,
    "ms": _NS_PER_MS, "millisecond": _NS_PER_MS, "milliseconds": _NS_PER_MS,
    **{unit: 1_000 * _NS_PER_MS for unit in ("s", "sec", "secs", "second", "seconds")},
    **{unit: 60_000 * _NS_PER_MS for unit in ("m", "min", "mins", "minute", "minutes")},
    **{unit: 3_600_000 * _NS_PER_MS for unit in ("h", "hour", "hours")},
    **{unit: 86_400_000 * _NS_PER_MS for unit in ("d", "day", "days")},
}
_PART = re.compile(r"\s*([0-9]+)\s*([A-Za-z]+)")
_EXAMPLES = "use e.g. 30m, 15 minutes, 1h, 10s, 500ms or 1m 30s"


def parse_duration(text: str) -> int:
    """Milliseconds of a duration: one or more ``INTEGER unit`` parts, summed.

    Raises ValueError (with the reason) for anything else, and for a total that is not
    a whole number of milliseconds.

    >>> parse_duration("15 minutes"), parse_duration("500ms"), parse_duration("1 h 1 ms")
    (900000, 500, 3600001)
    >>> parse_duration("1500us")
    Traceback (most recent call last):
    ...
    ValueError: 1500us is not a whole number of milliseconds, the engine's time resolution (event times are whole milliseconds)
    """
    total_ns, position, stripped = 0, 0, text.strip()
    while position < len(stripped):
        match = _PART.match(stripped, position)
        if match is None or match.group(2).lower() not in _UNIT_NS:
            raise ValueError(f"not a duration: {text!r} ({_EXAMPLES})")
        total_ns += int(match.group(1)) * _UNIT_NS[match.group(2).lower()]
        position = match.end()
    if position == 0:
        raise ValueError(f"not a duration: {text!r} ({_EXAMPLES})")
    if 0 < total_ns < _NS_PER_MS:
        raise ValueError(f"{stripped} is shorter than the engine's time resolution of 1 ms "
                         "(event times are whole milliseconds)")
    if total_ns % _NS_PER_MS:
        raise ValueError(f"{stripped} is not a whole number of milliseconds, the engine's time resolution "
                         "(event times are whole milliseconds)")
    return total_ns // _NS_PER_MS
