"""One session: the engine built from a frozen configuration, fed by a source, writing
to sinks. Every entry point uses it - `taxi-rsp run` (the taxi CSV through the Feeder),
`run --stream` (an RDF stream file), each `run --spark` task (a time slice of the CSV)
and the Python API (queries registered as text, events pushed one by one).

>>> session = Session(SessionConfig.resolve(["q1"]))
>>> session.info("q1").ordered, session.info("q1").windows[0].range_ms
(True, 1800000)

From Python (docs/api.md has a longer example):

>>> session = Session()
>>> busy = session.register("SELECT ?room (COUNT(?p) AS ?n) WHERE { "
...     "STREAM <http://ex/rfid> [RANGE 5m] { ?p <http://ex/at> ?room } } GROUP BY ?room", "busy")
>>> session.push([("<http://ex/ann>", "<http://ex/at>", "<http://ex/hall>")], "2015-01-01T09:00:00")
>>> [r.dicts() for r in busy.results()]
[[{'room': IRI(value='http://ex/hall'), 'n': 1}]]
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from taxi_rsp.algebra.analysis import stream_predicates
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.gcpolicy import engine_gc
from taxi_rsp.engine.info import QueryInfo
from taxi_rsp.engine.query import Listener, QueryOutput, RegisteredQuery
from taxi_rsp.errors import UserError
from taxi_rsp.planner.compile import register
from taxi_rsp.outputs.delays import delay_stats
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.session.config import QuerySource, SessionConfig
from taxi_rsp.session.results import QueryHandle
from taxi_rsp.listener.debs import TriggerStamps
from taxi_rsp.session.sinks import OpenFile, ReportingSink, Sink, file_sink

if TYPE_CHECKING:  # pushing loads pyoxigraph (8 MiB): only a session that pushes pays for it
    from taxi_rsp.session.push import GraphEncoder, PushedTriple, Time


class Session:
    """The engine of one run: its queries registered, static data loaded, sinks attached."""

    def __init__(self, config: SessionConfig | None = None, dictionary: Dictionary | None = None) -> None:
        """Build the engine of ``config`` (no queries: register them later, before the
        first event); raises :class:`~taxi_rsp.errors.UserError` on bad queries or data."""
        self.config = config or SessionConfig()
        self.engine = Engine(dictionary, config=self.config.engine)
        self.static_triples = sum(self.engine.load_static(Path(path)) for path in self.config.static)
        self.sources: dict[str, QuerySource] = {}
        self._queries: dict[str, RegisteredQuery] = {}
        self.sinks: dict[str, Sink] = {}
        self._encoder: GraphEncoder | None = None  # pushed graphs, made on the first push
        self._pushed = itertools.count(1)
        for source in self.config.queries:
            self.add_query(source)

    @property
    def dictionary(self) -> Dictionary:
        """The term dictionary sources encode events with."""
        return self.engine.dictionary

    # -- queries ---------------------------------------------------------------------
    def add_query(self, source: QuerySource) -> QueryInfo:
        """Register one more query (before the first event)."""
        if source.name in self._queries:
            raise UserError(f"a query was given twice: {source.name}")
        query = register(self.engine, source.text, source.name, dict(source.params), source=source.origin)
        if not query.streams:
            raise UserError(f"{source.origin}: the query reads no STREAM, so no event ever triggers it: it is a "
                            "one-shot query over the static data, which `taxi-rsp run` does not answer; put the "
                            "stream part in STREAM <iri> [RANGE …] { … }")
        self.sources[source.name] = source
        self._queries[source.name] = query
        return query.info

    def register(self, text: str, name: str | None = None, params: dict[str, str] | None = None,
                 keep: bool = True, decode: str = "values") -> QueryHandle:
        """Register a CQELS-QL query given as text (before the first event); the handle
        gives its results. ``keep=False``: results go to subscribers only (nothing is
        kept for :meth:`QueryHandle.results`); ``decode``: ``"values"`` (Python values)
        or ``"terms"`` (RDF terms)."""
        name = name or f"q{len(self._queries) + 1}"
        info = self.add_query(QuerySource(name, text, None, dict(params or {})))
        return QueryHandle(info, lambda listener: self.listen(name, listener), keep, decode)

    def push(self, graph: str | Iterable[PushedTriple], time: Time, stream: str | None = None) -> None:
        """Apply one event: a graph (N-Triples text, or triples of RDF terms, N-Triples
        term strings or Python values, :mod:`taxi_rsp.session.push`) at ``time`` (ms, a
        ``datetime`` or xsd:dateTime text) on ``stream`` (default: the one stream the
        queries read). Events come in time order."""
        read_ns = _now_ns()
        from taxi_rsp.session.push import GraphEncoder, to_time

        if self._encoder is None:
            self._encoder = GraphEncoder(self.dictionary)
        if stream is None:
            streams = self.streams()
            if len(streams) != 1:
                raise UserError(f"the queries read {', '.join(streams) or 'no stream'}: "
                                "name the stream= of the event")
            stream = streams[0]
        at = to_time(time)
        last = self.engine.last_time
        if last is not None and at < last:
            raise UserError(f"event at {at} ms is earlier than the previous one ({last} ms): "
                            "push events in time order")
        event = GraphEvent(next(self._pushed), at, self._encoder.encode(graph),
                           self.dictionary.encode(IRI(stream)), read_ns=read_ns)
        self.engine.process(event)

    def info(self, name: str) -> QueryInfo:
        """The public description of a registered query."""
        return self._query(name).info

    @property
    def infos(self) -> list[QueryInfo]:
        """Every registered query, in registration order."""
        return [query.info for query in self._queries.values()]

    def _query(self, name: str) -> RegisteredQuery:
        try:
            return self._queries[name]
        except KeyError:
            raise UserError(f"no query named {name!r} (registered: {', '.join(self._queries) or 'none'})") from None

    def explain(self, name: str) -> str:
        """The plans and policies of a query, as ``--explain`` prints them."""
        return self._query(name).explain()

    def streams(self) -> list[str]:
        """The stream IRIs the registered queries read, sorted."""
        return sorted({iri for info in self.infos for iri in info.streams})

    def registration_warnings(self, fed: set[str]) -> list[str]:
        """The parser's warnings (``source:line:col: reason``, e.g. a relative IRI without
        BASE), cross products and never-fed streams of the registered queries
        (docs/cqels-ql.md)."""
        from taxi_rsp.algebra.lint import cross_products, unfed_streams

        warnings = [w for q in self._queries.values() for w in q.ast.warnings]
        static = self.engine.static

        def static_size(pattern) -> int:
            return len(static.evaluate(pattern.triples, pattern.graph)[1])

        warnings += [f"{name}: {w}" for name, q in self._queries.items()
                     for w in cross_products(q.logical.root, static_size)]
        return warnings + unfed_streams({info.name: set(info.streams) for info in self.infos}, fed)

    def predicates_read(self, stream: str) -> frozenset[str] | None:
        """The predicate IRIs that the registered queries' patterns over ``stream`` can
        match (None: any predicate). A Feeder told them (``Feeder(..., read=...)``) leaves
        out the terms no query reads; a query registered later may need more."""
        return stream_predicates([q.logical.root for q in self._queries.values()], stream)

    # -- sinks -----------------------------------------------------------------------
    def listen(self, name: str, listener: Listener) -> None:
        """Call ``listener`` with every output of query ``name``."""
        self._query(name).listeners.append(listener)

    def attach(self, name: str, sink: Sink) -> None:
        """A sink the summary counts (one per query)."""
        self.listen(name, sink)
        self.sinks[name] = sink

    def attach_files(self, open_file: OpenFile, result_format: str = "csv",
                     trigger_stamps: TriggerStamps | None = None,
                     check: Callable[[QuerySource, QueryInfo], None] | None = None) -> dict[str, Sink]:
        """A file sink per query (:func:`~taxi_rsp.session.sinks.file_sink`), opened in
        registration order; ``trigger_stamps`` from the source when it has the challenge
        format's trigger fields; ``check`` may refuse a query first."""
        for name, source in self.sources.items():
            info = self.info(name)
            if check is not None:
                check(source, info)
            self.attach(name, file_sink(source, info, open_file, result_format, trigger_stamps))
        return self.sinks

    # -- driving ---------------------------------------------------------------------
    def process(self, event: GraphEvent) -> None:
        """Apply one event (events in time order)."""
        self.engine.process(event)

    def run(self, events: Iterable[GraphEvent], each: Callable[[GraphEvent], None] | None = None) -> None:
        """Apply every event of a source; ``each`` is called after each one. The
        garbage collector runs rarely meanwhile (:mod:`taxi_rsp.engine.gcpolicy`)."""
        process = self.engine.process
        with engine_gc():
            if each is None:
                for event in events:
                    process(event)
            else:
                for event in events:
                    process(event)
                    each(event)

    # -- the summary's shared part ---------------------------------------------------
    def sink_figures(self) -> dict[str, dict]:
        """``emitted``, ``delay_ms`` and (for sinks that count them) ``reports`` per query."""
        figures: dict[str, dict] = {
            "emitted": {name: sink.emitted for name, sink in self.sinks.items()},
            "delay_ms": {name: delay_stats(sink.delays_ms).summary() for name, sink in self.sinks.items()},
        }
        reports = {name: sink.reports for name, sink in self.sinks.items() if isinstance(sink, ReportingSink)}
        if reports:
            figures["reports"] = reports
        return figures

    def state_rows(self) -> dict[str, int]:
        """Rows held by each query's operators now (bounded state, docs/reliability.md)."""
        return {name: query.state_size() for name, query in self._queries.items()}

    def operators(self) -> dict[str, list[str]]:
        """How each query runs: its compiled and reference operators (see ``--explain``)."""
        return {name: [op.describe() for op in query.physical.operators] for name, query in self._queries.items()}


_now_ns = time.perf_counter_ns


__all__ = ["QueryOutput", "Session"]
