"""The planner: from query text to the physical operators of a query — which operator
implements each node (compiled or reference, multi-way join, TMA or sorted top-k), and
how they are wired. It builds on the engine's runtime; the engine never imports it.

* :mod:`taxi_rsp.planner.compile` — :func:`compile_query` (text -> QueryPlan) and
  :func:`register` (compile, then register on the engine);
* :mod:`taxi_rsp.planner.builder` — :class:`PlanBuilder`, one method per plan node;
* :mod:`taxi_rsp.planner.multijoin` — joins of three or more inputs;
* :mod:`taxi_rsp.planner.monotone` — monotone scores for the TMA top-k;
* :mod:`taxi_rsp.planner.oneshot` — a query over static data evaluated once.

Plan analyses shared with the optimizer live in :mod:`taxi_rsp.algebra.analysis`.
"""

from taxi_rsp.planner.compile import compile_query, register

__all__ = ["compile_query", "register"]
