"""Graph-local BGP matching: find all mappings of a set of triple patterns inside one
small graph (a graph event, or a static graph), with constants dictionary-encoded.

>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> from taxi_rsp.lang.ast import TriplePattern, Var
>>> from taxi_rsp.rdf.terms import IRI
>>> d = Dictionary()
>>> p = IRI("http://x/p")
>>> matcher = BGPMatcher((TriplePattern(Var("s"), p, Var("o")),), d)
>>> s, o = d.encode(IRI("http://x/a")), d.encode(IRI("http://x/b"))
>>> matcher.schema, matcher.match(index_triples([(s, d.encode(p), o)])) == [(s, o)]
(('s', 'o'), True)
"""

from __future__ import annotations

from collections.abc import Iterable

from taxi_rsp.engine.view import EventView, TripleIndex, index_triples  # noqa: F401 - index_triples: the doctest
from taxi_rsp.lang.ast import TriplePattern, Var
from taxi_rsp.rdf.dictionary import Dictionary

def variable_positions(triples: Iterable[TriplePattern]) -> dict[str, int]:
    """Each variable's column in the rows a BGP produces, in order of first appearance.

    >>> from taxi_rsp.rdf.terms import IRI
    >>> variable_positions([TriplePattern(Var("t"), IRI("urn:p"), Var("x"))])
    {'t': 0, 'x': 1}
    """
    names: dict[str, int] = {}
    for triple in triples:
        for node in (triple.s, triple.p, triple.o):
            if isinstance(node, Var) and node.name not in names:
                names[node.name] = len(names)
    return names


class BGPMatcher:
    """Triple patterns matched by a backtracking search: ``match(index)`` returns the
    rows of a graph's index, laid out by ``schema``; ``match_view(view)`` those of an
    event (the reference; :class:`~taxi_rsp.engine.compiled.match.CompiledMatcher`
    generates nested loops that give the same rows in the same order)."""

    def __init__(self, triples: tuple[TriplePattern, ...], dictionary: Dictionary) -> None:
        names = variable_positions(triples)
        self.schema = tuple(names)
        # Most selective first: constant predicates, then constant subjects/objects.
        ordered = sorted(
            triples,
            key=lambda t: (isinstance(t.p, Var), isinstance(t.s, Var) + isinstance(t.o, Var)),
        )
        self._steps = [
            tuple(self._slot(node, names, dictionary) for node in (t.s, t.p, t.o)) for t in ordered
        ]

    def match(self, index: TripleIndex) -> list[tuple]:
        """The rows of the graph indexed by ``index``."""
        return self.search(index)

    def match_view(self, view: EventView) -> list[tuple]:
        """The rows of the event of ``view``."""
        return self.search(view.index)

    @property
    def signature(self) -> tuple:
        """The patterns as matched (variables are schema positions): equal for two
        matchers that find the same rows."""
        return tuple(self._steps)

    @staticmethod
    def _slot(node: object, names: dict[str, int], dictionary: Dictionary) -> tuple[bool, int]:
        if isinstance(node, Var):
            return True, names[node.name]
        return False, dictionary.encode(node)  # type: ignore[arg-type]

    def search(self, index: TripleIndex) -> list[tuple]:
        """The rows of ``index``, pattern by pattern in the order of ``_steps``."""
        results: list[tuple] = []
        binding: list = [None] * len(self.schema)
        steps = self._steps
        last = len(steps)

        def bind(is_var: bool, slot: int, value: int, undo: list[int]) -> bool:
            if not is_var:
                return slot == value
            current = binding[slot]
            if current is None:
                binding[slot] = value
                undo.append(slot)
                return True
            return current == value

        def search(k: int) -> None:
            if k == last:
                results.append(tuple(binding))
                return
            (s_var, s), (p_var, p), (o_var, o) = steps[k]
            if not p_var:
                for subject, obj in index.get(p, ()):
                    undo: list[int] = []
                    if bind(s_var, s, subject, undo) and bind(o_var, o, obj, undo):
                        search(k + 1)
                    for slot in undo:
                        binding[slot] = None
            else:
                for subject, predicate, obj in index[None]:
                    undo = []
                    if (
                        bind(s_var, s, subject, undo)
                        and bind(p_var, p, predicate, undo)
                        and bind(o_var, o, obj, undo)
                    ):
                        search(k + 1)
                    for slot in undo:
                        binding[slot] = None

        search(0)
        return results
