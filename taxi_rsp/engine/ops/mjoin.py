"""Multi-way symmetric join with adaptive routing (CQELS ISWC 2011 §3.3, §4.4; MJoin).

A join of three or more inputs (stream windows and static sub-patterns) is one
operator instead of a tree of binary joins. Each input keeps its rows in
:class:`~taxi_rsp.engine.index.ring.RingIndex` es keyed by the variables it is probed
on. A delta (insert or retraction) arriving at one input probes the others in the
order of its current :class:`~taxi_rsp.engine.routing.Route`: filters run as soon as
their variables are bound, and the order is re-chosen at run time by the
:class:`~taxi_rsp.engine.routing.Router` from online statistics. Indexes for a new
probe key are built when a route first needs them and dropped when no route does.

The result is the same bag as the binary-join tree, whatever the order: a delta's
multiplicity is the product of the matched rows' multiplicities, retractions flow
like inserts, and the output columns are laid out as the tree would lay them out.

Static inputs are :class:`StaticCache` s: the sub-plan's result is materialised once
and re-evaluated when the static store's version changes, the difference flowing
into the join as ordinary deltas (at the next evaluation instant).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import itemgetter

from taxi_rsp.engine.index.ring import RingIndex
from taxi_rsp.engine.ops.base import Delta, Operator, Row, compatible_merger
from taxi_rsp.engine.ops.stateless import Step
from taxi_rsp.engine.routing import JoinInput, Route, Router, RoutingPolicy


def key_getter(positions: tuple[int, ...]) -> Callable[[Row | list], tuple]:
    """A fast ``lambda row: tuple(row[p] for p in positions)``."""
    if not positions:
        return lambda row: ()
    if len(positions) == 1:
        (p,) = positions
        return lambda row: (row[p],)
    return itemgetter(*positions)


def merged_schema(schemas: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Output columns as a left-deep tree of binary joins lays them out."""
    schema = schemas[0]
    for other in schemas[1:]:
        schema, _ = compatible_merger(schema, other)
    return schema


class _Step:
    """One probe of a compiled route: which index, how to build its key from the
    partial mapping, which columns to check/fill, which filters follow. ``exact``:
    neither side can hold an unbound key value, so the key lookup alone decides
    compatibility (no wildcard rows, no re-check)."""

    __slots__ = ("check", "exact", "fill", "filters", "index", "key", "last")

    def __init__(self, index: RingIndex, key_pos: tuple[int, ...], check: tuple[tuple[int, int], ...],
                 fill: tuple[tuple[int, int], ...], filters: tuple[tuple[int, Step], ...],
                 exact: bool, last: bool) -> None:
        self.index = index
        self.key = key_getter(key_pos)
        self.check = check
        self.fill = fill
        self.filters = filters
        self.exact = exact
        self.last = last


class MultiJoinOp(Operator):
    """The join of ``schemas`` (one input port each, see :meth:`input`), routed by a
    :class:`~taxi_rsp.engine.routing.Router` with ``policy``."""

    def __init__(self, schemas: list[tuple[str, ...]], certain: list[frozenset[str]],
                 filters: list[tuple[frozenset[str], Step]], policy: RoutingPolicy,
                 interval: int = 256, drift: float = 2.0, hysteresis: float = 1.25) -> None:
        """``filters``: (variables read, row step over the output schema) pairs."""
        super().__init__(merged_schema(schemas))
        self.schemas = schemas
        self._width = len(self.schema)
        self._layout = [tuple(self.position[v] for v in s) for s in schemas]
        counts = Counter(v for s in schemas for v in set(s))
        join_vars = [{v: i for i, v in enumerate(s) if counts[v] > 1} for s in schemas]
        inputs = [JoinInput(frozenset(s), c) for s, c in zip(schemas, certain)]
        self._filters = [step for _, step in filters]
        self._certain = certain
        self.router = Router(inputs, [used for used, _ in filters], policy, join_vars,
                             interval, drift, hysteresis)
        self._stats = self.router.stats
        self._filter_stats = self.router.filter_stats
        # input -> probe key (variables) -> (index, key of one of the input's rows)
        self._indexes: list[dict[tuple[str, ...], tuple[RingIndex, Callable]]] = [{} for _ in schemas]
        self._compiled: list[list[_Step]] = [[] for _ in schemas]
        self._first_filters: list[tuple[tuple[int, Step], ...]] = [() for _ in schemas]
        self.caches: list[StaticCache] = []
        for route in self.router.routes:
            self._install(route)
        self._drop_unused()

    # -- wiring ----------------------------------------------------------------------
    def input(self, j: int) -> Callable[[list[Delta]], None]:
        def push(deltas: list[Delta]) -> None:
            self._push(j, deltas)
        return push

    def _index(self, j: int, key: tuple[str, ...]) -> RingIndex:
        found = self._indexes[j].get(key)
        if found is not None:
            return found[0]
        row_key = key_getter(tuple(self.schemas[j].index(v) for v in key))
        index = RingIndex()
        existing = next(iter(self._indexes[j].values()), None)
        if existing is not None:  # seed from any index of the input: they hold the same rows
            for row, mult in existing[0].all_rows():
                index.add(row_key(row), row, mult)
        self._indexes[j][key] = (index, row_key)
        return index

    def _install(self, route: Route) -> None:
        """Compile ``route`` into probe steps (creating the indexes it needs)."""
        position = self.position
        bound: set[str] = set(self.schemas[route.source])
        certain: set[str] = set(self._certain[route.source])
        steps = []
        for k, (j, key) in enumerate(zip(route.steps, route.keys)):
            schema = self.schemas[j]
            check = tuple((position[v], schema.index(v)) for v in key)
            fill = tuple((position[v], i) for i, v in enumerate(schema) if v not in bound)
            filters = tuple((f, self._filters[f]) for f in route.filters[k + 1])
            exact = set(key) <= certain & self._certain[j]
            steps.append(_Step(self._index(j, key), tuple(position[v] for v in key), check, fill, filters,
                               exact, k + 1 == len(route.steps)))
            bound |= set(schema)
            certain |= self._certain[j]
        self._compiled[route.source] = steps
        self._first_filters[route.source] = tuple((f, self._filters[f]) for f in route.filters[0])

    def _drop_unused(self) -> None:
        """Keep only the indexes some route probes (at least one per input: the rows)."""
        used = {(j, key) for r in self.router.routes for j, key in zip(r.steps, r.keys)}
        for j, indexes in enumerate(self._indexes):
            for key in [k for k in indexes if (j, k) not in used]:
                if len(indexes) > 1:
                    del indexes[key]

    # -- deltas ----------------------------------------------------------------------
    def _push(self, j: int, deltas: list[Delta]) -> None:
        """Probe the other inputs along j's route, emit, then index the rows."""
        out: list[Delta] = []
        layout = self._layout[j]
        steps = self._compiled[j]
        first = self._first_filters[j]
        width = self._width
        indexes = tuple(self._indexes[j].values())
        stats = self._stats[j]
        for row, mult in deltas:
            partial = [None] * width
            for c, value in zip(layout, row):
                partial[c] = value
            if not first or self._passes(first, partial):
                self._extend(partial, mult, steps, 0, out)
            for index, row_key in indexes:
                index.add(row_key(row), row, mult)
            stats.update(row, mult)
        self.emit(out)
        if self.router.arrived(len(deltas)):
            for route in self.router.routes:
                self._install(route)
            self._drop_unused()

    def _passes(self, filters: tuple[tuple[int, Step], ...], partial: list) -> bool:
        row = tuple(partial)
        fstats = self._filter_stats
        for f, step in filters:
            ok = step(row) is not None
            fstats[f].record(ok)
            if not ok:
                return False
        return True

    def _extend(self, partial: list, mult: int, steps: list[_Step], k: int, out: list[Delta]) -> None:
        if k == len(steps):  # no other input (not reached by routes of >= 3 inputs)
            out.append((tuple(partial), mult))
            return
        step = steps[k]
        key = step.key(partial)
        fill, filters, last = step.fill, step.filters, step.last
        if step.exact:
            candidates = step.index.probe(key)
            check: tuple[tuple[int, int], ...] = ()
        else:
            # Rows with unbound join values (OPTIONAL below) are compatible with anything:
            # a key with None scans the input, stored keys with None are wildcards.
            candidates = step.index.all_rows() if None in key else step.index.probe_with_wildcards(key)
            check = step.check
        for row, count in candidates:
            merged = partial.copy()
            for c, i in check:
                a, b = merged[c], row[i]
                if a is None:
                    merged[c] = b
                elif b is not None and a != b:
                    break
            else:
                for c, i in fill:
                    merged[c] = row[i]
                if filters and not self._passes(filters, merged):
                    continue
                if last:
                    out.append((tuple(merged), mult * count))
                else:
                    self._extend(merged, mult * count, steps, k + 1, out)

    # -- static inputs ---------------------------------------------------------------
    def flush(self) -> None:
        """Bring static caches up to date (their deltas flow in as ordinary input)."""
        for cache in self.caches:
            cache.refresh()

    # -- introspection ---------------------------------------------------------------
    def state_size(self) -> int:
        return sum(len(next(iter(ix.values()))[0]) for ix in self._indexes if ix)

    def routing(self) -> list[str]:
        """The current route per input, one line each (for --explain)."""
        lines = []
        for route in self.router.routes:
            hops = ", then ".join(
                f"#{j}" + (f" on {' '.join('?' + v for v in key)}" if key else " (cross product)")
                for j, key in zip(route.steps, route.keys))
            lines.append(f"from #{route.source}: {hops} (est. {self.router.cost(route):.3g} per mapping)")
        return lines

    def describe(self) -> str:
        switches = sum(1 for d in self.router.decisions if d.reason != "start")
        inputs = "; ".join(f"#{j} {{{' '.join('?' + v for v in s)}}}" for j, s in enumerate(self.schemas))
        head = (f"MultiJoin of {len(self.schemas)} inputs, {self.router.policy.name} routing, "
                f"{switches} switch(es): {inputs}")
        return "\n".join([head, *("      " + line for line in self.routing()), "    output"])


class StaticCache(Operator):
    """The materialised result of a static sub-plan, re-evaluated when the static
    store's ``version`` changes (ISWC 2011 §4.3 cache, updated by a trigger)."""

    def __init__(self, evaluate: Callable[[], tuple[tuple[str, ...], Counter]],
                 version: Callable[[], int]) -> None:
        self._evaluate = evaluate
        self._version = version
        self._seen = version()
        schema, self.rows = evaluate()
        super().__init__(schema)

    def start(self) -> None:
        self.emit(list(self.rows.items()))

    def refresh(self) -> bool:
        """Emit the difference to the current static data; True if it changed."""
        if self._version() == self._seen:
            return False
        self._seen = self._version()
        _, rows = self._evaluate()
        diff = Counter(rows)
        diff.subtract(self.rows)
        self.rows = rows
        self.emit([(row, n) for row, n in diff.items() if n])
        return True

    def state_size(self) -> int:
        return sum(self.rows.values())

    def describe(self) -> str:
        return f"StaticCache ({sum(self.rows.values())} rows)"


__all__ = ["MultiJoinOp", "StaticCache", "key_getter", "merged_schema"]
