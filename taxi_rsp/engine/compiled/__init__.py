"""Compiled query plans: sub-plans turned into generated Python (produce/consume style).

The operators of :mod:`taxi_rsp.engine.ops` are the readable reference. The planner
replaces a sub-plan by its compiled form when :mod:`.aggregate` (window → fused steps →
GROUP BY) or :mod:`.topk` (ORDER BY … LIMIT over integer-ranked rows) supports it, and
keeps the reference operators everywhere else; ``--explain`` marks which is which.
"""
