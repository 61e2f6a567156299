"""Build graph events by hand for engine tests (no CSV, no feeder)."""

from __future__ import annotations

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.rdf.events import GraphEvent, StarGraph, StarLayout
from taxi_rsp.rdf.terms import IRI, DateTime, Literal, Term

EX = "http://example.org/"
# The tests' stream declared subject-disjoint (EngineConfig.subject_disjoint_streams): a
# STREAM block's star is matched per event, the shape of the taxi trips, for tests of the
# operators that shape plans (window aggregates, pruned star windows).
STARS = frozenset({EX + "stream"})


def star_engine(**options: object) -> Engine:
    """An engine whose test stream is subject-disjoint (``options``: other EngineConfig fields)."""
    return Engine(config=EngineConfig(subject_disjoint_streams=STARS, **options))  # type: ignore[arg-type]


def term(value: object) -> Term:
    if isinstance(value, (IRI, Literal)):
        return value
    if isinstance(value, str) and value.startswith("ex:"):
        return IRI(EX + value[3:])
    if isinstance(value, bool):
        return Literal("true" if value else "false", "http://www.w3.org/2001/XMLSchema#boolean")
    if isinstance(value, int):
        return Literal(str(value), "http://www.w3.org/2001/XMLSchema#integer")
    return Literal(str(value))


class Stream:
    """Feeds hand-written events to an engine and records every query output."""

    def __init__(self, engine: Engine, stream: str = EX + "stream") -> None:
        self.engine = engine
        self.stream_id = engine.dictionary.encode(IRI(stream))
        self.seq = 0
        self.outputs: list[QueryOutput] = []
        for query in engine.queries:
            query.listeners.append(self.outputs.append)

    def send(self, minute: float, *triples: tuple[object, object, object], stream: str | None = None,
             graph: str | None = None) -> None:
        self.engine.process(self.event(minute, *triples, stream=stream, graph=graph))

    def event(self, minute: float, *triples: tuple[object, object, object], stream: str | None = None,
              graph: str | None = None) -> GraphEvent:
        """The next event (``minute`` after 2013-01-01 00:00, these triples, in named graph
        ``graph``, e.g. ``"ex:g1"``; None: the default graph), not yet sent."""
        encode = self.engine.dictionary.encode
        self.seq += 1
        stream_id = self.stream_id if stream is None else encode(IRI(stream))
        time = DateTime.parse("2013-01-01T00:00:00") + int(minute * 60_000)
        encoded = tuple((encode(term(s)), encode(term(p)), encode(term(o))) for s, p, o in triples)
        return GraphEvent(self.seq, time, encoded, stream_id, 0 if graph is None else encode(term(graph)))

    def values(self) -> list[tuple[float, bool, list[tuple]]]:
        """(minute, is_expiry, rows as values) per output."""
        base = DateTime.parse("2013-01-01T00:00:00")
        return [((o.trigger.time - base) / 60_000, o.trigger.is_expiry, o.values()) for o in self.outputs]


def play(engine: Engine, events, stars: bool = False) -> list[tuple]:
    """Send ``events`` — (minutes after the previous one, ex:k, ex:v or None, ex:w or
    None), the differential tests' shape; each event also gets ex:seq n — and return
    every output as (time, is_expiry, rows, deleted rows), rows as RDF terms (0 and 0.0
    are equal numbers but different outputs). ``stars``: each event's graph is a
    :class:`StarGraph` (the Feeder's kind) of the layout ex:seq, ex:w, ex:k, ex:v, ex:u
    (ex:u never present) rather than a tuple of triples."""
    stream = Stream(engine)
    encode = engine.dictionary.encode
    layout = StarLayout(tuple(encode(term(f"ex:{p}")) for p in ("seq", "w", "k", "v", "u")))
    minute = 0.0
    for n, (gap, key, v, w) in enumerate(events, 1):
        minute += gap
        triples = [(f"ex:e{n}", "ex:k", key), (f"ex:e{n}", "ex:seq", n)]
        if v is not None:
            triples.append((f"ex:e{n}", "ex:v", v))
        if w is not None:
            triples.append((f"ex:e{n}", "ex:w", w))
        if not stars:
            stream.send(minute, *triples)
            continue
        event = stream.event(minute, *triples)
        objects = dict.fromkeys(layout.predicates)
        objects.update((p, o) for _, p, o in event.triples)
        graph = StarGraph(encode(term(f"ex:e{n}")), layout, tuple(objects.values()))
        engine.process(GraphEvent(event.seq, event.time, graph, event.stream))
    return [(o.trigger.time, o.trigger.is_expiry, o.terms(), o.terms(o.deleted)) for o in stream.outputs]
