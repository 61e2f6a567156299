"""A query's physical plan: the operators the planner built and wired, as the engine
drives them (windows first, operators in flush order, static sources started once).

The planner (:mod:`taxi_rsp.planner`) builds it; :class:`~taxi_rsp.engine.engine.Engine`
registers it. Nothing here knows how it was chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from taxi_rsp.algebra.plan import LogicalPlan
from taxi_rsp.engine.ops.base import Operator
from taxi_rsp.engine.ops.source import StaticSource
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.engine.policies import ReportPolicy, report_policy_for
from taxi_rsp.lang.ast import Query


@dataclass
class PhysicalPlan:
    """The operators of one query, wired: ``root`` emits its result (deltas, or an
    ordered snapshot through ``ordered_root``), ``projection`` picks the output columns
    from the root's schema, ``report_policy`` makes its R2S policy."""

    root: Operator
    windows: list[WindowScan] = field(default_factory=list)
    operators: list[Operator] = field(default_factory=list)
    sources: list[StaticSource] = field(default_factory=list)
    ordered_root: Operator | None = None  # a top-k: its snapshot is the ordered result
    projection: tuple[int | None, ...] = ()
    report_policy: Callable[[], ReportPolicy] = report_policy_for("SELECT", False)  # chosen by form and plan
    tree: object = None  # the physical plan it was made from (printable: --explain)


@dataclass(frozen=True)
class QueryPlan:
    """What the planner hands the engine for one query: its text's syntax tree, its
    logical plan and its physical plan. ``plan_key`` identifies the plan for sharing:
    a query whose key equals an earlier query's was given that query's physical plan,
    and is reported from it (None: never shared, e.g. it draws RAND())."""

    name: str
    ast: Query
    logical: LogicalPlan
    physical: PhysicalPlan
    plan_key: tuple | None = None
    source: str = "<query>"
