"""The engine: registers continuous queries and drives them with graph events.

Event-time semantics (SPEC §3, generalised to any query): before an event with time t
is applied to a query, every expiry instant τ < t of that query's windows is
evaluated in increasing order; then everything expiring at or before t leaves, the
event enters, and the query is evaluated once for the event. End of input is not a
time advance. Queries see every event of their streams, so an event that matches
nothing is still an evaluation instant.

>>> engine = Engine()
>>> q = engine.register('SELECT ?o WHERE { STREAM <http://s> [RANGE 1m] { ?x <http://p> ?o } }', "demo")
>>> q.columns
('o',)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from taxi_rsp.algebra.optimize import optimize
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.engine.builder import PlanBuilder
from taxi_rsp.engine.expr import set_event_time
from taxi_rsp.engine.ops.match import EventView
from taxi_rsp.engine.pipeline import PipelineRegistry
from taxi_rsp.engine.query import Listener, RegisteredQuery, Trigger
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.errors import UserError
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent


class Engine:
    def __init__(self, dictionary: Dictionary | None = None, top_k: str = "auto",
                 share_pipelines: bool = True, compiled: bool = True) -> None:
        """``top_k`` chooses the ORDER BY ... LIMIT operator: "auto" (TMA grid top-k when
        the score is monotone, else a sorted relation), "sorted" or "tma".
        ``share_pipelines=False`` keeps each query's matches and fused steps to itself
        (for measuring what sharing across queries saves). ``compiled=False`` runs the
        reference operators only (no compiled sub-plans), for differential tests and
        before/after measurements."""
        self.compiled = compiled
        self.share_pipelines = share_pipelines
        self.dictionary = dictionary or Dictionary()
        self.top_k = top_k
        self.static = StaticStore(self.dictionary)
        # Matches and fused steps shared by the windows of all queries (per event).
        self.pipelines = PipelineRegistry(self.dictionary)
        self.queries: list[RegisteredQuery] = []
        # Queries whose whole plan equals an earlier one's share its physical plan and
        # are reported from it (twins); the engine drives the leaders only.
        self._leaders: list[RegisteredQuery] = []
        self._by_plan: dict[tuple, RegisteredQuery] = {}
        self._last_time: int | None = None
        self.events = 0

    def load_static(self, path: Path) -> int:
        return self.static.load(path)

    def register(
        self,
        text: str,
        name: str,
        params: dict[str, str] | None = None,
        listener: Listener | None = None,
        source: str = "<query>",
    ) -> RegisteredQuery:
        """Parse, translate, optimise and build a query; raises QuerySyntaxError /
        UnsupportedQueryError (both UserError) on bad queries."""
        if self.events:
            raise UserError("queries must be registered before the first event")
        ast = parse_query(text, params, source)
        logical = translate_query(ast)
        logical.root = optimize(logical.root)
        key = (repr(logical.root), logical.form, logical.projection, repr(ast.template))
        leader = self._by_plan.get(key) if self.share_pipelines else None
        if leader is not None:
            query = RegisteredQuery(name, ast, logical, leader.physical, self.dictionary, leader=leader)
        else:
            physical = PlanBuilder(self.dictionary, self.static, self.top_k,
                                   self.pipelines if self.share_pipelines else None,
                                   compiled=self.compiled).build_query(logical)
            query = RegisteredQuery(name, ast, logical, physical, self.dictionary)
            self._by_plan.setdefault(key, query)
            self._leaders.append(query)
        if listener is not None:
            query.listeners.append(listener)
        self.queries.append(query)
        return query

    def process(self, event: GraphEvent) -> None:
        """Apply one event to every registered query (events in time order)."""
        time = event.time
        if self._last_time is not None and time < self._last_time:
            raise ValueError(
                f"event {event.seq} at {time} is earlier than the previous event ({self._last_time}); "
                "the engine needs events in time order (the feeder rejects late ones)"
            )
        self._last_time = time
        self.events += 1
        view = EventView(event)  # the triple index is built only if a window needs it
        trigger = Trigger(time, event)  # immutable: one for every query
        stream = event.stream
        set_event_time(time)
        for query in self._leaders:
            expiry = query.next_expiry()
            if expiry is not None and expiry < time:
                while expiry is not None and expiry < time:
                    set_event_time(expiry)  # NOW() in rows derived at this instant
                    query.expire(expiry)
                    query.evaluate(Trigger(expiry))
                    expiry = query.next_expiry()
                set_event_time(time)
            query.expire(time)
            if stream in query.streams:
                query.insert(event, view)
            query.evaluate(trigger)

    def run(self, events: Iterable[GraphEvent]) -> None:
        for event in events:
            self.process(event)
