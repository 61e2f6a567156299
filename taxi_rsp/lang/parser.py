"""CQELS-QL text -> :class:`taxi_rsp.lang.ast.Query`.

>>> q = parse_query('SELECT ?s WHERE { STREAM <http://s> [RANGE 30m] { ?s ?p ?o } }')
>>> q.where.elements[0].window
WindowSpec(kind='RANGE', range_ms=1800000, slide_ms=None, count=None)

Syntax errors raise :class:`taxi_rsp.errors.QuerySyntaxError` naming line:col and
the likely mistake (:mod:`taxi_rsp.lang.syntax_errors`). ``params`` bind ``${name}``
placeholders (:mod:`taxi_rsp.lang.params`): terms, IRIs, durations and counts.

>>> q = parse_query('SELECT ?s WHERE { STREAM <http://s> [RANGE 1m 30s] { ?s <http://p> ?o } '
...                 'FILTER(?o > ${min=10}) }', {"min": "20"})
>>> q.where.elements[0].window.range_ms, q.where.elements[1].expr.args[1]
(90000, Const(term=Literal(lexical='20', datatype='http://www.w3.org/2001/XMLSchema#integer', lang=None)))
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import itertools
import os
import re
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedInput, VisitError

from taxi_rsp.environment import cache_dir
from taxi_rsp.errors import QuerySyntaxError
from taxi_rsp.lang import ast
from taxi_rsp.lang.durations import parse_duration
from taxi_rsp.lang.params import count_value, parameter
from taxi_rsp.lang.syntax_errors import excerpt, syntax_error
from taxi_rsp.rdf.iris import resolve_iri
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

__all__ = ["parse_duration", "parse_query", "resolve_iri", "const_term"]


_LARK_OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "propagate_positions": True,
                                 "maybe_placeholders": False, "start": ["start", "param_value"]}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The CQELS-QL parser, its LALR tables read from the user's cache when an earlier
    run left them there.

    Building the tables takes ~0.12 CPU s, a quarter of a short ``taxi-rsp run``'s
    start-up (issue 50: the engine is compared in CPU seconds); loading them takes
    ~0.01 s. The cache is an optimisation only: a file that cannot be read or written
    means the tables are built, as they always were."""
    grammar = resources.files("taxi_rsp.lang").joinpath("cqels.lark").read_text(encoding="utf-8")
    path = _cache_file(grammar)
    parser = _load_cached(path) if path is not None else None
    if parser is None:
        parser = Lark(grammar, **_LARK_OPTIONS)
        if path is not None:
            _store_cached(parser, path)
    return parser


def _cache_file(grammar: str) -> Path | None:
    """The cache file of this grammar's tables: its name is a digest of everything they
    depend on (grammar, options, lark's and Python's versions), so a change to any of
    them misses the old file instead of loading it."""
    directory = cache_dir()
    if directory is None:
        return None
    key = repr((grammar, sorted(_LARK_OPTIONS.items()), lark.__version__, sys.version_info[:2]))
    return directory / f"cqels-lalr-{hashlib.sha256(key.encode()).hexdigest()[:32]}.pickle"


def _load_cached(path: Path) -> Lark | None:
    """The parser saved at ``path``; None when there is none or it cannot be loaded."""
    try:
        with path.open("rb") as handle:
            return Lark.load(handle)
    except Exception:  # noqa: BLE001 - missing, unreadable or damaged (any unpickling error): build anew
        return None


def _store_cached(parser: Lark, path: Path) -> None:
    """Save ``parser`` at ``path`` for later runs, written aside and renamed into place so
    that a concurrent run never reads half a file; nothing is saved where we may not write."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with partial.open("wb") as handle:
            parser.save(handle)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


# Nesting deeper than this (brackets, braces and parentheses together) is refused with
# the position of the first bracket past it: every later stage (AST, algebra, compiled
# expressions) recurses over the tree, and Python's stack is finite.
MAX_NESTING = 64

def parse_query(text: str, params: dict[str, str] | None = None, source: str = "<query>") -> ast.Query:
    """Parse CQELS-QL text; raise QuerySyntaxError with line:col, the likely mistake
    and the offending line (its ``excerpt``) on any error. Valid but suspicious
    constructs are listed in the query's ``warnings``."""
    try:
        try:
            tree = _parser().parse(text, start="start")
        except UnexpectedInput as exc:
            raise syntax_error(exc, text, source, _parser().lex) from None
        _check_nesting(text, source)
        try:
            return _ToAst(params or {}, source).transform(tree)
        except VisitError as exc:
            inner = exc.orig_exc
            if isinstance(inner, QuerySyntaxError):
                raise inner from None
            raise
    except QuerySyntaxError as error:
        if not error.excerpt:
            error.excerpt = excerpt(text, error.line, error.column)
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
        self.warnings: list[str] = []  # valid but suspicious constructs, with line:col

    def _error(self, message: str, meta_or_token: Any) -> QuerySyntaxError:
        line = getattr(meta_or_token, "line", 1)
        column = getattr(meta_or_token, "column", 1)
        return QuerySyntaxError(message, line, column, self.source)

    def _warn(self, message: str, meta_or_token: Any) -> None:
        line = getattr(meta_or_token, "line", 1)
        column = getattr(meta_or_token, "column", 1)
        self.warnings.append(f"{self.source}:{line}:{column}: {message}")

    # -- prologue and query forms --------------------------------------------------
    def query(self, meta, children):
        forms = [c for c in children if isinstance(c, ast.Query)]
        values = [c for c in children if isinstance(c, ast.Values)]
        found = dataclasses.replace(forms[0], values=values[0]) if values else forms[0]
        return dataclasses.replace(found, warnings=tuple(self.warnings)) if self.warnings else found

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
        if not self.base or _ABSOLUTE.match(reference):
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
        return ("limit", self._count(children[0], "LIMIT"))

    def offset_clause(self, meta, children):
        return ("offset", self._count(children[0], "OFFSET"))

    def _count(self, token: Token, what: str) -> int:
        """An INTEGER, or a parameter bound to one."""
        if token.type != "PARAM":
            return int(token)
        try:
            return count_value(*self._parameter(token), what)
        except ValueError as exc:
            raise self._error(str(exc), token) from None

    def _parameter(self, token: Token) -> tuple[str, str]:
        try:
            return parameter(str(token), self.params)
        except ValueError as exc:
            raise self._error(str(exc), token) from None

    # -- parameters where a term may stand ----------------------------------------------
    def param_term(self, meta, children):
        """``${name}`` where any term may stand: its value read as a term of the query
        (an IRI, a prefixed name, a literal, a number, true/false)."""
        return self._term_parameter(children[0])

    def param_iri(self, meta, children):
        """``${name}`` where only an IRI may stand (a STREAM or GRAPH name, a predicate)."""
        token = children[0]
        term = self._term_parameter(token)
        if not isinstance(term, IRI):
            name, value = self._parameter(token)
            raise self._error(f"query parameter {name!r} = {value!r} stands where an IRI is needed "
                              "(write <http://…> or a prefixed name)", token)
        return term

    def param_value(self, meta, children):
        return children[0]

    def _term_parameter(self, token: Token) -> Any:
        name, value = self._parameter(token)
        if "${" in value:
            raise self._error(f"query parameter {name!r} = {value!r}: a value cannot hold another parameter", token)
        try:
            tree = _parser().parse(value, start="param_value")
        except UnexpectedInput:
            raise self._error(f"query parameter {name!r} = {value!r} is not an RDF term: give an IRI <http://…>, "
                              "a prefixed name, a \"string\", a number or true/false", token) from None
        try:
            return self.transform(tree)
        except VisitError as exc:
            inner = exc.orig_exc
            if isinstance(inner, QuerySyntaxError):  # e.g. an undeclared prefix in the value
                reason = str(inner).split(": ", 1)[-1]
                raise self._error(f"query parameter {name!r} = {value!r}: {reason}", token) from None
            raise

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
            text = self._parameter(token)[1]
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
        count = self._count(children[0], "TRIPLES")
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
            reference = _unescape_iri(text[1:-1])
            if not self.base and not _ABSOLUTE.match(reference):
                self._warn(f"relative IRI <{reference}> and no BASE: it is not resolved and can never match a term "
                           "of the data (RDF data holds absolute IRIs); declare BASE <…> or write the whole IRI",
                           token)
            return IRI(self._resolve(reference))
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self._error(_undeclared(prefix, self.prefixes), token)
        return IRI(self.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local))

    def rdf_literal(self, meta, children):
        body = self._string(children[0])
        if _PLACEHOLDER.search(body):
            self._warn(f"the string {str(children[0])} holds a parameter placeholder, which is not replaced inside "
                       "strings: write the parameter alone where the literal stands (--param name='\"…\"')",
                       children[0])
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


_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # an IRI with a scheme (RFC 3986 §3.1)
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(=[^}\s]*)?\}")


def _undeclared(prefix: str, declared: dict[str, str]) -> str:
    """The message for a prefixed name whose prefix no PREFIX declares: the close
    matches among the declared ones, and the declaration to add.

    >>> _undeclared("exs", {"ex": "http://x/", "rdf": "http://r#"})
    "undeclared prefix 'exs:' (did you mean 'ex:'?); declare it: PREFIX exs: <…>"
    """
    close = difflib.get_close_matches(prefix, list(declared), n=1, cutoff=0.6)
    guess = f" (did you mean {close[0] + ':'!r}?)" if close else ""
    return f"undeclared prefix {prefix + ':'!r}{guess}; declare it: PREFIX {prefix}: <…>"


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
