"""AST -> logical plan (SPARQL 1.1 §18.2, plus STREAM windows).

The translation is a set of small functions, one per construct. Unsupported
constructs raise :class:`taxi_rsp.errors.UnsupportedQueryError` here, at
registration, so nothing is silently ignored.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import conjunction, conjuncts
from taxi_rsp.errors import UnsupportedQueryError
from taxi_rsp.lang import ast
from taxi_rsp.rdf.namespaces import XSD, XSD_BOOLEAN
from taxi_rsp.rdf.terms import IRI, BNode, Literal

_MAX_PATH_VARIANTS = 64  # alternatives of | inside one STREAM block, after expansion
_TRUE = ast.Const(Literal("true", XSD_BOOLEAN))
_FALSE = ast.Const(Literal("false", XSD_BOOLEAN))


def translate_query(query: ast.Query) -> P.LogicalPlan:
    """Translate a parsed query into a logical plan."""
    return _Translator(query.source).query(query)


class _Translator:
    def __init__(self, source: str = "<query>") -> None:
        self._source = source
        self._fresh = itertools.count()
        self._graph: Any = None  # the graph of the enclosing GRAPH block (None: default graph)
        self._window: ast.StreamPattern | None = None  # the enclosing STREAM block (None: static data)
        self._window_graph: Any = None  # the GRAPH g { … } inside that block (None: any event's graph)

    def _where(self, position: ast.Position | None) -> str:
        return f"{self._source}:{position.line}:{position.column}: " if position is not None else ""

    def fresh(self, stem: str) -> str:
        return f"_{stem}{next(self._fresh)}"

    # -- query level ---------------------------------------------------------------
    def query(self, query: ast.Query) -> P.LogicalPlan:
        node = self.group(query.where)
        if query.form == "ASK":
            return self.ask(query, node)
        node, projection = self.modifiers(query, node)
        if query.form == "CONSTRUCT":
            return P.LogicalPlan(P.Construct(node, query.template), "CONSTRUCT", ("subject", "predicate", "object"),
                                 ordered=False)
        return P.LogicalPlan(node, "SELECT", projection, ordered=bool(query.order_by))

    def ask(self, query: ast.Query, node: P.PlanNode) -> P.LogicalPlan:
        """ASK: one boolean per instant, true when the pattern has a solution (a stream
        of booleans, reported like any one-row SELECT)."""
        if query.group_by or query.having or query.order_by:
            raise _refuse(query, "form", "ASK takes no GROUP BY, HAVING or ORDER BY")
        if query.values is not None:
            node = _join(node, self.values(query.values))
        count = self.fresh("ask")
        node = P.Group(node, (), ((count, ast.Aggregate("COUNT", None)),))
        node = P.Extend(node, "ask", ast.Call(">", (ast.Var(count), ast.Const(Literal("0", XSD + "integer")))))
        return P.LogicalPlan(P.Project(node, ("ask",)), "ASK", ("ask",), ordered=False)

    def modifiers(self, query: ast.Query, node: P.PlanNode) -> tuple[P.PlanNode, tuple[str, ...]]:
        """Grouping, HAVING, VALUES, SELECT expressions, DISTINCT, ORDER BY/LIMIT (§18.2.4),
        for the query and for each sub-SELECT."""
        if (query.limit is not None or query.offset) and not query.order_by and has_stream(query):
            raise _refuse(query, "limit", "LIMIT/OFFSET without ORDER BY has no defined result on a stream; "
                                          "add ORDER BY")
        items = query.projection
        for clause, exprs in (("group", [c.expr for c in query.group_by]), ("having", query.having),
                              ("order", [c.expr for c in query.order_by])):
            if any(_has_exists(e) for e in exprs):
                raise _refuse(query, clause, "EXISTS in GROUP BY, HAVING or ORDER BY is not supported; "
                                             "BIND it to a variable in the WHERE clause first")
            if clause != "having" and any(_has_nested_aggregate(e) for e in exprs):
                raise _refuse(query, clause, "aggregates cannot be nested")
        for item in items or ():
            if item.expr is not None and _has_nested_aggregate(item.expr):
                raise _refuse(query, "select", f"aggregates cannot be nested (in ?{item.var.name})")
        if any(_has_nested_aggregate(e) for e in query.having):
            raise _refuse(query, "having", "aggregates cannot be nested")
        uses_aggregates = bool(query.group_by) or any(
            _has_aggregate(e) for e in self._modifier_exprs(query)
        )
        aggregates: dict[ast.Aggregate, str] = {}
        if uses_aggregates:
            keys: list[str] = []
            for condition in query.group_by:
                if isinstance(condition.expr, ast.Var) and condition.var is None:
                    keys.append(condition.expr.name)
                else:
                    name = condition.var.name if condition.var else self.fresh("key")
                    node = P.Extend(node, name, condition.expr)
                    keys.append(name)
            # (AGG(...) AS ?v) names the aggregate's output directly: no copy step.
            for item in items or ():
                named = isinstance(item.expr, ast.Aggregate) and item.var.name not in keys
                if named and item.expr not in aggregates:
                    self._collect_aggregates(item.expr, aggregates)
                    aggregates[item.expr] = item.var.name
            exprs = list(self._modifier_exprs(query))
            for expr in exprs:
                self._collect_aggregates(expr, aggregates)
            node, pairs = self._grouped(node, aggregates)
            node = P.Group(node, tuple(keys), pairs)
            aliases = {i.var.name for i in items or () if i.expr is not None} - set(keys)
            for having in query.having:
                seen = _expr_var_names(having) & aliases
                if seen:
                    name = sorted(seen)[0]
                    raise _refuse(
                        query, "having", f"HAVING reads ?{name}, a SELECT expression: SPARQL 1.1 evaluates HAVING before "
                        f"the SELECT expressions, so ?{name} is unbound there; repeat the expression in HAVING"
                    )
                node = P.Filter(node, self._replace_aggregates(having, aggregates))
            if items is None:
                raise _refuse(query, "select", "SELECT * cannot be used with GROUP BY or aggregates")
            visible = set(keys) | set(aggregates.values())
            for item in items:
                if item.expr is not None:
                    loose = _expr_var_names(item.expr) - visible
                    if loose:
                        raise _refuse(
                            query, "select", f"(... AS ?{item.var.name}) reads ?{sorted(loose)[0]}, which is neither grouped nor "
                            "aggregated")
                    visible.add(item.var.name)
            for item in items:
                if item.expr is None and item.var.name not in keys:
                    raise _refuse(
                        query, "select", f"?{item.var.name} is selected but neither grouped nor aggregated"
                    )
        elif query.having:
            raise _refuse(query, "having", "HAVING needs GROUP BY or an aggregate")
        if query.values is not None:  # SPARQL 1.1 §18.2.4.3: after HAVING, before SELECT expressions
            node = _join(node, self.values(query.values))
        scope = node.variables  # the solution the SELECT expressions are computed for
        for item in items or ():
            if item.expr is not None and aggregates.get(item.expr) != item.var.name:
                if item.var.name in node.variables:
                    raise _refuse(query, "select",
                                  f"SELECT (... AS ?{item.var.name}): ?{item.var.name} is already bound")
                expr = _scoped_bnodes(self._replace_aggregates(item.expr, aggregates), scope)
                if _has_exists(expr):
                    node, expr = self._mark_exists(node, expr)
                node = P.Extend(node, item.var.name, expr)
        projection = tuple(i.var.name for i in items) if items is not None else _visible(node.variables)
        order = tuple(
            (self._replace_aggregates(c.expr, aggregates), c.descending) for c in query.order_by
        )
        if query.distinct:
            node = P.Distinct(P.Project(node, projection))
        if order or query.limit is not None or query.offset:
            node = P.TopK(node, order, query.limit, query.offset)
        return P.Project(node, projection), projection

    @staticmethod
    def _modifier_exprs(query: ast.Query):
        for item in query.projection or ():
            if item.expr is not None:
                yield item.expr
        yield from query.having
        for condition in query.order_by:
            yield condition.expr

    def _grouped(self, node: P.PlanNode, aggregates: dict[ast.Aggregate, str]
                 ) -> tuple[P.PlanNode, tuple[tuple[str, ast.Aggregate], ...]]:
        """``node`` with a BIND below the group for each volatile aggregate argument
        (``SUM(RAND())``): a value drawn once per row, which a retraction takes back,
        where the group would draw another one."""
        pairs = []
        for agg, var in aggregates.items():
            if agg.arg is not None and ast.is_volatile(agg.arg):
                drawn = self.fresh("drawn")
                node = P.Extend(node, drawn, agg.arg)
                agg = ast.Aggregate(agg.name, ast.Var(drawn), agg.distinct, agg.separator)
            pairs.append((var, agg))
        return node, tuple(pairs)

    def _collect_aggregates(self, expr: Any, found: dict[ast.Aggregate, str]) -> None:
        if isinstance(expr, ast.Aggregate):
            if expr.arg is not None and _has_aggregate(expr.arg):
                raise UnsupportedQueryError(f"aggregates cannot be nested: {expr.name}(...{expr.name}...)")
            if expr not in found:
                found[expr] = self.fresh("agg")
        elif isinstance(expr, ast.Call):
            for arg in expr.args:
                self._collect_aggregates(arg, found)

    def _replace_aggregates(self, expr: Any, found: dict[ast.Aggregate, str]) -> Any:
        if isinstance(expr, ast.Aggregate):
            return ast.Var(found[expr])
        if isinstance(expr, ast.Call):
            return ast.Call(expr.op, tuple(self._replace_aggregates(a, found) for a in expr.args))
        return expr

    # -- group graph patterns (SPARQL 1.1 §18.2.2.6) --------------------------------
    def group(self, group: ast.GroupPattern, keep_filters: list | None = None) -> P.PlanNode:
        node: P.PlanNode = P.Unit()
        filters: list[Any] = []
        for element in group.elements:
            match element:
                case ast.Filter():
                    filters.append(element.expr)
                case ast.BGP() if self._window is not None:
                    node = _join(node, self.window_bgp(element.triples, self._window))
                case ast.BGP():
                    node = _join(node, self.static_bgp(element.triples, self._graph))
                case ast.Values():
                    node = _join(node, self.values(element))
                case ast.StreamPattern():
                    node = _join(node, self.stream(element))
                case ast.OptionalPattern():
                    inner_filters: list[Any] = []
                    right = self.group(element.pattern, inner_filters)
                    node = P.LeftJoin(node, right, conjunction(inner_filters))
                case ast.MinusPattern():
                    node = P.AntiJoin(node, self.group(element.pattern), None, minus=True)
                case ast.Bind():
                    if element.var.name in node.variables:
                        raise UnsupportedQueryError(
                            f"{self._where(element.position)}BIND to ?{element.var.name}, which is already bound")
                    expr = _scoped_bnodes(element.expr, node.variables)
                    if _has_exists(expr):
                        node, expr = self._mark_exists(node, expr)
                    node = P.Extend(node, element.var.name, expr)
                case ast.UnionPattern():
                    node = _join(node, P.Union(tuple(self.group(g) for g in element.alternatives)))
                case ast.GroupPattern():
                    node = _join(node, self.group(element))
                case ast.GraphGraphPattern():
                    node = _join(node, self.graph(element))
                case ast.SubSelect():
                    node = _join(node, self.sub_select(element.query))
                case _:
                    raise UnsupportedQueryError(f"unsupported pattern: {type(element).__name__}")
        if keep_filters is not None:
            keep_filters.extend(filters)
            return node
        return self.apply_filters(node, filters)

    def apply_filters(self, node: P.PlanNode, filters: list[Any]) -> P.PlanNode:
        plain: list[Any] = []
        for expr in filters:
            for conjunct in conjuncts(expr):
                if isinstance(conjunct, ast.Exists):
                    inner_filters: list[Any] = []
                    right = self.group(conjunct.pattern, inner_filters)
                    nested = [f for f in inner_filters if _has_exists(f)]  # evaluated inside
                    right = self.apply_filters(right, nested) if nested else right
                    condition = conjunction([f for f in inner_filters if not _has_exists(f)])
                    if conjunct.negated:
                        node = P.AntiJoin(node, right, condition)
                    else:
                        node = P.SemiJoin(node, right, condition)
                elif _has_exists(conjunct):
                    node, marked = self._mark_exists(node, conjunct)
                    plain.append(marked)
                else:
                    plain.append(conjunct)
        if plain:
            node = P.Filter(node, conjunction(plain))
        return node

    def _mark_exists(self, node: P.PlanNode, expr: Any) -> tuple[P.PlanNode, Any]:
        """EXISTS inside an expression (under ``||``, ``!``, IF, BIND ...): each EXISTS
        becomes a hidden boolean variable, true on the semi-join's rows and false on
        the anti-join's; their union is ``node`` with the mark (incremental like
        FILTER [NOT] EXISTS, which are the two halves)."""
        found: list[tuple[str, ast.Exists]] = []

        def mark(e: Any) -> Any:
            if isinstance(e, ast.Exists):
                name = self.fresh("exists")
                found.append((name, e))
                return ast.Call("!", (ast.Var(name),)) if e.negated else ast.Var(name)
            if isinstance(e, ast.Call):
                return ast.Call(e.op, tuple(mark(a) for a in e.args))
            return e

        marked = mark(expr)
        for name, exists in found:
            inner_filters: list[Any] = []
            right = self.group(exists.pattern, inner_filters)
            nested = [f for f in inner_filters if _has_exists(f)]
            right = self.apply_filters(right, nested) if nested else right
            condition = conjunction([f for f in inner_filters if not _has_exists(f)])
            node = P.Union((P.Extend(P.SemiJoin(node, right, condition), name, _TRUE),
                            P.Extend(P.AntiJoin(node, right, condition), name, _FALSE)))
        return node, marked

    def values(self, values: ast.Values) -> P.Values:
        return P.Values(tuple(v.name for v in values.vars), values.rows)

    def static_bgp(self, triples: tuple[ast.TriplePattern, ...], graph: Any) -> P.PlanNode:
        """Plain triples as one BGP; each property path (``|``, ``*``, ``+``, ``?``,
        ``!``) as a PathScan joined to it. Blank nodes are hidden variables."""
        triples = _bnodes_as_vars(triples)
        plain = tuple(t for t in triples if not ast.is_path(t.p))
        node: P.PlanNode = P.StaticBGP(plain, graph) if plain or graph is not None else P.Unit()
        for t in triples:
            if ast.is_path(t.p):
                node = _join(node, P.PathScan(t.s, t.p, t.o, graph))
        return node

    def stream(self, element: ast.StreamPattern) -> P.PlanNode:
        """``STREAM <s> [window] { P }``: P over the window's content as one graph (RSP-QL;
        the planner joins its patterns across events, :mod:`taxi_rsp.algebra.window_graph`).
        P is any group pattern of triples, FILTER, BIND, OPTIONAL, UNION, MINUS, VALUES
        and nested groups; every triple pattern in it reads the window."""
        where = self._where(element.position)
        if not isinstance(element.stream, IRI):
            raise UnsupportedQueryError(f"{where}STREAM needs an IRI, not a variable")
        if self._window is not None:
            raise UnsupportedQueryError(f"{where}a STREAM block cannot be inside another STREAM block")
        for inner in element.pattern.elements:
            if isinstance(inner, ast.SubSelect) or has_stream(inner):
                what = "a sub-SELECT" if isinstance(inner, ast.SubSelect) else "a STREAM block"
                raise UnsupportedQueryError(f"{where}{what} inside a STREAM block is not supported; "
                                            "put it after the STREAM block")
        if not has_triples(element.pattern):
            raise UnsupportedQueryError(f"{where.rstrip(': ')}: empty STREAM pattern")
        if all(isinstance(inner, ast.BGP) for inner in element.pattern.elements):
            # triples only: one block, one scan (split by the planner where it must)
            return self.window_bgp(tuple(t for inner in element.pattern.elements for t in inner.triples), element)
        self._window = element
        try:
            return self.group(element.pattern)
        finally:
            self._window = None

    def window_bgp(self, triples: tuple[ast.TriplePattern, ...], element: ast.StreamPattern) -> P.PlanNode:
        """Triples over the window of ``element``: a scan, or a UNION of scans for the
        alternatives of fixed-length property paths."""
        where = self._where(element.position).rstrip(": ")
        variants: list[list[ast.TriplePattern]] = [[]]
        for t in triples:
            expansions = self._fixed_paths(t.s, t.p, t.o) if ast.is_path(t.p) else [[t]]
            if expansions is None or len(variants) * len(expansions) > _MAX_PATH_VARIANTS:
                raise UnsupportedQueryError(
                    f"{where}: property paths with *, +, ? or ! are evaluated over static data only; "
                    "inside STREAM use fixed-length paths (/, ^, |)"
                )
            variants = [v + e for v in variants for e in expansions]
        stream = element.stream.value  # type: ignore[union-attr]
        scans = [P.Scan(stream, element.window, _bnodes_as_vars(tuple(v)), self._window_graph) for v in variants]
        return scans[0] if len(scans) == 1 else P.Union(tuple(scans))

    def _fixed_paths(self, s: Any, path: Any, o: Any) -> list[list[ast.TriplePattern]] | None:
        """A fixed-length path as alternative lists of plain triples (``|`` gives one list
        per alternative, evaluated as a UNION of windows, each incremental); None for
        ``*``, ``+``, ``?`` and negated sets."""
        match path:
            case ast.PathInv():
                return self._fixed_paths(o, path.path, s)
            case ast.PathSeq():
                results: list[list[ast.TriplePattern]] = [[]]
                left = s
                for i, step in enumerate(path.steps):
                    right = o if i == len(path.steps) - 1 else ast.Var(self.fresh("path"))
                    expansions = self._fixed_paths(left, step, right)
                    if expansions is None:
                        return None
                    results = [r + e for r in results for e in expansions]
                    left = right
                return results
            case ast.PathAlt():
                found: list[list[ast.TriplePattern]] = []
                for alternative in path.alternatives:
                    expansions = self._fixed_paths(s, alternative, o)
                    if expansions is None:
                        return None
                    found.extend(expansions)
                return found
            case ast.PathMod() | ast.PathNeg():
                return None
        return [[ast.TriplePattern(s, path, o)]]

    def graph(self, element: ast.GraphGraphPattern) -> P.PlanNode:
        """GRAPH g { ... }: every BGP and path inside matches in graph g (with GRAPH ?g,
        each binds ?g, and the group's joins keep one graph per solution). Inside a STREAM
        block, g names the events' graphs: the window's content as an RDF dataset."""
        if self._window is not None:
            return self.window_graph(element)
        if has_stream(element.pattern):
            raise UnsupportedQueryError(f"{self._where(element.position)}a STREAM pattern cannot be inside GRAPH")
        if isinstance(element.graph, ast.Var) and _scoped_per_graph(element.pattern, element.graph):
            outer, self._graph = self._graph, P.EACH_GRAPH
            try:
                return P.GraphEach(element.graph.name, self.group(element.pattern))
            finally:
                self._graph = outer
        outer, self._graph = self._graph, element.graph
        try:
            node = self.group(element.pattern)
        finally:
            self._graph = outer
        if isinstance(element.graph, ast.Var) and element.graph.name not in node.variables:
            node = _join(P.StaticBGP((), element.graph), node)  # GRAPH ?g { } still binds ?g
        return node

    def window_graph(self, element: ast.GraphGraphPattern) -> P.PlanNode:
        """``GRAPH g { P }`` inside a STREAM block: P's triple patterns match the events
        whose named graph is g (a variable binds it; its patterns join on it, so one
        solution reads one graph name across the window's events)."""
        if self._window_graph is not None:
            raise UnsupportedQueryError(f"{self._where(element.position)}GRAPH inside GRAPH in a STREAM block "
                                        "is not supported")
        if not has_triples(element.pattern):
            raise UnsupportedQueryError(f"{self._where(element.position)}an empty GRAPH pattern inside a STREAM "
                                        "block matches nothing of the window")
        self._window_graph = element.graph
        try:
            return self.group(element.pattern)
        finally:
            self._window_graph = None

    def sub_select(self, query: ast.Query) -> P.PlanNode:
        keep = {item.var.name for item in query.projection} if query.projection is not None else None
        if keep is not None:
            query = _rename_hidden(query, keep, f"~{next(self._fresh)}")
        node = self.group(query.where)
        node, _ = self.modifiers(query, node)
        return node


# -- helpers ------------------------------------------------------------------------
def _refuse(query: ast.Query, clause: str, message: str) -> UnsupportedQueryError:
    """A registration error at the start of ``clause`` (see ``ast.Query.positions``)."""
    position = query.positions.get(clause) or query.positions.get("form")
    if position is None:
        return UnsupportedQueryError(message)
    return UnsupportedQueryError(f"{query.source}:{position.line}:{position.column}: {message}")


def has_triples(obj: Any) -> bool:
    """True when a pattern (or any part of it) holds a triple pattern."""
    return _some_part(obj, lambda part: bool(part.triples) if isinstance(part, ast.BGP) else None)


def has_stream(obj: Any) -> bool:
    """True when a query (or any part of it) contains a STREAM pattern."""
    return _some_part(obj, lambda part: True if isinstance(part, ast.StreamPattern) else None)


def _some_part(obj: Any, decide: Callable[[Any], bool | None]) -> bool:
    """Whether ``decide`` is true of ``obj`` or of a part of it; where ``decide`` says
    None, the parts are asked (the AST's tuples and dataclasses, not its prefixes,
    positions or CONSTRUCT template)."""
    found = decide(obj)
    if found is not None:
        return found
    if isinstance(obj, tuple):
        return any(_some_part(item, decide) for item in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return any(_some_part(getattr(obj, f.name), decide) for f in dataclasses.fields(obj)
                   if f.name not in ("prefixes", "position", "template"))
    return False


def _scoped_bnodes(expr: Any, scope: tuple[str, ...]) -> Any:
    """BNODE(str) is one blank node per string *and solution* (SPARQL 1.1 §17.4.2.9): it
    becomes the hidden call BNODE_IN(str, ?v1, ...), keyed by the solution's variables."""
    if isinstance(expr, ast.Call):
        args = tuple(_scoped_bnodes(a, scope) for a in expr.args)
        if expr.op == "BNODE" and len(args) == 1:
            return ast.Call("BNODE_IN", args + tuple(ast.Var(v) for v in scope))
        return ast.Call(expr.op, args)
    return expr


def _scoped_per_graph(obj: Any, graph: ast.Var) -> bool:
    """True when ``obj`` holds a construct whose result inside ``GRAPH ?g`` depends on
    evaluating it per graph (MINUS, a sub-SELECT, VALUES binding ?g): matching each BGP
    in a graph and binding ?g, as :meth:`_Translator.graph` does otherwise (cheaper, and
    exact for BGPs, FILTER, OPTIONAL, UNION and EXISTS), would differ."""
    if isinstance(obj, (ast.MinusPattern, ast.SubSelect)):
        return True
    if isinstance(obj, ast.Values):
        return graph in obj.vars
    if isinstance(obj, tuple):
        return any(_scoped_per_graph(item, graph) for item in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and not isinstance(obj, ast.Query):
        return any(_scoped_per_graph(getattr(obj, f.name), graph) for f in dataclasses.fields(obj)
                   if f.name not in ("position",))
    return False


def _bnode_var(node: Any) -> Any:
    # A blank node in a pattern is a variable that cannot be projected (SPARQL 1.1 §4.1.4).
    return ast.Var(f"_:{node.label}") if isinstance(node, BNode) else node


def _bnodes_as_vars(triples: tuple[ast.TriplePattern, ...]) -> tuple[ast.TriplePattern, ...]:
    return tuple(ast.TriplePattern(_bnode_var(t.s), t.p if ast.is_path(t.p) else _bnode_var(t.p), _bnode_var(t.o))
                 for t in triples)


def _expr_var_names(expr: Any) -> set[str]:
    if isinstance(expr, ast.Var):
        return {expr.name}
    if isinstance(expr, ast.Call):
        return set().union(set(), *(_expr_var_names(a) for a in expr.args))
    return set()


def _join(left: P.PlanNode, right: P.PlanNode) -> P.PlanNode:
    if isinstance(left, P.Unit):
        return right
    return P.Join(left, right)


def _has_aggregate(expr: Any) -> bool:
    if isinstance(expr, ast.Aggregate):
        return True
    return isinstance(expr, ast.Call) and any(_has_aggregate(a) for a in expr.args)


def _has_nested_aggregate(expr: Any) -> bool:
    if isinstance(expr, ast.Aggregate):
        return expr.arg is not None and _has_aggregate(expr.arg)
    return isinstance(expr, ast.Call) and any(_has_nested_aggregate(a) for a in expr.args)


def _has_exists(expr: Any) -> bool:
    if isinstance(expr, ast.Exists):
        return True
    return isinstance(expr, ast.Call) and any(_has_exists(a) for a in expr.args)


def _visible(variables: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v for v in variables if not v.startswith("_") and "~" not in v)


def _rename_hidden(obj: Any, keep: set[str], suffix: str) -> Any:
    """Rename every variable of a sub-select that it does not project (SPARQL scoping)."""
    if isinstance(obj, ast.Var):
        return obj if obj.name in keep else ast.Var(obj.name + suffix)
    if isinstance(obj, tuple):
        return tuple(_rename_hidden(item, keep, suffix) for item in obj)
    if isinstance(obj, dict):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: _rename_hidden(getattr(obj, f.name), keep, suffix)
            for f in dataclasses.fields(obj)
            if f.name not in ("prefixes", "position")
        }
        return dataclasses.replace(obj, **changes)
    return obj
