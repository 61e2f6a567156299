"""The planner: from an optimised logical plan (:mod:`taxi_rsp.algebra`) to the physical
operators of a query — which operator implements each node (compiled or reference,
multi-way join, TMA or sorted top-k), and how they are wired.

* :mod:`taxi_rsp.planner.builder` — :class:`PlanBuilder`, one method per plan node;
* :mod:`taxi_rsp.planner.multijoin` — joins of three or more inputs;
* :mod:`taxi_rsp.planner.monotone` — monotone scores for the TMA top-k.

Plan analyses shared with the optimizer live in :mod:`taxi_rsp.algebra.analysis`.
"""
