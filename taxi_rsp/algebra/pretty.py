"""Render expressions and terms back to CQELS-QL-like text (for plans and errors)."""

from __future__ import annotations

from taxi_rsp.lang.ast import Aggregate, Call, Const, Exists, Var
from taxi_rsp.rdf.terms import IRI, BNode, Literal

_INFIX = {"+", "-", "*", "/", "=", "!=", "<", ">", "<=", ">=", "&&", "||"}


def format_expr(expr: object) -> str:
    """An expression as CQELS-QL text.

    >>> format_expr(Call("+", (Var("x"), Const(Literal("1", "http://www.w3.org/2001/XMLSchema#integer")))))
    '(?x + 1)'
    """
    match expr:
        case None:
            return "None"
        case Var():
            return f"?{expr.name}"
        case Const():
            return format_expr(expr.term)
        case IRI():
            return f"<{expr.value}>"
        case BNode():
            return f"_:{expr.label}"
        case Literal():
            if expr.datatype.endswith(("#integer", "#decimal", "#double", "#boolean")):
                return expr.lexical
            return expr.n3()
        case Aggregate():
            inner = "*" if expr.arg is None else format_expr(expr.arg)
            return f"{expr.name}({'DISTINCT ' if expr.distinct else ''}{inner})"
        case Exists():
            return ("NOT " if expr.negated else "") + "EXISTS {...}"
        case Call() if expr.op in _INFIX and len(expr.args) >= 2:
            return "(" + f" {expr.op} ".join(format_expr(a) for a in expr.args) + ")"
        case Call():
            name = expr.op if not expr.op.startswith("http") else f"<{expr.op}>"
            return f"{name}(" + ", ".join(format_expr(a) for a in expr.args) + ")"
    return repr(expr)
