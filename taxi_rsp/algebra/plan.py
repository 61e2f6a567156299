"""Logical plan nodes: what to compute, not how (SPARQL 1.1 §18 algebra + windows).

Every node knows the variables it binds (``variables``); plans pretty-print with
:func:`explain`:

>>> print(explain(Filter(Scan("http://s", WindowSpec("RANGE", range_ms=60000), ()), Const(None))))
Filter None
  Scan <http://s> [RANGE 60000ms] {}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taxi_rsp.rdf.terms import IRI
from taxi_rsp.lang.ast import (
    Aggregate,
    Const,
    Expr,
    Node,
    TriplePattern,
    Var,
    WindowSpec,
    is_volatile,
)


def _pattern_vars(triples: tuple[TriplePattern, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for triple in triples:
        for node in (triple.s, triple.p, triple.o):
            if isinstance(node, Var):
                seen.setdefault(node.name, None)
    return tuple(seen)


def _union(*groups: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for name in group:
            seen.setdefault(name, None)
    return tuple(seen)


@dataclass(frozen=True)
class Scan:
    """S2R: a window over a stream, matching ``triples`` inside each graph event; with
    ``graph`` (``GRAPH g { … }`` inside the STREAM block) only in events whose named
    graph is g, or, for a variable, binding it to the event's named graph."""

    stream: str
    window: WindowSpec
    triples: tuple[TriplePattern, ...]
    graph: Node | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        extra = (self.graph.name,) if isinstance(self.graph, Var) else ()
        return _union(_pattern_vars(self.triples), extra)


@dataclass(frozen=True)
class StaticBGP:
    """A basic graph pattern over the static dataset (default graph, or ``graph``)."""

    triples: tuple[TriplePattern, ...]
    graph: Node | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        extra = (self.graph.name,) if isinstance(self.graph, Var) else ()
        return _union(_pattern_vars(self.triples), extra)


@dataclass(frozen=True)
class Values:
    """Inline data (``VALUES``): a constant relation; None in a row is UNDEF."""

    vars: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return self.vars


@dataclass(frozen=True)
class PathScan:
    """A property path (``*``, ``+``, ``?``, ``|``, ``!``) over the static dataset
    (SPARQL 1.1 §18.2.2.4 and §18.4 ALP): ``subject`` and ``object`` are terms or
    variables; ``graph`` as in :class:`StaticBGP`."""

    subject: Node
    path: object
    object: Node
    graph: Node | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        names = [n.name for n in (self.subject, self.object, self.graph) if isinstance(n, Var)]
        return tuple(dict.fromkeys(names))


EACH_GRAPH = IRI("urn:x-taxi-rsp:each-graph")  # the graph of a GraphEach template


@dataclass(frozen=True)
class GraphEach:
    """``GRAPH ?var { P }`` evaluated per named graph (SPARQL 1.1 §18.6 Graph): the union
    over the static data's named graphs g of P with EACH_GRAPH replaced by g, joined
    with ?var = g. Used when P's result depends on it (MINUS, sub-SELECT, VALUES)."""

    var: str
    child: PlanNode

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(self.child.variables, (self.var,))


@dataclass(frozen=True)
class Unit:
    """The relation holding one empty mapping (the join identity)."""

    @property
    def variables(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class Join:
    left: PlanNode
    right: PlanNode

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(self.left.variables, self.right.variables)


@dataclass(frozen=True)
class LeftJoin:
    left: PlanNode
    right: PlanNode
    condition: Expr | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(self.left.variables, self.right.variables)


@dataclass(frozen=True)
class AntiJoin:
    """``left`` mappings with no compatible ``right`` mapping satisfying ``condition``:
    SPARQL MINUS (condition None, at least one shared variable) and FILTER NOT EXISTS
    (the inner FILTERs become the condition, evaluated on the merged mapping)."""

    left: PlanNode
    right: PlanNode
    condition: Expr | None = None
    minus: bool = False

    @property
    def variables(self) -> tuple[str, ...]:
        return self.left.variables


@dataclass(frozen=True)
class SemiJoin:
    """FILTER EXISTS: ``left`` mappings with at least one compatible ``right`` match."""

    left: PlanNode
    right: PlanNode
    condition: Expr | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        return self.left.variables


@dataclass(frozen=True)
class Union:
    inputs: tuple[PlanNode, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(*(node.variables for node in self.inputs))


@dataclass(frozen=True)
class Filter:
    child: PlanNode
    expr: Expr

    @property
    def variables(self) -> tuple[str, ...]:
        return self.child.variables


@dataclass(frozen=True)
class Extend:
    child: PlanNode
    var: str
    expr: Expr

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(self.child.variables, (self.var,))


@dataclass(frozen=True)
class Group:
    """GROUP BY ``keys`` (variables of the child, see translate) computing
    ``aggregates`` as (output variable, aggregate) pairs."""

    child: PlanNode
    keys: tuple[str, ...]
    aggregates: tuple[tuple[str, Aggregate], ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return _union(self.keys, tuple(var for var, _ in self.aggregates))


@dataclass(frozen=True)
class Project:
    child: PlanNode
    vars: tuple[str, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return self.vars


@dataclass(frozen=True)
class Distinct:
    child: PlanNode

    @property
    def variables(self) -> tuple[str, ...]:
        return self.child.variables


@dataclass(frozen=True)
class TopK:
    """ORDER BY ``order`` (expression, descending) with OFFSET/LIMIT (limit None: all)."""

    child: PlanNode
    order: tuple[tuple[Expr, bool], ...]
    limit: int | None
    offset: int = 0

    @property
    def variables(self) -> tuple[str, ...]:
        return self.child.variables


@dataclass(frozen=True)
class Construct:
    child: PlanNode
    template: tuple[TriplePattern, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return ("subject", "predicate", "object")


PlanNode = (
    Scan | StaticBGP | Values | PathScan | GraphEach | Unit | Join | LeftJoin | AntiJoin | SemiJoin | Union | Filter | Extend | Group
    | Project | Distinct | TopK | Construct
)
# The stateless nodes the planner fuses into windows and map operators; a fused step is
# described by the plan node it implements (the code generator compiles from it).
FusedStep = Filter | Extend | Project


def volatile_step(step: FusedStep | None) -> bool:
    """Whether a fused step computes a volatile expression (RAND()...: see
    :func:`~taxi_rsp.lang.ast.is_volatile`): such a step is run once per row and never
    shared, recomputed or moved to where it would run again."""
    return isinstance(step, (Filter, Extend)) and is_volatile(step.expr)


@dataclass
class LogicalPlan:
    """A translated query: the plan root plus what R2S needs to know."""

    root: PlanNode
    form: str
    projection: tuple[str, ...]
    ordered: bool
    extra: dict[str, object] = field(default_factory=dict)


def _fmt_expr(expr: object) -> str:
    from taxi_rsp.algebra.pretty import format_expr

    return format_expr(expr)


def explain(node: PlanNode, indent: int = 0) -> str:
    """A readable, indented rendering of a plan (``taxi-rsp explain``)."""
    pad = "  " * indent
    match node:
        case Scan():
            win = node.window
            spec = {"RANGE": f"RANGE {win.range_ms}ms" + (f" SLIDE {win.slide_ms}ms" if win.slide_ms else ""),
                    "TRIPLES": f"TRIPLES {win.count}", "NOW": "NOW", "ALL": "ALL"}[win.kind]
            body = " . ".join(_fmt_triple(t) for t in node.triples)
            graph = f" GRAPH {_fmt_expr(node.graph)}" if node.graph is not None else ""
            return f"{pad}Scan <{node.stream}> [{spec}]{graph} {{{body}}}"
        case StaticBGP():
            body = " . ".join(_fmt_triple(t) for t in node.triples)
            graph = f" GRAPH {_fmt_expr(node.graph)}" if node.graph is not None else ""
            return f"{pad}StaticBGP{graph} {{{body}}}"
        case Unit():
            return f"{pad}Unit"
        case GraphEach():
            return f"{pad}GraphEach ?{node.var} (per named graph)\n{explain(node.child, indent + 1)}"
        case Values():
            return f"{pad}Values {' '.join('?' + v for v in node.vars)} ({len(node.rows)} rows)"
        case PathScan():
            graph = f" GRAPH {_fmt_expr(node.graph)}" if node.graph is not None else ""
            return (f"{pad}PathScan{graph} {{{_fmt_expr(node.subject)} {_fmt_path(node.path)} "
                    f"{_fmt_expr(node.object)}}}")
        case Filter():
            return f"{pad}Filter {_fmt_expr(node.expr)}\n{explain(node.child, indent + 1)}"
        case Extend():
            return f"{pad}Extend ?{node.var} := {_fmt_expr(node.expr)}\n{explain(node.child, indent + 1)}"
        case Group():
            aggs = ", ".join(f"?{v} := {_fmt_expr(a)}" for v, a in node.aggregates)
            keys = " ".join(f"?{k}" for k in node.keys)
            return f"{pad}Group by [{keys}] {aggs}\n{explain(node.child, indent + 1)}"
        case Project():
            return f"{pad}Project {' '.join('?' + v for v in node.vars)}\n{explain(node.child, indent + 1)}"
        case Distinct():
            return f"{pad}Distinct\n{explain(node.child, indent + 1)}"
        case TopK():
            order = ", ".join(("DESC " if d else "ASC ") + _fmt_expr(e) for e, d in node.order)
            return f"{pad}TopK order [{order}] offset {node.offset} limit {node.limit}\n{explain(node.child, indent + 1)}"
        case Construct():
            body = " . ".join(_fmt_triple(t) for t in node.template)
            return f"{pad}Construct {{{body}}}\n{explain(node.child, indent + 1)}"
        case Union():
            return f"{pad}Union\n" + "\n".join(explain(n, indent + 1) for n in node.inputs)
        case Join() | LeftJoin() | AntiJoin() | SemiJoin():
            name = type(node).__name__
            if isinstance(node, AntiJoin) and node.minus:
                name = "Minus"
            cond = getattr(node, "condition", None)
            head = f"{pad}{name}" + (f" on {_fmt_expr(cond)}" if cond is not None else "")
            return f"{head}\n{explain(node.left, indent + 1)}\n{explain(node.right, indent + 1)}"
    raise TypeError(f"not a plan node: {node!r}")


def _fmt_path(path: object) -> str:
    from taxi_rsp.lang import ast

    match path:
        case ast.PathAlt():
            return "(" + " | ".join(_fmt_path(p) for p in path.alternatives) + ")"
        case ast.PathSeq():
            return "(" + " / ".join(_fmt_path(p) for p in path.steps) + ")"
        case ast.PathInv():
            return "^" + _fmt_path(path.path)
        case ast.PathMod():
            return _fmt_path(path.path) + path.mod
        case ast.PathNeg():
            return "!(" + " | ".join(("^" if inv else "") + _fmt_expr(i) for i, inv in path.iris) + ")"
    return _fmt_expr(path)


def _fmt_triple(triple: TriplePattern) -> str:
    return " ".join(_fmt_expr(n) for n in (triple.s, triple.p, triple.o))


__all__ = [
    "AntiJoin",
    "Const",
    "Construct",
    "Distinct",
    "Extend",
    "Filter",
    "Group",
    "GraphEach",
    "Join",
    "PathScan",
    "Values",
    "LeftJoin",
    "LogicalPlan",
    "PlanNode",
    "Project",
    "Scan",
    "SemiJoin",
    "StaticBGP",
    "TopK",
    "Union",
    "Unit",
    "Var",
    "explain",
]
