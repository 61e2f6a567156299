"""What `taxi-rsp report` runs when the user does not say: sweep points that fit the
input's span of drop-off times, and one run of each workload per side.

The window sweep of SPEC §6 is Q1 at 30, 60, 120 and 240 minutes (Q2 at W/2 and W). A
window longer than the data never drops a trip — its result is a running total, and
every run of it warns — so by default the report keeps the points whose window fits the
data, and when fewer than two fit it halves the first point until two do (the bundled
sample spans 54 minutes: 15 and 30). An explicit ``--sweep`` is run as given.

Repetitions default to one run of each workload per side: on a small input a run is
mostly start-up (Python's, Spark's job scheduling), which three runs repeat without
saying more, and on a large one three runs triple hours; ``--repeat 3`` gives medians
and min–max ranges when they are wanted. The report says what it chose before it runs.

The span is read the way the runs read it (SPEC §1: 17 comma-separated fields, the
drop-off in field 4 as ``YYYY-MM-DD HH:MM:SS``): from the first line with a valid
drop-off to the latest valid drop-off, so a line that the run rejects for another reason
(a bad coordinate) can stretch it by that line's time — the plan is a default, not a
result. This module reads the CSV itself: the checkers load nothing of the Feeder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

SPEC_SWEEP = (30, 60, 120, 240)  # minutes: SPEC §6's window sweep
MIN_SWEEP_WINDOW = 2  # Q2's profit window is W // 2 minutes, at least 1
DEFAULT_REPEAT = 1
SPEC_WINDOW_MIN = 30  # the longest window of the standard workloads (Q1 30, Q2 15 and 30)

_TIME = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
_MINUTE_MS = 60_000


@dataclass(frozen=True)
class InputSpan:
    """Lines of a taxi CSV and the span of its drop-off times (None: no valid one)."""

    lines: int
    first: datetime | None = None
    last: datetime | None = None

    @property
    def span_ms(self) -> int | None:
        if self.first is None or self.last is None:
            return None
        return int((self.last - self.first).total_seconds() * 1000)

    def describe(self) -> str:
        """``10,004 lines, 54 min of drop-offs (2013-01-01 00:02:00 to 00:56:00)``."""
        if self.span_ms is None or self.first is None or self.last is None:
            return f"{self.lines:,} lines, no valid drop-off time"
        end = self.last.strftime("%H:%M:%S" if self.last.date() == self.first.date() else "%Y-%m-%d %H:%M:%S")
        return f"{self.lines:,} lines, {_duration(self.span_ms)} of drop-offs ({self.first} to {end})"


def _duration(ms: int) -> str:
    minutes = ms / _MINUTE_MS
    if minutes < 120:
        return f"{minutes:g} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 1440:.1f} days"


def _time(field: bytes) -> datetime | None:
    text = field.strip()
    if _TIME.fullmatch(text) is None:
        return None
    try:
        return datetime.strptime(text.decode("ascii"), "%Y-%m-%d %H:%M:%S")
    except ValueError:  # 2013-13-01, 25:00:00
        return None


def read_span(path: Path) -> InputSpan:
    """Count the lines of a taxi CSV and find the span of its drop-off times.

    >>> import tempfile
    >>> trips = Path(tempfile.mkdtemp()) / "trips.csv"
    >>> row = "m,h,2013-01-01 00:00:00,{},60,1,-73.9,40.7,-73.9,40.7,CSH,3,0,0,0,0,3"
    >>> _ = trips.write_text("\\n".join([row.format("2013-01-01 00:02:00"), "bad line",
    ...                                  row.format("2013-01-01 00:56:00"), row.format("2013-01-01 00:50:00")]))
    >>> span = read_span(trips)
    >>> span.lines, span.span_ms // 60_000
    (4, 54)
    """
    lines, first, last_text = 0, None, b""
    with path.open("rb") as handle:
        for line in handle:
            lines += 1
            fields = line.split(b",")
            if len(fields) != 17:
                continue
            text = fields[3].strip()
            if first is None:
                first = _time(text)
                if first is not None:
                    last_text = text
            elif text > last_text and _time(text) is not None:  # same width: text order is time order
                last_text = text
    if first is None:
        return InputSpan(lines)
    return InputSpan(lines, first, _time(last_text))


def default_sweep(span_ms: int | None) -> list[int]:
    """Q1 windows (minutes) of the sweep for data spanning ``span_ms``: SPEC's points
    that fit, or halvings of the first point until two fit.

    >>> default_sweep(20 * 24 * 60 * _MINUTE_MS)  # the 20-day file: SPEC's sweep
    [30, 60, 120, 240]
    >>> default_sweep(150 * _MINUTE_MS)
    [30, 60, 120]
    >>> default_sweep(54 * _MINUTE_MS)  # the bundled sample
    [15, 30]
    >>> default_sweep(12 * _MINUTE_MS), default_sweep(3 * _MINUTE_MS), default_sweep(None)
    ([3, 7], [3], [])
    """
    if span_ms is None:
        return []
    fitting = [w for w in SPEC_SWEEP if w * _MINUTE_MS <= span_ms]
    window = SPEC_SWEEP[0]
    while len(fitting) < 2 and window // 2 >= MIN_SWEEP_WINDOW:
        window //= 2
        if window * _MINUTE_MS <= span_ms:
            fitting.insert(0, window)
    return fitting


@dataclass(frozen=True)
class ReportPlan:
    """The sweep and repetitions a report runs, and whether each was the user's."""

    sweep: list[int]
    repeat: int
    sweep_given: bool
    repeat_given: bool

    def describe(self, span: InputSpan) -> list[str]:
        """What the report will run, in lines for the terminal."""
        sweep = ", ".join(f"{w}" for w in self.sweep) if self.sweep else "none"
        why = "" if self.sweep_given else (" (the windows that fit the data; --sweep to choose)"
                                           if self.sweep else " (no window fits the data; --sweep to ask for one)")
        runs = f"{self.repeat} run{'s' if self.repeat > 1 else ''} of each workload per side"
        if not self.repeat_given:
            runs += " (--repeat 3 for medians and ranges)"
        lines = [f"report: {span.describe()}", f"  window sweep, Q1 minutes: {sweep}{why}", f"  {runs}"]
        if span.span_ms is not None and span.span_ms < SPEC_WINDOW_MIN * _MINUTE_MS:
            lines.append(f"  note: the data is shorter than the queries' {SPEC_WINDOW_MIN}-minute windows: "
                         "Table 1's results are running totals (the runs will warn)")
        return lines


def plan_report(span: InputSpan, sweep: list[int] | None, repeat: int | None) -> ReportPlan:
    """The report's runs: what the user gave, defaults for the rest.

    >>> plan = plan_report(InputSpan(10_004, datetime(2013, 1, 1, 0, 2), datetime(2013, 1, 1, 0, 56)), None, None)
    >>> plan.sweep, plan.repeat
    ([15, 30], 1)
    >>> plan_report(InputSpan(400), [30, 60], 3).sweep
    [30, 60]
    """
    return ReportPlan(default_sweep(span.span_ms) if sweep is None else sweep,
                      DEFAULT_REPEAT if repeat is None else repeat, sweep is not None, repeat is not None)
