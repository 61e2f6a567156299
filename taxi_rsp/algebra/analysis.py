"""Analyses of expressions and plans that the optimizer, the translator and the planner share.

>>> from taxi_rsp.lang import ast
>>> e = ast.Call("&&", (ast.Call(">", (ast.Var("a"), ast.Var("b"))), ast.Var("c")))
>>> [type(c).__name__ for c in conjuncts(e)], sorted(expr_vars(e))
(['Call', 'Var'], ['a', 'b', 'c'])
>>> expr_vars(ast.Call("||", (ast.Var("a"), ast.Exists(None, negated=False)))) is None
True
"""

from __future__ import annotations

from typing import Any

from taxi_rsp.algebra import plan as P
from taxi_rsp.lang import ast


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
