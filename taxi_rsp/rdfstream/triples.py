"""Timestamped triple streams (``.tnt``): the triple-based model of CQELS ISWC 2011.

One element per line: an N-Triples statement, a TAB, and the element's time as an
xsd:dateTime lexical form (``T`` or a space between date and time; fractional
seconds to the millisecond; a zone offset is converted to UTC, a naive time is taken
as written)::

    <http://deri.org/person/7> <http://deri.org/lv#detectedAt> <http://deri.org/floorplan/loc/3> .\t2011-10-24T09:00:00.250

Each line becomes one graph event holding one triple (so a CQELS ``STREAM`` block
over this stream has one triple pattern). Times must not decrease; blank and ``#``
lines are skipped; anything else is a :class:`StreamInputError` at ``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import DateTime
from taxi_rsp.rdfstream.errors import StreamInputError
from taxi_rsp.rdfstream.lines import (
    StreamStats,
    now_ns,
    statement_lines,
)
from taxi_rsp.rdf.oxi import TermEncoder, parse_statement, syntax_reason


def format_line(statement: str, time: int) -> str:
    """One line of a triple stream (``statement`` is an N-Triples statement)."""
    return f"{statement}\t{DateTime(time).isoformat()}\n"


def read_triple_stream(
    path: Path, dictionary: Dictionary, stream: int, stats: StreamStats | None = None
) -> Iterator[GraphEvent]:
    """The events (one triple each) of a timestamped triple stream, in file order."""
    stats = stats if stats is not None else StreamStats()
    encode = TermEncoder(dictionary)
    last_time: int | None = None
    for number, text in statement_lines(path, stats):
        statement, tab, stamp = text.rpartition("\t")
        if not tab:
            raise StreamInputError(path, number, len(text) + 1,
                                   "expected a TAB and an xsd:dateTime after the statement")
        try:
            time = DateTime.parse(stamp.strip())
        except ValueError:
            raise StreamInputError(path, number, len(statement) + 2, f"not an xsd:dateTime: {stamp!r}") from None
        try:
            found = parse_statement(statement, ox.RdfFormat.N_TRIPLES)
        except SyntaxError as exc:
            raise StreamInputError(path, number, exc.offset or 1, syntax_reason(exc)) from None
        if len(found) != 1:
            raise StreamInputError(path, number, 1, "expected one N-Triples statement before the TAB")
        if last_time is not None and time < last_time:
            raise StreamInputError(
                path, number, len(statement) + 2,
                f"out of order: {DateTime(time).isoformat()} is earlier than the previous element "
                f"({DateTime(last_time).isoformat()})")
        last_time = time
        triple = found[0]
        stats.events += 1
        stats.triples += 1
        yield GraphEvent(stats.events, time,
                         ((encode(triple.subject), encode(triple.predicate), encode(triple.object)),),
                         stream, 0, read_ns=now_ns())
