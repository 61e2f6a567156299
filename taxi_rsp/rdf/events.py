"""Graph events: a small RDF graph with a timestamp, the unit of an RDF stream.

CQELS DEBS 2015 models a stream as a bag of timestamped graphs ⟨g : [t]⟩. Here the
triples are already dictionary-encoded (``(s, p, o)`` id tuples), ``time`` is event time
in milliseconds (see :class:`taxi_rsp.rdf.terms.DateTime`), and ``seq`` is the arrival
number. ``read_ns`` is the system time at which the source took the event's bytes from
its input (``time.perf_counter_ns()``; 0: not stamped), where the SPEC §5 delay of an
output it triggers starts. ``meta`` is the producer's own payload (the taxi Feeder's
trigger timestamps): neither the engine nor a listener reads it; a source that has
something for listeners hands them a reader of it (see
:data:`taxi_rsp.listener.debs.TriggerStamps`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
import cython

Triple = tuple[int, int, int]


@cython.freelist(8)  # one or two alive per event: reused, not allocated
@cython.cclass
class GraphEvent:
    """One event: ``triples`` (a tuple, or a :class:`StarGraph` built on demand) at
    ``time`` on ``stream`` in named graph ``graph``, read at ``read_ns``; equal events
    have equal fields but ``read_ns`` and ``meta``. One is built per input line: compiled, an extension type, built by its C
    slots (a Python class is called through ``type.__call__`` and a look-up of
    ``__init__``, ≈ 870 instructions; docs/performance.md, stop 25).

    >>> GraphEvent(1, 60_000, ((7, 10, 20),), 3) == GraphEvent(1, 60_000, ((7, 10, 20),), 3, read_ns=5, meta="m")
    True
    """

    seq = cython.declare(object, visibility="readonly")  # int: the arrival number
    time = cython.declare(object, visibility="readonly")  # int: event time in ms
    triples = cython.declare(object, visibility="readonly")  # Sequence[Triple]
    stream = cython.declare(object, visibility="readonly")  # int: the stream's id
    graph = cython.declare(object, visibility="readonly")  # int: the named graph's id
    read_ns = cython.declare(cython.longlong, visibility="readonly")  # system time read (ns), 0: unknown
    meta = cython.declare(object, visibility="readonly")  # the producer's payload, opaque to others

    def __init__(self, seq: int, time: int, triples: Sequence[Triple], stream: int, graph: int = 0,
                 read_ns: int = 0, meta: object = None) -> None:
        self.seq = seq
        self.time = time
        self.triples = triples
        self.stream = stream
        self.graph = graph
        self.read_ns = read_ns
        self.meta = meta

    def restamped(self, seq: int, read_ns: int) -> GraphEvent:
        """This event renumbered ``seq`` and read at ``read_ns`` (a merge of several
        inputs hands it over anew), its payload passed on unread.

        >>> GraphEvent(4, 10, (), 1, meta="m").restamped(1, 99)
        GraphEvent(seq=1, time=10, triples=(), stream=1, graph=0, read_ns=99, meta='m')
        """
        return GraphEvent(seq, self.time, self.triples, self.stream, self.graph, read_ns, self.meta)

    def _fields(self) -> tuple:
        return (self.seq, self.time, self.triples, self.stream, self.graph)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphEvent) and self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return (f"GraphEvent(seq={self.seq!r}, time={self.time!r}, triples={self.triples!r}, "
                f"stream={self.stream!r}, graph={self.graph!r}, read_ns={self.read_ns!r}, meta={self.meta!r})")

    def __reduce__(self):
        return (GraphEvent, (self.seq, self.time, self.triples, self.stream, self.graph, self.read_ns, self.meta))


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


@cython.freelist(8)  # one or two alive per event: reused, not allocated
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
