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

from collections.abc import Callable, Iterable
from pathlib import Path

import cython

from taxi_rsp.algebra.optimize import optimize
from taxi_rsp.algebra.prune import prune
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.planner.builder import PlanBuilder
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.ops.match import EventView
from taxi_rsp.engine.pipeline import PipelineRegistry
from taxi_rsp.engine.policies import EventTimeTick, TickPolicy
from taxi_rsp.engine.query import Listener, RegisteredQuery
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.errors import UserError
from taxi_rsp.lang.ast import draws
from taxi_rsp.lang.parser import parse_query
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
        self.compiled = self.config.compiled
        self.share_pipelines = self.config.share_pipelines
        self.dictionary = dictionary if dictionary is not None else Dictionary()
        self.top_k = self.config.top_k
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
        if self.config.prune_columns:
            logical.root = prune(logical.root)
        key = (repr(logical.root), logical.form, logical.projection, repr(ast.template))
        shareable = self.share_pipelines and not draws(ast)  # RAND(): each query its own draws
        leader = self._by_plan.get(key) if shareable else None
        if leader is not None:
            query = RegisteredQuery(name, ast, logical, leader.physical, self.dictionary, leader=leader,
                                    source=source)
        else:
            physical = PlanBuilder(self.dictionary, self.static, self.top_k,
                                   self.pipelines if self.share_pipelines else None,
                                   compiled=self.compiled,
                                   join_routing=self.config.join_routing).build_query(logical)
            query = RegisteredQuery(name, ast, logical, physical, self.dictionary, source=source)
            if shareable:
                self._by_plan.setdefault(key, query)
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
