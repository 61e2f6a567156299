"""Expected pickups per minute over the run: the daily and weekly cycle.

The real sample covers only the first 54 minutes of 1 January 2013 (New Year's
night), so the *shape* of a day cannot come from it. It comes from general knowledge
of NYC yellow-cab demand in 2013 (TLC factbooks, the public trip records):

* weekdays are quiet around 5 am (well under 1 % of the day's trips per hour), rise
  with the morning commute, stay flat through the day and peak 6-10 pm;
* Friday and Saturday evenings run late, so Saturday and Sunday *early* hours are
  busy (4-6 % per hour) and their quiet hour moves to about 6 am;
* volume is lowest on Sunday and Monday, highest Thursday to Saturday;
* 1 January is a holiday after the busiest night of the year: its first hours are
  calibrated on the sample itself (≈250 drop-offs per minute once the midnight
  ramp is over), its daytime is Sunday-like and low.

The weekday base is set so that the 20 days 2013-01-01..20 hold ≈2.0 M trips
(≈100 k per day), the size of the official file.
"""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np

START_DATE = date(2013, 1, 1)

# Share of a day's trips in each hour 0..23 (normalised below).
_WEEKDAY = (2.6, 1.6, 1.1, 0.9, 0.75, 0.7, 1.6, 3.5, 4.6, 4.6, 4.3, 4.4,
            4.7, 4.7, 4.9, 4.8, 4.2, 5.0, 6.2, 6.5, 6.0, 5.9, 5.8, 4.7)
_FRIDAY = (2.7, 1.7, 1.2, 0.9, 0.8, 0.75, 1.5, 3.2, 4.2, 4.2, 4.0, 4.1,
           4.3, 4.4, 4.6, 4.5, 4.0, 4.7, 5.6, 5.9, 5.6, 5.7, 6.2, 6.5)
_SATURDAY = (5.6, 4.9, 4.0, 3.0, 2.2, 1.0, 0.7, 1.0, 1.6, 2.5, 3.4, 4.1,
             4.6, 4.8, 4.9, 4.8, 4.6, 4.8, 5.3, 5.6, 5.2, 5.1, 5.6, 6.0)
_SUNDAY = (5.8, 5.2, 4.3, 3.3, 2.4, 1.1, 0.8, 1.0, 1.5, 2.3, 3.3, 4.0,
           4.6, 4.8, 4.9, 4.8, 4.6, 4.8, 5.0, 4.8, 4.4, 4.1, 3.8, 3.1)
_SHAPE_BY_WEEKDAY = (_WEEKDAY, _WEEKDAY, _WEEKDAY, _WEEKDAY, _FRIDAY, _SATURDAY, _SUNDAY)

# Relative daily volume, Monday..Sunday.
_VOLUME_BY_WEEKDAY = (0.92, 0.98, 1.0, 1.05, 1.08, 1.07, 0.90)

# Trips per hour on New Year's Day, absolute. Hours 0-1 match the sample's steady
# ≈255 trips/minute; the rest is a quiet holiday.
_NEW_YEARS_DAY = (15300, 15600, 12500, 9000, 5600, 2600, 1300, 1000, 1100, 1600, 2400, 3200,
                  3900, 4300, 4500, 4500, 4400, 4400, 4500, 4500, 4200, 3900, 3400, 2800)

_BLEND = 10

# Trips on a day of relative volume 1.0 (chosen for ≈2.0 M trips over Jan 1..20).
WEEKDAY_BASE_TRIPS = 98_400


def hourly_trips(day: date) -> np.ndarray:
    """Expected trips picked up in each hour of one day (24 floats)."""
    if (day.month, day.day) == (1, 1):
        return np.array(_NEW_YEARS_DAY, dtype=np.float64)
    shape = np.array(_SHAPE_BY_WEEKDAY[day.weekday()], dtype=np.float64)
    return shape / shape.sum() * WEEKDAY_BASE_TRIPS * _VOLUME_BY_WEEKDAY[day.weekday()]


def minute_rates(days: int, start: date = START_DATE, first_minutes: np.ndarray | None = None) -> np.ndarray:
    """Expected pickups in each minute of ``days`` days from ``start``.

    Hourly rates are placed at the hour centres and interpolated linearly, so the
    rate has no steps at the top of an hour; the first and last half hours are flat.
    ``first_minutes``, when given, replaces the start of the run minute by minute
    (New Year's midnight measured on the sample), blending into the hourly curve
    over its last ``_BLEND`` minutes.
    """
    if days < 1:
        raise ValueError("days must be at least 1")
    per_hour = np.concatenate([hourly_trips(start + timedelta(days=d)) for d in range(days)])
    centres = np.arange(per_hour.size) * 60.0 + 29.5
    minutes = np.arange(days * 1440, dtype=np.float64)
    rates = np.interp(minutes, centres, per_hour / 60.0)
    if first_minutes is not None and first_minutes.size:
        n = min(first_minutes.size, rates.size)
        blend = np.clip((np.arange(n) - (n - _BLEND)) / _BLEND, 0.0, 1.0)
        rates[:n] = (1 - blend) * first_minutes[:n] + blend * rates[:n]
    return rates
