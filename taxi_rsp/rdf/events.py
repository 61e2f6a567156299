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
from dataclasses import dataclass, field
from typing import Protocol

Triple = tuple[int, int, int]


class EventMeta(Protocol):
    """What every source hands to the listeners with an event: ``read_ns``, the
    ``time.perf_counter_ns()`` at which the source read it (the start of its delay)."""

    @property
    def read_ns(self) -> int: ...


@dataclass(slots=True)
class GraphEvent:
    seq: int
    time: int
    triples: Sequence[Triple]  # a tuple, or a StarGraph built on demand
    stream: int
    graph: int = 0
    meta: EventMeta | None = field(default=None, compare=False)


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


class StarGraph(Sequence):
    """A star-shaped graph kept as its subject and one object per layout predicate
    (None: no triple with that predicate). It is a read-only sequence of triples, built
    on demand; compiled plans read ``subject`` and ``objects`` without building any.
    """

    __slots__ = ("subject", "layout", "objects", "_triples")

    def __init__(self, subject: int, layout: StarLayout, objects: tuple) -> None:
        self.subject = subject
        self.layout = layout
        self.objects = objects
        self._triples: tuple[Triple, ...] | None = None

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
