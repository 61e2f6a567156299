"""Hash indexes over one static graph's id triples, for BGP lookups and join-order
estimates (:mod:`.static`) and property paths (:mod:`.paths`).

>>> index = GraphIndex([(1, 10, 2), (2, 10, 3), (1, 11, 3)])
>>> sorted(index.lookup(1, None, None)), index.estimate(True, 10, False)
([(1, 10, 2), (1, 11, 3)], 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable

Triple = tuple[int, int, int]


class GraphIndex:
    """Hash indexes over one graph's id triples."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.by_p: dict[int, list[tuple[int, int]]] = {}
        self.sp: dict[int, dict[int, list[int]]] = {}  # p -> s -> [o]
        self.op: dict[int, dict[int, list[int]]] = {}  # p -> o -> [s]
        self.s: dict[int, list[tuple[int, int]]] = {}  # s -> [(p, o)]
        self.o: dict[int, list[tuple[int, int]]] = {}  # o -> [(s, p)]
        self.all: list[Triple] = []
        for s, p, o in triples:
            self.all.append((s, p, o))
            self.by_p.setdefault(p, []).append((s, o))
            self.sp.setdefault(p, {}).setdefault(s, []).append(o)
            self.op.setdefault(p, {}).setdefault(o, []).append(s)
            self.s.setdefault(s, []).append((p, o))
            self.o.setdefault(o, []).append((s, p))

    def estimate(self, s_bound: bool, p: int | None, o_bound: bool) -> float:
        """Expected matches of a pattern given which positions are bound (``p`` is the
        predicate id when it is a constant or already bound to a known constant)."""
        if p is not None:
            pairs = len(self.by_p.get(p, ()))
            if not pairs:
                return 0.0
            if s_bound and o_bound:
                return 1.0
            if s_bound:
                return pairs / max(len(self.sp[p]), 1)
            if o_bound:
                return pairs / max(len(self.op[p]), 1)
            return float(pairs)
        total = len(self.all)
        if s_bound:
            return total / max(len(self.s), 1)
        if o_bound:
            return total / max(len(self.o), 1)
        return float(total) * 2  # a full scan: last resort

    def lookup(self, s: int | None, p: int | None, o: int | None) -> Iterable[Triple]:
        """Triples matching the bound positions (None: free)."""
        if p is not None:
            if s is not None:
                objects = self.sp.get(p, {}).get(s, ())
                return ((s, p, x) for x in objects if o is None or x == o)
            if o is not None:
                return ((x, p, o) for x in self.op.get(p, {}).get(o, ()))
            return ((x, p, y) for x, y in self.by_p.get(p, ()))
        if s is not None:
            return ((s, x, y) for x, y in self.s.get(s, ()) if o is None or y == o)
        if o is not None:
            return ((x, y, o) for x, y in self.o.get(o, ()))
        return iter(self.all)
