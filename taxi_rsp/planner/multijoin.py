"""Multi-way join planning: which joins become one adaptively routed
:class:`~taxi_rsp.engine.ops.mjoin.MultiJoinOp` (CQELS's routing of a join of three or
more inputs with a stream among them), and how its static inputs are evaluated.

The operator lives in :mod:`taxi_rsp.engine.ops.mjoin`; this module only decides
(:func:`plan_multijoin` is the builder's rule; the instantiation wires it).
"""

from __future__ import annotations

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import certain_vars, conjuncts, expr_vars, has_scan
from taxi_rsp.engine.ops.mjoin import merged_schema
from taxi_rsp.engine.routing import POLICIES
from taxi_rsp.planner import physical as X


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


def plan_multijoin(builder, node: P.PlanNode, mode: str = "adaptive") -> X.MultiJoin | None:
    """The planner's rule: a :class:`~taxi_rsp.planner.physical.MultiJoin` for ``node``
    when :func:`flatten` accepts it, else None (the builder then plans binary joins).
    ``builder`` is a :class:`~taxi_rsp.planner.builder.PlanBuilder`; ``mode`` is the
    engine's join routing (:class:`~taxi_rsp.engine.config.EngineConfig`: adaptive,
    fixed or binary). A static leaf is planned once here for its schema, and planned and
    evaluated again whenever the static data changes (see the instantiation)."""
    if mode == "binary":
        return None
    if mode not in POLICIES:
        raise ValueError(f"join routing must be one of adaptive, fixed, binary (not {mode!r})")
    flat = flatten(node)
    if flat is None:
        return None
    leaves, conjuncts = flat
    joined = tuple(builder.build(leaf) if has_scan(leaf) else X.StaticInput(builder.build(leaf).schema, leaf)
                   for leaf in leaves)
    return X.MultiJoin(merged_schema([n.schema for n in joined]), joined,
                       tuple(frozenset(certain_vars(leaf)) for leaf in leaves), tuple(conjuncts), mode)


__all__ = ["flatten", "plan_multijoin"]
