"""Logical rewrites: a tuple of small pure rule functions applied bottom-up.

Each rule takes a node whose children are already rewritten and returns a node; rules
must preserve the query's results exactly. An expression whose variables are unknown
(``expr_vars`` is None: it holds EXISTS) is never moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import conjunction, conjuncts, expr_vars
from taxi_rsp.lang import ast

Rule = Callable[[P.PlanNode], P.PlanNode]


def _uses_bound(expr: object) -> bool:
    if isinstance(expr, ast.Call):
        return expr.op in ("BOUND", "COALESCE", "IF") or any(_uses_bound(a) for a in expr.args)
    return False


def push_filter_below_correlated(node: P.PlanNode) -> P.PlanNode:
    """Filter(AntiJoin/SemiJoin(L, R)) -> AntiJoin/SemiJoin(Filter(L), R) when the filter
    reads only variables of L: those operators output L's rows unchanged."""
    if isinstance(node, P.Filter) and isinstance(node.child, (P.AntiJoin, P.SemiJoin)):
        inner = node.child
        used = expr_vars(node.expr)
        if used is not None and used <= set(inner.left.variables):
            return replace(inner, left=push_filter_below_correlated(P.Filter(inner.left, node.expr)))
    return node


def push_filter_below_extend(node: P.PlanNode) -> P.PlanNode:
    """Filter(Extend(X, ?v, e)) -> Extend(Filter(X), ?v, e) when the filter does not read
    ?v: rows are dropped before the expression is computed for them."""
    if isinstance(node, P.Filter) and isinstance(node.child, P.Extend):
        extend = node.child
        used = expr_vars(node.expr)
        if used is not None and extend.var not in used and not _uses_bound(node.expr):
            return replace(extend, child=push_filter_below_extend(P.Filter(extend.child, node.expr)))
    return node


def push_filter_into_join_side(node: P.PlanNode) -> P.PlanNode:
    """Filter(Join(L, R), c1 && c2 && c3) -> Filter(Join(Filter(L, c1), Filter(R, c2)), c3)
    for the conjuncts whose variables are all bound by one side (c1: L, c2: R): a row
    passes the conjunction iff it passes every conjunct, so each is tested where its
    values are first known and rows are dropped before they are joined and indexed.
    Skipped for BOUND/COALESCE/IF, whose value may change when a variable becomes bound
    through the join, and for a side that may leave a variable unbound."""
    if not isinstance(node, P.Filter) or not isinstance(node.child, P.Join):
        return node
    join = node.child
    sides = {"left": set(join.left.variables) if _certain(join.left) else set(),
             "right": set(join.right.variables) if _certain(join.right) else set()}
    moved: dict[str, list] = {"left": [], "right": []}
    kept = []
    for part in conjuncts(node.expr):
        used = expr_vars(part)
        side = None if used is None or _uses_bound(part) else \
            next((name for name, bound in sides.items() if used <= bound), None)
        (moved[side] if side is not None else kept).append(part)
    if not moved["left"] and not moved["right"]:
        return node
    changes = {name: P.Filter(getattr(join, name), conjunction(parts)) for name, parts in moved.items() if parts}
    pushed = replace(join, **changes)
    return P.Filter(pushed, conjunction(kept)) if kept else pushed


def push_condition_into_right(node: P.PlanNode) -> P.PlanNode:
    """AntiJoin/SemiJoin/LeftJoin(L, R, c1 && c2) -> same(L, Filter(R, c1), c2) for the
    conjuncts c1 that read no variable of L.

    On a merged mapping such a conjunct sees only R's values (the merge takes every
    variable outside L from R), so it has the same value on R's row alone; and the
    condition holds iff every conjunct is true, so testing c1 once per right row
    instead of once per (left, right) pair changes nothing. For FILTER NOT EXISTS this
    drops right rows early (before they are indexed) and leaves only the correlated
    test per pair.
    """
    if not isinstance(node, (P.AntiJoin, P.SemiJoin, P.LeftJoin)) or node.condition is None:
        return node
    left_vars = set(node.left.variables)
    parts = conjuncts(node.condition)
    local = [c for c in parts if (used := expr_vars(c)) is not None and not used & left_vars]
    if not local:
        return node
    rest = [c for c in parts if not any(c is kept for kept in local)]
    return replace(node, right=P.Filter(node.right, conjunction(local)), condition=conjunction(rest))


def _certain(node: P.PlanNode) -> bool:
    """True when every variable of ``node`` is always bound (no OPTIONAL/UNION below)."""
    if isinstance(node, (P.LeftJoin, P.Union)):
        return False
    if isinstance(node, P.Values) and any(None in row for row in node.rows):
        return False  # UNDEF
    return all(_certain(getattr(node, f.name)) for f in fields(node)
               if f.name in ("child", "left", "right"))


RULES: tuple[Rule, ...] = (
    push_filter_below_correlated,
    push_filter_below_extend,
    push_filter_into_join_side,
    push_condition_into_right,
)


def optimize(node: P.PlanNode, rules: tuple[Rule, ...] = RULES) -> P.PlanNode:
    """Rewrite bottom-up until no rule changes a node."""
    changes = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if f.name in ("child", "left", "right"):
            changes[f.name] = optimize(value, rules)
        elif f.name == "inputs":
            changes[f.name] = tuple(optimize(n, rules) for n in value)
    if changes:
        node = replace(node, **changes)
    for rule in rules:
        rewritten = rule(node)
        if rewritten is not node:
            return optimize(rewritten, rules)
    return node
