"""Property paths over the static dataset (SPARQL 1.1 §9, §18.4).

A path is evaluated as reachability between node ids of one graph's
:class:`~taxi_rsp.engine.graph_index.GraphIndex`: from a bound end the reachable nodes are
computed (breadth first for ``*`` and ``+``, each node visited once as the ALP
procedure of §18.4 does); with both ends free, from every node of the graph. Results
are sets of (subject, object) pairs (distinct, as the spec's arbitrary-length paths
are; ``/`` and ``|`` of plain IRIs therefore do not repeat pairs either).
Sequences and inverses of plain IRIs never come here: the parser turns them into
ordinary triple patterns, which also works inside STREAM windows.
"""

from __future__ import annotations

from collections.abc import Iterable

from taxi_rsp.engine.graph_index import GraphIndex
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI


def inverse(path: object) -> object:
    """The path from object to subject."""
    match path:
        case ast.PathInv():
            return path.path
        case ast.PathSeq():
            return ast.PathSeq(tuple(inverse(step) for step in reversed(path.steps)))
        case ast.PathAlt():
            return ast.PathAlt(tuple(inverse(p) for p in path.alternatives))
        case ast.PathMod():
            return ast.PathMod(inverse(path.path), path.mod)
        case ast.PathNeg():
            return ast.PathNeg(tuple((iri, not inv) for iri, inv in path.iris))
    return ast.PathInv(path)


class PathEvaluator:
    """Reachability over one graph for one path."""

    def __init__(self, index: GraphIndex, dictionary: Dictionary) -> None:
        self.index = index
        self.dictionary = dictionary

    def nodes(self) -> set[int]:
        return set(self.index.s) | set(self.index.o)

    def _id(self, iri: object) -> int | None:
        return self.dictionary.lookup(iri)  # type: ignore[arg-type]

    def reach(self, path: object, start: int) -> set[int]:
        """Nodes reachable from ``start`` along ``path``."""
        match path:
            case IRI():
                p = self._id(path)
                return set(self.index.sp.get(p, {}).get(start, ())) if p is not None else set()
            case ast.PathInv() if isinstance(path.path, IRI):
                p = self._id(path.path)
                return set(self.index.op.get(p, {}).get(start, ())) if p is not None else set()
            case ast.PathInv():
                return self.reach(inverse(path.path), start)
            case ast.PathSeq():
                frontier = {start}
                for step in path.steps:
                    frontier = set().union(*(self.reach(step, n) for n in frontier)) if frontier else set()
                return frontier
            case ast.PathAlt():
                return set().union(*(self.reach(p, start) for p in path.alternatives))
            case ast.PathMod():
                if path.mod == "?":
                    return {start} | self.reach(path.path, start)
                seen = {start} if path.mod == "*" else set()
                frontier = [start]
                while frontier:
                    following = []
                    for node in frontier:
                        for nxt in self.reach(path.path, node):
                            if nxt not in seen:
                                seen.add(nxt)
                                following.append(nxt)
                    frontier = following
                return seen
            case ast.PathNeg():
                forward = {self._id(i) for i, inv in path.iris if not inv}
                backward = {self._id(i) for i, inv in path.iris if inv}
                found: set[int] = set()
                if forward or not backward:
                    found |= {o for p, o in self.index.s.get(start, ()) if p not in forward}
                if backward:
                    found |= {s for s, p in self.index.o.get(start, ()) if p not in backward}
                return found
        raise TypeError(f"not a path: {path!r}")

    def pairs(self, path: object, subject: int | None, obj: int | None) -> Iterable[tuple[int, int]]:
        """(subject, object) pairs of ``path``; None ends are free."""
        if subject is not None:
            return ((subject, o) for o in self.reach(path, subject) if obj is None or o == obj)
        if obj is not None:
            return ((s, obj) for s in self.reach(inverse(path), obj))
        return ((s, o) for s in self.nodes() for o in self.reach(path, s))


def evaluate_path(index: GraphIndex, dictionary: Dictionary, subject: object, path: object,
                  obj: object) -> tuple[tuple[str, ...], list[tuple]]:
    """Schema and rows of ``subject path obj`` over one graph."""
    evaluator = PathEvaluator(index, dictionary)
    s_id = None if isinstance(subject, ast.Var) else dictionary.encode(subject)  # type: ignore[arg-type]
    o_id = None if isinstance(obj, ast.Var) else dictionary.encode(obj)  # type: ignore[arg-type]
    pairs = evaluator.pairs(path, s_id, o_id)
    same = isinstance(subject, ast.Var) and isinstance(obj, ast.Var) and subject.name == obj.name
    schema = tuple(dict.fromkeys(n.name for n in (subject, obj) if isinstance(n, ast.Var)))
    rows = []
    for s, o in pairs:
        if same:
            if s == o:
                rows.append((s,))
        elif isinstance(subject, ast.Var) and isinstance(obj, ast.Var):
            rows.append((s, o))
        elif isinstance(subject, ast.Var):
            rows.append((s,))
        elif isinstance(obj, ast.Var):
            rows.append((o,))
        else:
            rows.append(())
    return schema, rows
