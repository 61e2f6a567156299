"""Multi-way join planning: which joins become one adaptively routed
:class:`~taxi_rsp.engine.ops.mjoin.MultiJoinOp` (CQELS's routing of a join of three or
more inputs with a stream among them), and how its static inputs are evaluated.

The operator lives in :mod:`taxi_rsp.engine.ops.mjoin`; this module only decides and
wires (:func:`build_multijoin` is the builder's hook).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import certain_vars, conjuncts, expr_vars, has_scan
from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.ops.base import Delta, Operator
from taxi_rsp.engine.ops.mjoin import MultiJoinOp, StaticCache, merged_schema
from taxi_rsp.engine.ops.stateless import filter_step
from taxi_rsp.engine.routing import POLICIES


def flatten(node: P.PlanNode) -> tuple[list[P.PlanNode], list] | None:
    """Leaves and filter conjuncts of a tree of joins (with filters on top and in
    between); None unless it has ≥ 3 leaves of which at least one reads a stream.

    A filter inside the tree is taken over only when every variable it reads is
    certainly bound below it: evaluated later it would see the same values."""
    filters: list = []
    while isinstance(node, P.Filter):
        filters.extend(conjuncts(node.expr))
        node = node.child
    if not isinstance(node, P.Join) or any(expr_vars(f) is None for f in filters):
        return None
    leaves: list[P.PlanNode] = []

    def walk(n: P.PlanNode) -> None:
        if isinstance(n, P.Join):
            walk(n.left)
            walk(n.right)
            return
        if isinstance(n, P.Filter) and isinstance(n.child, P.Join):
            parts = conjuncts(n.expr)
            used = [expr_vars(p) for p in parts]
            if all(u is not None and u <= certain_vars(n.child) for u in used):
                filters.extend(parts)
                walk(n.child)
                return
        leaves.append(n)

    walk(node)
    if len(leaves) < 3 or not any(has_scan(leaf) for leaf in leaves):
        return None
    return leaves, filters


def build_multijoin(builder, node: P.PlanNode, mode: str = "adaptive") -> Operator | None:
    """The planner hook: a :class:`MultiJoinOp` for ``node`` when :func:`flatten`
    accepts it, else None (the builder then makes binary joins). ``builder`` is a
    :class:`~taxi_rsp.planner.builder.PlanBuilder`; ``mode`` is the engine's join routing
    (:class:`~taxi_rsp.engine.config.EngineConfig`: adaptive, fixed or binary)."""
    if mode == "binary":
        return None
    if mode not in POLICIES:
        raise ValueError(f"join routing must be one of adaptive, fixed, binary (not {mode!r})")
    flat = flatten(node)
    if flat is None:
        return None
    leaves, conjuncts = flat
    ops: list[Operator] = []
    caches: list[StaticCache] = []
    for leaf in leaves:
        if has_scan(leaf):
            ops.append(builder.build(leaf))
        else:
            cache = StaticCache(_static_evaluator(builder, leaf), lambda: builder.static.version)
            builder.sources.append(cache)  # started with the query's other static sources
            caches.append(cache)
            ops.append(cache)
    schemas = [op.schema for op in ops]
    layout = {v: i for i, v in enumerate(merged_schema(schemas))}
    filters = [(frozenset(expr_vars(c) or ()), filter_step(compile_expr(c, layout, builder.dictionary)))
               for c in conjuncts]
    join = MultiJoinOp(schemas, [certain_vars(leaf) for leaf in leaves], filters, POLICIES[mode]())
    join.caches = caches
    builder.add(join)
    for j, op in enumerate(ops):
        builder.connect(op, join.input(j))
    return join


def _static_evaluator(builder, leaf: P.PlanNode) -> Callable[[], tuple[tuple[str, ...], Counter]]:
    """Evaluate a static sub-plan with a private builder of the same kind."""

    def evaluate() -> tuple[tuple[str, ...], Counter]:
        private = type(builder)(builder.dictionary, builder.static, builder.top_k)
        op = private.build(leaf)
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


__all__ = ["build_multijoin", "flatten"]
