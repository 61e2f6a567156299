"""The physical plan: a frozen tree saying which operator computes each part of a query,
which steps are fused into it, and which tier runs it — decided by the planner's rules
(:mod:`taxi_rsp.planner.builder`), wired into runtime operators by
:func:`~taxi_rsp.planner.instantiate.instantiate`, printed by ``--explain``.

A node's ``specialised`` flag says whether the specialised tier
(:mod:`taxi_rsp.engine.compiled`: code generated for the query) runs it, or the
reference operator (:mod:`taxi_rsp.engine.ops`).

>>> from taxi_rsp.lang.ast import TriplePattern, Var, WindowSpec
>>> from taxi_rsp.rdf.terms import IRI
>>> scan = Window(("s", "o"), "http://s", WindowSpec("RANGE", range_ms=60000),
...               (TriplePattern(Var("s"), IRI("http://p"), Var("o")),), ("s", "o"), (), True)
>>> print(render(Distinct(("s", "o"), scan)))
Distinct -> ?s ?o
  Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?s ?o
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.pretty import format_expr
from taxi_rsp.lang.ast import Aggregate, Expr, TriplePattern, Var, WindowSpec


def _tier(specialised: bool) -> str:
    return "specialised" if specialised else "reference"


def _steps(steps: tuple[P.FusedStep, ...]) -> str:
    return ", ".join(step_label(s) for s in steps)


def step_label(step: P.FusedStep) -> str:
    """A fused step in one phrase, e.g. ``BIND ?cell`` (the same words as a MapOp's label)."""
    if isinstance(step, P.Filter):
        return "Filter"
    if isinstance(step, P.Extend):
        return f"Extend ?{step.var}"
    return "Project"


def _graph_name(graph: object) -> str:
    return f"?{graph.name}" if isinstance(graph, Var) else f"<{getattr(graph, 'value', graph)}>"


def _window(spec: WindowSpec) -> str:
    parts = [spec.kind]
    if spec.range_ms is not None:
        parts.append(f"{spec.range_ms}ms")
    if spec.slide_ms is not None:
        parts.append(f"SLIDE {spec.slide_ms}ms")
    if spec.count is not None:
        parts.append(str(spec.count))
    return " ".join(parts)


@dataclass(frozen=True)
class Node:
    """A physical operator: the variables of its rows (``schema``), its inputs."""

    schema: tuple[str, ...]

    @property
    def inputs(self) -> tuple[Node, ...]:
        return ()

    def label(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class Window(Node):
    """A window over ``stream`` matching ``triples`` in each event (rows of
    ``match_schema``), then the fused ``steps``."""

    stream: str
    spec: WindowSpec
    triples: tuple[TriplePattern, ...]
    match_schema: tuple[str, ...]
    steps: tuple[P.FusedStep, ...]
    specialised: bool  # a generated matcher and generated fused steps
    slide_report: str = "window close"  # a hopping window's: EngineConfig.slide_report
    graph: object = None  # GRAPH g inside the block: an IRI (events of that graph) or a Var (bound to it)

    def label(self) -> str:
        n = len(self.triples)
        fused = f" + {_steps(self.steps)}" if self.steps else ""
        matcher = "generated matcher" if self.specialised else "reference matcher"
        # several patterns in one window: a star over a subject-disjoint stream (window_graph)
        scope = ", 1 pattern" if n == 1 else f", {n} patterns of one subject, matched per event"
        report = f" reported on {self.slide_report}" if self.spec.slide_ms is not None else ""
        graph = "" if self.graph is None else f" GRAPH {_graph_name(self.graph)}"
        return f"Window <{self.stream}> [{_window(self.spec)}]{report}{graph}{scope}, {matcher}{fused}"


@dataclass(frozen=True)
class Source(Node):
    """A constant relation: static data matched at registration, VALUES, the unit."""

    what: str
    rows: tuple[tuple, ...] = field(compare=False, repr=False)

    def label(self) -> str:
        return f"Source {self.what} ({len(self.rows)} rows)"


@dataclass(frozen=True)
class Map(Node):
    """Stateless steps over ``child``'s rows (FILTER, BIND, projection)."""

    child: Node
    steps: tuple[P.FusedStep, ...]
    specialised: bool  # the steps compiled into one generated function

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.child,)

    def label(self) -> str:
        return f"Map [{_tier(self.specialised)}] {_steps(self.steps)}"


@dataclass(frozen=True)
class Join(Node):
    left: Node
    right: Node
    specialised: bool

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        shared = [v for v in self.left.schema if v in self.right.schema]
        return f"Join [{_tier(self.specialised)}] on {', '.join('?' + v for v in shared) or 'nothing (cross product)'}"


@dataclass(frozen=True)
class StaticInput(Node):
    """A static input of a multi-way join: ``plan`` evaluated over the static data, again
    whenever the static data changes."""

    plan: P.PlanNode = field(compare=False)

    def label(self) -> str:
        return "StaticInput (re-evaluated when the static data changes)"


@dataclass(frozen=True)
class MultiJoin(Node):
    """A join of three or more inputs with a stream among them, probed in an order the
    ``routing`` policy chooses per arrival; ``filters`` are evaluated as soon as their
    variables are bound."""

    joined: tuple[Node, ...]
    certain: tuple[frozenset[str], ...]
    filters: tuple[Expr, ...]
    routing: str

    @property
    def inputs(self) -> tuple[Node, ...]:
        return self.joined

    def label(self) -> str:
        return f"MultiJoin [{self.routing} routing] of {len(self.joined)} inputs, {len(self.filters)} filters"


@dataclass(frozen=True)
class Correlated(Node):
    """OPTIONAL (LeftJoin), MINUS / NOT EXISTS (AntiJoin), EXISTS (SemiJoin)."""

    kind: str  # LeftJoin, AntiJoin, SemiJoin
    left: Node
    right: Node
    condition: Expr | None
    minus: bool
    specialised: bool

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        name = {"LeftJoin": "Optional", "SemiJoin": "Exists"}.get(self.kind, "Minus" if self.minus else "NotExists")
        condition = f" if {format_expr(self.condition)}" if self.condition is not None else ""
        return f"{name} [{_tier(self.specialised)}]{condition}"


@dataclass(frozen=True)
class LatestPerKey(Node):
    """A FILTER NOT EXISTS whose inner block is its outer window again (same stream, RANGE,
    patterns and filters, up to variable names) asking for a *later* row of the same key
    (``?v2 > ?v`` on one column of both): the latest row of each key in the window
    (:mod:`taxi_rsp.engine.compiled.latest`, decided by
    :func:`~taxi_rsp.planner.builder.latest_per_key`). ``correlated`` is the plan it stands
    for: its left window is this node's one input, its right rows are those of the left
    read at ``right_from_left`` (the inner window is not built), and its reference
    anti-join answers after a hand-over."""

    correlated: Correlated
    keys: tuple[str, ...]  # the shared variables (columns of the left rows)
    value: str  # the left variable a later row must exceed
    right_from_left: tuple[int, ...]  # the right row's columns, as positions of the left row

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.correlated.left,)

    def label(self) -> str:
        return (f"LatestPerKey [specialised] by {_keys(self.keys)}: rows with no later ?{self.value} "
                f"({format_expr(self.correlated.condition)}; the inner window is the outer one)")


@dataclass(frozen=True)
class Union(Node):
    branches: tuple[Node, ...]

    @property
    def inputs(self) -> tuple[Node, ...]:
        return self.branches


@dataclass(frozen=True)
class Group(Node):
    child: Node
    keys: tuple[str, ...]
    aggregates: tuple[tuple[str, Aggregate], ...]
    specialised: bool

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.child,)

    def label(self) -> str:
        return f"Group [{_tier(self.specialised)}] by {_keys(self.keys)}: {_aggregates(self.aggregates)}"


@dataclass(frozen=True)
class WindowAggregate(Node):
    """GROUP BY straight over a window and its fused steps, as one generated operator;
    with ``latest``, over the latest row per key of that window (the
    :class:`LatestPerKey` between them, fused: the table counts each key's newest row)."""

    window: Window
    keys: tuple[str, ...]
    aggregates: tuple[tuple[str, Aggregate], ...]
    latest: LatestPerKey | None = None

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.window,)

    def label(self) -> str:
        return f"WindowAggregate [specialised] by {_keys(self.keys)}: {_aggregates(self.aggregates)}{self.over()}"

    def over(self) -> str:
        """What the groups count when not every row: the label's tail."""
        if self.latest is None:
            return ""
        return f" over the latest row per {_keys(self.latest.keys)} (no later ?{self.latest.value})"


@dataclass(frozen=True)
class RankedAggregate(Node):
    """The ordered root ``ORDER BY <aggregates> LIMIT k`` over a :class:`WindowAggregate`
    or a specialised :class:`Group` whose table keeps its groups ranked (each ORDER BY
    part a COUNT, SUM, MIN or MAX variable of it): rows are built only for the reported
    groups."""

    aggregate: WindowAggregate | Group
    order: tuple[tuple[Expr, bool], ...]
    limit: int
    offset: int

    @property
    def inputs(self) -> tuple[Node, ...]:
        return self.aggregate.inputs

    def label(self) -> str:
        order = ", ".join(f"{'DESC' if desc else 'ASC'} {format_expr(expr)}" for expr, desc in self.order)
        kind = "RankedAggregate" if isinstance(self.aggregate, WindowAggregate) else "RankedGroup"
        return (f"{kind} [specialised] by {_keys(self.aggregate.keys)}: "
                f"{_aggregates(self.aggregate.aggregates)}, ranked by {order or 'key'} offset {self.offset} "
                f"limit {self.limit}" + (self.aggregate.over() if isinstance(self.aggregate, WindowAggregate) else ""))


@dataclass(frozen=True)
class RankedJoin(Node):
    """The ordered root ``ORDER BY … LIMIT`` over BINDs over a join of two specialised
    GROUP BYs on exactly their (equal) keys, every ORDER BY part a rank program of both
    groups' aggregates, keys and numbers (:func:`~taxi_rsp.engine.compiled.ranked_join.rank_programs`):
    the pairs of groups are ranked in the tables, rows are built only for the reported
    pairs. ``topk`` is the plan it stands for: built beside it, it answers after a
    hand-over. ``programs``: each ORDER BY part's rank program and direction."""

    topk: TopK
    programs: tuple[tuple[tuple[tuple[int, int, int, int], ...], bool], ...]

    @property
    def inputs(self) -> tuple[Node, ...]:
        return self.topk.child.inputs

    def label(self) -> str:
        order = ", ".join(f"{'DESC' if desc else 'ASC'} {format_expr(expr)}" for expr, desc in self.topk.order)
        join = self.topk.child
        assert isinstance(join, Join)
        keys = [v for v in join.left.schema if v in join.right.schema]
        absorbed = f" + {_steps(self.topk.extends.steps)}" if self.topk.extends is not None else ""
        return (f"RankedJoin [specialised] on {_keys(tuple(keys))}: pairs ranked by {order} offset "
                f"{self.topk.offset} limit {self.topk.limit}{absorbed}")


@dataclass(frozen=True)
class Distinct(Node):
    child: Node

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True)
class TopK(Node):
    """ORDER BY … LIMIT over ``child``; the specialised one may take over the BIND steps
    of a Map right below it (``extends``: the Map it absorbed, whose rows it reads)."""

    child: Node
    order: tuple[tuple[Expr, bool], ...]
    limit: int | None
    offset: int
    emits_deltas: bool
    specialised: bool
    extends: Map | None = None

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.child,)

    def label(self) -> str:
        order = ", ".join(f"{'DESC' if desc else 'ASC'} {format_expr(expr)}" for expr, desc in self.order)
        absorbed = f" + {_steps(self.extends.steps)}" if self.extends is not None else ""
        return f"TopK [{_tier(self.specialised)}] {order} offset {self.offset} limit {self.limit}{absorbed}"


@dataclass(frozen=True)
class TmaTopK(Node):
    """The TMA grid top-k: the first ORDER BY key is monotone in ``directions``' variables."""

    child: Node
    order: tuple[tuple[Expr, bool], ...]
    limit: int
    offset: int
    score: Expr
    directions: tuple[tuple[str, int], ...]

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.child,)

    def label(self) -> str:
        return f"TmaTopK [reference] k={self.limit} over {', '.join('?' + v for v, _ in self.directions)}"


def _keys(keys: tuple[str, ...]) -> str:
    return ", ".join("?" + k for k in keys) or "()"


def _aggregates(aggregates: tuple[tuple[str, Aggregate], ...]) -> str:
    return ", ".join(f"?{var} := {agg.name}" for var, agg in aggregates)


def render(node: Node, indent: int = 0) -> str:
    """The tree, one node a line, inputs indented below it."""
    lines = [f"{'  ' * indent}{node.label()} -> {' '.join('?' + v for v in node.schema)}"]
    lines += [render(child, indent + 1) for child in node.inputs]
    return "\n".join(lines)


@dataclass(frozen=True)
class PhysicalTree:
    """A query's physical plan: ``root``, and for an ordered result which of its
    columns the output projects (``projection``: positions in the root's schema)."""

    root: Node
    ordered: bool
    projection: tuple[int | None, ...]
    form: str

    def __str__(self) -> str:
        return render(self.root)
