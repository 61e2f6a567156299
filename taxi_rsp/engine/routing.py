"""Adaptive routing for multi-way joins (CQELS ISWC 2011 §3.3 and §4.4).

A mapping that arrives at one input of a multi-way join probes the other inputs one
after the other; the *route* is that order. This module keeps the online statistics
the order is chosen from and the policies that choose it:

* :class:`InputStats` - per input, the live cardinality and the number of distinct
  values of every join variable, maintained by a symmetric ``update`` for inserts and
  retractions (no recount on expiry);
* :class:`FilterStats` - per filter, how often it passed, with decay so a shift in the
  stream shows up;
* :class:`GreedyOrder` - the adaptive policy: filters run as soon as they are
  evaluable (fixed by the route, see :func:`plan_route`), and the next input is the
  one with the smallest expected intermediate result;
* :class:`FixedOrder` - the plan's order, for comparison;
* :class:`Router` - holds the current route per input and re-decides every
  ``interval`` arrivals or as soon as a cardinality drifts by ``drift`` × and by at
  least ``min_change`` rows (a one-row window emptying and refilling is no drift),
  switching only when the new route is estimated ``hysteresis`` × cheaper and by more
  than ``slack`` partial mappings (so near-equal estimates do not make it flap). Every
  change is recorded as a :class:`RoutingDecision`.

>>> inputs = [JoinInput(frozenset("ab"), frozenset("ab")), JoinInput(frozenset("bc"), frozenset("bc")),
...           JoinInput(frozenset("cd"), frozenset("cd"))]
>>> router = Router(inputs, [], GreedyOrder())
>>> router.routes[0].steps, router.routes[0].keys
((1, 2), (('b',), ('c',)))
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class JoinInput:
    """What routing knows about an input: its variables, and those always bound
    (never ``None`` from OPTIONAL/UNION/BIND errors), which filters may rely on."""

    variables: frozenset[str]
    certain: frozenset[str]


@dataclass(frozen=True)
class Route:
    """The probe order for mappings arriving at ``source``.

    ``keys[k]`` are the variables ``steps[k]`` is probed on (those already bound);
    ``filters[k]`` the filters applied after step k-1 (``filters[0]``: on the arriving
    mapping alone), ``filters[-1]`` those that need the complete mapping.
    """

    source: int
    steps: tuple[int, ...]
    keys: tuple[tuple[str, ...], ...]
    filters: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class RoutingDecision:
    """A route chosen (at start) or switched to after ``arrival`` input mappings."""

    arrival: int
    source: int
    steps: tuple[int, ...]
    cost: float
    previous_cost: float | None
    reason: str


class InputStats:
    """Live cardinality and per-join-variable distinct counts of one input."""

    __slots__ = ("_tracked", "card", "values")

    def __init__(self, positions: dict[str, int]) -> None:
        """``positions``: join variable -> column of the input's rows."""
        self.card = 0
        self._tracked = tuple((var, pos, Counter()) for var, pos in positions.items())
        self.values: dict[str, Counter] = {var: counter for var, _, counter in self._tracked}

    def update(self, row: tuple, mult: int) -> None:
        """Account for ``mult`` copies of ``row`` (negative: a retraction)."""
        self.card += mult
        for _, pos, counter in self._tracked:
            value = row[pos]
            left = counter.get(value, 0) + mult
            if left:
                counter[value] = left
            else:
                del counter[value]

    def fanout(self, key: Iterable[str]) -> float:
        """Expected rows matching one probe on ``key``: rows per distinct value of the
        most selective key variable (independence would be too optimistic for
        correlated keys); the whole input for a cross product."""
        if self.card <= 0:
            return 0.0
        distinct = max((len(self.values[v]) for v in key), default=1)
        return self.card / max(distinct, 1)


class FilterStats:
    """Pass rate of one filter, Laplace-smoothed, halved every ``horizon`` checks."""

    __slots__ = ("checked", "horizon", "passed")

    def __init__(self, horizon: int = 4096) -> None:
        self.checked = 0
        self.passed = 0
        self.horizon = horizon

    def record(self, passed: bool) -> None:
        self.checked += 1
        self.passed += passed
        if self.checked >= self.horizon:
            self.checked //= 2
            self.passed //= 2

    def selectivity(self) -> float:
        return (self.passed + 1) / (self.checked + 2)


def plan_route(source: int, steps: Sequence[int], inputs: Sequence[JoinInput],
               filters: Sequence[frozenset[str]]) -> Route:
    """Probe keys and filter placement for a given order: a filter runs right after
    the first step at which all its variables are certainly bound."""
    bound = set(inputs[source].variables)
    certain = set(inputs[source].certain)
    keys = []
    placed: list[list[int]] = [[] for _ in range(len(steps) + 1)]
    pending = list(range(len(filters)))

    def place(slot: int) -> None:
        for f in list(pending):
            if filters[f] <= certain:
                placed[slot].append(f)
                pending.remove(f)

    place(0)
    for k, step in enumerate(steps):
        keys.append(tuple(sorted(inputs[step].variables & bound)))
        bound |= inputs[step].variables
        certain |= inputs[step].certain
        place(k + 1)
    placed[-1].extend(pending)  # the rest read possibly unbound values: complete mapping only
    return Route(source, tuple(steps), tuple(keys), tuple(tuple(p) for p in placed))


def route_cost(route: Route, stats: Sequence[InputStats], filter_stats: Sequence[FilterStats]) -> float:
    """Expected number of partial mappings built for one arriving mapping: the sum of
    the intermediate result sizes along the route."""
    size = math.prod(filter_stats[f].selectivity() for f in route.filters[0])
    total = 0.0
    for k, (step, key) in enumerate(zip(route.steps, route.keys)):
        size *= stats[step].fanout(key)
        size *= math.prod(filter_stats[f].selectivity() for f in route.filters[k + 1])
        total += size
    return total


class RoutingPolicy(Protocol):
    name: str

    def order(self, source: int, inputs: Sequence[JoinInput], filters: Sequence[frozenset[str]],
              stats: Sequence[InputStats], filter_stats: Sequence[FilterStats]) -> tuple[int, ...]:
        """The inputs other than ``source`` in the order to probe them."""
        ...


class FixedOrder:
    """The plan's order: the other inputs by position (a left-deep tree's order)."""

    name = "fixed"

    def order(self, source, inputs, filters, stats, filter_stats) -> tuple[int, ...]:
        return tuple(j for j in range(len(inputs)) if j != source)


class GreedyOrder:
    """Smallest expected intermediate result first (ISWC 2011 Alg. 2 with selectivity).

    At each step the candidate's expected size is the current size × its fan-out on
    the variables bound so far × the pass rate of the filters it makes evaluable; ties
    prefer an input sharing a variable (not a cross product), then plan order.
    """

    name = "adaptive"

    def order(self, source, inputs, filters, stats, filter_stats) -> tuple[int, ...]:
        remaining = [j for j in range(len(inputs)) if j != source]
        bound = set(inputs[source].variables)
        certain = set(inputs[source].certain)
        done = {f for f, used in enumerate(filters) if used <= certain}
        chosen: list[int] = []
        while remaining:
            best = min(remaining, key=lambda j: self._expected(j, bound, certain, done, inputs, filters,
                                                                stats, filter_stats))
            remaining.remove(best)
            chosen.append(best)
            bound |= inputs[best].variables
            certain |= inputs[best].certain
            done |= {f for f, used in enumerate(filters) if used <= certain}
        return tuple(chosen)

    @staticmethod
    def _expected(j, bound, certain, done, inputs, filters, stats, filter_stats) -> tuple[float, bool, int]:
        key = inputs[j].variables & bound
        size = stats[j].fanout(key)
        now = certain | inputs[j].certain
        for f, used in enumerate(filters):
            if f not in done and used <= now:
                size *= filter_stats[f].selectivity()
        return size, not key, j


POLICIES: dict[str, type] = {"adaptive": GreedyOrder, "fixed": FixedOrder}


class Router:
    """Current routes of one multi-way join and when to re-decide them."""

    def __init__(self, inputs: Sequence[JoinInput], filters: Sequence[frozenset[str]], policy: RoutingPolicy,
                 join_positions: Sequence[dict[str, int]] | None = None, interval: int = 256,
                 drift: float = 2.0, hysteresis: float = 1.25, slack: float = 1.0,
                 min_change: int = 8, log_size: int = 1000) -> None:
        self.inputs = tuple(inputs)
        self.filters = tuple(filters)
        self.policy = policy
        self.interval = interval
        self.drift = drift
        self.hysteresis = hysteresis
        self.slack = slack
        self.min_change = min_change
        positions = join_positions or [{} for _ in inputs]
        self.stats = [InputStats(p) for p in positions]
        self.filter_stats = [FilterStats() for _ in filters]
        self.arrivals = 0
        self.decisions: deque[RoutingDecision] = deque(maxlen=log_size)
        self.last_decision = 0
        self._cards = [0] * len(inputs)
        self.routes: list[Route] = []
        for source in range(len(inputs)):
            route = self._candidate(source)
            self.routes.append(route)
            self._record(route, None, "start")

    def _candidate(self, source: int) -> Route:
        steps = self.policy.order(source, self.inputs, self.filters, self.stats, self.filter_stats)
        return plan_route(source, steps, self.inputs, self.filters)

    def cost(self, route: Route) -> float:
        return route_cost(route, self.stats, self.filter_stats)

    def _record(self, route: Route, previous: float | None, reason: str) -> None:
        self.decisions.append(RoutingDecision(self.arrivals, route.source, route.steps, self.cost(route),
                                              previous, reason))

    def arrived(self, count: int) -> list[int]:
        """Count ``count`` arriving mappings; re-decide when due. Returns the sources
        whose route changed (the caller adjusts its indexes)."""
        self.arrivals += count
        if self.arrivals - self.last_decision >= self.interval:
            return self.redecide("interval")
        drift, min_change = self.drift, self.min_change
        for stats, before in zip(self.stats, self._cards):
            now = max(stats.card, 0)
            if abs(now - before) >= min_change and (now + 1 >= (before + 1) * drift
                                                     or before + 1 >= (now + 1) * drift):
                return self.redecide("drift")
        return []

    def redecide(self, reason: str = "explicit") -> list[int]:
        """Ask the policy again for every input; returns the sources switched."""
        self.last_decision = self.arrivals
        self._cards = [max(s.card, 0) for s in self.stats]
        changed = []
        for source, current in enumerate(self.routes):
            candidate = self._candidate(source)
            if candidate.steps == current.steps:
                continue
            old, new = self.cost(current), self.cost(candidate)
            if new * self.hysteresis + self.slack < old:
                self.routes[source] = candidate
                self._record(candidate, old, reason)
                changed.append(source)
        return changed
