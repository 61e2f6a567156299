"""What the Feeder hands out besides graph events' triples: their trigger timestamps and run counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.spec import REJECT_REASONS


class TripStamps(NamedTuple):
    """A Feeder event's payload (its ``meta``): the trip's timestamps as the input wrote
    them, which the challenge format prints for the triggering trip (SPEC §5). Only
    :func:`trip_stamps` reads it. (A named tuple: one is made per accepted line, and a
    tuple is the cheapest immutable record CPython builds.)"""

    pickup: str  # pickup_datetime as validated, e.g. "2013-01-01 00:00:00"
    dropoff: str  # dropoff_datetime as validated


def trip_stamps(event: GraphEvent) -> TripStamps:
    """The pickup and drop-off text of a Feeder event: what a taxi CSV run hands the
    challenge listeners (:data:`taxi_rsp.listener.debs.TriggerStamps`).

    >>> trip_stamps(GraphEvent(1, 0, (), 0, meta=TripStamps("2013-01-01 00:00:00", "2013-01-01 00:02:00")))
    TripStamps(pickup='2013-01-01 00:00:00', dropoff='2013-01-01 00:02:00')
    """
    return event.meta


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
