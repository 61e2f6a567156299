"""A registered continuous query: its physical plan, its clock and its R2S step.

R2S (report policy) per query form:

* ``SELECT ... ORDER BY``: after each evaluation instant the ordered result (a
  snapshot of the top-k) is reported when it differs from the last report;
* other ``SELECT``: the net rows inserted and deleted during the instant (an
  Istream/Dstream pair) are reported when there are any;
* ``CONSTRUCT``: the triples instantiated from the rows inserted during the instant.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from taxi_rsp.algebra.plan import LogicalPlan
from taxi_rsp.engine.builder import PhysicalPlan
from taxi_rsp.engine.ops.base import Delta
from taxi_rsp.engine.ops.match import EventView
from taxi_rsp.lang.ast import Query, Var
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import BNode, Term


class Trigger(NamedTuple):
    """What caused an evaluation: an arriving event, or the expiry instant ``time``.
    (A named tuple: one is made per evaluation instant, and it is the cheapest
    immutable record to build.)"""

    time: int
    event: GraphEvent | None = None

    @property
    def is_expiry(self) -> bool:
        return self.event is None


@dataclass(slots=True)
class QueryOutput:
    query: RegisteredQuery
    trigger: Trigger
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)  # ordered snapshot or inserted rows (term ids)
    deleted: list[tuple] = field(default_factory=list)
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)  # CONSTRUCT

    def values(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as Python values (numbers, strings, DateTime, IRI...; None if unbound)."""
        value = self.query.dictionary.value
        return [tuple(None if v is None else value(v) for v in row) for row in (self.rows if rows is None else rows)]

    def terms(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as RDF terms (None if unbound)."""
        decode = self.query.dictionary.decode
        return [tuple(None if v is None else decode(v) for v in row) for row in (self.rows if rows is None else rows)]


Listener = Callable[[QueryOutput], None]


class RegisteredQuery:
    def __init__(
        self,
        name: str,
        ast: Query,
        logical: LogicalPlan,
        physical: PhysicalPlan,
        dictionary: Dictionary,
        leader: RegisteredQuery | None = None,
    ) -> None:
        """``leader``: an earlier query with the same plan; this one then shares its
        physical plan and reports what the leader reports (same history, same output)."""
        self.name = name
        self.ast = ast
        self.logical = logical
        self.physical = physical
        self.dictionary = dictionary
        self.columns = logical.projection
        self.listeners: list[Listener] = []
        self.streams = {w.stream for w in physical.windows}
        self._last_snapshot: list[tuple] | None = [] if physical.ordered_root is not None else None
        self._pending: Counter = Counter()
        self._bnodes = itertools.count()
        self.twins: list[RegisteredQuery] = []
        if leader is not None:
            leader.twins.append(self)
            return
        if physical.ordered_root is None:
            physical.root.connect(self._collect)
        for source in physical.sources:
            source.start()
        self._flush()  # the registration state is reported with the first instant

    # -- clock -------------------------------------------------------------------------
    def next_expiry(self) -> int | None:
        first = None
        for window in self.physical.windows:
            t = window.next_expiry()
            if t is not None and (first is None or t < first):
                first = t
        return first

    def expire(self, until: int) -> None:
        for window in self.physical.windows:
            window.expire(until)

    def insert(self, event: GraphEvent, view: EventView) -> None:
        for window in self.physical.windows:
            if window.stream == event.stream:
                window.insert(event.time, view)

    # -- R2S ---------------------------------------------------------------------------
    def _collect(self, deltas: list[Delta]) -> None:
        pending = self._pending
        for row, mult in deltas:
            pending[row] += mult

    def _flush(self) -> None:
        for op in self.physical.operators:
            op.flush()

    def evaluate(self, trigger: Trigger) -> QueryOutput | None:
        """Close the evaluation instant and report per the R2S policy (None: nothing)."""
        self._flush()
        projection = self.physical.projection
        if self.physical.ordered_root is not None:
            if not self.physical.ordered_root.changed:
                return None
            snapshot = [tuple(row[i] if i is not None else None for i in projection)
                        for row in self.physical.ordered_root.snapshot()]
            if snapshot == self._last_snapshot:
                return None
            self._last_snapshot = snapshot
            output = QueryOutput(self, trigger, self.columns, rows=snapshot)
        else:
            if not self._pending:
                return None
            inserted, deleted = [], []
            for row, mult in self._pending.items():
                projected = tuple(row[i] if i is not None else None for i in projection)
                if mult > 0:
                    inserted.extend([projected] * mult)
                elif mult < 0:
                    deleted.extend([projected] * -mult)
            self._pending.clear()
            if not inserted and not deleted:
                return None
            output = QueryOutput(self, trigger, self.columns, rows=inserted, deleted=deleted)
            if self.logical.form == "CONSTRUCT":
                output.triples = self._construct(inserted)
                if not output.triples:
                    return None
        for listener in self.listeners:
            listener(output)
        for twin in self.twins:
            twin._report(QueryOutput(twin, trigger, twin.columns, output.rows, output.deleted, output.triples))
        return output

    def _report(self, output: QueryOutput) -> None:
        for listener in self.listeners:
            listener(output)

    def _construct(self, rows: list[tuple]) -> list[tuple[Term, Term, Term]]:
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

        lines = [f"query {self.name}", "logical plan:", explain(self.logical.root, 1), "physical operators:"]
        for op in self.physical.operators:
            kind = "compiled " if getattr(op, "compiled", False) else "reference"
            lines.append(f"  [{kind}] {op.describe()} -> {', '.join('?' + v for v in op.schema)}")
        lines.extend(f"warning: {warning}" for warning in cross_products(self.logical.root))
        return "\n".join(lines)

    def state_size(self) -> int:
        return sum(op.state_size() for op in self.physical.operators)
