"""Graph events: a small RDF graph with a timestamp, the unit of an RDF stream.

CQELS DEBS 2015 models a stream as a bag of timestamped graphs ⟨g : [t]⟩. Here the
triples are already dictionary-encoded (``(s, p, o)`` id tuples), ``time`` is event time
in milliseconds (see :class:`taxi_rsp.rdf.terms.DateTime`), and ``seq`` is the arrival
number. ``meta`` carries what the producer wants to hand to its listeners - an
:class:`EventMeta`: at least when the event was read, for the SPEC §5 delay (the taxi
Feeder's :class:`~taxi_rsp.feeder.records.TripMeta` adds the trigger timestamps); the
engine never looks at it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import cython

Triple = tuple[int, int, int]


class EventMeta(Protocol):
    """What every source hands to the listeners with an event: ``read_ns``, the
    ``time.perf_counter_ns()`` at which the source read it (the start of its delay)."""

    @property
    def read_ns(self) -> int: ...


@cython.cclass
class GraphEvent:
    """One event: ``triples`` (a tuple, or a :class:`StarGraph` built on demand) at
    ``time`` on ``stream`` in named graph ``graph``; equal events have equal fields but
    ``meta``. One is built per input line: compiled, an extension type, built by its C
    slots (a Python class is called through ``type.__call__`` and a look-up of
    ``__init__``, ≈ 870 instructions; docs/performance.md, stop 25).

    >>> GraphEvent(1, 60_000, ((7, 10, 20),), 3) == GraphEvent(1, 60_000, ((7, 10, 20),), 3, meta="m")
    True
    """

    seq = cython.declare(object, visibility="readonly")  # int: the arrival number
    time = cython.declare(object, visibility="readonly")  # int: event time in ms
    triples = cython.declare(object, visibility="readonly")  # Sequence[Triple]
    stream = cython.declare(object, visibility="readonly")  # int: the stream's id
    graph = cython.declare(object, visibility="readonly")  # int: the named graph's id
    meta = cython.declare(object, visibility="readonly")  # EventMeta | None

    def __init__(self, seq: int, time: int, triples: Sequence[Triple], stream: int, graph: int = 0,
                 meta: EventMeta | None = None) -> None:
        self.seq = seq
        self.time = time
        self.triples = triples
        self.stream = stream
        self.graph = graph
        self.meta = meta

    def _fields(self) -> tuple:
        return (self.seq, self.time, self.triples, self.stream, self.graph)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphEvent) and self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return (f"GraphEvent(seq={self.seq!r}, time={self.time!r}, triples={self.triples!r}, "
                f"stream={self.stream!r}, graph={self.graph!r}, meta={self.meta!r})")

    def __reduce__(self):
        return (GraphEvent, (self.seq, self.time, self.triples, self.stream, self.graph, self.meta))


class StarLayout:
    """The predicates of star-shaped graphs (one subject, at most one object per
    predicate), in a fixed order shared by every graph of a producer. Compiled
    matchers are specialised per layout (by identity).

    >>> layout = StarLayout((10, 11))
    >>> graph = StarGraph(7, layout, (20, None))
    >>> tuple(graph), len(graph), graph == ((7, 10, 20),)
    (((7, 10, 20),), 1, True)
    """

    __slots__ = ("predicates", "position", "__weakref__")

    def __init__(self, predicates: tuple[int, ...]) -> None:
        if len(set(predicates)) != len(predicates):
            raise ValueError("a star layout names each predicate once")
        self.predicates = predicates
        self.position = {p: i for i, p in enumerate(predicates)}


@cython.cclass
class StarGraph:
    """A star-shaped graph kept as its subject and one object per layout predicate
    (None: no triple with that predicate). It is a read-only sequence of triples, built
    on demand; compiled plans read ``subject`` and ``objects`` without building any.
    Compiled, an extension type like :class:`GraphEvent` (one per input line), so a
    registered :class:`~collections.abc.Sequence` rather than a subclass.
    """

    subject = cython.declare(object, visibility="readonly")
    layout = cython.declare(object, visibility="readonly")
    objects = cython.declare(tuple, visibility="readonly")
    _triples = cython.declare(object)  # tuple[Triple, ...] | None: built on first use

    def __init__(self, subject: int, layout: StarLayout, objects: tuple) -> None:
        self.subject = subject
        self.layout = layout
        self.objects = objects
        self._triples = None

    def triples(self) -> tuple[Triple, ...]:
        found = self._triples
        if found is None:
            s = self.subject
            found = self._triples = tuple((s, p, o) for p, o in zip(self.layout.predicates, self.objects)
                                          if o is not None)
        return found

    def __iter__(self) -> Iterator[Triple]:
        return iter(self.triples())

    def __len__(self) -> int:
        return len(self.triples())

    def __getitem__(self, index):  # type: ignore[override]
        return self.triples()[index]

    def __contains__(self, triple: object) -> bool:
        return triple in self.triples()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StarGraph):
            return self.triples() == other.triples()
        return isinstance(other, tuple) and self.triples() == other

    def __hash__(self) -> int:
        return hash(self.triples())

    def __repr__(self) -> str:
        return f"StarGraph({self.triples()!r})"

    def __reduce__(self):  # pickled (Spark) as a plain tuple of triples
        return (tuple, (self.triples(),))


Sequence.register(StarGraph)
