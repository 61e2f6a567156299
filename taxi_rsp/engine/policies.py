"""The RSP policies of a registered query, after RSP4J / YASPER: what advances time
(the tick policy) and when and what a query reports (the report policy, R2S).

The engine only drives them: :meth:`Engine.process` hands each event to the tick
policy of the queries, and :meth:`RegisteredQuery.evaluate` asks its report policy
for the output of an instant. Each policy has a ``name`` that ``--explain`` prints.

Report policies (chosen per query form when the query is registered):

* :class:`OnContentChange` - ``SELECT ... ORDER BY``: the ordered result (a snapshot of
  the top-k) is reported when it differs from the last report (RSP4J: content change);
* :class:`IstreamDstream` - other ``SELECT``: the net rows inserted and deleted during
  the instant, when there are any;
* :class:`ConstructStream` - ``CONSTRUCT``: the triples instantiated from the rows
  inserted during the instant, when there are any.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

import cython

from taxi_rsp.engine.ops.stateless import project_step
from taxi_rsp.engine.expr import set_event_time
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.report import QueryOutput, Trigger
from taxi_rsp.engine.rowcache import ByIdentity
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent


class PolicyQuery(Protocol):
    """What the policies read of a registered query
    (:class:`~taxi_rsp.engine.query.RegisteredQuery` is one)."""

    name: str
    columns: tuple[str, ...]
    dictionary: Dictionary
    physical: Any  # PhysicalPlan: its ordered root and projection
    reads_clock: bool

    def next_expiry(self) -> int | None: ...

    def expire(self, until: int) -> None: ...

    def insert(self, event: GraphEvent, view: EventView) -> None: ...

    def evaluate(self, trigger: Trigger) -> QueryOutput | None: ...

    def construct(self, rows: list[tuple]) -> list[tuple]: ...


class TickPolicy(Protocol):
    name: str

    def tick(self, query: PolicyQuery, event: GraphEvent, view: EventView) -> None:
        """Advance ``query`` to the time of ``event`` and apply it."""

    def bind(self, query: PolicyQuery) -> Callable[[GraphEvent, EventView], None]:
        """``tick`` of ``query`` as a function of the event alone (what the engine calls)."""


class EventTimeTick:
    """SPEC §3, for any query: before an event at time t, every expiry instant τ < t of
    the query's windows is evaluated in increasing order; then everything expiring at or
    before t leaves, the event enters, and the query is evaluated once for the event.
    Every event of the session is an instant of every query (whether or not it reads
    the event's stream); end of input is not a time advance."""

    name = "event time (expiries before an event evaluated first, those at its time merged into it)"

    def tick(self, query: PolicyQuery, event: GraphEvent, view: EventView) -> None:
        self.bind(query)(event, view)

    def bind(self, query: PolicyQuery) -> Callable[[GraphEvent, EventView], None]:
        """``tick`` for one query as a closure, which the engine calls per event: the
        query's steps (closures themselves, see :meth:`RegisteredQuery._bind_steps`) are
        looked up here once, not per event."""
        next_expiry, expire, insert, evaluate = query.next_expiry, query.expire, query.insert, query.evaluate
        clocked = query.reads_clock

        def tick(event: GraphEvent, view: EventView) -> None:
            time = event.time
            expiry = next_expiry()
            while expiry is not None and expiry < time:
                if clocked:
                    set_event_time(expiry)  # NOW() in rows derived at this instant
                expire(expiry)
                evaluate(Trigger(expiry))
                expiry = next_expiry()
            if clocked:
                set_event_time(time)
            expire(time)
            insert(event, view)  # (nothing when the query does not read the event's stream)
            evaluate(Trigger(time, event))

        return tick


class ReportPolicy(Protocol):
    name: str

    def report(self, query: PolicyQuery, trigger: Trigger) -> QueryOutput | None:
        """The output of the instant that just closed, or None when nothing is reported."""


@cython.cclass
class OnContentChange:
    """The whole ordered result, when it differs from the last one reported.
    (Compiled, an extension type: it runs every instant, and for a reported one its
    work counts in the output line's delay; its fields are C struct fields.)"""

    name = "on content change (the ordered result, when it differs from the last report)"
    last = cython.declare(list, visibility="readonly")
    _root = cython.declare(object)
    _projected = cython.declare(object)  # ByIdentity | None

    def __init__(self) -> None:
        self.last = []  # before the first report: the empty result
        # the plan's ordered root and projection, looked up once (a policy serves one query)
        self._root = None
        # projections of the last snapshot's rows: a row the root reports again (as the
        # same object) keeps its projection, so comparing with the last result finds the
        # rows identical without comparing their values
        self._projected = None

    def report(self, query: PolicyQuery, trigger: Trigger) -> QueryOutput | None:
        root = self._root
        if root is None:
            root = self._root = query.physical.ordered_root
        if not root.changed:
            return None
        projected = self._projected
        if projected is None:
            projected = self._projected = ByIdentity(project_step(query.physical.projection))
        snapshot = projected.map(root.snapshot())
        if snapshot == self.last:
            return None
        self.last = snapshot
        return QueryOutput(query.name, query.dictionary, trigger, query.columns, rows=snapshot)


class IstreamDstream:
    """The net rows inserted and deleted during the instant (rows collected from the
    plan's root as deltas), when there are any."""

    name = "Istream/Dstream (the rows inserted and deleted during the instant)"

    def __init__(self) -> None:
        self.pending: Counter = Counter()

    def collect(self, deltas: list) -> None:
        pending = self.pending
        for row, mult in deltas:
            pending[row] += mult

    def changes(self, query: PolicyQuery) -> tuple[list[tuple], list[tuple]]:
        project = project_step(query.physical.projection)
        inserted: list[tuple] = []
        deleted: list[tuple] = []
        for row, mult in self.pending.items():
            projected = project(row)
            if mult > 0:
                inserted.extend([projected] * mult)
            elif mult < 0:
                deleted.extend([projected] * -mult)
        self.pending.clear()
        return inserted, deleted

    def report(self, query: PolicyQuery, trigger: Trigger) -> QueryOutput | None:
        if not self.pending:
            return None
        inserted, deleted = self.changes(query)
        if not inserted and not deleted:
            return None
        return QueryOutput(query.name, query.dictionary, trigger, query.columns, rows=inserted, deleted=deleted)


class ConstructStream(IstreamDstream):
    """The triples the template makes of the rows inserted during the instant (one
    result graph per instant), when there are any."""

    name = "CONSTRUCT stream (the triples of the rows inserted during the instant)"

    def report(self, query: PolicyQuery, trigger: Trigger) -> QueryOutput | None:
        output = super().report(query, trigger)
        if output is None:
            return None
        output.triples = query.construct(output.rows)
        return output if output.triples else None


def report_policy_for(form: str, ordered_result: bool) -> type[OnContentChange | IstreamDstream | ConstructStream]:
    """The report policy class of a query, chosen by the planner: by the query's form and
    whether its plan ends in a top-k (each registered query makes its own instance)."""
    if ordered_result:
        return OnContentChange
    if form == "CONSTRUCT":
        return ConstructStream
    return IstreamDstream
