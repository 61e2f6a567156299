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

import contextvars
import hashlib
import math
import random
import re
import time as _time
import uuid
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from taxi_rsp.errors import UnsupportedQueryError
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.iris import resolve_iri
from taxi_rsp.rdf.namespaces import INTEGER_TYPES, RDF, XSD, XSD_STRING
from taxi_rsp.rdf.terms import (
    IRI,
    BNode,
    DateTime,
    Float,
    LangString,
    Literal,
    ZonedDateTime,
    format_decimal,
    parse_decimal,
)

# The event time (ms) of the evaluation instant being computed, for NOW(); the engine
# sets it per instant. Unset (a one-shot evaluation outside a run): the wall clock.
EVENT_TIME: contextvars.ContextVar[int | None] = contextvars.ContextVar("event_time", default=None)


def set_event_time(millis: int | None) -> None:
    """Called by the engine before it applies an instant: NOW() is that instant's time."""
    EVENT_TIME.set(millis)

Compiled = Callable[[tuple], Any]


class ExprError(Exception):
    """A SPARQL expression error (type error, unbound variable, division by zero).

    Raise a new instance every time (``raise ExprError``), never a shared one: raising
    an instance extends the traceback it already carries, so a shared instance keeps
    every earlier raise's frames, and their rows, alive for the whole run (stop 17 of
    docs/performance.md: peak RSS grew with the stream length on an OPTIONAL query).
    """


_NUMERIC_TYPES = frozenset((int, Fraction, float, Float))  # exact types: bool and DateTime excluded


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
    raise ExprError  # IRIs, blank nodes, dateTimes, unknown or ill-typed literals


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
    raise ExprError


def _numeric(value: Any) -> Any:
    if type(value) not in _NUMERIC_TYPES:
        raise ExprError
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
            raise ExprError
        return Fraction(a) / b  # integer / integer is a decimal in SPARQL

    operation = {"+": plus, "-": minus, "*": times, "/": divide}[op]

    def promoted(a, b):
        # xsd:float op (float | decimal | integer) is an xsd:float; any double makes a double
        result = operation(a, b)
        if (type(a) is Float or type(b) is Float) and type(a) is not float and type(b) is not float:
            return Float(result)
        return result

    return promoted


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    if type(a) in _NUMERIC_TYPES and type(b) in _NUMERIC_TYPES:
        return a, b
    if type(a) is type(b) and isinstance(a, (str, DateTime, bool)):
        return a, b
    raise ExprError


def _equal(a: Any, b: Any) -> bool:
    if is_numeric(a) and is_numeric(b):
        return a == b
    if isinstance(a, (IRI, BNode)) or isinstance(b, (IRI, BNode)):
        return a == b
    if type(a) is type(b):
        return a == b
    raise ExprError


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


_INTEGER_LEX = re.compile(r"[+-]?[0-9]+\Z")
_DOUBLE_LEX = re.compile(r"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z")


def _simple(value: Any) -> str:
    """A simple literal or xsd:string (not a language-tagged string)."""
    if type(value) is not str:
        raise ExprError
    return value


def _cast_integer(value: Any) -> int:
    """xsd:integer(...) by the XPath casting rules (decimals and doubles truncate)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, DateTime):
        raise ExprError
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return math.trunc(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ExprError
        return math.trunc(value)
    text = _simple(value).strip()
    if _INTEGER_LEX.match(text) is None:
        raise ExprError
    return int(text)


def _cast_decimal(value: Any) -> Fraction:
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, DateTime):
        raise ExprError
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ExprError
        return Fraction(repr(value))  # the decimal the double's shortest form denotes
    try:
        return parse_decimal(_simple(value).strip())
    except ValueError:
        raise ExprError from None


def _cast_double(value: Any) -> float:
    if isinstance(value, DateTime):
        raise ExprError
    if isinstance(value, (bool, int, Fraction, float)):
        return float(value)  # a Float becomes a plain double
    text = _simple(value).strip()
    if _DOUBLE_LEX.match(text) is None:
        raise ExprError
    return float(text.replace("INF", "inf"))


def _cast_float(value: Any) -> Float:
    """xsd:float: a double rounded to single precision."""
    return Float(_cast_double(value))


def _cast_datetime(value: Any) -> DateTime:
    if isinstance(value, DateTime):
        return value
    try:
        return DateTime.parse(_simple(value).strip())
    except ValueError:
        raise ExprError from None


def _cast_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if is_numeric(value):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    text = _simple(value).strip()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise ExprError


def _double_string(value: float) -> str:
    """XPath: doubles in [1e-6, 1e6) print as decimals, others in canonical E form."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    shortest = value.shortest() if isinstance(value, Float) else repr(value)
    if 1e-6 <= abs(value) < 1e6:
        return _decimal_string(Fraction(shortest))
    for places in range(17):  # the shortest mantissa that gives the value back
        candidate = f"{float(shortest):.{places}E}"
        if float(candidate) == float(shortest):
            break
    mantissa, _, exponent = candidate.partition("E")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent)}"


def _decimal_string(value: Fraction) -> str:
    """XPath: a decimal with an integer value prints as an integer (``27``, not ``27.0``)."""
    if value.denominator == 1:
        return str(value.numerator)
    return format_decimal(value)


def _cast_string(value: Any) -> str:
    """xsd:string(...) by the XPath casting rules (SPARQL 1.1 §17.5)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DateTime):
        return value.isoformat()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return _decimal_string(value)
    if isinstance(value, float):
        return _double_string(value)
    if isinstance(value, IRI):
        return value.value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, Literal):
        return value.lexical
    raise ExprError


def _raise() -> Any:
    raise ExprError


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ExprError
    return value


def _like(model: Any, text: str) -> str:
    """``text`` with the language tag of ``model`` (string functions keep it)."""
    return LangString(text, model.lang) if isinstance(model, LangString) else text


def _compatible(a: Any, b: Any) -> tuple[str, str]:
    """Argument compatibility of the two-string functions (SPARQL 1.1 §17.4.3.1.1)."""
    if not isinstance(a, str) or not isinstance(b, str):
        raise ExprError
    if isinstance(b, LangString) and (not isinstance(a, LangString) or a.lang != b.lang):
        raise ExprError
    return str.__str__(a), str.__str__(b)


def _strbefore(a: Any, b: Any) -> str:
    text, sep = _compatible(a, b)
    at = text.find(sep)
    if at < 0:
        return ""
    return _like(a, text[:at])


def _strafter(a: Any, b: Any) -> str:
    text, sep = _compatible(a, b)
    at = text.find(sep)
    if at < 0:
        return ""
    return _like(a, text[at + len(sep):])


def _substr(value: Any, start: Any, length: Any = None) -> str:
    """XPath fn:substring: characters at 1-based positions p with
    round(start) <= p < round(start) + round(length)."""
    text = _string(value)
    first = _xpath_round(_numeric(start))
    if isinstance(first, float) and math.isnan(first):
        return _like(value, "")
    if length is None:
        last = math.inf
    else:
        count = _xpath_round(_numeric(length))
        last = first + count
        if isinstance(last, float) and math.isnan(last):
            return _like(value, "")
    chars = [c for p, c in enumerate(text, start=1) if first <= p < last]
    return _like(value, "".join(chars))


def _xpath_round(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return value
    return math.floor(value + Fraction(1, 2)) if not isinstance(value, float) else math.floor(value + 0.5)


@lru_cache(maxsize=256)
def _regex(pattern: str, flags: str) -> re.Pattern:
    bits = 0
    for flag in flags:
        if flag not in "smixq":
            raise ExprError
    if "q" in flags:
        pattern = re.escape(pattern)
    bits |= re.IGNORECASE if "i" in flags else 0
    bits |= re.DOTALL if "s" in flags else 0
    bits |= re.MULTILINE if "m" in flags else 0
    bits |= re.VERBOSE if "x" in flags else 0
    try:
        return re.compile(pattern, bits)
    except re.error:
        raise ExprError from None


def _regex_match(text: Any, pattern: Any, flags: Any = "") -> bool:
    _string(text)
    return _regex(_simple(pattern), _simple(flags)).search(text) is not None


def _replace(text: Any, pattern: Any, replacement: Any, flags: Any = "") -> str:
    compiled = _regex(_simple(pattern), _simple(flags))
    if compiled.match(""):
        raise ExprError  # XPath: a pattern matching the empty string is an error
    template = _xpath_replacement(_simple(replacement))
    try:
        return _like(text, compiled.sub(template, _string(text)))
    except (re.error, IndexError):
        raise ExprError from None


def _xpath_replacement(text: str) -> str:
    """An XPath replacement string ($1 a group, \\$ and \\\\ literal) as a Python template."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "$\\":
            out.append("\\\\" if text[i + 1] == "\\" else "$")
            i += 2
        elif ch == "$" and i + 1 < len(text) and text[i + 1].isdigit():
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            out.append(f"\\g<{text[i + 1:j]}>")
            i = j
        elif ch in "$\\":
            raise ExprError
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _concat(*values: Any) -> str:
    """CONCAT of string literals (a number or IRI argument is an error: use STR)."""
    text = "".join(str.__str__(_string(v)) for v in values)
    langs = {v.lang if isinstance(v, LangString) else None for v in values}
    if len(langs) == 1 and None not in langs:
        return LangString(text, langs.pop())
    return text


def _lang(value: Any) -> str:
    if isinstance(value, LangString):
        return value.lang
    if isinstance(value, (IRI, BNode)):
        raise ExprError
    return ""


def datatype_of(value: Any) -> IRI:
    """DATATYPE() of a value (the value model keeps xsd:integer-derived types as integers)."""
    if isinstance(value, LangString):
        return IRI(RDF + "langString")
    if isinstance(value, bool):
        return IRI(XSD + "boolean")
    if isinstance(value, DateTime):
        return IRI(XSD + "dateTime")
    if isinstance(value, int):
        return IRI(XSD + "integer")
    if isinstance(value, Fraction):
        return IRI(XSD + "decimal")
    if isinstance(value, Float):
        return IRI(XSD + "float")
    if isinstance(value, float):
        return IRI(XSD + "double")
    if isinstance(value, str):
        return IRI(XSD_STRING)
    if isinstance(value, Literal):
        return IRI(value.datatype)
    raise ExprError


def _langmatches(tag: Any, pattern: Any) -> bool:
    tag, pattern = _simple(tag).lower(), _simple(pattern).lower()
    if pattern == "*":
        return tag != ""
    return tag == pattern or tag.startswith(pattern + "-")


def _strdt(text: Any, datatype: Any) -> Any:
    if not isinstance(datatype, IRI):
        raise ExprError
    return Literal(_simple(text), datatype.value).value()


def _strlang(text: Any, lang: Any) -> LangString:
    tag = _simple(lang)
    if not re.fullmatch(r"[A-Za-z]+(-[A-Za-z0-9]+)*", tag):
        raise ExprError
    return LangString(_simple(text), tag)


def _hash(name: str) -> Callable[[Any], str]:
    def digest(value: Any) -> str:
        return hashlib.new(name, _simple(value).encode("utf-8")).hexdigest()

    return digest


def _timezone(value: Any) -> Literal:
    """TIMEZONE(): the zone as an xsd:dayTimeDuration; an error without a zone."""
    if not isinstance(value, DateTime):
        raise ExprError
    if value.offset is None:
        raise ExprError
    sign = "-" if value.offset < 0 else ""
    hours, minutes = divmod(abs(value.offset), 60)
    body = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return Literal(f"{sign}PT{body or '0S'}", XSD + "dayTimeDuration")


def _tz(value: Any) -> str:
    if not isinstance(value, DateTime):
        raise ExprError
    if value.offset is None:
        return ""
    if value.offset == 0:
        return "Z"
    sign = "+" if value.offset > 0 else "-"
    hours, minutes = divmod(abs(value.offset), 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def _iri(value: Any, base: Any = None) -> IRI:
    """IRI(): an IRI, or a string resolved against the query's BASE (the parser passes
    BASE as a hidden second argument)."""
    if isinstance(value, IRI):
        return value
    text = _simple(value)
    if isinstance(base, IRI) and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text):
        return IRI(resolve_iri(base.value, text))
    return IRI(text)


def _now() -> DateTime:
    """NOW(): the instant's event time (naive, like the stream's times); the wall clock
    in UTC outside a run."""
    millis = EVENT_TIME.get()
    if millis is None:
        return ZonedDateTime.at(int(_time.time() * 1000), 0)
    return DateTime(millis)


def _bnode(*args: Any) -> BNode:
    if args:
        return BNode("b" + hashlib.md5(_simple(args[0]).encode("utf-8")).hexdigest()[:16])
    return BNode("b" + uuid.uuid4().hex)


def _datetime_part(attr: str) -> Callable[[Any], Any]:
    def part(value: Any) -> Any:
        if not isinstance(value, DateTime):
            raise ExprError
        moment = value.to_datetime()
        if attr == "second":
            return Fraction(moment.second) + Fraction(moment.microsecond, 1_000_000)
        return getattr(moment, attr)

    return part


_CASTS: dict[str, Callable[[Any], Any]] = {
    XSD + "decimal": _cast_decimal,
    XSD + "double": _cast_double,
    XSD + "float": _cast_float,
    XSD + "string": _cast_string,
    XSD + "dateTime": _cast_datetime,
    XSD + "boolean": _cast_boolean,
    **{iri: _cast_integer for iri in INTEGER_TYPES},
}

# Builtins of one or more evaluated arguments: name -> (arities, function).
_FUNCTIONS: dict[str, tuple[tuple[int, ...] | None, Callable[..., Any]]] = {
    "STR": ((1,), lambda v: str.__str__(v) if isinstance(v, str) else lexical(v)),
    "LANG": ((1,), _lang),
    "DATATYPE": ((1,), datatype_of),
    "ABS": ((1,), lambda v: abs(_numeric(v))),
    "FLOOR": ((1,), _unary_numeric(math.floor)),
    "CEIL": ((1,), _unary_numeric(math.ceil)),
    "ROUND": ((1,), _round),
    "CONCAT": (None, _concat),
    "STRLEN": ((1,), lambda v: len(_string(v))),
    "SUBSTR": ((2, 3), _substr),
    "UCASE": ((1,), lambda v: _like(v, _string(v).upper())),
    "LCASE": ((1,), lambda v: _like(v, _string(v).lower())),
    "CONTAINS": ((2,), lambda a, b: (lambda t, s: s in t)(*_compatible(a, b))),
    "STRSTARTS": ((2,), lambda a, b: (lambda t, s: t.startswith(s))(*_compatible(a, b))),
    "STRENDS": ((2,), lambda a, b: (lambda t, s: t.endswith(s))(*_compatible(a, b))),
    "STRBEFORE": ((2,), _strbefore),
    "STRAFTER": ((2,), _strafter),
    "ENCODE_FOR_URI": ((1,), lambda v: quote(_string(v).encode("utf-8"), safe="-_.~")),
    "REGEX": ((2, 3), _regex_match),
    "REPLACE": ((3, 4), _replace),
    "LANGMATCHES": ((2,), _langmatches),
    "STRDT": ((2,), _strdt),
    "STRLANG": ((2,), _strlang),
    "MD5": ((1,), _hash("md5")),
    "SHA1": ((1,), _hash("sha1")),
    "SHA256": ((1,), _hash("sha256")),
    "SHA384": ((1,), _hash("sha384")),
    "SHA512": ((1,), _hash("sha512")),
    "ISIRI": ((1,), lambda v: isinstance(v, IRI)),
    "ISURI": ((1,), lambda v: isinstance(v, IRI)),
    "ISBLANK": ((1,), lambda v: isinstance(v, BNode)),
    "ISLITERAL": ((1,), lambda v: not isinstance(v, (IRI, BNode))),
    "ISNUMERIC": ((1,), is_numeric),
    "IRI": ((1,), lambda v, base=None: _iri(v, base)),
    "URI": ((1,), lambda v, base=None: _iri(v, base)),
    "BNODE": ((0, 1), _bnode),
    "SAMETERM": ((2,), lambda a, b: type(a) is type(b) and a == b and getattr(a, "offset", None)
                 == getattr(b, "offset", None)),
    "YEAR": ((1,), _datetime_part("year")),
    "MONTH": ((1,), _datetime_part("month")),
    "DAY": ((1,), _datetime_part("day")),
    "HOURS": ((1,), _datetime_part("hour")),
    "MINUTES": ((1,), _datetime_part("minute")),
    "SECONDS": ((1,), _datetime_part("second")),
    "TIMEZONE": ((1,), _timezone),
    "TZ": ((1,), _tz),
}

# Functions whose value differs per call: never constant-folded.
_VOLATILE = {"NOW": _now, "RAND": random.random, "UUID": lambda: IRI(f"urn:uuid:{uuid.uuid4()}"),
             "STRUUID": lambda: str(uuid.uuid4())}
_SPECIAL = {"IF": (3,), "COALESCE": None, "BOUND": (1,)}

SUPPORTED_FUNCTIONS = frozenset(_FUNCTIONS) | frozenset(_VOLATILE) | frozenset(_SPECIAL)


def check_call(name: str, count: int) -> str | None:
    """Why a built-in call cannot be evaluated (unknown name, wrong arity), or None."""
    if name in _VOLATILE:
        return None if count == 0 else f"{name} takes no arguments, got {count}"
    if name in _SPECIAL:
        arities = _SPECIAL[name]
    elif name in _FUNCTIONS:
        arities = _FUNCTIONS[name][0]
    else:
        return f"{name} is not supported"
    if arities is not None and count not in arities:
        wanted = " or ".join(str(a) for a in arities)
        return f"{name} takes {wanted} argument(s), got {count}"
    return None


def compile_expr(expr: Any, schema: dict[str, int], dictionary: Dictionary) -> Compiled:
    """Compile ``expr`` for mappings laid out by ``schema`` (variable -> index)."""
    value_of = dictionary.value

    match expr:
        case ast.Var():
            index = schema.get(expr.name)
            if index is None:  # never bound in this scope: always an error
                return lambda row: _raise()
            return _variable(index, value_of)
        case ast.Const():
            constant = expr.term.value() if isinstance(expr.term, Literal) else expr.term
            return lambda row: constant
        case IRI() | BNode():
            return lambda row: expr
        case ast.Aggregate():
            raise UnsupportedQueryError(f"aggregate {expr.name} used outside SELECT/HAVING/ORDER BY")
        case ast.Exists():
            raise UnsupportedQueryError("EXISTS in ORDER BY, GROUP BY or HAVING is not supported (BIND it to a variable first)")
        case ast.Call():
            return _compile_call(expr, schema, dictionary)
    raise UnsupportedQueryError(f"unsupported expression: {expr!r}")


def _variable(index: int, value_of: Callable[[int], Any]) -> Compiled:
    """The value of the variable at ``index`` of a row (unbound: an error). Defined
    here, not inside ``compile_expr``'s ``match``: Cython cannot compile a function
    definition inside a ``case`` block."""
    def variable(row: tuple) -> Any:
        term_id = row[index]
        if term_id is None:
            raise ExprError
        return value_of(term_id)

    return variable


def _compile_call(expr: ast.Call, schema: dict[str, int], dictionary: Dictionary) -> Compiled:
    compiled = _compile_call_unfolded(expr, schema, dictionary)
    if _is_constant(expr):
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
    return (isinstance(expr, ast.Call) and expr.op not in ("BOUND", "BNODE_IN") and not ast.volatile_call(expr)
            and all(_is_constant(a) for a in expr.args))


def _floor_division(rounding: str, left: Compiled, right: Compiled) -> Compiled:
    """FLOOR(a / b) and CEIL(a / b) on exact numbers without building the quotient:
    ints and Fractions both expose numerator/denominator."""

    def evaluate(row: tuple) -> Any:
        a, b = left(row), right(row)
        ta, tb = type(a), type(b)
        if ta not in _NUMERIC_TYPES or tb not in _NUMERIC_TYPES:
            raise ExprError
        if ta is float or tb is float:
            quotient = _arith("/")(a, b)
            return float(math.floor(quotient) if rounding == "FLOOR" else math.ceil(quotient))
        num = a.numerator * b.denominator
        den = a.denominator * b.numerator
        if den == 0:
            raise ExprError
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
    if op == "BNODE_IN":  # BNODE(str) per solution (see translate._scoped_bnodes)
        return _bnode_in(compile_expr(expr.args[0], schema, dictionary),
                         tuple(schema.get(v.name) for v in expr.args[1:]))
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
    if op in _VOLATILE:
        _arity(op, args, 0)
        volatile = _VOLATILE[op]
        return lambda row: volatile()
    if op in _FUNCTIONS:
        arities, fn = _FUNCTIONS[op]
        if op in ("IRI", "URI"):
            arities = (1, 2)  # the second: BASE, added by the parser
        if arities is not None and len(args) not in arities:
            raise UnsupportedQueryError(check_call(op, len(args)) or op)
        if op == "DATATYPE" and isinstance(expr.args[0], ast.Var) and expr.args[0].name in schema:
            return _datatype_of_term(schema[expr.args[0].name], dictionary)
        if len(args) == 1:
            (arg,) = args
            return lambda row: fn(arg(row))
        return lambda row: fn(*(a(row) for a in args))
    raise UnsupportedQueryError(f"unsupported function or operator {op}")


def _bnode_in(text: Compiled, positions: tuple[int | None, ...]) -> Compiled:
    """The same blank node for the same string within one solution (the ids at
    ``positions``), a different one in another solution."""

    def evaluate(row: tuple) -> BNode:
        key = (_simple(text(row)), tuple(None if p is None else row[p] for p in positions))
        return BNode("b" + hashlib.sha1(repr(key).encode("utf-8")).hexdigest()[:20])

    return evaluate


def _datatype_of_term(index: int, dictionary: Dictionary) -> Compiled:
    """DATATYPE(?v) from the term itself, so xsd:int or xsd:float are not reported as the
    value type (xsd:integer, xsd:double) the expression model would use."""
    decode = dictionary.decode

    def evaluate(row: tuple) -> Any:
        term_id = row[index]
        if term_id is None:
            raise ExprError
        term = decode(term_id)
        if not isinstance(term, Literal):
            raise ExprError
        if term.lang:
            return IRI(RDF + "langString")
        return IRI(term.datatype)

    return evaluate


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
            raise ExprError
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
            raise ExprError
        return negated

    return evaluate


def _coalesce(args: list[Compiled]) -> Compiled:
    def evaluate(row: tuple) -> Any:
        for arg in args:
            try:
                return arg(row)
            except ExprError:
                continue
        raise ExprError

    return evaluate

