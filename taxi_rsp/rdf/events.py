"""Graph events: a small RDF graph with a timestamp, the unit of an RDF stream.

CQELS DEBS 2015 models a stream as a bag of timestamped graphs ⟨g : [t]⟩. Here the
triples are already dictionary-encoded (``(s, p, o)`` id tuples), ``time`` is event time
in milliseconds (see :class:`taxi_rsp.rdf.terms.DateTime`), and ``seq`` is the arrival
number. ``meta`` carries what the producer wants to hand to its listeners (for the
taxi feeder: the trigger timestamps and the read time for the delay); the engine
never looks at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Triple = tuple[int, int, int]


@dataclass(slots=True)
class GraphEvent:
    seq: int
    time: int
    triples: tuple[Triple, ...]
    stream: int
    graph: int = 0
    meta: object = field(default=None, compare=False)
