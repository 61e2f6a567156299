"""CQELS-QL text -> :class:`taxi_rsp.lang.ast.Query`.

>>> q = parse_query('SELECT ?s WHERE { STREAM <http://s> [RANGE 30m] { ?s ?p ?o } }')
>>> q.where.elements[0].window
WindowSpec(kind='RANGE', range_ms=1800000, slide_ms=None, count=None)

Syntax errors raise :class:`taxi_rsp.errors.QuerySyntaxError` naming line:col and
what was expected there. ``params`` bind ``${name}`` placeholders in window specs.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from taxi_rsp.errors import QuerySyntaxError
from taxi_rsp.lang import ast
from taxi_rsp.rdf.namespaces import (
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    XSD_STRING,
)
from taxi_rsp.rdf.terms import IRI, BNode, Literal

_UNIT_MS = {
    "ns": 0, "nanosecond": 0, "nanoseconds": 0,
    "ms": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}
_DURATION_RE = re.compile(r"\s*([0-9]+)\s*([A-Za-z]+)\s*\Z")
_PARAM_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:=([^}\s]*))?\}")

# Friendlier names for terminals in "expected ..." messages.
_TERMINAL_NAMES = {
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "DOT": "'.'", "SEMICOLON": "';'", "COMMA": "','", "VAR": "a variable", "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name", "PNAME_NS": "a prefix", "STRING": "a string",
    "INTEGER": "an integer", "DECIMAL": "a decimal", "DOUBLE": "a double", "DURATION": "a duration (e.g. 30m)",
    "PARAM": "a parameter ${name}", "$END": "end of query", "STAR": "'*'", "A": "'a'",
}


def parse_duration(text: str) -> int:
    """Milliseconds of a CQELS-QL duration such as ``30m``, ``15 minutes`` or ``1h``.

    >>> parse_duration("15 minutes"), parse_duration("500ms")
    (900000, 500)
    """
    match = _DURATION_RE.match(text)
    if match is None or match.group(2).lower() not in _UNIT_MS:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30m, 15 minutes, 1h, 10s)")
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit in ("ns", "nanosecond", "nanoseconds"):
        return number // 1_000_000
    return number * _UNIT_MS[unit]


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("taxi_rsp.lang").joinpath("cqels.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True, maybe_placeholders=False)


def parse_query(text: str, params: dict[str, str] | None = None, source: str = "<query>") -> ast.Query:
    """Parse CQELS-QL text; raise QuerySyntaxError with line:col on any error."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, source) from None
    try:
        return _ToAst(params or {}, source).transform(tree)
    except VisitError as exc:
        inner = exc.orig_exc
        if isinstance(inner, QuerySyntaxError):
            raise inner from None
        raise


def _syntax_error(exc: UnexpectedInput, text: str, source: str) -> QuerySyntaxError:
    line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        expected = sorted(_TERMINAL_NAMES.get(t, t) for t in exc.expected)
        return QuerySyntaxError(f"unexpected end of query, expected {_join(expected)}", line, column, source)
    if isinstance(exc, UnexpectedToken):
        expected = sorted({_TERMINAL_NAMES.get(t, _literal_name(t)) for t in exc.expected})
        return QuerySyntaxError(f"unexpected {exc.token.value!r}, expected {_join(expected)}", line, column, source)
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        expected = sorted({_TERMINAL_NAMES.get(t, _literal_name(t)) for t in (exc.allowed or ())})
        hint = f", expected {_join(expected)}" if expected else ""
        return QuerySyntaxError(f"unexpected character {char!r}{hint}", line, column, source)
    return QuerySyntaxError(str(exc).splitlines()[0], line, column, source)


def _literal_name(terminal: str) -> str:
    # Anonymous keyword terminals are named like SELECT, WHERE, __ANON_3 ...
    return terminal if not terminal.startswith("__") else "a token"


def _join(names: list[str], limit: int = 12) -> str:
    shown = names[:limit]
    more = f" (or {len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(shown) + more


def _unescape(body: str) -> str:
    escapes = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@v_args(meta=True)
class _ToAst(Transformer):
    """Builds the AST; one method per grammar rule."""

    def __init__(self, params: dict[str, str], source: str) -> None:
        super().__init__()
        self.params = params
        self.source = source
        self.prefixes: dict[str, str] = {
            "xsd": "http://www.w3.org/2001/XMLSchema#",
            "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        }
        self.base = ""
        self._bnodes = 0

    def _error(self, message: str, meta_or_token: Any) -> QuerySyntaxError:
        line = getattr(meta_or_token, "line", 1)
        column = getattr(meta_or_token, "column", 1)
        return QuerySyntaxError(message, line, column, self.source)

    # -- prologue and query forms --------------------------------------------------
    def query(self, meta, children):
        return children[-1]

    def prologue(self, meta, children):
        return None

    def base_decl(self, meta, children):
        self.base = children[0][1:-1]

    def prefix_decl(self, meta, children):
        name, iri = children
        self.prefixes[str(name)[:-1]] = iri[1:-1]

    def _modifiers(self, children):
        group, having, order, limit, offset = (), (), (), None, 0
        for child in children:
            kind, value = child
            if kind == "group":
                group = value
            elif kind == "having":
                having = value
            elif kind == "order":
                order = value
            elif kind == "limit":
                limit, offset = value
        return {"group_by": group, "having": having, "order_by": order, "limit": limit, "offset": offset}

    def select_query(self, meta, children):
        (distinct, projection), *rest = children
        datasets = tuple(c for c in rest if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next(c for c in rest if isinstance(c, ast.GroupPattern))
        mods = rest[-1]
        return ast.Query("SELECT", where, projection, distinct=distinct, datasets=datasets,
                         prefixes=dict(self.prefixes), **mods)

    def sub_select(self, meta, children):
        (distinct, projection), where, mods = children
        return ast.SubSelect(ast.Query("SELECT", where, projection, distinct=distinct,
                                       prefixes=dict(self.prefixes), **mods))

    def construct_query(self, meta, children):
        template, *rest = children
        datasets = tuple(c for c in rest if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next(c for c in rest if isinstance(c, ast.GroupPattern))
        return ast.Query("CONSTRUCT", where, None, template=template, datasets=datasets,
                         prefixes=dict(self.prefixes), **rest[-1])

    def construct_template(self, meta, children):
        return children[0] if children else ()

    def triples_template(self, meta, children):
        return tuple(t for group in children for t in group)

    def select_clause(self, meta, children):
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children)
        if any(isinstance(c, Token) and c.type == "STAR" for c in children):
            return distinct, None
        return distinct, tuple(c for c in children if isinstance(c, ast.SelectItem))

    def select_modifier(self, meta, children):
        return children[0]

    def select_item(self, meta, children):
        if len(children) == 1:
            return ast.SelectItem(children[0])
        return ast.SelectItem(children[1], children[0])

    def dataset_clause(self, meta, children):
        named = any(isinstance(c, Token) and c.type == "NAMED" for c in children)
        return (children[-1].value, named)

    def where_clause(self, meta, children):
        return children[0]

    def solution_modifier(self, meta, children):
        return self._modifiers(children)

    def group_clause(self, meta, children):
        return ("group", tuple(children))

    def group_condition(self, meta, children):
        if len(children) == 2:
            return ast.GroupCondition(children[0], children[1])
        return ast.GroupCondition(children[0])

    def having_clause(self, meta, children):
        return ("having", tuple(children))

    def order_clause(self, meta, children):
        return ("order", tuple(children))

    def order_dir(self, meta, children):
        direction, expr = children
        return ast.OrderCondition(expr, descending=direction.upper() == "DESC")

    def order_plain(self, meta, children):
        return ast.OrderCondition(children[0])

    def limit_offset(self, meta, children):
        limit, offset = None, 0
        for kind, value in children:
            if kind == "limit":
                limit = value
            else:
                offset = value
        return ("limit", (limit, offset))

    def limit_clause(self, meta, children):
        return ("limit", int(children[0]))

    def offset_clause(self, meta, children):
        return ("offset", int(children[0]))

    # -- graph patterns ------------------------------------------------------------
    def group_graph_pattern(self, meta, children):
        if len(children) == 1 and isinstance(children[0], ast.SubSelect):
            return ast.GroupPattern((children[0],))
        return children[0] if children else ast.GroupPattern(())

    def group_graph_pattern_sub(self, meta, children):
        return ast.GroupPattern(tuple(children))

    def triples_block(self, meta, children):
        return ast.BGP(tuple(t for group in children for t in group))

    def optional_pattern(self, meta, children):
        return ast.OptionalPattern(children[0])

    def graph_pattern(self, meta, children):
        return ast.GraphGraphPattern(children[0], children[1])

    def minus_pattern(self, meta, children):
        return ast.MinusPattern(children[0])

    def group_or_union(self, meta, children):
        if len(children) == 1:
            return children[0]
        return ast.UnionPattern(tuple(children))

    def filter(self, meta, children):
        return ast.Filter(children[0])

    def bind(self, meta, children):
        return ast.Bind(children[0], children[1])

    def stream_pattern(self, meta, children):
        stream, window, pattern = children
        return ast.StreamPattern(stream, window, pattern, ast.Position(meta.line, meta.column))

    def window(self, meta, children):
        return children[0]

    def _duration(self, token: Token) -> int:
        text = str(token)
        if token.type == "PARAM":
            match = _PARAM_RE.match(text)
            assert match is not None
            name, default = match.group(1), match.group(2)
            value = self.params.get(name, default)
            if value is None:
                raise self._error(f"query parameter {name!r} has no value and no default", token)
            text = value
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise self._error(str(exc), token) from None

    def range_window(self, meta, children):
        range_ms = self._duration(children[0])
        slide_ms = self._duration(children[1]) if len(children) > 1 else None
        if range_ms <= 0:
            raise self._error("a RANGE window must be longer than 0", children[0])
        if slide_ms is not None and slide_ms <= 0:
            raise self._error("a SLIDE must be longer than 0", children[1])
        return ast.WindowSpec("RANGE", range_ms=range_ms, slide_ms=slide_ms)

    def triples_window(self, meta, children):
        count = int(children[0])
        if count <= 0:
            raise self._error("a TRIPLES window must hold at least 1 item", children[0])
        return ast.WindowSpec("TRIPLES", count=count)

    def now_window(self, meta, children):
        return ast.WindowSpec("NOW")

    def all_window(self, meta, children):
        return ast.WindowSpec("ALL")

    # -- triples -------------------------------------------------------------------
    def triples_same_subject(self, meta, children):
        subject, pairs = children
        return [
            ast.TriplePattern(const_term(subject), const_term(p), const_term(o))
            for p, objects in pairs
            for o in objects
        ]

    def property_list(self, meta, children):
        return [(children[i], children[i + 1]) for i in range(0, len(children), 2)]

    def object_list(self, meta, children):
        return list(children)

    # -- expressions ---------------------------------------------------------------
    def _fold(self, children, op_of=None):
        expr = children[0]
        for i in range(1, len(children), 2):
            expr = ast.Call(str(children[i]), (expr, children[i + 1]))
        return expr

    def arith(self, meta, children):
        return self._fold(children)

    def or_expr(self, meta, children):
        return ast.Call("||", tuple(children)) if len(children) > 1 else children[0]

    def and_expr(self, meta, children):
        return ast.Call("&&", tuple(children)) if len(children) > 1 else children[0]

    def compare(self, meta, children):
        left, op, right = children
        return ast.Call(str(op), (left, right))

    def in_expr(self, meta, children):
        negated = len(children) == 3
        left, values = children[0], children[-1]
        return ast.Call("NOT IN" if negated else "IN", (left, *values))

    def expression_list(self, meta, children):
        return tuple(children)

    def not_expr(self, meta, children):
        return ast.Call("!", (children[0],))

    def neg_expr(self, meta, children):
        return ast.Call("NEG", (children[0],))

    def builtin_call(self, meta, children):
        return children[0]

    def call(self, meta, children):
        name, *args = children
        return ast.Call(str(name).upper(), tuple(args))

    def bound(self, meta, children):
        return ast.Call("BOUND", (children[0],))

    def exists(self, meta, children):
        return ast.Exists(children[0], negated=False)

    def not_exists(self, meta, children):
        return ast.Exists(children[1], negated=True)

    def function_call(self, meta, children):
        iri, *args = children
        return ast.Call(iri.value, tuple(args))

    def aggregate(self, meta, children):
        name = str(children[0]).upper()
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children[1:])
        arg = children[-1]
        if isinstance(arg, Token) and arg.type == "STAR":
            if name != "COUNT":
                raise self._error(f"{name}(*) is not allowed; only COUNT(*)", children[0])
            arg = None
        return ast.Aggregate(name, arg, distinct)

    # -- terms ---------------------------------------------------------------------
    def var(self, meta, children):
        return ast.Var(str(children[0])[1:])

    def iri(self, meta, children):
        token = children[0]
        text = str(token)
        if token.type == "IRIREF":
            value = text[1:-1]
            if self.base and ":" not in value:
                value = self.base + value
            return IRI(value)
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self._error(f"undeclared prefix {prefix + ':'!r}", token)
        return IRI(self.prefixes[prefix] + local)

    def rdf_literal(self, meta, children):
        body = _unescape(str(children[0])[1:-1])
        if len(children) == 1:
            return ast.Const(Literal(body, XSD_STRING))
        extra = children[1]
        if isinstance(extra, Token) and extra.type == "LANGTAG":
            return ast.Const(Literal(body, XSD_STRING, str(extra)[1:].lower()))
        return ast.Const(Literal(body, extra.value))

    def numeric_literal(self, meta, children):
        token = children[0]
        datatype = {"INTEGER": XSD_INTEGER, "DECIMAL": XSD_DECIMAL, "DOUBLE": XSD_DOUBLE}[token.type]
        return ast.Const(Literal(str(token), datatype))

    def boolean_literal(self, meta, children):
        return ast.Const(Literal(str(children[0]).lower(), XSD_BOOLEAN))

    def blank_node(self, meta, children):
        token = str(children[0])
        if token.startswith("_:"):
            return BNode(token[2:])
        self._bnodes += 1
        return BNode(f"anon{self._bnodes}")

    def A(self, token):
        return IRI(RDF_TYPE)


def const_term(node: Any) -> Any:
    """Unwrap ``Const`` nodes that appear in triple positions."""
    return node.term if isinstance(node, ast.Const) else node
