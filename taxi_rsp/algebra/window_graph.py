"""A STREAM block is matched against its window's content as one graph (RSP-QL).

CQELS (ISWC 2011) and RSP-QL define a window's content as the union of the graphs of the
events in it, so the triple patterns of ``STREAM <s> [RANGE 10s] { ?s :temp ?t . ?s
:room ?r }`` may match triples of different events. A :class:`~taxi_rsp.algebra.plan.Scan`
matches its patterns inside one event, so this pass splits a block into *event-local
components* — sets of patterns that can only match inside one event — and joins their
windows: a join of windows over the same stream and window spec is exactly a match over
the window's content (each component's rows stay as long as their event does).

A component is one triple pattern, except over a stream declared *subject-disjoint* (no
two events share a subject; the taxi Feeder's trips are): there the patterns with the same
subject form one component, a star that can only match inside the event holding that
subject. So Q1 and Q2, whose blocks are stars over the trips, keep their one window.

The content is the *bag* union of the events' triples, as CQELS's window buffers hold
them: a triple present in two events of a window matches twice (RSP-QL's set union would
match it once); one-pattern blocks therefore keep their meaning (docs/semantics.md).

>>> from taxi_rsp.lang.ast import TriplePattern, Var, WindowSpec
>>> from taxi_rsp.rdf.terms import IRI
>>> block = P.Scan("http://s", WindowSpec("RANGE", range_ms=10_000), (
...     TriplePattern(Var("s"), IRI("http://ex/temp"), Var("t")),
...     TriplePattern(Var("s"), IRI("http://ex/room"), Var("r"))))
>>> print(P.explain(split_blocks(block)))
Join
  Scan <http://s> [RANGE 10000ms] {?s <http://ex/temp> ?t}
  Scan <http://s> [RANGE 10000ms] {?s <http://ex/room> ?r}
>>> split_blocks(block, frozenset({"http://s"})) == block
True
"""

from __future__ import annotations

from dataclasses import fields, replace

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.join_order import connected_order, triple_vars
from taxi_rsp.lang.ast import TriplePattern


def split_blocks(node: P.PlanNode, subject_disjoint: frozenset[str] = frozenset()) -> P.PlanNode:
    """``node`` with every multi-component STREAM block as a join of its components'
    windows; ``subject_disjoint``: the stream IRIs whose events share no subject."""
    if isinstance(node, P.Scan):
        return _split(node, node.stream in subject_disjoint)
    changes = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if f.name in ("child", "left", "right"):
            changes[f.name] = split_blocks(value, subject_disjoint)
        elif f.name == "inputs":
            changes[f.name] = tuple(split_blocks(n, subject_disjoint) for n in value)
    return replace(node, **changes) if changes else node


def event_local_components(triples: tuple[TriplePattern, ...], subject_disjoint: bool) -> list[tuple[TriplePattern, ...]]:
    """The patterns of a block grouped into sets that match inside one event, in the
    order of their first pattern.

    >>> from taxi_rsp.lang.ast import Var
    >>> from taxi_rsp.rdf.terms import IRI
    >>> a, b = TriplePattern(Var("x"), IRI("http://p"), Var("y")), TriplePattern(Var("y"), IRI("http://q"), Var("z"))
    >>> c = TriplePattern(Var("x"), IRI("http://r"), Var("w"))
    >>> [len(part) for part in event_local_components((a, b, c), True)]
    [2, 1]
    >>> [len(part) for part in event_local_components((a, b, c), False)]
    [1, 1, 1]
    """
    if not subject_disjoint:
        return [(triple,) for triple in triples]
    by_subject: dict[object, list[TriplePattern]] = {}
    for triple in triples:
        by_subject.setdefault(triple.s, []).append(triple)
    return [tuple(group) for group in by_subject.values()]


def _split(scan: P.Scan, subject_disjoint: bool) -> P.PlanNode:
    components = event_local_components(scan.triples, subject_disjoint)
    if len(components) == 1:
        return scan
    ordered = connected_order(components, triple_vars)
    joined: P.PlanNode = replace(scan, triples=ordered[0])
    for component in ordered[1:]:
        joined = P.Join(joined, replace(scan, triples=component))
    return joined
