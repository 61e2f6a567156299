"""CQELS-QL text -> :class:`taxi_rsp.lang.ast.Query`.

>>> q = parse_query('SELECT ?s WHERE { STREAM <http://s> [RANGE 30m] { ?s ?p ?o } }')
>>> q.where.elements[0].window
WindowSpec(kind='RANGE', range_ms=1800000, slide_ms=None, count=None)

Syntax errors raise :class:`taxi_rsp.errors.QuerySyntaxError` naming line:col and
what was expected there. ``params`` bind ``${name}`` placeholders in window specs.
"""

from __future__ import annotations

import dataclasses
import itertools
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
    RDF,
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    XSD_STRING,
)
from taxi_rsp.rdf.terms import IRI, BNode, Literal

RDF_FIRST = RDF + "first"
RDF_REST = RDF + "rest"
RDF_NIL = RDF + "nil"

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


# Nesting deeper than this (brackets, braces and parentheses together) is refused with
# the position of the first bracket past it: every later stage (AST, algebra, compiled
# expressions) recurses over the tree, and Python's stack is finite.
MAX_NESTING = 64

# SPARQL 1.1 keywords of features this engine does not evaluate: a syntax error at one of
# them says so instead of listing the tokens that were expected.
_UNSUPPORTED_KEYWORDS = {
    "SERVICE": "SERVICE (federated query) is not supported",
    "LOAD": "SPARQL Update (LOAD) is not supported", "CLEAR": "SPARQL Update (CLEAR) is not supported",
    "DROP": "SPARQL Update (DROP) is not supported", "CREATE": "SPARQL Update (CREATE) is not supported",
    "INSERT": "SPARQL Update (INSERT) is not supported", "DELETE": "SPARQL Update (DELETE) is not supported",
    "WITH": "SPARQL Update (WITH) is not supported", "ADD": "SPARQL Update (ADD) is not supported",
    "MOVE": "SPARQL Update (MOVE) is not supported", "COPY": "SPARQL Update (COPY) is not supported",
}


def parse_query(text: str, params: dict[str, str] | None = None, source: str = "<query>") -> ast.Query:
    """Parse CQELS-QL text; raise QuerySyntaxError with line:col on any error."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, source) from None
    _check_nesting(text, source)
    try:
        return _ToAst(params or {}, source).transform(tree)
    except VisitError as exc:
        inner = exc.orig_exc
        if isinstance(inner, QuerySyntaxError):
            raise inner from None
        raise


def _check_nesting(text: str, source: str) -> None:
    """Refuse brackets nested deeper than MAX_NESTING (strings, IRIs and comments skipped)."""
    depth = 0
    for token in _parser().lex(text):
        if token.type in ("LPAR", "LBRACE", "LSQB"):
            depth += 1
            if depth > MAX_NESTING:
                raise QuerySyntaxError(
                    f"brackets nested more than {MAX_NESTING} deep; simplify the expression",
                    token.line or 1, token.column or 1, source)
        elif token.type in ("RPAR", "RBRACE", "RSQB"):
            depth -= 1


def _syntax_error(exc: UnexpectedInput, text: str, source: str) -> QuerySyntaxError:
    line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        expected = sorted(_TERMINAL_NAMES.get(t, t) for t in exc.expected)
        return QuerySyntaxError(f"unexpected end of query, expected {_join(expected)}", line, column, source)
    if isinstance(exc, UnexpectedToken):
        start = exc.token.start_pos if exc.token.start_pos is not None else len(text)
        word = re.match(r"[A-Za-z]+", text[start:])
        keyword = word.group(0).upper() if word else ""
        if keyword in _UNSUPPORTED_KEYWORDS:
            return QuerySyntaxError(_UNSUPPORTED_KEYWORDS[keyword], line, column, source)
        expected = sorted({_TERMINAL_NAMES.get(t, _literal_name(t)) for t in exc.expected})
        return QuerySyntaxError(f"unexpected {exc.token.value!r}, expected {_join(expected)}", line, column, source)
    if isinstance(exc, UnexpectedCharacters):
        word = re.match(r"[A-Za-z]+", text[exc.pos_in_stream:])
        if word is not None and word.group(0).upper() in _UNSUPPORTED_KEYWORDS:
            return QuerySyntaxError(_UNSUPPORTED_KEYWORDS[word.group(0).upper()], line, column, source)
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
    """The text of a string literal: ECHAR escapes (\\t, \\n, ...) and codepoint escapes
    (\\uXXXX, \\UXXXXXXXX); ValueError for a surrogate or out-of-range code point."""
    escapes = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            kind = body[i + 1]
            if kind in "uU":
                width = 4 if kind == "u" else 8
                digits = body[i + 2:i + 2 + width]
                if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise ValueError(f"\\{kind} needs {width} hex digits")
                code = int(digits, 16)
                if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                    raise ValueError(f"\\{kind}{digits} is not a Unicode character")
                out.append(chr(code))
                i += 2 + width
                continue
            out.append(escapes.get(kind, kind))
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
        self._fresh = itertools.count()

    def _error(self, message: str, meta_or_token: Any) -> QuerySyntaxError:
        line = getattr(meta_or_token, "line", 1)
        column = getattr(meta_or_token, "column", 1)
        return QuerySyntaxError(message, line, column, self.source)

    # -- prologue and query forms --------------------------------------------------
    def query(self, meta, children):
        forms = [c for c in children if isinstance(c, ast.Query)]
        values = [c for c in children if isinstance(c, ast.Values)]
        if values:
            return dataclasses.replace(forms[0], values=values[0])
        return forms[0]

    def values_clause(self, meta, children):
        return children[0]

    def ask_query(self, meta, children):
        datasets = tuple(c for c in children if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next(c for c in children if isinstance(c, ast.GroupPattern))
        return ast.Query("ASK", where, None, datasets=datasets, prefixes=dict(self.prefixes),
                         **self._with_select(children[-1], self._at(meta), meta))

    def prologue(self, meta, children):
        return None

    def _resolve(self, reference: str) -> str:
        """An IRI reference resolved against BASE (RFC 3986 §5.2; absolute IRIs unchanged)."""
        if not self.base or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", reference):
            return reference
        return resolve_iri(self.base, reference)

    def base_decl(self, meta, children):
        self.base = self._resolve(_unescape_iri(children[0][1:-1]))

    def prefix_decl(self, meta, children):
        name, iri = children
        self.prefixes[str(name)[:-1]] = self._resolve(_unescape_iri(iri[1:-1]))

    def _modifiers(self, children):
        group, having, order, limit, offset = (), (), (), None, 0
        positions: dict[str, ast.Position] = {}
        for child in children:
            kind, value, *where = child
            if where:
                positions[kind] = where[0]
            if kind == "group":
                group = value
            elif kind == "having":
                having = value
            elif kind == "order":
                order = value
            elif kind == "limit":
                limit, offset = value
        return {"group_by": group, "having": having, "order_by": order, "limit": limit, "offset": offset,
                "positions": positions}

    def _at(self, meta) -> ast.Position:
        return ast.Position(getattr(meta, "line", 1), getattr(meta, "column", 1))

    def _with_select(self, mods: dict, select_position: ast.Position, form_meta) -> dict:
        positions = {**mods.pop("positions"), "select": select_position, "form": self._at(form_meta)}
        return {**mods, "positions": positions, "source": self.source}

    def select_query(self, meta, children):
        (distinct, projection, position), *rest = children
        datasets = tuple(c for c in rest if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next(c for c in rest if isinstance(c, ast.GroupPattern))
        mods = self._with_select(rest[-1], position, meta)
        return ast.Query("SELECT", where, projection, distinct=distinct, datasets=datasets,
                         prefixes=dict(self.prefixes), **mods)

    def sub_select(self, meta, children):
        (distinct, projection, position), where, mods, *values = children
        return ast.SubSelect(ast.Query("SELECT", where, projection, distinct=distinct,
                                       prefixes=dict(self.prefixes), values=values[0] if values else None,
                                       **self._with_select(mods, position, meta)))

    def describe_query(self, meta, children):
        """DESCRIBE t1 t2 ... [WHERE {P}]: every triple of the static data whose subject is
        a target, i.e. CONSTRUCT { t ?p ?o } WHERE { P { t ?p ?o } UNION ... }; targets
        may be variables bound by P (e.g. by a STREAM pattern)."""
        if any(isinstance(c, Token) and c.type == "STAR" for c in children):
            raise self._error("DESCRIBE * is not supported: name the resources or variables to describe", meta)
        targets = [c for c in children if isinstance(c, (IRI, ast.Var))]
        datasets = tuple(c for c in children if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next((c for c in children if isinstance(c, ast.GroupPattern)), ast.GroupPattern(()))
        template, branches = [], []
        for target in targets:
            n = next(self._fresh)
            triple = ast.TriplePattern(target, ast.Var(f"describe-p{n}"), ast.Var(f"describe-o{n}"))
            template.append(triple)
            branches.append(ast.GroupPattern((ast.BGP((triple,)),)))
        described = branches[0] if len(branches) == 1 else ast.UnionPattern(tuple(branches))
        where = ast.GroupPattern(where.elements + (described,))
        return ast.Query("CONSTRUCT", where, None, template=tuple(template), datasets=datasets,
                         prefixes=dict(self.prefixes), **self._with_select(children[-1], self._at(meta), meta))

    def construct_where(self, meta, children):
        """CONSTRUCT WHERE { triples }: the template is the pattern (SPARQL 1.1 §16.2.4)."""
        datasets = tuple(c for c in children if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        template = next((c for c in children if isinstance(c, tuple) and c and isinstance(c[0], ast.TriplePattern)),
                        ())
        if any(ast.is_path(t.p) for t in template):
            raise self._error("CONSTRUCT WHERE cannot use property paths", meta)
        where = ast.GroupPattern((ast.BGP(template),) if template else ())
        return ast.Query("CONSTRUCT", where, None, template=template, datasets=datasets,
                         prefixes=dict(self.prefixes), **self._with_select(children[-1], self._at(meta), meta))

    def construct_query(self, meta, children):
        template, *rest = children
        datasets = tuple(c for c in rest if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], bool))
        where = next(c for c in rest if isinstance(c, ast.GroupPattern))
        return ast.Query("CONSTRUCT", where, None, template=template, datasets=datasets,
                         prefixes=dict(self.prefixes), **self._with_select(rest[-1], self._at(meta), meta))

    def construct_template(self, meta, children):
        return children[0] if children else ()

    def triples_template(self, meta, children):
        return tuple(t for group in children for t in group)

    def select_clause(self, meta, children):
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children)
        if any(isinstance(c, Token) and c.type == "STAR" for c in children):
            return distinct, None, self._at(meta)
        return distinct, tuple(c for c in children if isinstance(c, ast.SelectItem)), self._at(meta)

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
        return ("group", tuple(children), self._at(meta))

    def group_condition(self, meta, children):
        if len(children) == 2:
            return ast.GroupCondition(children[0], children[1])
        return ast.GroupCondition(children[0])

    def having_clause(self, meta, children):
        return ("having", tuple(children), self._at(meta))

    def order_clause(self, meta, children):
        return ("order", tuple(children), self._at(meta))

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
        return ("limit", (limit, offset), self._at(meta))

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
        return ast.GraphGraphPattern(children[0], children[1], self._at(meta))

    def minus_pattern(self, meta, children):
        return ast.MinusPattern(children[0])

    def group_or_union(self, meta, children):
        if len(children) == 1:
            return children[0]
        return ast.UnionPattern(tuple(children))

    def filter(self, meta, children):
        return ast.Filter(children[0])

    def bind(self, meta, children):
        return ast.Bind(children[0], children[1], self._at(meta))

    def inline_data(self, meta, children):
        return children[0]

    def values_one(self, meta, children):
        var, *values = children
        return ast.Values((var,), tuple((self._data_value(v),) for v in values))

    def values_full(self, meta, children):
        variables = tuple(c for c in children if isinstance(c, ast.Var))
        rows = tuple(c for c in children if isinstance(c, tuple))
        for row in rows:
            if len(row) != len(variables):
                raise self._error(f"a VALUES row has {len(row)} values for {len(variables)} variables", meta)
        return ast.Values(variables, rows)

    def data_row(self, meta, children):
        return tuple(self._data_value(v) for v in children)

    @staticmethod
    def _data_value(value: Any) -> Any:
        if isinstance(value, Token) and value.type == "UNDEF":
            return None
        return const_term(value)

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
        subject, pairs = children[0], (children[1] if len(children) > 1 else [])
        triples: list[ast.TriplePattern] = []
        if isinstance(subject, _PropertyList):
            triples.extend(subject.triples)
            subject = subject.node
        for p, objects in pairs:
            for o in objects:
                if isinstance(o, _PropertyList):
                    triples.extend(o.triples)
                    o = o.node
                triples.extend(self._path_triples(const_term(subject), p, const_term(o)))
        return triples

    def bnode_property_list(self, meta, children):
        self._bnodes += 1
        node = BNode(f"anon{self._bnodes}")
        return _PropertyList(node, self.triples_same_subject(meta, [node, children[0]]))

    def collection(self, meta, children):
        """``( a b ... )``: a chain of fresh blank nodes with rdf:first / rdf:rest ending
        in rdf:nil (SPARQL 1.1 §4.2.5); the node is the first blank node."""
        triples: list[ast.TriplePattern] = []
        cells = []
        for _ in children:
            self._bnodes += 1
            cells.append(BNode(f"list{self._bnodes}"))
        for i, (cell, item) in enumerate(zip(cells, children)):
            if isinstance(item, _PropertyList):
                triples.extend(item.triples)
                item = item.node
            rest = cells[i + 1] if i + 1 < len(cells) else IRI(RDF_NIL)
            triples.append(ast.TriplePattern(cell, IRI(RDF_FIRST), const_term(item)))
            triples.append(ast.TriplePattern(cell, IRI(RDF_REST), rest))
        return _PropertyList(cells[0], triples)

    def nil(self, meta, children):
        return IRI(RDF_NIL)

    def _path_triples(self, s: Any, path: Any, o: Any) -> list[ast.TriplePattern]:
        """Sequences and inverses become plain triples joined on fresh hidden variables
        (SPARQL 1.1 §18.2.2.4); other path forms stay one path pattern."""
        if isinstance(path, ast.PathInv) and not ast.is_path(path.path):
            return [ast.TriplePattern(o, path.path, s)]
        if isinstance(path, ast.PathInv):
            return self._path_triples(o, path.path, s)
        if isinstance(path, ast.PathSeq):
            triples: list[ast.TriplePattern] = []
            left = s
            for i, step in enumerate(path.steps):
                right = o if i == len(path.steps) - 1 else ast.Var(f"_path{next(self._fresh)}")
                triples.extend(self._path_triples(left, step, right))
                left = right
            return triples
        return [ast.TriplePattern(s, path, o)]

    # -- property paths ----------------------------------------------------------------
    def path_alt(self, meta, children):
        return children[0] if len(children) == 1 else ast.PathAlt(tuple(children))

    def path_seq(self, meta, children):
        return children[0] if len(children) == 1 else ast.PathSeq(tuple(children))

    def path_inv(self, meta, children):
        return ast.PathInv(children[0])

    def path_mod(self, meta, children):
        return children[0] if len(children) == 1 else ast.PathMod(children[0], str(children[1]))

    def path_a(self, meta, children):
        return IRI(RDF_TYPE)

    def path_neg(self, meta, children):
        return children[0]

    def path_negated(self, meta, children):
        return ast.PathNeg(tuple(c if isinstance(c, tuple) else (c, False) for c in children))

    def path_inv_one(self, meta, children):
        item = children[0]
        return (IRI(RDF_TYPE) if isinstance(item, Token) else item, True)

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
        from taxi_rsp.engine.expr import check_call  # the engine knows what it evaluates

        name, *args = children
        op = str(name).upper()
        problem = check_call(op, len(args))
        if problem is not None:
            raise self._error(problem, name)
        if op in ("IRI", "URI") and self.base:  # relative IRIs resolve against BASE (§17.4.2.8)
            args.append(ast.Const(IRI(self.base)))
        return ast.Call(op, tuple(args))

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
        separator = None
        if isinstance(children[-1], Token) and children[-1].type == "STRING":
            if name != "GROUP_CONCAT":
                raise self._error(f"SEPARATOR belongs to GROUP_CONCAT, not {name}", children[-1])
            separator = self._string(children[-1])
            children = children[:-1]
        arg = children[-1]
        if isinstance(arg, Token) and arg.type == "STAR":
            if name != "COUNT":
                raise self._error(f"{name}(*) is not allowed; only COUNT(*)", children[0])
            arg = None
        return ast.Aggregate(name, arg, distinct, separator)

    # -- terms ---------------------------------------------------------------------
    def var(self, meta, children):
        return ast.Var(str(children[0])[1:])

    def iri(self, meta, children):
        token = children[0]
        text = str(token)
        if token.type == "IRIREF":
            return IRI(self._resolve(_unescape_iri(text[1:-1])))
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self._error(f"undeclared prefix {prefix + ':'!r}", token)
        return IRI(self.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local))

    def rdf_literal(self, meta, children):
        body = self._string(children[0])
        if len(children) == 1:
            return ast.Const(Literal(body, XSD_STRING))
        extra = children[1]
        if isinstance(extra, Token) and extra.type == "LANGTAG":
            return ast.Const(Literal(body, XSD_STRING, str(extra)[1:].lower()))
        return ast.Const(Literal(body, extra.value))

    def _string(self, token: Token) -> str:
        try:
            return _unescape(str(token)[1:-1])
        except ValueError as exc:
            raise self._error(str(exc), token) from None

    def signed_numeric(self, meta, children):
        sign, number = children
        term = number.term
        lexical = term.lexical if str(sign) == "+" else "-" + term.lexical
        return ast.Const(Literal(lexical, term.datatype))

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


_IRI_PARTS = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$")


def resolve_iri(base: str, reference: str) -> str:
    """RFC 3986 §5.2 reference resolution (keeps an empty fragment, unlike urljoin).

    >>> resolve_iri("http://a/b/c/d;p?q", "../g#"), resolve_iri("http://debs2015.org/", "taxi#")
    ('http://a/b/g#', 'http://debs2015.org/taxi#')
    """
    ref = _IRI_PARTS.match(reference)
    b = _IRI_PARTS.match(base)
    assert ref is not None and b is not None
    r_scheme, r_auth, r_path, r_query, r_frag = ref.groups()
    b_scheme, b_auth, b_path, b_query, _ = b.groups()
    if r_scheme is not None:
        scheme, auth, path, query = r_scheme, r_auth, _remove_dots(r_path), r_query
    elif r_auth is not None:
        scheme, auth, path, query = b_scheme, r_auth, _remove_dots(r_path), r_query
    elif r_path == "":
        scheme, auth, path, query = b_scheme, b_auth, b_path, (r_query if r_query is not None else b_query)
    else:
        if r_path.startswith("/"):
            path = _remove_dots(r_path)
        elif b_auth is not None and b_path == "":
            path = _remove_dots("/" + r_path)
        else:
            path = _remove_dots(b_path[: b_path.rfind("/") + 1] + r_path)
        scheme, auth, query = b_scheme, b_auth, r_query
    text = (f"{scheme}:" if scheme is not None else "") + (f"//{auth}" if auth is not None else "") + path
    text += f"?{query}" if query is not None else ""
    return text + (f"#{r_frag}" if r_frag is not None else "")


def _remove_dots(path: str) -> str:
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1 or (output and output[0] != ""):
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)


class _PropertyList:
    """A blank-node property list ``[ p o ; ... ]`` or a collection ``( ... )``: its node
    and its triples."""

    __slots__ = ("node", "triples")

    def __init__(self, node: BNode, triples: list[ast.TriplePattern]) -> None:
        self.node = node
        self.triples = triples


def _unescape_iri(body: str) -> str:
    r"""Resolve \uXXXX and \UXXXXXXXX escapes in an IRIREF (SPARQL 1.1 §19.2)."""
    return re.sub(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})",
                  lambda m: chr(int(m.group(1) or m.group(2), 16)), body)


def const_term(node: Any) -> Any:
    """Unwrap ``Const`` nodes that appear in triple positions."""
    return node.term if isinstance(node, ast.Const) else node
