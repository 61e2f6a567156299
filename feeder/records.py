"""What the Feeder hands out besides graph events: trigger metadata and run counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from taxi_rsp.spec import REJECT_REASONS


class TripMeta(NamedTuple):
    """What a listener needs about a triggering trip; the engine never looks at it.
    (A named tuple: one is made per accepted line, and a tuple is the cheapest
    immutable record CPython builds.)"""

    line_no: int  # = seq, the 1-based physical line number
    pickup: str  # pickup_datetime as validated, e.g. "2013-01-01 00:00:00"
    dropoff: str  # dropoff_datetime as validated
    read_ns: int  # perf_counter_ns() when the line was read, before parsing (SPEC §5 delay)


def _zero_per_reason() -> dict[str, int]:
    return {reason: 0 for reason in REJECT_REASONS}


def _zero_per_query() -> dict[str, int]:
    return {"q1": 0, "q2": 0}


@dataclass
class FeedStats:
    """Counts for the run summary (SPEC §5); ``lines_read == accepted + sum(rejected)``
    holds whenever the Feeder is between lines (in particular at every event it yields)."""

    lines_read: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=_zero_per_reason)
    outliers: dict[str, int] = field(default_factory=_zero_per_query)
    profit_excluded: int = 0
