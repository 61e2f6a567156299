"""One graph event as the windows see it, and the per-predicate index of a small graph.

>>> index_triples([(1, 2, 3), (4, 2, 5)])
{None: [(1, 2, 3), (4, 2, 5)], 2: [(1, 3), (4, 5)]}
"""

from __future__ import annotations

from collections.abc import Iterable

import cython

from taxi_rsp.rdf.events import GraphEvent, StarGraph

TripleIndex = dict  # predicate id -> list of (subject id, object id); key None -> all triples


@cython.freelist(8)  # one or two alive per event: reused, not allocated
@cython.cclass
class EventView:
    """One graph event as the windows see it: its triple index is built on first use,
    once for all windows; a :class:`StarGraph` event is matched without one. One is made
    per event: compiled, an extension type (cheaper to build, see
    :class:`~taxi_rsp.engine.report.Trigger`)."""

    event = cython.declare(object, visibility="readonly")
    # the event's graph, and its star layout (None: not a star graph), read from the event
    # once here rather than by each window's matcher (compiled, these are struct fields:
    # a matcher typed with EventView reads them without an attribute look-up)
    triples = cython.declare(object, visibility="readonly")
    layout = cython.declare(object, visibility="readonly")
    # a star graph's objects and subject, read once here for every star matcher
    objects = cython.declare(tuple, visibility="readonly")
    subject = cython.declare(object, visibility="readonly")
    _index = cython.declare(object)  # TripleIndex | None

    def __init__(self, event: GraphEvent) -> None:
        self.event = event
        triples = event.triples
        self.triples = triples
        if type(triples) is StarGraph:
            self.layout, self.objects, self.subject = triples.layout, triples.objects, triples.subject
        else:
            self.layout = self.objects = self.subject = None
        self._index = None

    @property
    def index(self) -> TripleIndex:
        index = self._index
        if index is None:
            index = self._index = index_triples(self.triples)
        return index


def index_triples(triples: Iterable[tuple[int, int, int]]) -> TripleIndex:
    """Index a small graph by predicate; ``index[None]`` lists every triple."""
    index: TripleIndex = {None: []}
    everything = index[None]
    for s, p, o in triples:
        everything.append((s, p, o))
        bucket = index.get(p)
        if bucket is None:
            index[p] = [(s, o)]
        else:
            bucket.append((s, o))
    return index
