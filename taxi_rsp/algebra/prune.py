"""Column pruning: windows keep only the variables something above them reads.

A window holds every row it derived for as long as the event stays in it (30 minutes of
Q2's trips), and a join or NOT EXISTS above it holds the same rows again in its
indexes. Rows carrying variables nobody reads (the coordinates a cell was computed
from, the trip's IRI) keep their values alive and their tuples wide for that whole time.
This pass walks the plan top-down with the set of variables each node's parent needs
and

* puts a ``Project`` on each input of a binary operator (join, OPTIONAL, MINUS / NOT
  EXISTS / EXISTS: they index their inputs' rows) when that input is a chain of FILTER /
  BIND steps over a window and binds variables no one reads: the planner fuses the
  projection into the window, so the rows are narrowed before they are kept (when that
  pays, see :func:`_narrow`);
* drops a BIND whose variable no one reads (it cannot remove a row, SPARQL 1.1 §18.6
  Extend: an error leaves the variable unbound), unless it draws (``RAND()``).

What each operator needs from its inputs (``required`` below): its own expressions'
variables, and for the binary operators every variable the two sides share, since
compatibility is decided on all of them (MINUS: whether any is shared at all). Nothing
is pruned below DISTINCT (its input's every variable makes a row distinct), below
``COUNT(DISTINCT *)``, below ``GRAPH ?g`` or under an expression holding EXISTS (its
variables are not known here). Results are unchanged: rows keep their multiplicities,
only unread columns go.

>>> from taxi_rsp.lang.ast import TriplePattern, Var, WindowSpec
>>> scan = P.Scan("http://s", WindowSpec("RANGE", range_ms=60000),
...               (TriplePattern(Var("t"), Var("p"), Var("o")),))
>>> joined = P.Join(scan, P.Values(("o",), ()))
>>> print(P.explain(prune(P.Project(joined, ("o",)))))
Project ?o
  Join
    Project ?o
      Scan <http://s> [RANGE 60000ms] {?t ?p ?o}
    Values ?o (0 rows)
"""

from __future__ import annotations

from dataclasses import replace

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.analysis import expr_vars
from taxi_rsp.lang import ast


def prune(root: P.PlanNode) -> P.PlanNode:
    """``root`` with unread columns pruned below it (its own variables all kept)."""
    if isinstance(root, P.Construct):
        used = set().union(*(_triple_vars(t) for t in root.template))
        return replace(root, child=_prune(root.child, used))
    return _prune(root, set(root.variables))


def _prune(node: P.PlanNode, required: set[str]) -> P.PlanNode:
    """``node`` rewritten for a parent that reads ``required`` of its variables."""
    match node:
        case P.Project():
            return replace(node, child=_prune(node.child, set(node.vars)))
        case P.Filter():
            return replace(node, child=_prune(node.child, _plus(required, node.expr, node.child)))
        case P.Extend():
            if node.var not in required and not ast.is_volatile(node.expr):
                return _prune(node.child, required)
            return replace(node, child=_prune(node.child, _plus(required - {node.var}, node.expr, node.child)))
        case P.TopK():
            needed = set(required)
            for expr, _ in node.order:
                needed = _plus(needed, expr, node.child)
            return replace(node, child=_prune(node.child, needed))
        case P.Group():
            return replace(node, child=_prune(node.child, _group_reads(node)))
        case P.Join() | P.LeftJoin() | P.AntiJoin() | P.SemiJoin():
            return _binary(node, required)
        case P.Union():
            return replace(node, inputs=tuple(_prune(n, required & set(n.variables)) for n in node.inputs))
        case P.Distinct():
            return replace(node, child=_prune(node.child, set(node.child.variables)))
    return node  # leaves, and GRAPH ?g blocks (evaluated per graph: left whole)


def _binary(node: P.Join | P.LeftJoin | P.AntiJoin | P.SemiJoin, required: set[str]) -> P.PlanNode:
    left_vars, right_vars = set(node.left.variables), set(node.right.variables)
    shared = left_vars & right_vars
    condition = getattr(node, "condition", None)
    read = expr_vars(condition) if condition is not None else set()
    if read is None:  # EXISTS inside the condition: keep everything
        read = left_vars | right_vars
    left_needs = (required & left_vars) | shared | (read & left_vars)
    # AntiJoin / SemiJoin output the left rows: nothing above reads the right side.
    above_right = required if isinstance(node, (P.Join, P.LeftJoin)) else set()
    right_needs = (above_right & right_vars) | shared | (read & right_vars)
    left = _narrow(_prune(node.left, left_needs), left_needs)
    right = _narrow(_prune(node.right, right_needs), right_needs)
    return replace(node, left=left, right=right)


def _narrow(node: P.PlanNode, needed: set[str]) -> P.PlanNode:
    """``node`` projected on ``needed`` when it is a window chain binding more, and the
    narrowing pays: a chain that computes (BIND) builds a new row per event anyway, so
    a narrower one costs nothing; a bare window holds the row its match built, which a
    twin window of the same patterns holds too (see ``taxi_rsp.planner.instantiate``),
    so a narrower copy costs a row per event and pays only when it drops at least half
    of the columns (measured: docs/performance.md, stop 33)."""
    kept = tuple(v for v in node.variables if v in needed)
    steps = _window_steps(node)
    if len(kept) == len(node.variables) or steps is None:
        return node
    if not any(isinstance(step, P.Extend) for step in steps) and 2 * len(kept) > len(node.variables):
        return node
    return P.Project(node, kept)


def _window_steps(node: P.PlanNode) -> list[P.PlanNode] | None:
    """The FILTER / BIND / projection steps over a window (the planner fuses a projection
    on top into the window: no operator of its own), or None for anything else."""
    steps = []
    while isinstance(node, (P.Filter, P.Extend, P.Project)):
        steps.append(node)
        node = node.child
    return steps if isinstance(node, P.Scan) else None


def _plus(required: set[str], expr: object, child: P.PlanNode) -> set[str]:
    """``required`` and the variables ``expr`` reads (all of ``child``'s when unknown)."""
    read = expr_vars(expr)
    return required | (set(child.variables) if read is None else read)


def _group_reads(node: P.Group) -> set[str]:
    reads = set(node.keys)
    for _, aggregate in node.aggregates:
        if aggregate.arg is None:
            if aggregate.distinct:  # COUNT(DISTINCT *): whole rows are compared
                return set(node.child.variables)
            continue
        reads = _plus(reads, aggregate.arg, node.child)
    return reads


def _triple_vars(triple: ast.TriplePattern) -> set[str]:
    return {n.name for n in (triple.s, triple.p, triple.o) if isinstance(n, ast.Var)}
