"""Static RDF datasets joined with streams (CQELS ISWC 2011 §4.3).

Files are parsed with pyoxigraph, dictionary-encoded and kept per graph as a set of
id triples. Each graph gets hash indexes on first use - per predicate ``s -> [o]``
and ``o -> [s]``, and ``s``/``o`` -> ``[(p, o)]``/``[(s, p)]`` for patterns with a
variable predicate - so a BGP over a million triples is evaluated by index lookups,
not scans. Sub-patterns over static data are evaluated at registration and cached
as constant relations by the plan builder; ``version`` changes whenever data is added.

>>> from taxi_rsp.lang.ast import TriplePattern, Var
>>> store = StaticStore(Dictionary())
>>> p = IRI("http://x/knows")
>>> for s, o in [("a", "b"), ("b", "c"), ("a", "c")]:
...     store.add(IRI("http://x/" + s), p, IRI("http://x/" + o))
>>> schema, rows = store.evaluate((TriplePattern(Var("x"), p, Var("y")), TriplePattern(Var("y"), p, Var("z"))), None)
>>> schema, [tuple(store.dictionary.decode(v).value[-1] for v in row) for row in rows]
(('x', 'y', 'z'), [('a', 'b', 'c')])
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from taxi_rsp.engine.graph_index import GraphIndex, Triple
from taxi_rsp.engine.ops.match import variable_positions
from taxi_rsp.engine.paths import evaluate_path
from taxi_rsp.engine.view import TripleIndex, index_triples
from taxi_rsp.errors import UserError
from taxi_rsp.lang.ast import TriplePattern, Var
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI, Term

DEFAULT_GRAPH = 0

_FORMATS = {".nt": "N_TRIPLES", ".ttl": "TURTLE", ".nq": "N_QUADS", ".trig": "TRIG", ".rdf": "RDF_XML",
            ".xml": "RDF_XML", ".owl": "RDF_XML", ".n3": "N3", ".jsonld": "JSON_LD"}

class StaticStore:
    """Triples by graph id (``DEFAULT_GRAPH`` for the default graph)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self._graphs: dict[int, set[Triple]] = {}
        self._indexes: dict[int, GraphIndex] = {}
        self._loads = 0
        self.version = 0

    def __len__(self) -> int:
        return sum(len(triples) for triples in self._graphs.values())

    def add(self, s: Term, p: Term, o: Term, graph: IRI | None = None) -> None:
        encode = self.dictionary.encode
        self.add_ids((encode(s), encode(p), encode(o)), DEFAULT_GRAPH if graph is None else encode(graph))

    def add_ids(self, triple: Triple, graph_id: int = DEFAULT_GRAPH) -> None:
        triples = self._graphs.get(graph_id)
        if triples is None:
            triples = self._graphs[graph_id] = set()
        if triple not in triples:
            triples.add(triple)
            self._indexes.pop(graph_id, None)
            self.version += 1

    def load(self, path: Path, graph: IRI | None = None) -> int:
        """Load an RDF file (format from its suffix); returns the number of statements read.
        Blank nodes are scoped to the file, as RDF merging requires. ``graph``: put the
        file's default-graph triples into that named graph instead."""
        import pyoxigraph as ox

        from taxi_rsp.rdf.oxi import TermEncoder, syntax_reason

        fmt = _FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise UserError(f"{path}: unknown RDF format (use one of {', '.join(sorted(_FORMATS))})")
        if not path.is_file():
            raise UserError(f"{path}: no such file")
        self._loads += 1
        encode = TermEncoder(self.dictionary, bnode_scope=f"static{self._loads}.")
        target = DEFAULT_GRAPH if graph is None else self.dictionary.encode(graph)
        count = 0
        try:
            for quad in ox.parse(path=path, format=getattr(ox.RdfFormat, fmt), base_iri=path.resolve().as_uri()):
                name = quad.graph_name
                graph_id = target if isinstance(name, ox.DefaultGraph) else encode(name)
                self.add_ids((encode(quad.subject), encode(quad.predicate), encode(quad.object)), graph_id)
                count += 1
        except SyntaxError as exc:
            raise UserError(f"{path}:{exc.lineno or 0}:{exc.offset or 0}: {syntax_reason(exc)}") from None
        except TypeError as exc:  # e.g. an RDF-star triple term
            raise UserError(f"{path}: {exc}") from None
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
        return count

    def graph_index(self, graph_id: int) -> GraphIndex:
        found = self._indexes.get(graph_id)
        if found is None:
            found = self._indexes[graph_id] = GraphIndex(self._graphs.get(graph_id, ()))
        return found

    def index(self, graph_id: int) -> TripleIndex:
        """The graph as a predicate index of the stream matcher's kind (small graphs)."""
        return index_triples(self._graphs.get(graph_id, ()))

    def named_graphs(self) -> list[int]:
        return [g for g in self._graphs if g != DEFAULT_GRAPH]

    def evaluate(self, triples: tuple[TriplePattern, ...], graph: object | None) -> tuple[tuple[str, ...], list[tuple]]:
        """Schema and rows of a BGP over the default graph, a named graph or ``GRAPH ?g``."""
        bgp = _CompiledBGP(triples, self.dictionary)
        if graph is None:
            return bgp.schema, bgp.match(self.graph_index(DEFAULT_GRAPH))
        if isinstance(graph, Var):
            rows = [row + (g,) for g in self.named_graphs() for row in bgp.match(self.graph_index(g))]
            return bgp.schema + (graph.name,), rows
        graph_id = self.dictionary.lookup(graph)  # type: ignore[arg-type]
        if graph_id is None:
            return bgp.schema, []
        return bgp.schema, bgp.match(self.graph_index(graph_id))


    def evaluate_path(self, subject: object, path: object, obj: object,
                      graph: object | None) -> tuple[tuple[str, ...], list[tuple]]:
        """Schema and rows of a property path pattern (see :mod:`taxi_rsp.engine.paths`)."""

        if graph is None:
            return evaluate_path(self.graph_index(DEFAULT_GRAPH), self.dictionary, subject, path, obj)
        if isinstance(graph, Var):
            schema: tuple[str, ...] = ()
            rows: list[tuple] = []
            for g in self.named_graphs():
                schema, found = evaluate_path(self.graph_index(g), self.dictionary, subject, path, obj)
                rows.extend(row + (g,) for row in found)
            if not schema:
                schema = tuple(dict.fromkeys(n.name for n in (subject, obj) if isinstance(n, Var)))
            return schema + (graph.name,), rows
        graph_id = self.dictionary.lookup(graph)  # type: ignore[arg-type]
        if graph_id is None:
            return tuple(dict.fromkeys(n.name for n in (subject, obj) if isinstance(n, Var))), []
        return evaluate_path(self.graph_index(graph_id), self.dictionary, subject, path, obj)


class _CompiledBGP:
    """A BGP as slots: ``(True, var position)`` or ``(False, constant id)`` per position.
    The join order is chosen greedily per graph: next the pattern with the fewest
    expected matches given the variables bound so far (index nested loops)."""

    def __init__(self, triples: tuple[TriplePattern, ...], dictionary: Dictionary) -> None:
        names = variable_positions(triples)
        self.schema = tuple(names)
        self.patterns = []
        for t in triples:
            slots = []
            for node in (t.s, t.p, t.o):
                if isinstance(node, Var):
                    slots.append((True, names[node.name]))
                else:
                    found = dictionary.lookup(node)  # an unknown constant matches nothing
                    slots.append((False, -1 if found is None else found))
            self.patterns.append(tuple(slots))

    def _order(self, index: GraphIndex) -> list[tuple]:
        remaining = list(self.patterns)
        bound: set[int] = set()
        order = []
        while remaining:
            def cost(pattern: tuple) -> float:
                (s_var, s), (p_var, p), (o_var, o) = pattern
                predicate = None if p_var else p
                return index.estimate(not s_var or s in bound, predicate, not o_var or o in bound)

            best = min(remaining, key=cost)
            remaining.remove(best)
            order.append(best)
            bound.update(slot for is_var, slot in best if is_var)
        return order

    def match(self, index: GraphIndex) -> list[tuple]:
        steps = self._order(index)
        results: list[tuple] = []
        binding: list = [None] * len(self.schema)
        last = len(steps)

        def search(k: int) -> None:
            if k == last:
                results.append(tuple(binding))
                return
            key = []
            for is_var, slot in steps[k]:
                key.append(binding[slot] if is_var else slot)
            for triple in index.lookup(*key):
                undo = []
                ok = True
                for (is_var, slot), value in zip(steps[k], triple):
                    if not is_var:
                        continue
                    current = binding[slot]
                    if current is None:
                        binding[slot] = value
                        undo.append(slot)
                    elif current != value:
                        ok = False
                        break
                if ok:
                    search(k + 1)
                for slot in undo:
                    binding[slot] = None

        search(0)
        return results
