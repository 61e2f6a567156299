"""The engine: registers continuous queries and drives them with graph events.

Event-time semantics (SPEC §3, generalised to any query): before an event with time t
is applied to a query, every expiry instant τ < t of that query's windows is
evaluated in increasing order; then everything expiring at or before t leaves, the
event enters, and the query is evaluated once for the event. End of input is not a
time advance. Queries see every event of their streams, so an event that matches
nothing is still an evaluation instant.

The engine runs plans; the planner makes them from query text
(:func:`taxi_rsp.planner.compile_query`, or :func:`taxi_rsp.planner.register` for both
steps):

>>> from taxi_rsp.planner import compile_query
>>> engine = Engine()
>>> plan = compile_query(engine, 'SELECT ?o WHERE { STREAM <http://s> [RANGE 1m] { ?x <http://p> ?o } }', "demo")
>>> engine.register(plan).columns
('o',)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import cython

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.physical import PhysicalPlan, QueryPlan
from taxi_rsp.engine.pipeline import PipelineRegistry
from taxi_rsp.engine.policies import EventTimeTick, TickPolicy
from taxi_rsp.engine.query import Listener, RegisteredQuery
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent

retired = cython.declare(list, _retired_list)  # typed: appends and clear() are C calls (see reclaim)


class Engine:
    def __init__(self, dictionary: Dictionary | None = None, top_k: str = "auto",
                 share_pipelines: bool = True, compiled: bool = True, join_routing: str = "adaptive",
                 *, config: EngineConfig | None = None) -> None:
        """The options are those of :class:`~taxi_rsp.engine.config.EngineConfig`, given
        as ``config`` or one by one: ``top_k`` chooses the ORDER BY ... LIMIT operator,
        ``share_pipelines=False`` keeps each query's matches and fused steps to itself
        (for measuring what sharing across queries saves), ``compiled=False`` runs the
        reference operators only (differential tests, before/after measurements),
        ``join_routing`` how joins of three or more inputs are planned."""
        self.config = config or EngineConfig(top_k, join_routing, share_pipelines, compiled)
        self.dictionary = dictionary if dictionary is not None else Dictionary()
        self.tick_policy: TickPolicy = EventTimeTick()
        self.static = StaticStore(self.dictionary)
        # Matches and fused steps shared by the windows of all queries (per event).
        self.pipelines = PipelineRegistry(self.dictionary)
        self.queries: list[RegisteredQuery] = []
        # Queries whose whole plan equals an earlier one's share its physical plan and
        # are reported from it (twins); the engine drives the leaders only.
        self._leaders: list[RegisteredQuery] = []
        self._ticks: list[Callable[[GraphEvent, EventView], None]] = []  # per leader, in order
        self._by_plan: dict[tuple, RegisteredQuery] = {}
        # [time of the last event (None before the first), events processed]: read and
        # written per event, so kept where the bound ``process`` reaches them without
        # attribute look-ups (see _bind_process)
        self._clock: list = [None, 0]
        self.process = self._bind_process()

    def load_static(self, path: Path) -> int:
        return self.static.load(path)

    def shared_plan(self, plan_key: tuple | None) -> PhysicalPlan | None:
        """The physical plan of the registered query whose plan is ``plan_key``, if any
        (the planner gives a query with the same plan that one instead of a new one)."""
        leader = self._by_plan.get(plan_key) if plan_key is not None else None
        return None if leader is None else leader.physical

    def register(self, plan: QueryPlan, listener: Listener | None = None) -> RegisteredQuery:
        """Start running ``plan`` (made by :func:`taxi_rsp.planner.compile_query` for this
        engine) from the next event on."""
        if self.events:
            raise UserError("queries must be registered before the first event")
        leader = self._by_plan.get(plan.plan_key) if plan.plan_key is not None else None
        if leader is not None and leader.physical is plan.physical:
            query = RegisteredQuery(plan, self.dictionary, leader=leader)
        else:
            query = RegisteredQuery(plan, self.dictionary)
            if plan.plan_key is not None:
                self._by_plan.setdefault(plan.plan_key, query)
            self._leaders.append(query)
            self._ticks.append(self.tick_policy.bind(query))
        if listener is not None:
            query.listeners.append(listener)
        self.queries.append(query)
        return query

    @property
    def last_time(self) -> int | None:
        """The time of the last event processed (None before the first)."""
        return self._clock[0]

    @property
    def events(self) -> int:
        """The number of events processed."""
        return self._clock[1]

    def _bind_process(self) -> Callable[[GraphEvent], None]:
        """``process(event)``, the engine's per-event entry, as a closure over the bound
        ticks and the clock (an attribute read or write costs more than the rest of this
        function does)."""
        ticks = self._ticks  # extended by register, never replaced
        clock = cython.declare(list, self._clock)
        # The last event's view (and through it the event), held until this event's
        # outputs are written: its pipelines let go of it as this event arrives, which
        # would free it inside this event's delay (see reclaim).
        previous = cython.declare(list, [None])

        def process(event: GraphEvent) -> None:
            """Apply one event to every registered query (events in time order)."""
            time = event.time
            last = clock[0]
            if last is not None and time < last:
                raise ValueError(
                    f"event {event.seq} at {time} is earlier than the previous event ({last}); "
                    "the engine needs events in time order (the feeder rejects late ones)"
                )
            clock[0] = time
            clock[1] += 1
            view = EventView(event)  # the triple index is built only if a window needs it
            for tick in ticks:  # the tick policy bound to each query (see register)
                tick(event, view)
            previous[0] = view  # frees the last event's view and event, if nothing else holds them
            if retired:  # freed once the event's outputs are written (see reclaim)
                retired.clear()

        return process

    def run(self, events: Iterable[GraphEvent]) -> None:
        process = self.process
        for event in events:
            process(event)
