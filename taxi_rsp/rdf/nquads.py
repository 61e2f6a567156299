"""N-Quads export of an RDF stream: one named graph per graph event.

Each event ⟨g : [t]⟩ becomes its triples as quads in graph ``g`` plus one quad in the
default graph stating when the graph was generated::

    <http://debs2015.org/trip/1> <http://debs2015.org/taxi#seq> "1"^^<…#integer> <http://debs2015.org/graph/1> .
    <http://debs2015.org/graph/1> <http://www.w3.org/ns/prov#generatedAtTime> "2013-01-01T00:02:00"^^<…#dateTime> .

Terms are written from the dictionary, so inlined numbers appear in their canonical
lexical form (``"3.5"`` for a fare read as ``3.50``: the same xsd:decimal value).
Escaping follows the N-Triples grammar (RDF 1.1 N-Quads §3 / N-Triples §6): in IRIs
every character outside IRIREF (controls, space, ``<>"{}|^`\\``) becomes ``\\uXXXX``;
in literals ``"`` and ``\\`` and line breaks use ECHAR, other control characters
(NUL included) and U+2028/U+2029 ``\\uXXXX``, so every line of the output is one quad
even for tools that split lines the Unicode way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import PROV_GENERATED_AT, XSD_DATETIME, XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal, Term

# C0, DEL, C1 and the Unicode line/paragraph separators: a tool that splits lines
# the Unicode way (str.splitlines) must still see one quad per line.
_CONTROLS = [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]
_LITERAL_ESCAPES = {c: f"\\u{c:04X}" for c in _CONTROLS}
_LITERAL_ESCAPES.update({ord("\\"): "\\\\", ord('"'): '\\"', ord("\n"): "\\n", ord("\r"): "\\r",
                         ord("\t"): "\\t", ord("\b"): "\\b", ord("\f"): "\\f"})
_IRI_ESCAPES = {c: f"\\u{c:04X}" for c in [*_CONTROLS, 0x20, *map(ord, '<>"{}|^`\\')]}
_CACHE_LIMIT = 1 << 16


def escape_literal(text: str) -> str:
    r"""The body of a STRING_LITERAL_QUOTE.

    >>> escape_literal('a"b\\c\nd\x00')
    'a\\"b\\\\c\\nd\\u0000'
    """
    return text.translate(_LITERAL_ESCAPES)


def escape_iri(text: str) -> str:
    r"""The body of an IRIREF.

    >>> escape_iri("http://x/a b")
    'http://x/a\\u0020b'
    """
    return text.translate(_IRI_ESCAPES)


def term_nquads(term: Term) -> str:
    """One term in N-Quads syntax."""
    if isinstance(term, IRI):
        return f"<{escape_iri(term.value)}>"
    if isinstance(term, BNode):
        return f"_:{term.label}"
    body = f'"{escape_literal(term.lexical)}"'
    if term.lang:
        return f"{body}@{term.lang}"
    if term.datatype == XSD_STRING:
        return body  # RDF 1.1: a simple literal is an xsd:string
    return f"{body}^^<{escape_iri(term.datatype)}>"


class _TermWriter:
    """Id -> N-Quads text, memoised (predicates, strings and coordinates repeat)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self.cache: dict[int, str] = {}

    def __call__(self, term_id: int) -> str:
        text = self.cache.get(term_id)
        if text is None:
            text = term_nquads(self.dictionary.decode(term_id))
            if len(self.cache) >= _CACHE_LIMIT:
                self.cache.clear()
            self.cache[term_id] = text
        return text


def write_nquads(events: Iterable[GraphEvent], dictionary: Dictionary, out: TextIO) -> int:
    """Write every event of ``events`` (consumed lazily) to ``out``; return the number
    of quads written. An event without a graph id (0) gets the blank graph ``_:e{seq}``."""
    term = _TermWriter(dictionary)
    known = term.cache.get  # hits skip the method call: most terms repeat
    generated_at = term_nquads(IRI(PROV_GENERATED_AT))
    stamps: dict[int, str] = {}
    quads = 0
    for event in events:
        graph = term(event.graph) if event.graph else f"_:e{event.seq}"
        stamp = stamps.get(event.time)
        if stamp is None:
            if len(stamps) >= _CACHE_LIMIT:
                stamps.clear()
            stamp = stamps[event.time] = term_nquads(Literal(DateTime(event.time).isoformat(), XSD_DATETIME))
        lines = [f"{known(s) or term(s)} {known(p) or term(p)} {known(o) or term(o)} {graph} .\n"
                 for s, p, o in event.triples]
        lines.append(f"{graph} {generated_at} {stamp} .\n")
        out.write("".join(lines))
        quads += len(lines)
    return quads
