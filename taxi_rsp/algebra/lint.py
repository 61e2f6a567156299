"""Warnings about plans that are valid but rarely what was meant.

* A **cross product**: a join whose inputs fall into groups sharing no variable. Its
  result has (size of group 1) x (size of group 2) x ... rows at every instant, so three
  windows of a thousand events each already give 10^9 rows.
* A **stream that is never fed**: a STREAM IRI the run's input does not produce; its
  windows stay empty, and a query joining it returns nothing, silently.

>>> from taxi_rsp.algebra.translate import translate_query
>>> from taxi_rsp.lang.parser import parse_query
>>> plan = translate_query(parse_query(
...     "SELECT * WHERE { STREAM <http://s> [RANGE 1m] { ?a <http://p> ?b } "
...     "STREAM <http://s> [RANGE 1m] { ?c <http://p> ?d } }"))
>>> print(cross_products(plan.root)[0])
cross product: the join's inputs form 2 groups that share no variable ({?a ?b: Scan <http://s> [RANGE 60000ms]} x {?c ?d: Scan <http://s> [RANGE 60000ms]}); each instant it holds the product of their sizes
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from taxi_rsp.algebra import plan as P


def _children(node: P.PlanNode) -> list[P.PlanNode]:
    found = [getattr(node, name) for name in ("child", "left", "right") if hasattr(node, name)]
    return found + list(getattr(node, "inputs", ()))


def _join_leaves(node: P.PlanNode) -> list[P.PlanNode]:
    if isinstance(node, P.Join):
        return _join_leaves(node.left) + _join_leaves(node.right)
    if isinstance(node, P.Filter) and isinstance(node.child, P.Join):
        return _join_leaves(node.child)
    return [node]


def _groups(leaves: list[P.PlanNode]) -> list[list[P.PlanNode]]:
    """Leaves connected through shared variables (union-find over the leaves)."""
    groups: list[tuple[set[str], list[P.PlanNode]]] = []
    for leaf in leaves:
        names = set(leaf.variables)
        merged = [g for g in groups if g[0] & names or (not names and not g[0])]
        keep = [g for g in groups if g not in merged]
        variables = names.union(*(g[0] for g in merged))
        members = [m for g in merged for m in g[1]] + [leaf]
        groups = keep + [(variables, members)]
    return [members for _, members in groups]


def _describe(leaf: P.PlanNode) -> str:
    if isinstance(leaf, P.Scan):
        return P.explain(leaf).strip().split(" {")[0]
    scans = [n for n in _walk(leaf) if isinstance(n, P.Scan)]
    if scans:
        return ", ".join(_describe(s) for s in scans)
    return "static data"


def _walk(node: P.PlanNode) -> Iterable[P.PlanNode]:
    yield node
    for child in _children(node):
        yield from _walk(child)


StaticSize = Callable[[P.StaticBGP], int]


def cross_products(root: P.PlanNode, static_size: StaticSize | None = None) -> list[str]:
    """One warning per join (tree of joins) whose inputs do not all connect; with
    ``static_size`` (the rows of a static pattern), the size of each group that is one
    static pattern, and the product's estimate from them (see :func:`_estimate`)."""
    warnings: list[str] = []

    def size(group: list[P.PlanNode]) -> int | None:
        only = group[0] if len(group) == 1 else None
        return static_size(only) if static_size is not None and isinstance(only, P.StaticBGP) else None

    def visit(node: P.PlanNode) -> None:
        if isinstance(node, P.Join):
            leaves = _join_leaves(node)
            groups = [g for g in _groups(leaves) if not all(isinstance(m, P.Unit) for m in g)]
            if len(groups) > 1:
                parts, sizes = [], [size(group) for group in groups]
                for group, rows in zip(groups, sizes):
                    names = " ".join(f"?{v}" for v in dict.fromkeys(v for m in group for v in m.variables))
                    counted = f", {rows:,} rows" if rows is not None else ""
                    parts.append("{" + (names + ": " if names else "") + "; ".join(_describe(m) for m in group)
                                 + counted + "}")
                warnings.append(f"cross product: the join's inputs form {len(groups)} groups that share no "
                                f"variable ({' x '.join(parts)}); {_estimate(sizes)}")
            for leaf in leaves:
                visit(leaf)
            return
        for child in _children(node):
            visit(child)

    visit(root)
    return warnings


def _estimate(sizes: list[int | None]) -> str:
    """What the product holds, from the groups' sizes (None: a group over a window, whose
    size is only known as the stream runs).

    >>> _estimate([None, None])
    'each instant it holds the product of their sizes'
    >>> _estimate([2_000, 2_000])
    'it holds 4,000,000 rows'
    >>> _estimate([2_000, None])
    'each instant it holds 2,000 rows for each row of the window group'
    """
    known = [n for n in sizes if n is not None]
    if not known:
        return "each instant it holds the product of their sizes"
    product = 1
    for n in known:
        product *= n
    if len(known) == len(sizes):
        return f"it holds {product:,} rows"
    others = "the window group" if len(sizes) - len(known) == 1 else "the window groups' product"
    return f"each instant it holds {product:,} rows for each row of {others}"


def unfed_streams(read: dict[str, set[str]], fed: set[str]) -> list[str]:
    """Warnings for stream IRIs the queries read (query name -> IRIs) but the input never feeds.

    >>> unfed_streams({"q": {"http://debs2015.org/streams/trip"}}, {"http://debs2015.org/streams/trips"})
    ['q: reads STREAM <http://debs2015.org/streams/trip>, which this input never feeds (it feeds <http://debs2015.org/streams/trips>): its windows stay empty']
    """
    feeds = ", ".join(f"<{iri}>" for iri in sorted(fed))
    return [f"{name}: reads STREAM <{iri}>, which this input never feeds (it feeds {feeds}): its windows stay empty"
            for name, iris in read.items() for iri in sorted(iris - fed)]
