"""Events pushed from Python: RDF terms or N-Triples text -> a graph event.

A pushed graph is Turtle text (N-Triples is a subset: ``<a> <p> 5 .`` and
``@prefix`` lines work), or triples whose terms are any of: pyoxigraph terms
(``NamedNode``, ``BlankNode``, ``Literal``), rdflib terms (``URIRef``, ``BNode``,
``Literal``), this project's terms (:mod:`taxi_rsp.rdf.terms`), term strings in
N-Triples/Turtle syntax (``"<http://ex/a>"``, ``'"5"^^<http://www.w3.org/2001/XMLSchema#integer>'``,
``"5"``, ``"_:b1"``), or Python values for literals (``int``, ``float``, ``bool``,
``Decimal``, ``datetime``). Everything goes through pyoxigraph's parser, so a pushed
graph is validated as a static data file is.

>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> encoder = GraphEncoder(Dictionary())
>>> len(encoder.encode([("<http://ex/a>", "<http://ex/p>", 5)]))
1
>>> to_time("2015-01-01 00:00:30") - to_time("2015-01-01T00:00:00")
30000
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction

import pyoxigraph as ox

from taxi_rsp.errors import UserError
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import Triple
from taxi_rsp.rdf.oxi import TermEncoder, syntax_reason
from taxi_rsp.rdf.terms import DateTime, value_to_literal

PushedTriple = tuple[object, object, object]
Time = int | str | dt.datetime


def to_time(value: Time) -> int:
    """An event time in ms: an int (ms since 1970-01-01T00:00:00), a naive
    ``datetime``, or an xsd:dateTime text (``T`` or a space between date and time)."""
    if isinstance(value, bool):
        raise UserError(f"an event time is ms, a datetime or an xsd:dateTime text, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return int(DateTime.parse(value.isoformat(timespec="milliseconds")))
    if isinstance(value, str):
        try:
            return int(DateTime.parse(value.strip()))
        except ValueError:
            raise UserError(f"event time {value!r} is not an xsd:dateTime such as 2015-01-01T00:00:00") from None
    raise UserError(f"an event time is ms, a datetime or an xsd:dateTime text, not {type(value).__name__}")


def term_text(value: object) -> str:
    """One term in N-Triples/Turtle syntax (see the module text for what a term may be)."""
    n3 = getattr(value, "n3", None)  # the engine's and rdflib's terms (rdflib's are str: test this first)
    if callable(n3):
        return n3()
    if isinstance(value, str):
        return value
    if isinstance(value, (ox.NamedNode, ox.BlankNode, ox.Literal)):
        return str(value)
    if isinstance(value, dt.datetime):
        return value_to_literal(DateTime(to_time(value))).n3()
    if isinstance(value, Decimal):
        return value_to_literal(Fraction(value)).n3()
    if isinstance(value, (bool, int, float)):
        return value_to_literal(value).n3()
    raise UserError(f"cannot use {value!r} as an RDF term (give an RDF term, N-Triples text or a number)")


class GraphEncoder:
    """Pushed graphs -> dictionary-encoded triples (blank nodes scoped per session)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.encode_term = TermEncoder(dictionary, bnode_scope="pushed:")

    def encode(self, graph: str | Iterable[PushedTriple]) -> tuple[Triple, ...]:
        if isinstance(graph, str):
            text = graph
        else:
            lines = []
            for triple in graph:
                if len(triple) != 3:
                    raise UserError(f"a triple has 3 terms, not {len(triple)}: {triple!r}")
                lines.append(" ".join(term_text(t) for t in triple) + " .")
            text = "\n".join(lines)
        try:
            parsed = list(ox.parse(text, format=ox.RdfFormat.TURTLE))
        except SyntaxError as exc:
            line = text.splitlines()[exc.lineno - 1] if exc.lineno and exc.lineno <= len(text.splitlines()) else text
            raise UserError(f"pushed graph, line {exc.lineno or 1}: {syntax_reason(exc)}: {line.strip()[:200]}") from None
        encode = self.encode_term
        return tuple((encode(q.subject), encode(q.predicate), encode(q.object)) for q in parsed)
