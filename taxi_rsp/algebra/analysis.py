"""Analyses of expressions that the optimizer, the translator and the planner share.

>>> from taxi_rsp.lang import ast
>>> e = ast.Call("&&", (ast.Call(">", (ast.Var("a"), ast.Var("b"))), ast.Var("c")))
>>> [type(c).__name__ for c in conjuncts(e)], sorted(expr_vars(e))
(['Call', 'Var'], ['a', 'b', 'c'])
>>> expr_vars(ast.Call("||", (ast.Var("a"), ast.Exists(None, negated=False)))) is None
True
"""

from __future__ import annotations

from typing import Any

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
