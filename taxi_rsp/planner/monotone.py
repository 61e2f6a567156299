"""Which ORDER BY scores are monotone in their inputs, for the TMA grid top-k
(:class:`~taxi_rsp.engine.ops.tma.TmaTopKOp`): decided once at plan time."""

from __future__ import annotations

from typing import Any

from taxi_rsp.lang import ast


def monotonicity(expr: Any) -> dict[str, int] | None:
    """Variables of a monotone score expression and their direction (+1 / -1), or None.

    >>> monotonicity(ast.Call("/", (ast.Var("profit"), ast.Var("empty"))))
    {'profit': 1, 'empty': -1}
    """
    if isinstance(expr, ast.Var):
        return {expr.name: 1}
    if isinstance(expr, ast.Const):
        return {}
    if not isinstance(expr, ast.Call) or len(expr.args) != 2:
        return None
    left, right = (monotonicity(a) for a in expr.args)
    if left is None or right is None:
        return None
    if expr.op in ("+", "*"):  # '*' assumes non-negative factors (checked at run time)
        flip = {v: d for v, d in right.items()}
    elif expr.op in ("-", "/"):  # '/' assumes a non-negative numerator, positive divisor
        flip = {v: -d for v, d in right.items()}
    else:
        return None
    merged = dict(left)
    for var, direction in flip.items():
        if merged.get(var, direction) != direction:
            return None  # the variable pulls both ways
        merged[var] = direction
    return merged
