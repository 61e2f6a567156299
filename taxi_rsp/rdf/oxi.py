"""pyoxigraph terms -> the project's RDF terms and dictionary ids.

pyoxigraph does the parsing (validated N-Triples/N-Quads, one statement per line);
this module only converts its terms. Conversion is memoised per reader: subjects,
predicates and locations repeat on every line of a stream.
"""

from __future__ import annotations

import re

import pyoxigraph as ox

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, Literal, Term

_CACHE_LIMIT = 1 << 18


def to_term(node: object, bnode_scope: str = "") -> Term:
    """One pyoxigraph term as an IRI, BNode or Literal (language literals keep
    ``XSD_STRING`` as datatype with ``lang`` set, as the query parser makes them)."""
    if isinstance(node, ox.NamedNode):
        return IRI(node.value)
    if isinstance(node, ox.BlankNode):
        return BNode(bnode_scope + node.value)
    if isinstance(node, ox.Literal):
        if node.language:
            return Literal(node.value, XSD_STRING, node.language.lower())
        return Literal(node.value, node.datatype.value)
    raise TypeError(f"unsupported RDF term {node!r} (RDF-star triple terms are not supported)")


class TermEncoder:
    """pyoxigraph term -> dictionary id, with a bounded memo."""

    def __init__(self, dictionary: Dictionary, bnode_scope: str = "") -> None:
        self.dictionary = dictionary
        self.bnode_scope = bnode_scope
        self._memo: dict[object, int] = {}

    def __call__(self, node: object) -> int:
        memo = self._memo
        found = memo.get(node)
        if found is None:
            found = self.dictionary.encode(to_term(node, self.bnode_scope))
            if len(memo) >= _CACHE_LIMIT:
                memo.clear()
            memo[node] = found
        return found


def parse_statement(text: str, fmt: ox.RdfFormat) -> list[ox.Quad]:
    """The statements of one line (0 for blank or comment lines); raises SyntaxError
    with ``offset`` set to the 1-based column of the problem."""
    return list(ox.parse(text, format=fmt))


_POSITION = re.compile(r"^Parser error (?:at line \d+ )?(?:between[^:]*|at[^:]*)?:\s*")
_LINE_SUFFIX = re.compile(r"\s*\(line \d+\)$")


def syntax_reason(exc: SyntaxError) -> str:
    """pyoxigraph's message without its own (per-line, so misleading) position."""
    return _LINE_SUFFIX.sub("", _POSITION.sub("", exc.msg or str(exc))) or "syntax error"
