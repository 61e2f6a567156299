"""The RSP policies of a registered query, after RSP4J / YASPER: what advances time
(the tick policy), *when* a query reports (its reporting strategy) and *what* it
reports (its R2S emitter, :mod:`taxi_rsp.engine.emitters`).

The engine only drives them: :meth:`Engine.process` hands each event to the tick
policy of the queries, and :meth:`RegisteredQuery.evaluate` asks its report policy —
a strategy and an emitter (:class:`Reporting`) — for the output of an instant. Each
has a ``name`` that ``--explain`` prints.

Reporting strategies:

* :class:`OnContentChange` - report when the content differs from the last report;
* :class:`NonEmptyContent` - report whenever there is content (a change in the instant).

The planner pairs them by the query's form (:func:`report_policy_for`): ``SELECT ...
ORDER BY`` the Rstream of the ordered result on content change; other ``SELECT`` the
Istream/Dstream rows, and ``CONSTRUCT`` the triples of the inserted rows, when non-empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import cython

from taxi_rsp.engine.expr import set_event_time
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.report import QueryOutput, Trigger
from taxi_rsp.engine.emitters import ConstructStream, Emitter, IstreamDstream, Rstream
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
    what: Emitter  # the R2S emitter (attached to the plan's root when registered)

    def bind(self) -> Callable[[PolicyQuery, Trigger], QueryOutput | None]:
        """``report(query, trigger)``: the output of the instant that just closed, or None
        when nothing is reported (a function the query calls every instant)."""


@cython.cclass
class OnContentChange:
    """Report when the content differs from the last one reported (RSP4J's content
    change). (Compiled, an extension type: it runs every instant that has content.)"""

    name = "on content change"
    last = cython.declare(object, visibility="readonly")

    def __init__(self) -> None:
        self.last = []  # before the first report: the empty result

    def due(self, content: object) -> bool:
        if content == self.last:
            return False
        self.last = content
        return True


class NonEmptyContent:
    """Report whenever the instant has content (its emitter saw a change)."""

    name = "on non-empty content"

    def due(self, content: object) -> bool:
        return True


@cython.cclass
class Reporting:
    """A report policy: the reporting strategy ``when`` and the emitter ``what``.
    (Compiled: it runs every instant.)"""

    when = cython.declare(object, visibility="readonly")
    what = cython.declare(object, visibility="readonly")

    def __init__(self, when: OnContentChange | NonEmptyContent, what: Emitter) -> None:
        self.when = when
        self.what = what

    @property
    def name(self) -> str:
        return f"{self.what.name}, {self.when.name}"

    def bind(self) -> Callable[[PolicyQuery, Trigger], QueryOutput | None]:
        """``report`` as a closure over the strategy's and the emitter's functions, which
        the query calls every instant (no attribute look-up per call)."""
        content, due, output = self.what.content, self.when.due, self.what.output

        def report(query: PolicyQuery, trigger: Trigger) -> QueryOutput | None:
            found = content(query)
            if found is None or not due(found):
                return None
            return output(query, trigger, found)

        return report


def report_policy_for(form: str, ordered_result: bool) -> Callable[[], Reporting]:
    """How a query reports, chosen by the planner by the query's form and whether its plan
    ends in a top-k: a factory (each registered query makes its own policy).

    >>> report_policy_for("SELECT", True)().name
    'Rstream (the ordered result), on content change'
    """
    if ordered_result:
        return lambda: Reporting(OnContentChange(), Rstream())
    if form == "CONSTRUCT":
        return lambda: Reporting(NonEmptyContent(), ConstructStream())
    return lambda: Reporting(NonEmptyContent(), IstreamDstream())
