"""Analyses of expressions and plans that the optimizer, the translator and the planner share.

>>> from taxi_rsp.lang import ast
>>> e = ast.Call("&&", (ast.Call(">", (ast.Var("a"), ast.Var("b"))), ast.Var("c")))
>>> [type(c).__name__ for c in conjuncts(e)], sorted(expr_vars(e))
(['Call', 'Var'], ['a', 'b', 'c'])
>>> expr_vars(ast.Call("||", (ast.Var("a"), ast.Exists(None, negated=False)))) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields, is_dataclass
from typing import Any

from taxi_rsp.algebra import plan as P
from taxi_rsp.lang import ast
from taxi_rsp.rdf.terms import IRI


def conjuncts(expr: Any) -> list[Any]:
    """The operands of a top-level chain of ``&&`` (the expression itself otherwise)."""
    if isinstance(expr, ast.Call) and expr.op == "&&":
        return [c for arg in expr.args for c in conjuncts(arg)]
    return [expr]


def conjunction(exprs: list[Any]) -> Any:
    """``e1 && e2 && …`` of ``exprs``; None for none, the expression itself for one."""
    if not exprs:
        return None
    return exprs[0] if len(exprs) == 1 else ast.Call("&&", tuple(exprs))


def expr_vars(expr: Any) -> set[str] | None:
    """The variables an expression reads; None when it holds a graph pattern (EXISTS),
    whose variables depend on the pattern: callers must then treat it as reading
    anything (never push it below an operator or into a side)."""
    if isinstance(expr, ast.Var):
        return {expr.name}
    if isinstance(expr, ast.Call):
        found: set[str] = set()
        for arg in expr.args:
            inner = expr_vars(arg)
            if inner is None:
                return None
            found |= inner
        return found
    if isinstance(expr, ast.Aggregate):
        return set() if expr.arg is None else expr_vars(expr.arg)
    if isinstance(expr, ast.Exists):
        return None
    return set()


def certain_vars(node: P.PlanNode) -> frozenset[str]:
    """Variables a plan node binds in every mapping (never None)."""
    match node:
        case P.Scan() | P.StaticBGP():
            return frozenset(node.variables)
        case P.Join():
            return certain_vars(node.left) | certain_vars(node.right)
        case P.LeftJoin() | P.AntiJoin() | P.SemiJoin():
            return certain_vars(node.left)
        case P.Union():
            sets = [certain_vars(n) for n in node.inputs]
            return frozenset.intersection(*sets) if sets else frozenset()
        case P.Filter() | P.Distinct() | P.TopK() | P.Extend():
            return certain_vars(node.child)  # BIND may leave its variable unbound
        case P.Project():
            return certain_vars(node.child) & frozenset(node.vars)
        case P.Group():
            return certain_vars(node.child) & frozenset(node.keys)
    return frozenset()


def has_scan(node: object) -> bool:
    """Whether a stream window (Scan) occurs anywhere below ``node``."""
    if isinstance(node, P.Scan):
        return True
    children = [getattr(node, name) for name in ("child", "left", "right") if hasattr(node, name)]
    children += list(getattr(node, "inputs", ()))
    return any(has_scan(c) for c in children)


def stream_predicates(roots: Iterable[object], stream: str) -> frozenset[str] | None:
    """The predicate IRIs that the triple patterns over ``stream`` in the plans ``roots``
    can match; None when some pattern there can match any predicate (a variable or a
    property path in predicate position). Every part of a plan is searched, the patterns
    inside expressions (EXISTS) too, so a consumer of the stream is never missed.

    >>> from taxi_rsp.algebra.translate import translate_query
    >>> from taxi_rsp.lang.parser import parse_query
    >>> def plan(text): return translate_query(parse_query(text)).root
    >>> stream_predicates([plan("SELECT * WHERE { STREAM <http://s> [RANGE 1m] { ?a <http://p> ?b } }")], "http://s")
    frozenset({'http://p'})
    >>> stream_predicates([plan("SELECT * WHERE { STREAM <http://s> [RANGE 1m] { ?a ?p ?b } }")], "http://s") is None
    True
    >>> stream_predicates([plan("SELECT * WHERE { STREAM <http://t> [RANGE 1m] { ?a ?p ?b } }")], "http://s")
    frozenset()
    """
    found: set[str] = set()
    for root in roots:
        for node in _parts(root):
            if isinstance(node, P.Scan) and node.stream == stream:
                triples: Iterable[ast.TriplePattern] = node.triples
            elif isinstance(node, ast.StreamPattern) and (not isinstance(node.stream, IRI) or node.stream.value == stream):
                triples = (t for t in _parts(node.pattern) if isinstance(t, ast.TriplePattern))
            else:
                continue
            for triple in triples:
                if not isinstance(triple.p, IRI):
                    return None  # a variable or a path: any predicate may match
                found.add(triple.p.value)
    return frozenset(found)


def _parts(node: object) -> Iterator[object]:
    """``node`` and everything it holds, depth first: fields of dataclasses (plan nodes,
    syntax, expressions) and the items of tuples, lists, sets and dicts."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        if is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item))
        elif isinstance(item, (tuple, list, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
