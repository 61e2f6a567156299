"""Logical plan -> physical operators.

Stateless operators directly above a window are fused into it (see
:mod:`taxi_rsp.engine.ops.window`); everything else becomes one operator. Operators are
recorded in creation order, which is bottom-up and therefore a valid order for the
per-instant :meth:`~taxi_rsp.engine.ops.base.Operator.flush`.
"""

from __future__ import annotations

from functools import partial

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.compiled.aggregate import FUSABLE, fuse_group
from taxi_rsp.engine.compiled.group import CompiledGroup
from taxi_rsp.engine.compiled.correlated import compile_correlated
from taxi_rsp.engine.compiled.codegen import compile_chunk
from taxi_rsp.engine.compiled.join import CompiledJoin
from taxi_rsp.engine.compiled.match import CompiledMatcher
from taxi_rsp.engine.compiled.topk import CompiledTopK
from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.ops.base import Operator
from taxi_rsp.engine.ops.distinct import DistinctOp
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.ops.minus import AntiJoinOp, LeftJoinOp, SemiJoinOp
from taxi_rsp.engine.ops.stateless import (
    MapOp,
    UnionOp,
    extend_step,
    filter_step,
    project_step,
)
from taxi_rsp.engine.ops.tma import TmaTopKOp
from taxi_rsp.engine.ops.topk import TopKOp
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.engine.ops.window_kinds import window_kind
from taxi_rsp.engine.ops.source import StaticSource
from taxi_rsp.engine.physical import PhysicalPlan
from taxi_rsp.engine.pipeline import PipelineRegistry
from taxi_rsp.engine.policies import report_policy_for
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.lang import ast
from taxi_rsp.planner.monotone import monotonicity
from taxi_rsp.planner.multijoin import build_multijoin
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI


class PlanBuilder:
    def __init__(self, dictionary: Dictionary, static: StaticStore, top_k: str = "auto",
                 pipelines: PipelineRegistry | None = None, compiled: bool = True,
                 join_routing: str = "adaptive") -> None:
        """``top_k``: "auto" (TMA when the ORDER BY score is monotone), "sorted" or "tma";
        ``pipelines``: the engine's shared per-event pipelines (a private one if None);
        ``compiled``: use compiled sub-plans (:mod:`taxi_rsp.engine.compiled`) where they
        apply, else the reference operators only; ``join_routing``: see
        :class:`~taxi_rsp.engine.config.EngineConfig`."""
        self.top_k = top_k
        self.join_routing = join_routing
        self.compiled = compiled
        # the specialised tier: fused steps compiled into one function, generated matchers
        self.compile_steps = partial(compile_chunk, dictionary) if compiled else None
        self.matcher_class = CompiledMatcher if compiled else BGPMatcher
        self.pipelines = pipelines or PipelineRegistry(dictionary)
        self.dictionary = dictionary
        self.static = static
        self.windows: list[WindowScan] = []
        self.operators: list[Operator] = []
        self.sources: list[StaticSource] = []
        self._consumed: set[int] = set()

    def build_query(self, logical: P.LogicalPlan) -> PhysicalPlan:
        root = logical.root
        ordered: TopKOp | TmaTopKOp | CompiledTopK | None = None
        if isinstance(root, P.Project) and isinstance(root.child, P.TopK):
            # TMA by request, or by default when compiled plans are off (the compiled
            # top-k's flat keys beat TMA's grid in Python: docs/performance.md)
            use_tma = self.top_k == "tma" or (self.top_k == "auto" and not self.compiled)
            ordered = self._tma(root.child) if use_tma else None
            if ordered is None:
                ordered = self._topk(root.child, emits_deltas=False)
            projection = tuple(ordered.position.get(v) for v in root.vars)
            top: Operator = ordered
        elif isinstance(root, P.Construct):
            top = self.build(root.child)
            projection = tuple(range(len(top.schema)))
        else:
            top = self.build(root)
            projection = tuple(range(len(top.schema)))
        self._share_windows()
        return PhysicalPlan(top, self.windows, self.operators, self.sources, ordered, projection,
                            report_policy_for(logical.form, ordered is not None))

    # -- one method per plan node ----------------------------------------------------
    def build(self, node: P.PlanNode) -> Operator:
        if isinstance(node, (P.Join, P.Filter)) and (multi := build_multijoin(self, node, self.join_routing)) is not None:
            return multi  # a join of >= 3 inputs with a stream: one adaptively routed operator
        match node:
            case P.Scan():
                return self._scan(node)
            case P.StaticBGP():
                schema, rows = self.static.evaluate(node.triples, node.graph)
                return self._source(schema, rows)
            case P.Unit():
                return self._source((), [()])
            case P.Values():
                encode = self.dictionary.encode
                rows = [tuple(None if t is None else encode(t) for t in row) for row in node.rows]
                return self._source(node.vars, rows)
            case P.GraphEach():
                from taxi_rsp.engine.graphs import per_graph_plan

                return self.build(per_graph_plan(node, self.static, self.dictionary))
            case P.PathScan():
                schema, rows = self.static.evaluate_path(node.subject, node.path, node.object, node.graph)
                return self._source(schema, rows)
            case P.Filter():
                child = self.build(node.child)
                step = filter_step(self._compile(node.expr, child.schema))
                return self._stateless(child, step, child.schema, "Filter", node)
            case P.Extend():
                child = self.build(node.child)
                step = extend_step(self._compile(node.expr, child.schema), self.dictionary)
                return self._stateless(child, step, child.schema + (node.var,), f"Extend ?{node.var}", node)
            case P.Project():
                child = self.build(node.child)
                positions = tuple(child.schema.index(v) if v in child.schema else None for v in node.vars)
                if positions == tuple(range(len(child.schema))):
                    return child
                return self._stateless(child, project_step(positions), node.vars, "Project", node)
            case P.Join():
                left, right = self.build(node.left), self.build(node.right)
                op = JoinOp(left.schema, right.schema)
                if self.compiled:
                    op = CompiledJoin(left.schema, right.schema, op)
                self.add(op)
                self.connect(left, op.push_left)
                self.connect(right, op.push_right)
                return op
            case P.LeftJoin() | P.AntiJoin() | P.SemiJoin():
                return self._correlated(node)
            case P.Union():
                inputs = [self.build(n) for n in node.inputs]
                schema: tuple[str, ...] = ()
                for op in inputs:
                    schema += tuple(v for v in op.schema if v not in schema)
                union = self.add(UnionOp(schema, [op.schema for op in inputs]))
                for port, op in enumerate(inputs):
                    self.connect(op, union.input(port))
                return union
            case P.Group():
                child = self.build(node.child)
                if (fused := self._compiled_group(child, node)) is not None:
                    return fused
                aggregates = [
                    (var, agg.name, agg.distinct,
                     None if agg.arg is None else self._compile(agg.arg, child.schema), agg.separator)
                    for var, agg in node.aggregates
                ]
                group = GroupOp(child.schema, node.keys, aggregates, self.dictionary)
                if self.compiled and not any(agg.distinct or agg.name not in FUSABLE for _, agg in node.aggregates):
                    group = CompiledGroup(child.schema, node.keys,
                                          [(v, a.name, a.distinct, a.arg, spec[3]) for (v, a), spec
                                           in zip(node.aggregates, aggregates)], group, self.dictionary)
                self.add(group)
                self.connect(child, group.push)
                return group
            case P.Distinct():
                child = self.build(node.child)
                distinct = self.add(DistinctOp(child.schema))
                self.connect(child, distinct.push)
                return distinct
            case P.TopK():
                return self._topk(node, emits_deltas=True)
        raise TypeError(f"cannot build {type(node).__name__}")

    # -- helpers -----------------------------------------------------------------------
    def _compile(self, expr, schema: tuple[str, ...]):
        return compile_expr(expr, {v: i for i, v in enumerate(schema)}, self.dictionary)

    def add(self, op):
        """Register a physical operator of the plan (flushed and sized with it)."""
        self.operators.append(op)
        return op

    def connect(self, producer: Operator, sink) -> None:
        """Send ``producer``'s deltas to ``sink`` (a consumer's push method)."""
        producer.connect(sink)
        self._consumed.add(id(producer))

    def _source(self, schema: tuple[str, ...], rows: list[tuple]) -> StaticSource:
        source = self.add(StaticSource(schema, rows))
        self.sources.append(source)
        return source

    def _scan(self, node: P.Scan) -> WindowScan:
        matcher = self.matcher_class(node.triples, self.dictionary)
        window = self.add(WindowScan(self.dictionary.encode(IRI(node.stream)), node.window, matcher,
                                     window_kind(node.window)))
        self.windows.append(window)
        return window

    def _share_windows(self) -> None:
        """Put every window's chain into the shared trie; windows of this query with the
        same stream, window and triple patterns become one buffer (and one expiry)
        feeding all their consumers."""
        kept: dict[tuple, WindowScan] = {}
        for window in list(self.windows):
            if not isinstance(window, WindowScan):
                continue  # compiled operators match and derive on their own
            leaf = window.share(self.pipelines, self.compile_steps)
            if leaf is None:
                continue
            root = leaf
            while root.parent is not None:
                root = root.parent
            first = kept.setdefault((window.stream, window.spec, id(root)), window)
            if first is not window:
                first.absorb(window)
                self.windows.remove(window)

    def _stateless(self, child: Operator, step, schema: tuple[str, ...], label: str,
                   description: P.FusedStep | None = None) -> Operator:
        if isinstance(child, WindowScan) and id(child) not in self._consumed:
            child.fuse(step, schema, description)
            return child
        if isinstance(child, MapOp) and id(child) not in self._consumed:
            child.fuse(step, schema, label, description)
            return child
        op = self.add(MapOp(schema, step, label, description, child.schema, self.compile_steps))
        self.connect(child, op.push)
        return op

    def _correlated(self, node) -> Operator:
        left, right = self.build(node.left), self.build(node.right)
        if isinstance(node, P.LeftJoin):
            op = LeftJoinOp(left.schema, right.schema)
        elif isinstance(node, P.SemiJoin):
            op = SemiJoinOp(left.schema, right.schema)
        else:
            op = AntiJoinOp(left.schema, right.schema, minus=node.minus)
        if node.condition is not None:
            op.set_condition(self._compile(node.condition, op.merged_schema))
        if self.compiled:
            op = compile_correlated(op, left.schema, right.schema, node.condition, self.dictionary)
        self.add(op)
        self.connect(left, op.push_left)
        self.connect(right, op.push_right)
        return op

    def _compiled_group(self, child: Operator, node: P.Group) -> Operator | None:
        """GROUP BY straight over a window (and its fused steps) as one compiled operator."""
        if not self.compiled or not isinstance(child, WindowScan) or id(child) in self._consumed:
            return None
        fused = fuse_group(child, node.keys, list(node.aggregates), self.dictionary, self._compile)
        if fused is None:
            return None
        self.windows[self.windows.index(child)] = fused
        self.operators[self.operators.index(child)] = fused
        return fused

    def _tma(self, node: P.TopK) -> TmaTopKOp | None:
        """A TMA grid top-k when the first ORDER BY key is DESC of a variable defined by
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
        order = [(self._compile(expr, child.schema), desc) for expr, desc in node.order]
        topk = self.add(TmaTopKOp(child.schema, order, node.limit, node.offset, definition.expr,
                                   directions, self.dictionary.value))
        self.connect(child, topk.push)
        return topk

    def _topk(self, node: P.TopK, emits_deltas: bool) -> TopKOp | CompiledTopK:
        child = self.build(node.child)
        order = [(self._compile(expr, child.schema), desc) for expr, desc in node.order]
        topk: TopKOp | CompiledTopK = TopKOp(child.schema, order, node.limit, node.offset, emits_deltas)
        if self.compiled:
            topk = CompiledTopK(child.schema, list(node.order), node.limit, node.offset, emits_deltas,
                                topk, self.dictionary)
            if self._fuse_extends(child, topk):
                self.add(topk)
                return topk
        self.add(topk)
        self.connect(child, topk.push)
        return topk

    def _fuse_extends(self, child: Operator, topk: CompiledTopK) -> bool:
        """BIND steps right below a compiled top-k move into it: their producer feeds
        the top-k, which extends only the rows it reports. Not a volatile one (RAND(),
        NOW()...): each report would compute it anew, where a row's value is fixed once."""
        steps = child.descriptions if isinstance(child, MapOp) else None
        if not steps or any(not isinstance(step, P.Extend) or P.volatile_step(step) for step in steps) \
                or id(child) in self._consumed:
            return False
        for op in self.operators:
            op.redirect(child.push, topk.push)
        self.operators.remove(child)
        topk.fuse_extends(child.input_schema, [(step.var, step.expr) for step in steps], child.apply)
        return True
