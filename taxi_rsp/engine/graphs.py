"""``GRAPH ?g { P }`` per named graph (see :class:`taxi_rsp.algebra.plan.GraphEach`).

The named graphs are those of the static store when the plan is built (registration);
graphs added later are not seen by the query.
"""

from __future__ import annotations

import dataclasses

from taxi_rsp.algebra import plan as P
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import Term


def with_graph(node: object, graph: Term) -> object:
    """``node`` with every EACH_GRAPH graph replaced by ``graph``."""
    if isinstance(node, (P.StaticBGP, P.PathScan)) and node.graph == P.EACH_GRAPH:
        return dataclasses.replace(node, graph=graph)
    if isinstance(node, tuple):
        return tuple(with_graph(item, graph) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and not isinstance(node, P.GraphEach):
        changes = {f.name: with_graph(getattr(node, f.name), graph) for f in dataclasses.fields(node)
                   if f.name in ("child", "left", "right", "inputs")}
        return dataclasses.replace(node, **changes) if changes else node
    return node


def per_graph_plan(node: P.GraphEach, static: StaticStore, dictionary: Dictionary) -> P.PlanNode:
    """The union over named graphs g of Join(P[g], VALUES ?var { g })."""
    branches = []
    for graph_id in static.named_graphs():
        graph = dictionary.decode(graph_id)
        branch = with_graph(node.child, graph)
        branches.append(P.Join(branch, P.Values((node.var,), ((graph,),))))  # type: ignore[arg-type]
    if not branches:
        return P.Values(node.variables, ())
    return branches[0] if len(branches) == 1 else P.Union(tuple(branches))
