"""N-Quads graph-event streams: one named graph per event (the Feeder's export).

An event is a maximal run of consecutive lines about one graph ``g``: the quads in
graph ``g`` and the default-graph stamp ``<g> prov:generatedAtTime "t"^^xsd:dateTime``
(before, after or among them). The run ends where a line about another graph starts,
or at the end of the file. Each event needs exactly one stamp; events must come in
non-decreasing time. Anything else is a :class:`StreamInputError` naming
``file:line:col``: the run stops there (RDF streams are machine-written, so a broken
line means a broken file, not a noisy sensor - see docs/semantics.md).

>>> import tempfile, pathlib
>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> text = ('<http://x/a> <http://x/p> "1" <http://x/g1> .\\n'
...         '<http://x/g1> <http://www.w3.org/ns/prov#generatedAtTime> '
...         '"2011-10-01T10:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\\n')
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.nq"
>>> _ = path.write_text(text)
>>> [(e.seq, len(e.triples)) for e in read_graph_events(path, Dictionary(), stream=1)]
[(1, 1)]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import PROV_GENERATED_AT, XSD_DATETIME
from taxi_rsp.rdf.terms import DateTime
from taxi_rsp.rdfstream.errors import StreamInputError
from taxi_rsp.rdfstream.lines import (
    StreamStats,
    now_ns,
    statement_lines,
)
from taxi_rsp.rdf.oxi import TermEncoder, parse_statement, syntax_reason

_STAMP = ox.NamedNode(PROV_GENERATED_AT)


class _Run:
    """The event being collected."""

    __slots__ = ("first_line", "graph", "stamp_line", "time", "triples")

    def __init__(self, graph: object, line: int) -> None:
        self.graph = graph
        self.first_line = line
        self.triples: list[tuple[int, int, int]] = []
        self.time: int | None = None
        self.stamp_line = line


def read_graph_events(
    path: Path, dictionary: Dictionary, stream: int, stats: StreamStats | None = None
) -> Iterator[GraphEvent]:
    """The events of an N-Quads graph stream, in file order, for stream id ``stream``."""
    stats = stats if stats is not None else StreamStats()
    encode = TermEncoder(dictionary)
    run: _Run | None = None
    last_time: int | None = None

    def close(finished: _Run) -> GraphEvent:
        nonlocal last_time
        if finished.time is None:
            raise StreamInputError(path, finished.first_line, 1,
                                   f"graph {finished.graph} has no prov:generatedAtTime stamp")
        if last_time is not None and finished.time < last_time:
            raise StreamInputError(
                path, finished.stamp_line, 1,
                f"out of order: graph {finished.graph} at {DateTime(finished.time).isoformat()} is earlier "
                f"than the previous event ({DateTime(last_time).isoformat()})")
        last_time = finished.time
        stats.events += 1
        stats.triples += len(finished.triples)
        return GraphEvent(stats.events, finished.time, tuple(finished.triples), stream, encode(finished.graph),
                          read_ns=now_ns())

    for number, text in statement_lines(path, stats):
        try:
            quads = parse_statement(text, ox.RdfFormat.N_QUADS)
        except SyntaxError as exc:
            raise StreamInputError(path, number, exc.offset or 1, syntax_reason(exc)) from None
        if len(quads) != 1:
            raise StreamInputError(path, number, 1, "expected one quad on the line")
        quad = quads[0]
        if isinstance(quad.graph_name, ox.DefaultGraph):
            key = quad.subject
            if quad.predicate != _STAMP or isinstance(key, ox.Triple):
                raise StreamInputError(path, number, 1, "a default-graph quad must be the prov:generatedAtTime "
                                       "stamp of an event graph (static data goes in --static files)")
        else:
            key = quad.graph_name
        if run is None or key != run.graph:
            if run is not None:
                yield close(run)
            run = _Run(key, number)
        if isinstance(quad.graph_name, ox.DefaultGraph):
            if run.time is not None:
                raise StreamInputError(path, number, 1, f"graph {key} has a second prov:generatedAtTime stamp")
            run.time = _stamp_time(path, number, text, quad.object)
            run.stamp_line = number
        else:
            run.triples.append((encode(quad.subject), encode(quad.predicate), encode(quad.object)))
    if run is not None:
        yield close(run)


def _stamp_time(path: Path, number: int, text: str, node: object) -> int:
    column = text.find('"') + 1 or 1  # the literal: subject and predicate are IRIs, which hold no '"'
    if not isinstance(node, ox.Literal) or node.datatype.value != XSD_DATETIME:
        raise StreamInputError(path, number, column, "prov:generatedAtTime needs an xsd:dateTime literal")
    try:
        return DateTime.parse(node.value)
    except ValueError:
        raise StreamInputError(path, number, column, f"not an xsd:dateTime: {node.value!r}") from None
