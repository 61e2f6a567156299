"""What a query reports: the trigger of an evaluation instant and the output a report
policy (:mod:`taxi_rsp.engine.policies`) makes of it; listeners receive these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import Term

if TYPE_CHECKING:
    from taxi_rsp.engine.query import RegisteredQuery


class Trigger(NamedTuple):
    """What caused an evaluation: an arriving event, or the expiry instant ``time``.
    (A named tuple: one is made per evaluation instant, and it is the cheapest
    immutable record to build.)"""

    time: int
    event: GraphEvent | None = None

    @property
    def is_expiry(self) -> bool:
        return self.event is None


_tuple_new = tuple.__new__


def trigger(time: int, event: GraphEvent | None = None) -> Trigger:
    """``Trigger(time, event)`` without the named tuple's ``__new__``, which is
    interpreted code (one trigger is made per evaluation instant).

    >>> trigger(5) == Trigger(5)
    True
    """
    return _tuple_new(Trigger, (time, event))


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
