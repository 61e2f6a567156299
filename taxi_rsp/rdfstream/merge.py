"""Several stream files as one run's input: their events merged by time.

Each file's events come in non-decreasing time (its reader stops the run at the first
that does not, naming the file, line and column). The merged stream takes them in time
order; events of equal time keep the order of the inputs as given (the ``--stream``
options), then their file order. ``seq`` is renumbered 1, 2, … in the merged order (the
arrival order the engine sees), and ``read_ns`` (the start of an event's delay) is
taken when the merged stream hands the event over: the merge reads one event ahead per
file, and that wait is not the event's.

>>> from taxi_rsp.rdf.events import GraphEvent
>>> a = [GraphEvent(1, 10, (), 1, meta="a1"), GraphEvent(2, 30, (), 1, meta="a2")]
>>> b = [GraphEvent(1, 10, (), 2, meta="b1"), GraphEvent(2, 20, (), 2, meta="b2")]
>>> [(e.seq, e.time, e.stream, e.meta, e.read_ns > 0) for e in merge_by_time([iter(a), iter(b)])]
[(1, 10, 1, 'a1', True), (2, 10, 2, 'b1', True), (3, 20, 2, 'b2', True), (4, 30, 1, 'a2', True)]
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdfstream.lines import now_ns


def merge_by_time(streams: Sequence[Iterator[GraphEvent]]) -> Iterator[GraphEvent]:
    """The events of ``streams`` (each in time order) in time order, renumbered and
    restamped (``meta`` kept as the producer gave it); ties in input order (``heapq.merge`` is stable)."""
    merged = heapq.merge(*streams, key=_time)
    for seq, event in enumerate(merged, 1):
        yield event.restamped(seq, now_ns())


def _time(event: GraphEvent) -> int:
    return event.time
