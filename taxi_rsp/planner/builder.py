"""Logical plan -> physical plan (:mod:`taxi_rsp.planner.physical`): one method per
logical node, and the physical rules, each a small function of the nodes it rewrites:

* **tier**: an operator runs specialised (generated code, :mod:`taxi_rsp.engine.compiled`)
  when the engine is configured so and the shape allows it, else the reference operator;
* **fuse steps**: FILTER, BIND and projection right above a window or a map become steps
  of it (:func:`fuse_steps`);
* **window aggregate**: GROUP BY right above a RANGE window with fusable aggregates
  becomes one specialised operator (:func:`window_aggregate`), also over the latest row
  per key of such a window (the table then counts each key's newest row);
* **top-k takes the BINDs**: a specialised top-k absorbs the BIND steps right below it
  (:func:`absorb_extends`);
* **TMA**: an ORDER BY … DESC LIMIT on a monotone score becomes the TMA grid top-k
  (:meth:`PlanBuilder._tma`), by request or when the reference operators run;
* **multi-way join**: a join of three or more inputs with a stream becomes one routed
  operator (:func:`taxi_rsp.planner.multijoin.plan_multijoin`);
* **latest per key**: a NOT EXISTS of a later row of the same key in the same window
  keeps each key's newest row (:func:`taxi_rsp.planner.latest.latest_per_key`).

Sharing (equal windows of a query keep one buffer; per-event pipelines shared across
queries) is the instantiation's (:mod:`taxi_rsp.planner.instantiate`). Fixtures:
``tests/test_physical_rules.py``.
"""

from __future__ import annotations

from dataclasses import replace

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.aggregate import FUSABLE
from taxi_rsp.engine.compiled.ranked_join import rank_programs
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.graphs import per_graph_plan
from taxi_rsp.engine.ops.match import variable_positions
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.lang import ast
from taxi_rsp.planner import physical as X
from taxi_rsp.planner.latest import latest_per_key
from taxi_rsp.planner.monotone import monotonicity
from taxi_rsp.planner.multijoin import plan_multijoin
from taxi_rsp.rdf.dictionary import Dictionary



def fusable_aggregates(aggregates: tuple[tuple[str, ast.Aggregate], ...]) -> bool:
    """Whether the specialised group operators compute every one of ``aggregates``.

    >>> fusable_aggregates((("n", ast.Aggregate("COUNT", None)),)), fusable_aggregates((("s", ast.Aggregate("SAMPLE", None)),))
    (True, False)
    """
    return not any(agg.distinct or agg.name not in FUSABLE for _, agg in aggregates)


def _step_schema(schema: tuple[str, ...], step: P.FusedStep) -> tuple[str, ...]:
    if isinstance(step, P.Extend):
        return schema + (step.var,)
    if isinstance(step, P.Project):
        return step.vars
    return schema


def fuse_steps(child: X.Node, step: P.FusedStep, specialised: bool) -> X.Node:
    """``step`` over ``child``: a step of the window or map below, else a new map."""
    schema = _step_schema(child.schema, step)
    if isinstance(child, (X.Window, X.Map)):
        return replace(child, schema=schema, steps=child.steps + (step,))
    return X.Map(schema, child, (step,), specialised)


def window_aggregate(window: X.Window, keys: tuple[str, ...], aggregates: tuple,
                     latest: X.LatestPerKey | None = None) -> X.WindowAggregate | None:
    """GROUP BY over ``window`` (or over ``latest``, the latest row per key of it) as one
    specialised operator, when its window is a plain RANGE (or NOW) window, no fused step
    draws volatile values (RAND(): one draw per row, retracted as drawn) and every
    aggregate is fusable; else None."""
    spec = window.spec
    if not (spec.kind == "NOW" or (spec.kind == "RANGE" and spec.slide_ms is None)) or window.graph is not None:
        return None
    if any(P.volatile_step(step) for step in window.steps) or not fusable_aggregates(aggregates):
        return None
    return X.WindowAggregate(keys + tuple(var for var, _ in aggregates), window, keys, aggregates, latest)


def absorb_extends(topk: X.TopK) -> X.TopK:
    """A specialised top-k over a map of BIND steps only (none volatile: each report would
    compute it anew, where a row's value is fixed once) takes them over: the map's input
    feeds the top-k, which extends only the rows it reports."""
    child = topk.child
    if not topk.specialised or not isinstance(child, X.Map) or not child.steps or any(
            not isinstance(step, P.Extend) or P.volatile_step(step) for step in child.steps):
        return topk
    return replace(topk, child=child.child, extends=child)


RANKED = ("COUNT", "SUM", "MIN", "MAX")  # aggregates a ranked table orders by (int64 values)


def ranked_aggregate(topk: X.TopK) -> X.RankedAggregate | None:
    """The ordered root ``topk`` as a group operator that ranks its own groups (a window
    aggregate's, or a specialised GROUP BY's over any input), when the top-k reads the
    groups straight (no BIND between) and orders them by COUNT, SUM, MIN or MAX
    variables only; else None.

    >>> window = X.Window(("k",), "http://s", None, (), ("k",), (), True)
    >>> groups = X.WindowAggregate(("k", "n"), window, ("k",), (("n", ast.Aggregate("COUNT", None)),))
    >>> ranked_aggregate(X.TopK(groups.schema, groups, ((ast.Var("n"), True),), 10, 0, False, True)).limit
    10
    >>> ranked_aggregate(X.TopK(groups.schema, groups, ((ast.Var("k"), True),), 10, 0, False, True)) is None
    True
    """
    groups = topk.child
    if not topk.specialised or topk.extends is not None or topk.limit is None:
        return None
    if not (isinstance(groups, X.WindowAggregate) or (isinstance(groups, X.Group) and groups.specialised)):
        return None
    if not groups.keys:
        return None
    names = {var: agg.name for var, agg in groups.aggregates}
    if not all(isinstance(expr, ast.Var) and names.get(expr.name) in RANKED for expr, _ in topk.order):
        return None  # a key's order is its terms' (not their ids'), AVG and MEDIAN are not int64
    return X.RankedAggregate(groups.schema, groups, topk.order, topk.limit, topk.offset)


def ranked_join(topk: X.TopK) -> X.RankedJoin | None:
    """The ordered root ``topk`` as pairs of groups ranked in their tables, when it reads a
    specialised join of two specialised GROUP BYs (over windows or over any input) on
    exactly their keys (one tuple of variables for both) through BIND steps only, and
    every ORDER BY part has a rank program; else None."""
    join = topk.child
    if not topk.specialised or topk.limit is None or not isinstance(join, X.Join) or not join.specialised:
        return None
    sides = (join.left, join.right)
    if not all(isinstance(g, X.WindowAggregate) or (isinstance(g, X.Group) and g.specialised) for g in sides):
        return None
    left, right = sides
    assert isinstance(left, (X.WindowAggregate, X.Group)) and isinstance(right, (X.WindowAggregate, X.Group))
    keys = left.keys
    if not keys or right.keys != keys or [v for v in left.schema if v in right.schema] != list(keys):
        return None
    extends = {step.var: step.expr for step in topk.extends.steps} if topk.extends is not None else {}
    programs = rank_programs(list(topk.order), extends, keys, tuple(v for v, _ in left.aggregates),
                             tuple(v for v, _ in right.aggregates))
    if programs is None:
        return None
    return X.RankedJoin(topk.schema, topk, tuple(programs))


class PlanBuilder:
    """Plans logical plans for one engine's static data and configuration."""

    def __init__(self, dictionary: Dictionary, static: StaticStore, config: EngineConfig = EngineConfig()) -> None:
        self.dictionary = dictionary
        self.static = static
        self.config = config
        self.specialised = config.compiled

    def plan_query(self, logical: P.LogicalPlan) -> X.PhysicalTree:
        root = logical.root
        if isinstance(root, P.Project) and isinstance(root.child, P.TopK):
            top = self._ordered(root.child)
            position = {v: i for i, v in enumerate(top.schema)}
            return X.PhysicalTree(top, True, tuple(position.get(v) for v in root.vars), logical.form)
        node = self.build(root.child if isinstance(root, P.Construct) else root)
        return X.PhysicalTree(node, False, tuple(range(len(node.schema))), logical.form)

    def _ordered(self, node: P.TopK) -> X.Node:
        # TMA by request, or by default when the reference operators run (the specialised
        # top-k's flat keys beat TMA's grid in Python)
        top_k = self.config.top_k
        if top_k == "tma" or (top_k == "auto" and not self.specialised):
            tma = self._tma(node)
            if tma is not None:
                return tma
        topk = self._topk(node, emits_deltas=False)
        if top_k != "auto":
            return topk
        return ranked_aggregate(topk) or ranked_join(topk) or topk

    # -- one method per plan node ----------------------------------------------------
    def build(self, node: P.PlanNode) -> X.Node:
        if isinstance(node, (P.Join, P.Filter)) and (
                multi := plan_multijoin(self, node, self.config.join_routing)) is not None:
            return multi  # a join of >= 3 inputs with a stream: one adaptively routed operator
        match node:
            case P.Scan():
                schema = tuple(variable_positions(node.triples))
                if isinstance(node.graph, ast.Var) and node.graph.name not in schema:
                    schema += (node.graph.name,)  # the event's graph name, after the match's columns
                # (a window over named graphs runs the reference matcher: the generated one
                # knows no graph name)
                return X.Window(schema, node.stream, node.window, node.triples, schema, (),
                                self.specialised and node.graph is None, self.config.slide_report, node.graph)
            case P.StaticBGP():
                schema, rows = self.static.evaluate(node.triples, node.graph)
                return X.Source(schema, "static pattern", tuple(rows))
            case P.Unit():
                return X.Source((), "unit", ((),))
            case P.Values():
                encode = self.dictionary.encode
                rows = tuple(tuple(None if t is None else encode(t) for t in row) for row in node.rows)
                return X.Source(node.vars, "VALUES", rows)
            case P.GraphEach():
                return self.build(per_graph_plan(node, self.static, self.dictionary))
            case P.PathScan():
                schema, rows = self.static.evaluate_path(node.subject, node.path, node.object, node.graph)
                return X.Source(schema, "property path", tuple(rows))
            case P.Filter() | P.Extend():
                return fuse_steps(self.build(node.child), node, self.specialised)
            case P.Project():
                child = self.build(node.child)
                if node.vars == child.schema:
                    return child
                return fuse_steps(child, node, self.specialised)
            case P.Join():
                left, right = self.build(node.left), self.build(node.right)
                return X.Join(left.schema + tuple(v for v in right.schema if v not in left.schema), left, right,
                              self.specialised)
            case P.LeftJoin() | P.AntiJoin() | P.SemiJoin():
                return self._correlated(node)
            case P.Union():
                branches = tuple(self.build(n) for n in node.inputs)
                schema: tuple[str, ...] = ()
                for branch in branches:
                    schema += tuple(v for v in branch.schema if v not in schema)
                return X.Union(schema, branches)
            case P.Group():
                child = self.build(node.child)
                fused = None
                if self.specialised and isinstance(child, X.Window):
                    fused = window_aggregate(child, node.keys, node.aggregates)
                elif self.specialised and isinstance(child, X.LatestPerKey) and isinstance(
                        child.correlated.left, X.Window):
                    fused = window_aggregate(child.correlated.left, node.keys, node.aggregates, child)
                if fused is not None:
                    return fused
                return X.Group(node.keys + tuple(var for var, _ in node.aggregates), child, node.keys,
                               node.aggregates, self.specialised and fusable_aggregates(node.aggregates))
            case P.Distinct():
                child = self.build(node.child)
                return X.Distinct(child.schema, child)
            case P.TopK():
                return self._topk(node, emits_deltas=True)
        raise TypeError(f"cannot plan {type(node).__name__}")

    # -- helpers -----------------------------------------------------------------------
    def _correlated(self, node: P.LeftJoin | P.AntiJoin | P.SemiJoin) -> X.Node:
        left, right = self.build(node.left), self.build(node.right)
        if isinstance(node, P.LeftJoin):
            schema = left.schema + tuple(v for v in right.schema if v not in left.schema)
        else:
            schema = left.schema
        shared = any(v in right.schema for v in left.schema)  # without one, nothing to specialise on
        correlated = X.Correlated(schema, type(node).__name__, left, right, node.condition,
                                  getattr(node, "minus", False), self.specialised and shared)
        return (latest_per_key(correlated) if self.config.latest_per_key else None) or correlated

    def _tma(self, node: P.TopK) -> X.TmaTopK | None:
        """The TMA grid top-k when the first ORDER BY key is DESC of a variable defined by
        a monotone expression (see :func:`taxi_rsp.planner.monotone.monotonicity`)."""
        if not node.order:
            return None
        first, descending = node.order[0]
        if node.limit is None or not descending or not isinstance(first, ast.Var):
            return None
        definition = node.child
        while isinstance(definition, P.Extend) and definition.var != first.name:
            definition = definition.child
        if not isinstance(definition, P.Extend):
            return None
        directions = monotonicity(definition.expr)
        if not directions:
            return None
        child = self.build(node.child)
        if any(var not in child.schema for var in directions):
            raise TypeError("score inputs must be visible to the top-k")
        return X.TmaTopK(child.schema, child, node.order, node.limit, node.offset, definition.expr,
                         tuple(directions.items()))

    def _topk(self, node: P.TopK, emits_deltas: bool) -> X.TopK:
        child = self.build(node.child)
        topk = X.TopK(child.schema, child, node.order, node.limit, node.offset, emits_deltas, self.specialised)
        return absorb_extends(topk)
