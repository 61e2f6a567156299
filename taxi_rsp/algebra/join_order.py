"""Join order without avoidable cross products.

Patterns are written in any order; joined in that order, a pattern sharing no variable
with those before it is a cross product even when a later one would connect it (CityBench
Q10's static patterns made 7.4 GiB of rows that way at registration). Two rewrites:

* a static basic graph pattern whose patterns fall into several connected components
  (by shared variables) becomes a join of one pattern per component, so each is matched
  on its own and the stream parts that connect them are joined in between (the
  multi-way join routes an arriving row through them);
* a tree of joins is rebuilt left-deep in *connected order* — text order, except that the
  next input shares a variable with those before it whenever one does — when its text
  order has a cross product that a later input would avoid. A cross product the query
  itself requires (no input connects) keeps its place, last.

>>> from taxi_rsp.lang.ast import TriplePattern, Var
>>> from taxi_rsp.rdf.terms import IRI
>>> p = IRI("http://p")
>>> bgp = P.StaticBGP((TriplePattern(Var("a"), p, Var("b")), TriplePattern(Var("c"), p, Var("d"))))
>>> print(P.explain(order_joins(bgp)))
Join
  StaticBGP {?a <http://p> ?b}
  StaticBGP {?c <http://p> ?d}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import TypeVar

from taxi_rsp.algebra import plan as P
from taxi_rsp.lang.ast import TriplePattern, Var

T = TypeVar("T")


def connected_order(parts: Sequence[T], variables: Callable[[T], set[str]]) -> list[T]:
    """``parts`` in text order, except that each next one shares a variable with those
    before it whenever one does.

    >>> connected_order(["ab", "c", "bc"], set)
    ['ab', 'bc', 'c']
    """
    left = list(parts)
    if not left:
        return []
    ordered = [left.pop(0)]
    bound = set(variables(ordered[0]))
    while left:
        index = next((i for i, part in enumerate(left) if variables(part) & bound), 0)
        part = left.pop(index)
        ordered.append(part)
        bound |= variables(part)
    return ordered


def triple_vars(triples: Sequence[TriplePattern]) -> set[str]:
    """The variables of some triple patterns."""
    return {n.name for t in triples for n in (t.s, t.p, t.o) if isinstance(n, Var)}


def components(triples: Sequence[TriplePattern]) -> list[tuple[TriplePattern, ...]]:
    """The connected components of a BGP (patterns linked by shared variables), each in
    text order, ordered by their first pattern.

    >>> from taxi_rsp.rdf.terms import IRI
    >>> p = IRI("http://p")
    >>> parts = components((TriplePattern(Var("a"), p, Var("b")), TriplePattern(Var("c"), p, Var("d")),
    ...                     TriplePattern(Var("b"), p, Var("e"))))
    >>> [len(part) for part in parts]
    [2, 1]
    """
    groups: list[list[TriplePattern]] = []
    names: list[set[str]] = []
    for triple in triples:
        mine = triple_vars((triple,))
        touching = [i for i, group_vars in enumerate(names) if group_vars & mine]
        if not touching:
            groups.append([triple])
            names.append(mine)
            continue
        first = touching[0]
        for i in reversed(touching[1:]):  # this pattern links several components: merge them
            groups[first].extend(groups.pop(i))
            names[first] |= names.pop(i)
        groups[first].append(triple)
        names[first] |= mine
    order = {id(t): i for i, t in enumerate(triples)}
    parts = [tuple(sorted(group, key=lambda t: order[id(t)])) for group in groups]
    return sorted(parts, key=lambda part: order[id(part[0])])


def order_joins(node: P.PlanNode) -> P.PlanNode:
    """``node`` with disconnected static BGPs split and join trees in connected order."""
    if isinstance(node, P.StaticBGP):
        return _split_static(node)
    if isinstance(node, P.Join):
        left, right = order_joins(node.left), order_joins(node.right)
        leaves = _join_leaves(left) + _join_leaves(right)
        if not _has_avoidable_cross_product(leaves):
            return replace(node, left=left, right=right)  # the written shape stays
        ordered = connected_order(leaves, lambda n: set(n.variables))
        joined = ordered[0]
        for leaf in ordered[1:]:
            joined = P.Join(joined, leaf)
        return joined
    changes = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if f.name in ("child", "left", "right"):
            changes[f.name] = order_joins(value)
        elif f.name == "inputs":
            changes[f.name] = tuple(order_joins(n) for n in value)
    return replace(node, **changes) if changes else node


def _split_static(node: P.StaticBGP) -> P.PlanNode:
    if isinstance(node.graph, Var):  # ?g is shared by every part: one component anyway
        return node
    parts = components(node.triples)
    if len(parts) <= 1:
        return node
    joined: P.PlanNode = replace(node, triples=parts[0])
    for part in parts[1:]:
        joined = P.Join(joined, replace(node, triples=part))
    return joined


def _join_leaves(node: P.PlanNode) -> list[P.PlanNode]:
    if isinstance(node, P.Join):
        return _join_leaves(node.left) + _join_leaves(node.right)
    return [node]


def _has_avoidable_cross_product(leaves: list[P.PlanNode]) -> bool:
    """Whether, joined in this order, an input shares no variable with those before it
    although a later input does."""
    bound: set[str] = set()
    for i, leaf in enumerate(leaves):
        mine = set(leaf.variables)
        if i and not mine & bound and any(set(later.variables) & bound for later in leaves[i + 1:]):
            return True
        bound |= mine
    return False
