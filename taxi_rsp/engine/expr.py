"""Compile expression ASTs once per query into Python closures over id tuples.

A compiled expression takes a mapping (a tuple of term ids laid out by the
operator's schema, ``None`` for unbound) and returns a Python value (see
:mod:`taxi_rsp.rdf.terms`); a SPARQL type error or an unbound variable raises
:class:`ExprError`, which FILTER treats as false and BIND as "leave unbound".

>>> from taxi_rsp.rdf.dictionary import Dictionary
>>> from taxi_rsp.lang.parser import parse_query
>>> d = Dictionary()
>>> expr = parse_query("SELECT * WHERE { BIND(FLOOR(?x / 2) + 1 AS ?y) }").where.elements[0].expr
>>> f = compile_expr(expr, {"x": 0}, d)
>>> f((d.encode_value(7),))
Fraction(4, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from taxi_rsp.errors import UnsupportedQueryError
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import INTEGER_TYPES, XSD
from taxi_rsp.rdf.terms import (
    IRI,
    BNode,
    DateTime,
    Literal,
    format_decimal,
    parse_decimal,
)

Compiled = Callable[[tuple], Any]


class ExprError(Exception):
    """A SPARQL expression error (type error, unbound variable, division by zero)."""


_ERROR = ExprError()


_NUMERIC_TYPES = frozenset((int, Fraction, float))  # exact types: bool and DateTime excluded


def is_numeric(value: Any) -> bool:
    return type(value) in _NUMERIC_TYPES


def ebv(value: Any) -> bool:
    """Effective boolean value (SPARQL 1.1 §17.2.2)."""
    if isinstance(value, bool):
        return value
    if is_numeric(value):
        return value != 0 and not (type(value) is float and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    raise _ERROR


def lexical(value: Any) -> str:
    """STR() of a value."""
    if isinstance(value, IRI):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DateTime):
        return value.isoformat()
    if isinstance(value, Fraction):
        return format_decimal(value)
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, Literal):
        return value.lexical
    raise _ERROR


def _numeric(value: Any) -> Any:
    if type(value) not in _NUMERIC_TYPES:
        raise _ERROR
    return value


def _arith(op: str) -> Callable[[Any, Any], Any]:
    def plus(a, b):
        return _numeric(a) + _numeric(b)

    def minus(a, b):
        return _numeric(a) - _numeric(b)

    def times(a, b):
        return _numeric(a) * _numeric(b)

    def divide(a, b):
        a, b = _numeric(a), _numeric(b)
        if isinstance(a, float) or isinstance(b, float):
            return a / b if b else (math.copysign(math.inf, a) if a else math.nan)
        if b == 0:
            raise _ERROR
        return Fraction(a) / b  # integer / integer is a decimal in SPARQL

    return {"+": plus, "-": minus, "*": times, "/": divide}[op]


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    if type(a) in _NUMERIC_TYPES and type(b) in _NUMERIC_TYPES:
        return a, b
    if type(a) is type(b) and isinstance(a, (str, DateTime, bool)):
        return a, b
    raise _ERROR


def _equal(a: Any, b: Any) -> bool:
    if is_numeric(a) and is_numeric(b):
        return a == b
    if isinstance(a, (IRI, BNode)) or isinstance(b, (IRI, BNode)):
        return a == b
    if type(a) is type(b):
        return a == b
    raise _ERROR


_COMPARE = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


def _round(value: Any) -> Any:
    value = _numeric(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return float(math.floor(value + 0.5))
    return Fraction(math.floor(value + Fraction(1, 2)))


def _unary_numeric(fn: Callable[[Any], int]) -> Callable[[Any], Any]:
    def apply(value: Any) -> Any:
        value = _numeric(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return float(fn(value))
        return Fraction(fn(value))

    return apply


def _cast_integer(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, DateTime):
        raise _ERROR
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return math.trunc(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise _ERROR
        return math.trunc(value)
    if isinstance(value, str):
        try:
            return int(value.strip()) if value.strip().lstrip("+-").isdigit() else _raise()
        except ValueError:
            raise _ERROR from None
    raise _ERROR


def _cast_decimal(value: Any) -> Fraction:
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, DateTime):
        raise _ERROR
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise _ERROR
        return Fraction(value)
    if isinstance(value, str):
        try:
            return parse_decimal(value.strip())
        except ValueError:
            raise _ERROR from None
    raise _ERROR


def _cast_double(value: Any) -> float:
    if isinstance(value, DateTime):
        raise _ERROR
    if isinstance(value, (bool, int, Fraction, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise _ERROR from None
    raise _ERROR


def _cast_datetime(value: Any) -> DateTime:
    if isinstance(value, DateTime):
        return value
    if isinstance(value, str):
        try:
            return DateTime.parse(value)
        except ValueError:
            raise _ERROR from None
    raise _ERROR


def _raise() -> Any:
    raise _ERROR


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _ERROR
    return value


def _datetime_part(attr: str) -> Callable[[Any], Any]:
    def part(value: Any) -> Any:
        if not isinstance(value, DateTime):
            raise _ERROR
        moment = value.to_datetime()
        if attr == "second":
            return Fraction(moment.second) + Fraction(moment.microsecond, 1_000_000)
        return getattr(moment, attr)

    return part


_CASTS: dict[str, Callable[[Any], Any]] = {
    XSD + "decimal": _cast_decimal,
    XSD + "double": _cast_double,
    XSD + "float": _cast_double,
    XSD + "string": lexical,
    XSD + "dateTime": _cast_datetime,
    XSD + "boolean": lambda v: ebv(v) if not isinstance(v, str) else {"true": True, "1": True, "false": False, "0": False}.get(v) if v in ("true", "1", "false", "0") else _raise(),
    **{iri: _cast_integer for iri in INTEGER_TYPES},
}

# Builtins of one or more evaluated arguments: name -> (arity or None, function).
_FUNCTIONS: dict[str, tuple[int | None, Callable[..., Any]]] = {
    "STR": (1, lexical),
    "ABS": (1, lambda v: abs(_numeric(v))),
    "FLOOR": (1, _unary_numeric(math.floor)),
    "CEIL": (1, _unary_numeric(math.ceil)),
    "ROUND": (1, _round),
    "CONCAT": (None, lambda *vs: "".join(_string(v) if isinstance(v, str) else lexical(v) for v in vs)),
    "STRLEN": (1, lambda v: len(_string(v))),
    "UCASE": (1, lambda v: _string(v).upper()),
    "LCASE": (1, lambda v: _string(v).lower()),
    "CONTAINS": (2, lambda a, b: _string(b) in _string(a)),
    "STRSTARTS": (2, lambda a, b: _string(a).startswith(_string(b))),
    "STRENDS": (2, lambda a, b: _string(a).endswith(_string(b))),
    "ISIRI": (1, lambda v: isinstance(v, IRI)),
    "ISURI": (1, lambda v: isinstance(v, IRI)),
    "ISBLANK": (1, lambda v: isinstance(v, BNode)),
    "ISLITERAL": (1, lambda v: not isinstance(v, (IRI, BNode))),
    "ISNUMERIC": (1, is_numeric),
    "IRI": (1, lambda v: v if isinstance(v, IRI) else IRI(_string(v))),
    "URI": (1, lambda v: v if isinstance(v, IRI) else IRI(_string(v))),
    "SAMETERM": (2, lambda a, b: type(a) is type(b) and a == b),
    "YEAR": (1, _datetime_part("year")),
    "MONTH": (1, _datetime_part("month")),
    "DAY": (1, _datetime_part("day")),
    "HOURS": (1, _datetime_part("hour")),
    "MINUTES": (1, _datetime_part("minute")),
    "SECONDS": (1, _datetime_part("second")),
}


def compile_expr(expr: Any, schema: dict[str, int], dictionary: Dictionary) -> Compiled:
    """Compile ``expr`` for mappings laid out by ``schema`` (variable -> index)."""
    value_of = dictionary.value

    match expr:
        case ast.Var():
            index = schema.get(expr.name)
            if index is None:  # never bound in this scope: always an error
                return lambda row: _raise()

            def variable(row: tuple) -> Any:
                term_id = row[index]
                if term_id is None:
                    raise _ERROR
                return value_of(term_id)

            return variable
        case ast.Const():
            constant = expr.term.value() if isinstance(expr.term, Literal) else expr.term
            return lambda row: constant
        case IRI() | BNode():
            return lambda row: expr
        case ast.Aggregate():
            raise UnsupportedQueryError(f"aggregate {expr.name} used outside SELECT/HAVING/ORDER BY")
        case ast.Exists():
            raise UnsupportedQueryError("EXISTS is supported as a top-level FILTER conjunct only")
        case ast.Call():
            return _compile_call(expr, schema, dictionary)
    raise UnsupportedQueryError(f"unsupported expression: {expr!r}")


def _compile_call(expr: ast.Call, schema: dict[str, int], dictionary: Dictionary) -> Compiled:
    compiled = _compile_call_unfolded(expr, schema, dictionary)
    if expr.op != "BOUND" and all(_is_constant(a) for a in expr.args):
        # Constant folding: evaluate once at registration (errors stay run-time errors).
        try:
            value = compiled(())
        except ExprError:
            return compiled
        folded = lambda row: value
        folded.constant = True  # type: ignore[attr-defined]
        return folded
    return compiled


def _is_constant(expr: Any) -> bool:
    if isinstance(expr, (ast.Const, IRI, BNode)):
        return True
    return isinstance(expr, ast.Call) and expr.op != "BOUND" and all(_is_constant(a) for a in expr.args)


def _floor_division(rounding: str, left: Compiled, right: Compiled) -> Compiled:
    """FLOOR(a / b) and CEIL(a / b) on exact numbers without building the quotient:
    ints and Fractions both expose numerator/denominator."""

    def evaluate(row: tuple) -> Any:
        a, b = left(row), right(row)
        ta, tb = type(a), type(b)
        if ta not in _NUMERIC_TYPES or tb not in _NUMERIC_TYPES:
            raise _ERROR
        if ta is float or tb is float:
            quotient = _arith("/")(a, b)
            return float(math.floor(quotient) if rounding == "FLOOR" else math.ceil(quotient))
        num = a.numerator * b.denominator
        den = a.denominator * b.numerator
        if den == 0:
            raise _ERROR
        if den < 0:
            num, den = -num, -den
        result = num // den if rounding == "FLOOR" else -((-num) // den)
        return Fraction(result)  # a decimal, as FLOOR of the decimal quotient would be

    return evaluate


def _compile_call_unfolded(expr: ast.Call, schema: dict[str, int], dictionary: Dictionary) -> Compiled:
    op = expr.op
    if op in ("FLOOR", "CEIL") and len(expr.args) == 1:
        inner = expr.args[0]
        if isinstance(inner, ast.Call) and inner.op == "/" and len(inner.args) == 2:
            return _floor_division(op, *(compile_expr(a, schema, dictionary) for a in inner.args))
    if op == "BOUND":
        index = schema.get(expr.args[0].name)
        return (lambda row: False) if index is None else (lambda row: row[index] is not None)
    args = [compile_expr(arg, schema, dictionary) for arg in expr.args]
    if op in ("&&", "||"):
        return _logical(op, args)
    if op == "!":
        (arg,) = args
        return lambda row: not ebv(arg(row))
    if op == "NEG":
        (arg,) = args
        return lambda row: -_numeric(arg(row))
    if op in ("+", "-", "*", "/"):
        fn, left, right = _arith(op), args[0], args[1]
        return lambda row: fn(left(row), right(row))
    if op in _COMPARE:
        cmp, left, right = _COMPARE[op], args[0], args[1]
        return lambda row: cmp(*_comparable(left(row), right(row)))
    if op == "=":
        left, right = args
        return lambda row: _equal(left(row), right(row))
    if op == "!=":
        left, right = args
        return lambda row: not _equal(left(row), right(row))
    if op in ("IN", "NOT IN"):
        return _in(op == "NOT IN", args)
    if op == "IF":
        _arity(op, args, 3)
        cond, then, other = args
        return lambda row: then(row) if ebv(cond(row)) else other(row)
    if op == "COALESCE":
        return _coalesce(args)
    if op in _CASTS:
        _arity(op, args, 1)
        cast, (arg,) = _CASTS[op], args
        return lambda row: cast(arg(row))
    if op in _FUNCTIONS:
        arity, fn = _FUNCTIONS[op]
        if arity is not None:
            _arity(op, args, arity)
        if len(args) == 1:
            (arg,) = args
            return lambda row: fn(arg(row))
        return lambda row: fn(*(a(row) for a in args))
    raise UnsupportedQueryError(f"unsupported function or operator {op}")


def _arity(op: str, args: list, count: int) -> None:
    if len(args) != count:
        raise UnsupportedQueryError(f"{op} takes {count} argument(s), got {len(args)}")


def _logical(op: str, args: list[Compiled]) -> Compiled:
    # SPARQL three-valued logic: an error is absorbed by a decisive operand.
    decisive = op == "||"

    def evaluate(row: tuple) -> bool:
        failed = False
        for arg in args:
            try:
                if ebv(arg(row)) is decisive:
                    return decisive
            except ExprError:
                failed = True
        if failed:
            raise _ERROR
        return not decisive

    return evaluate


def _in(negated: bool, args: list[Compiled]) -> Compiled:
    left, candidates = args[0], args[1:]

    def evaluate(row: tuple) -> bool:
        value = left(row)
        failed = False
        for candidate in candidates:
            try:
                if _equal(value, candidate(row)):
                    return not negated
            except ExprError:
                failed = True
        if failed:
            raise _ERROR
        return negated

    return evaluate


def _coalesce(args: list[Compiled]) -> Compiled:
    def evaluate(row: tuple) -> Any:
        for arg in args:
            try:
                return arg(row)
            except ExprError:
                continue
        raise _ERROR

    return evaluate

