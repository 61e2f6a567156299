"""Static RDF datasets joined with streams (CQELS ISWC 2011 §4.3): loaded once with
rdflib, dictionary-encoded, and indexed per graph; sub-patterns over them are
evaluated at registration and cached as constant relations."""

from __future__ import annotations

from pathlib import Path

from taxi_rsp.engine.ops.match import BGPMatcher, TripleIndex, index_triples
from taxi_rsp.errors import UserError
from taxi_rsp.lang.ast import TriplePattern, Var
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, Literal, Term

DEFAULT_GRAPH = 0

_FORMATS = {".nt": "nt", ".ttl": "turtle", ".nq": "nquads", ".trig": "trig", ".rdf": "xml", ".xml": "xml",
            ".n3": "n3", ".jsonld": "json-ld"}


def _from_rdflib(node: object) -> Term:
    import rdflib

    if isinstance(node, rdflib.URIRef):
        return IRI(str(node))
    if isinstance(node, rdflib.BNode):
        return BNode(str(node))
    if isinstance(node, rdflib.Literal):
        return Literal(str(node), str(node.datatype) if node.datatype else XSD_STRING, node.language)
    raise UserError(f"unsupported RDF node {node!r}")


class StaticStore:
    """Triples by graph id (``DEFAULT_GRAPH`` for the default graph)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self._graphs: dict[int, list[tuple[int, int, int]]] = {}
        self._indexes: dict[int, TripleIndex] = {}
        self.version = 0

    def add(self, s: Term, p: Term, o: Term, graph: IRI | None = None) -> None:
        encode = self.dictionary.encode
        graph_id = DEFAULT_GRAPH if graph is None else encode(graph)
        self._graphs.setdefault(graph_id, []).append((encode(s), encode(p), encode(o)))
        self._indexes.pop(graph_id, None)
        self.version += 1

    def load(self, path: Path) -> int:
        """Load an RDF file (format from its suffix); returns the number of triples."""
        import rdflib

        fmt = _FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise UserError(f"{path}: unknown RDF format (use one of {', '.join(sorted(_FORMATS))})")
        if not path.is_file():
            raise UserError(f"{path}: no such file")
        dataset = rdflib.Dataset()
        try:
            dataset.parse(path, format=fmt)
        except Exception as exc:  # noqa: BLE001 - rdflib parsers raise many unrelated types
            raise UserError(f"{path}: cannot parse as {fmt}: {exc}") from None
        count = 0
        for s, p, o, g in dataset.quads((None, None, None, None)):
            named = g is not None and str(g) != str(rdflib.graph.DATASET_DEFAULT_GRAPH_ID)
            self.add(_from_rdflib(s), _from_rdflib(p), _from_rdflib(o), IRI(str(g)) if named else None)
            count += 1
        return count

    def index(self, graph_id: int) -> TripleIndex:
        found = self._indexes.get(graph_id)
        if found is None:
            found = self._indexes[graph_id] = index_triples(self._graphs.get(graph_id, ()))
        return found

    def named_graphs(self) -> list[int]:
        return [g for g in self._graphs if g != DEFAULT_GRAPH]

    def evaluate(self, triples: tuple[TriplePattern, ...], graph: object | None) -> tuple[tuple[str, ...], list[tuple]]:
        """Schema and rows of a BGP over the default graph, a named graph or ``GRAPH ?g``."""
        matcher = BGPMatcher(triples, self.dictionary)
        if graph is None:
            return matcher.schema, matcher.match(self.index(DEFAULT_GRAPH))
        if isinstance(graph, Var):
            rows = [row + (g,) for g in self.named_graphs() for row in matcher.match(self.index(g))]
            return matcher.schema + (graph.name,), rows
        return matcher.schema, matcher.match(self.index(self.dictionary.encode(graph)))  # type: ignore[arg-type]
