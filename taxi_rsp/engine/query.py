"""A registered continuous query: its physical plan, its clock and its R2S step.

R2S is the query's report policy (:mod:`taxi_rsp.engine.policies`), chosen by the planner by form:
``SELECT ... ORDER BY`` reports the ordered result on content change, other ``SELECT``
the Istream/Dstream rows of each instant, ``CONSTRUCT`` the triples of the rows
inserted during the instant. :attr:`RegisteredQuery.info` is the public description
(:class:`~taxi_rsp.engine.info.QueryInfo`).
"""

from __future__ import annotations

import itertools

from taxi_rsp.algebra.plan import LogicalPlan
from taxi_rsp.engine.physical import QueryPlan
from taxi_rsp.engine.info import QueryInfo, WindowInfo
from taxi_rsp.engine.ops.base import Operator
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.policies import EventTimeTick, ReportPolicy
from taxi_rsp.engine.report import Listener, QueryOutput, Trigger  # noqa: F401 - re-exported
from taxi_rsp.lang.ast import Var, calls
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import BNode, Term




class RegisteredQuery:
    def __init__(self, plan: QueryPlan, dictionary: Dictionary, leader: RegisteredQuery | None = None) -> None:
        """``leader``: an earlier query with the same plan; this one then shares its
        physical plan and reports what the leader reports (same history, same output)."""
        self.name = plan.name
        self.ast = plan.ast
        self.logical: LogicalPlan = plan.logical
        self.physical = physical = plan.physical
        self.dictionary = dictionary
        self.columns = plan.logical.projection
        self.listeners: list[Listener] = []
        self.source = plan.source
        ast = plan.ast
        self.streams = {w.stream for w in physical.windows}
        # NOW() reads the instant's time from a context variable; setting it costs a
        # few percent of a short query's per-event time, so only queries calling it do
        self.reads_clock = calls(ast, "NOW")
        # The per-event calls, looked up once: a plan's windows and operators never
        # change after it is built.
        self._next_expiries = tuple(w.next_expiry for w in physical.windows)
        self._expires = tuple(w.expire for w in physical.windows)
        self._inserts = {stream: tuple(w.insert for w in physical.windows if w.stream == stream)
                         for stream in self.streams}
        # (the base class's flush does nothing: not called once per instant per operator)
        self._flushes = tuple(op.flush for op in physical.operators
                              if getattr(op.flush, "__func__", None) is not Operator.flush)
        self.report_policy: ReportPolicy = physical.report_policy()  # the planner's choice
        self._bnodes = itertools.count()
        self._info: QueryInfo | None = None
        self.twins: list[RegisteredQuery] = []
        self._bind_steps()
        if leader is not None:
            leader.twins.append(self)
            return
        self.report_policy.what.attach(physical.root)
        for source in physical.sources:
            source.start()
        for flush in self._flushes:  # the registration state is reported with the first instant
            flush()

    # -- the steps of an instant -------------------------------------------------------
    def _bind_steps(self) -> None:
        """``next_expiry()``, ``expire(until)``, ``insert(event, view)`` and
        ``evaluate(trigger)`` as closures over the plan's per-event functions (fixed once
        the plan is built): the tick policy calls them for every event, and a closure
        reads no attribute."""
        next_expiries, expires, inserts = self._next_expiries, self._expires, self._inserts
        flushes, report, deliver = self._flushes, self.report_policy.bind(), self._deliver

        def next_expiry() -> int | None:
            """The first instant at which one of the query's windows changes (None: never)."""
            first = None
            for window_next_expiry in next_expiries:
                t = window_next_expiry()
                if t is not None and (first is None or t < first):
                    first = t
            return first

        def expire(until: int) -> None:
            for window_expire in expires:
                window_expire(until)

        def insert(event: GraphEvent, view: EventView) -> None:
            window_inserts = inserts.get(event.stream)
            if window_inserts is not None:
                time = event.time
                for window_insert in window_inserts:
                    window_insert(time, view)

        def evaluate(trigger: Trigger) -> QueryOutput | None:
            """Close the evaluation instant and report per the R2S policy (None: nothing)."""
            for flush in flushes:
                flush()
            output = report(self, trigger)
            if output is not None:
                deliver(output)
            return output

        self.next_expiry, self.expire, self.insert, self.evaluate = next_expiry, expire, insert, evaluate

    def _deliver(self, output: QueryOutput) -> None:
        """An instant's output to the listeners, and the same rows to each twin's."""
        for listener in self.listeners:
            listener(output)
        for twin in self.twins:
            twin._report(QueryOutput(twin.name, twin.dictionary, output.trigger, twin.columns, output.rows,
                                     output.deleted, output.triples))

    def _report(self, output: QueryOutput) -> None:
        for listener in self.listeners:
            listener(output)

    def construct(self, rows: list[tuple]) -> list[tuple[Term, Term, Term]]:
        """The CONSTRUCT template instantiated with ``rows`` (a result graph: a set)."""
        schema = self.physical.root.schema
        position = {v: i for i, v in enumerate(schema)}
        decode = self.dictionary.decode
        triples = []
        for row in rows:
            fresh: dict[str, BNode] = {}
            for pattern in self.ast.template:
                parts = []
                for node in (pattern.s, pattern.p, pattern.o):
                    if isinstance(node, Var):
                        i = position.get(node.name)
                        value = row[i] if i is not None else None
                        if value is None:
                            break
                        parts.append(decode(value))
                    elif isinstance(node, BNode):
                        parts.append(fresh.setdefault(node.label, BNode(f"{node.label}_{next(self._bnodes)}")))
                    else:
                        parts.append(node)
                else:
                    triples.append(tuple(parts))
        return list(dict.fromkeys(triples))  # a result graph is a set (order kept)

    def explain(self) -> str:
        from taxi_rsp.algebra.plan import explain

        from taxi_rsp.algebra.lint import cross_products

        lines = [f"query {self.name}", "logical plan:", explain(self.logical.root, 1), "physical plan:"]
        lines += ["  " + line for line in str(self.physical.tree).splitlines()]
        # the operators it became, in flush order, as they run now (a specialised one may
        # have handed over to its reference; windows say what they share)
        lines.append("physical operators:")
        for op in self.physical.operators:
            kind = "compiled " if getattr(op, "compiled", False) else "reference"
            lines.append(f"  [{kind}] {op.describe()} -> {', '.join('?' + v for v in op.schema)}")
        lines += ["policies:", f"  tick: {EventTimeTick.name}", f"  report: {self.report_policy.name}"]
        lines.extend(f"warning: {warning}" for warning in cross_products(self.logical.root))
        return "\n".join(lines)

    @property
    def info(self) -> QueryInfo:
        """The public description: form, ordered, columns, windows, report policy."""
        if self._info is None:
            decode = self.dictionary.decode
            windows = tuple(WindowInfo(decode(w.stream).value, w.spec.kind, w.range_ms,  # type: ignore[union-attr]
                                       w.spec.slide_ms, w.spec.count) for w in self.physical.windows)
            self._info = QueryInfo(self.name, self.logical.form, self.logical.ordered, self.columns, windows,
                                   self.report_policy.name, self.source)
        return self._info

    def state_size(self) -> int:
        return sum(op.state_size() for op in self.physical.operators)
