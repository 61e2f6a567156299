"""Minutes of a synthetic run as DEBS timestamps, and the 2013 NYC surcharge rule."""

from __future__ import annotations

from datetime import date, datetime, timedelta

# NYC yellow-cab surcharges in 2013: $0.50 from 8 pm to 6 am every day, $1.00 on
# weekdays (Mon-Fri) from 4 pm to 8 pm, none otherwise.
NIGHT_CENTS = 50
PEAK_CENTS = 100


class RunClock:
    """Formats minute offsets from the run's first midnight as ``YYYY-MM-DD HH:MM:SS``.

    Whole-minute stamps of the run (plus ``tail_minutes`` after it, for trips still
    running at the end) are precomputed once: formatting 4 M timestamps through
    ``datetime`` would cost more than the rest of the generator.
    """

    def __init__(self, start: date, minutes: int, tail_minutes: int) -> None:
        self.start = datetime(start.year, start.month, start.day)
        count = minutes + tail_minutes
        prefixes = [(self.start + timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M") for m in range(count)]
        self._prefix = prefixes
        self._whole = [p + ":00" for p in prefixes]
        self._surcharge = [_surcharge(self.start + timedelta(hours=h)) for h in range(count // 60 + 2)]

    def stamp(self, minute: int, second: int = 0) -> str:
        """The timestamp ``minute`` minutes and ``second`` seconds after the start."""
        if 0 <= minute < len(self._prefix):
            return self._whole[minute] if second == 0 else f"{self._prefix[minute]}:{second:02d}"
        moment = self.start + timedelta(minutes=minute, seconds=second)
        return moment.strftime("%Y-%m-%d %H:%M:%S")

    def surcharge_cents(self, minute: int) -> int:
        """The surcharge of a metered trip picked up at ``minute``."""
        return self._surcharge[minute // 60]


def _surcharge(moment: datetime) -> int:
    if moment.hour >= 20 or moment.hour < 6:
        return NIGHT_CENTS
    if moment.weekday() < 5 and 16 <= moment.hour < 20:
        return PEAK_CENTS
    return 0
