"""Physical plan -> runtime operators: :func:`instantiate` makes one operator per node of
a :class:`~taxi_rsp.planner.physical.PhysicalTree`, bottom-up (a valid order for the
per-instant flush), compiles its expressions against its input's schema, wires each
operator to its consumer, and shares what the engine shares:

* windows of the query with the same stream, window and triple patterns keep one
  buffer and one expiry (:meth:`~taxi_rsp.engine.ops.window.WindowScan.absorb`);
* every window's match and fused steps go into the engine's per-event pipelines
  (:class:`~taxi_rsp.engine.pipeline.PipelineRegistry`), shared across queries.

The tier of each node was decided by the planner: a specialised node becomes the
operator of :mod:`taxi_rsp.engine.compiled`, holding its reference twin from
:mod:`taxi_rsp.engine.ops` to hand over to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import expr_vars
from taxi_rsp.algebra.pretty import format_expr
from taxi_rsp.engine.compiled.aggregate import CompiledAggregate
from taxi_rsp.engine.compiled.correlated import compile_correlated
from taxi_rsp.engine.compiled.group import CompiledGroup
from taxi_rsp.engine.compiled.join import CompiledJoin
from taxi_rsp.engine.compiled.match import CompiledMatcher
from taxi_rsp.engine.compiled.ranked import RankedAggregate, RankedGroup
from taxi_rsp.engine.compiled.latest import LatestPerKey, LatestStage
from taxi_rsp.engine.compiled.ranked_join import RankedJoin
from taxi_rsp.engine.compiled.topk import CompiledTopK
from taxi_rsp.engine.compiled.window import specialise_window
from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.native import ranked_pairs_class
from taxi_rsp.engine.native.program import compile_steps
from taxi_rsp.engine.ops.base import Delta, Operator
from taxi_rsp.engine.ops.distinct import DistinctOp
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.ops.minus import AntiJoinOp, LeftJoinOp, SemiJoinOp
from taxi_rsp.engine.ops.mjoin import MultiJoinOp, StaticCache
from taxi_rsp.engine.ops.source import StaticSource
from taxi_rsp.engine.ops.stateless import MapOp, UnionOp, filter_step, reference_step
from taxi_rsp.engine.ops.tma import TmaTopKOp
from taxi_rsp.engine.ops.topk import TopKOp
from taxi_rsp.engine.ops.window import NamedGraph, WindowScan
from taxi_rsp.engine.ops.window_kinds import window_kind
from taxi_rsp.engine.physical import PhysicalPlan
from taxi_rsp.engine.pipeline import PipelineRegistry
from taxi_rsp.engine.policies import report_policy_for
from taxi_rsp.engine.routing import POLICIES
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.lang.ast import Var
from taxi_rsp.planner import physical as X
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI


def instantiate(tree: X.PhysicalTree, dictionary: Dictionary, static: StaticStore,
                pipelines: PipelineRegistry | None = None,
                plan_static: Callable[[P.PlanNode], X.Node] | None = None) -> PhysicalPlan:
    """The operators of ``tree``, wired; ``pipelines``: the engine's shared per-event
    pipelines (None: a registry of the query's own); ``plan_static``: plans a static
    input of a multi-way join again when the static data changes."""
    return _Instantiation(dictionary, static, pipelines, plan_static).plan(tree)


class _Instantiation:
    def __init__(self, dictionary: Dictionary, static: StaticStore, pipelines: PipelineRegistry | None,
                 plan_static: Callable[[P.PlanNode], X.Node] | None) -> None:
        self.dictionary = dictionary
        self.static = static
        self.pipelines = pipelines if pipelines is not None else PipelineRegistry(dictionary)
        self.plan_static = plan_static
        self.windows: list[Operator] = []
        self.operators: list[Operator] = []
        self.sources: list[Operator] = []
        self.compile_steps = partial(compile_steps, dictionary)  # the specialised tier's step compiler
        self._specialised_windows: set[int] = set()  # windows whose shared steps are compiled

    def plan(self, tree: X.PhysicalTree) -> PhysicalPlan:
        root = self.make(tree.root)
        self._share_windows()
        ordered = root if tree.ordered else None
        return PhysicalPlan(root, self.windows, self.operators, self.sources, ordered, tree.projection,
                            report_policy_for(tree.form, tree.ordered), tree)

    def make(self, node: X.Node) -> Operator:
        """The operator of ``node`` (its inputs made and connected first)."""
        op = self._make(node)
        if op.schema != node.schema:  # the planner and the operators must agree on every row's layout
            raise AssertionError(f"{node.label()}: planned {node.schema}, built {op.schema}")
        return op

    def _make(self, node: X.Node) -> Operator:
        match node:
            case X.Window():
                return self._window(node)
            case X.Source():
                source = self._add(StaticSource(node.schema, list(node.rows)))
                self.sources.append(source)
                return source
            case X.Map():
                child = self.make(node.child)
                op = self._map(node, child.schema)
                self._add(op)
                child.connect(op.push)
                return op
            case X.Join():
                return self._join(node, self.make(node.left), self.make(node.right))
            case X.MultiJoin():
                return self._multijoin(node)
            case X.Correlated():
                return self._correlated(node)
            case X.LatestPerKey():
                return self._latest(node)
            case X.Union():
                inputs = [self.make(branch) for branch in node.branches]
                union = self._add(UnionOp(node.schema, [op.schema for op in inputs]))
                for port, op in enumerate(inputs):
                    op.connect(union.input(port))
                return union
            case X.Group():
                child = self.make(node.child)
                return self._group(node, child)
            case X.WindowAggregate():
                window = self._window(node.window)
                return self._in_place_of(window, CompiledAggregate(window, node.keys, self._aggregate_specs(
                    node, window), self.dictionary, self._latest_stage(node, window)))
            case X.RankedAggregate():
                return self._ranked(node)
            case X.RankedJoin():
                return self._ranked_join(node)
            case X.Distinct():
                child = self.make(node.child)
                distinct = self._add(DistinctOp(child.schema))
                child.connect(distinct.push)
                return distinct
            case X.TopK():
                return self._topk(node)
            case X.TmaTopK():
                child = self.make(node.child)
                order = [(self._expr(expr, child.schema), desc) for expr, desc in node.order]
                topk = self._add(TmaTopKOp(child.schema, order, node.limit, node.offset, node.score,
                                           dict(node.directions), self.dictionary.value))
                child.connect(topk.push)
                return topk
        raise TypeError(f"cannot instantiate {type(node).__name__}")

    # -- helpers -----------------------------------------------------------------------
    def _ranked(self, node: X.RankedAggregate) -> Operator:
        """A group operator ranking its groups in its table, as the ordered root."""
        order = [(expr.name, desc) for expr, desc in node.order]
        reference = TopKOp(node.schema, [(self._expr(expr, node.schema), desc) for expr, desc in node.order],
                           node.limit, node.offset, False)
        groups = node.aggregate
        if isinstance(groups, X.WindowAggregate):
            window = self._window(groups.window)
            return self._in_place_of(window, RankedAggregate(
                window, groups.keys, self._aggregate_specs(groups, window), self.dictionary, order, node.limit,
                node.offset, reference, self._latest_stage(groups, window)))
        child = self.make(groups.child)
        group_ref, specs = self._group_parts(groups, child.schema)
        ranked = self._add(RankedGroup(child.schema, groups.keys, specs, group_ref, self.dictionary, order,
                                       node.limit, node.offset, reference))
        child.connect(ranked.push)
        return ranked

    def _aggregate_specs(self, node: X.WindowAggregate, window: WindowScan) -> list[tuple]:
        """A window aggregate's (variable, name, distinct, argument, its closure) list."""
        return [(var, agg.name, agg.distinct, agg.arg, None if agg.arg is None else self._expr(agg.arg, window.schema))
                for var, agg in node.aggregates]

    def _latest_stage(self, node: X.WindowAggregate, window: WindowScan) -> LatestStage | None:
        """The latest row per key a window aggregate counts (None: every row), with the
        anti-join it stands for (over the window's rows and inner rows read from them)."""
        if node.latest is None:
            return None
        return LatestStage(node.latest.keys, node.latest.value, self._expr(Var(node.latest.value), window.schema),
                           self._stood_for(node.latest, window.schema), node.latest.right_from_left)

    def _stood_for(self, node: X.LatestPerKey, schema: tuple[str, ...]) -> AntiJoinOp:
        """The reference anti-join the latest row per key stands for, over outer rows of
        ``schema`` (it answers after a hand-over)."""
        correlated = node.correlated
        reference = AntiJoinOp(schema, correlated.right.schema, minus=False)
        reference.set_condition(self._expr(correlated.condition, reference.merged_schema))
        return reference

    def _in_place_of(self, window: WindowScan, fused: Operator) -> Operator:
        """``fused``, which matches and derives on its own, as the plan's window."""
        self.windows[self.windows.index(window)] = fused
        self.operators[self.operators.index(window)] = fused
        return fused

    def _add(self, op: Operator) -> Operator:
        """Record an operator of the plan (flushed and sized with it, in this order)."""
        self.operators.append(op)
        return op

    def _expr(self, expr, schema: tuple[str, ...]):
        return compile_expr(expr, {v: i for i, v in enumerate(schema)}, self.dictionary)

    def _window(self, node: X.Window) -> WindowScan:
        matcher = (CompiledMatcher if node.specialised else BGPMatcher)(node.triples, self.dictionary)
        window = WindowScan(self.dictionary.encode(IRI(node.stream)), node.spec, matcher,
                            window_kind(node.spec, node.slide_report), self._named_graph(node, matcher.schema))
        for step in node.steps:
            function, schema = reference_step(step, window.schema, self.dictionary)
            window.fuse(function, schema, step)
        if node.specialised:
            specialise_window(window)  # its per-event calls as closures (before sharing: see there)
            self._specialised_windows.add(id(window))
        self.windows.append(self._add(window))
        return window

    def _named_graph(self, node: X.Window, match_schema: tuple[str, ...]) -> NamedGraph | None:
        """The named graph a window's matches must be in (``GRAPH g`` inside its block)."""
        if node.graph is None:
            return None
        if isinstance(node.graph, Var):
            return NamedGraph(None, node.graph.name, match_schema)
        return NamedGraph(self.dictionary.encode(node.graph), None, match_schema)

    def _map(self, node: X.Map, schema: tuple[str, ...]) -> MapOp:
        """The map of ``node`` over rows of ``schema`` (not added to the plan)."""
        compile_steps = self.compile_steps if node.specialised else None
        op = None
        for step in node.steps:
            function, out = reference_step(step, schema if op is None else op.schema, self.dictionary)
            if op is None:
                op = MapOp(out, function, X.step_label(step), step, schema, compile_steps)
            else:
                op.fuse(function, out, X.step_label(step), step)
        assert op is not None
        return op

    def _group_parts(self, node: X.Group, schema: tuple[str, ...]) -> tuple[GroupOp, list[tuple]]:
        """The reference GroupOp of ``node`` over rows of ``schema``, and the specialised
        operators' aggregate specs (variable, name, distinct, argument, its closure)."""
        aggregates = [(var, agg.name, agg.distinct,
                       None if agg.arg is None else self._expr(agg.arg, schema), agg.separator)
                      for var, agg in node.aggregates]
        reference = GroupOp(schema, node.keys, aggregates, self.dictionary)
        return reference, [(v, a.name, a.distinct, a.arg, spec[3]) for (v, a), spec in zip(node.aggregates, aggregates)]

    def _group(self, node: X.Group, child: Operator) -> Operator:
        reference, specs = self._group_parts(node, child.schema)
        group: Operator = reference
        if node.specialised:
            group = CompiledGroup(child.schema, node.keys, specs, reference, self.dictionary)
        self._add(group)
        child.connect(group.push)
        return group

    def _correlated(self, node: X.Correlated) -> Operator:
        left, right = self.make(node.left), self.make(node.right)
        if node.kind == "LeftJoin":
            op = LeftJoinOp(left.schema, right.schema)
        elif node.kind == "SemiJoin":
            op = SemiJoinOp(left.schema, right.schema)
        else:
            op = AntiJoinOp(left.schema, right.schema, minus=node.minus)
        if node.condition is not None:
            op.set_condition(self._expr(node.condition, op.merged_schema))
        correlated: Operator = op
        if node.specialised:
            correlated = compile_correlated(op, left.schema, right.schema, node.condition, self.dictionary)
        self._add(correlated)
        left.connect(correlated.push_left)
        right.connect(correlated.push_right)
        return correlated

    def _latest(self, node: X.LatestPerKey) -> Operator:
        """Each key's newest row of the outer window; the anti-join it stands for (over
        the outer rows and inner rows read from them) answers after a hand-over."""
        left = self.make(node.correlated.left)
        keys = tuple(left.schema.index(v) for v in node.keys)
        latest = self._add(LatestPerKey(self._stood_for(node, left.schema), keys, left.schema.index(node.value),
                                        node.right_from_left))
        left.connect(latest.push_left)
        return latest

    def _join(self, node: X.Join, left: Operator, right: Operator) -> Operator:
        join: Operator = JoinOp(left.schema, right.schema)
        if node.specialised:
            join = CompiledJoin(left.schema, right.schema, join)
        self._add(join)
        left.connect(join.push_left)
        right.connect(join.push_right)
        return join

    def _ranked_join(self, node: X.RankedJoin) -> Operator:
        """Pairs of groups ranked in their C tables, the ordered root; the join and the
        top-k it stands for are built beside it (they answer after a hand-over), and are
        the root themselves when the tables are not native."""
        join_node = node.topk.child
        assert isinstance(join_node, X.Join)
        left, right = self.make(join_node.left), self.make(join_node.right)
        topk = self._topk_over(node.topk, self._join(join_node, left, right))
        pairs_class = ranked_pairs_class()
        if pairs_class is None or not all(isinstance(op, (CompiledAggregate, CompiledGroup)) for op in (left, right)):
            return topk
        order = ", ".join(f"{'DESC' if desc else 'ASC'} {format_expr(expr)}" for expr, desc in node.topk.order)
        try:
            ranked = RankedJoin(left, right, topk, list(node.programs), pairs_class, order)
        except TypeError:  # the groups' tables are the pure-Python twin's: no C pairs over them
            return topk
        return self._add(ranked)

    def _topk(self, node: X.TopK) -> Operator:
        return self._topk_over(node, self.make(node.child))

    def _topk_over(self, node: X.TopK, child: Operator) -> Operator:
        """The top-k of ``node`` over the operator ``child``."""
        extends = node.extends
        schema = extends.schema if extends is not None else child.schema  # the rows the top-k orders
        order = [(self._expr(expr, schema), desc) for expr, desc in node.order]
        topk: Operator = TopKOp(schema, order, node.limit, node.offset, node.emits_deltas)
        if node.specialised:
            topk = CompiledTopK(schema, list(node.order), node.limit, node.offset, node.emits_deltas,
                                topk, self.dictionary)
            if extends is not None:
                # the BINDs' reference chain (compiled on the first row, as a map's would be);
                # the top-k extends only the rows it reports
                chain = self._map(extends, child.schema)
                topk.fuse_extends(child.schema, [(step.var, step.expr) for step in extends.steps], chain.apply)
        self._add(topk)
        child.connect(topk.push)
        return topk

    def _multijoin(self, node: X.MultiJoin) -> Operator:
        ops: list[Operator] = []
        caches: list[StaticCache] = []
        for joined in node.joined:
            if isinstance(joined, X.StaticInput):
                cache = StaticCache(self._static_evaluator(joined.plan), lambda: self.static.version)
                self.sources.append(cache)  # started with the query's other static sources
                caches.append(cache)
                ops.append(cache)
            else:
                ops.append(self.make(joined))
        schemas = [op.schema for op in ops]
        layout = {v: i for i, v in enumerate(node.schema)}
        filters = [(frozenset(expr_vars(c) or ()), filter_step(compile_expr(c, layout, self.dictionary)))
                   for c in node.filters]
        join = MultiJoinOp(schemas, [set(c) for c in node.certain], filters, POLICIES[node.routing]())
        join.caches = caches
        self._add(join)
        for j, op in enumerate(ops):
            op.connect(join.input(j))
        return join

    def _static_evaluator(self, leaf: P.PlanNode) -> Callable[[], tuple[tuple[str, ...], Counter]]:
        """Plan and evaluate a static sub-plan with operators of its own (again at each
        change of the static data: its named graphs, say, may have changed)."""
        if self.plan_static is None:
            raise TypeError("a multi-way join with a static input needs plan_static")
        plan_static = self.plan_static

        def evaluate() -> tuple[tuple[str, ...], Counter]:
            private = _Instantiation(self.dictionary, self.static, None, plan_static)
            op = private.make(plan_static(leaf))
            rows: Counter = Counter()

            def collect(deltas: list[Delta]) -> None:
                for row, mult in deltas:
                    rows[row] += mult

            op.connect(collect)
            for source in private.sources:
                source.start()
            for stateful in private.operators:
                stateful.flush()
            return op.schema, +rows

        return evaluate

    def _share_windows(self) -> None:
        """Put every window's chain into the shared pipelines; windows of this query with
        the same stream, window and triple patterns become one buffer (and one expiry)
        feeding all their consumers."""
        kept: dict[tuple, WindowScan] = {}
        for window in list(self.windows):
            if not isinstance(window, WindowScan):
                continue  # a window aggregate matches and derives on its own
            compile_steps = self.compile_steps if id(window) in self._specialised_windows else None
            leaf = window.share(self.pipelines, compile_steps)
            if leaf is None:
                continue
            root = leaf
            while root.parent is not None:
                root = root.parent
            first = kept.setdefault((window.stream, window.spec, id(root)), window)
            if first is not window:
                first.absorb(window)
                self.windows.remove(window)

