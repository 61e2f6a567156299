"""What a query reports: the trigger of an evaluation instant and the output a report
policy (:mod:`taxi_rsp.engine.policies`) makes of it; listeners receive these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cython

from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import Term

if TYPE_CHECKING:
    from taxi_rsp.engine.query import RegisteredQuery


@cython.cclass
class Trigger:
    """What caused an evaluation: an arriving event, or the expiry instant ``time``.
    One is made per evaluation instant: compiled, an extension type, built by its C
    slots (a Python class, even with slots and a compiled ``__init__``, is called
    through ``type.__call__`` and a look-up of ``__init__``: ≈ 870 instructions, as much
    as the rest of a cheap query's per-event work; likewise
    :class:`~taxi_rsp.engine.ops.match.EventView`).

    >>> Trigger(5), Trigger(5).is_expiry, Trigger(5) == Trigger(5, None)
    (Trigger(time=5, event=None), True, True)
    """

    time = cython.declare(object, visibility="readonly")
    event = cython.declare(object, visibility="readonly")

    def __init__(self, time: int, event: GraphEvent | None = None) -> None:
        self.time = time
        self.event = event

    @property
    def is_expiry(self) -> bool:
        return self.event is None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Trigger) and self.time == other.time
                and self.event == other.event)

    def __hash__(self) -> int:
        return hash(self.time)

    def __repr__(self) -> str:
        return f"Trigger(time={self.time!r}, event={self.event!r})"


@dataclass(slots=True, init=False)
class QueryOutput:
    query: RegisteredQuery
    trigger: Trigger
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)  # ordered snapshot or inserted rows (term ids)
    deleted: list[tuple] = field(default_factory=list)
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)  # CONSTRUCT

    # Written out (one output is made per report): a dataclass's generated __init__ runs
    # as interpreted code even in the compiled module.
    def __init__(self, query: RegisteredQuery, trigger: Trigger, columns: tuple[str, ...],
                 rows: list[tuple] | None = None, deleted: list[tuple] | None = None,
                 triples: list[tuple[Term, Term, Term]] | None = None) -> None:
        self.query = query
        self.trigger = trigger
        self.columns = columns
        self.rows = [] if rows is None else rows
        self.deleted = [] if deleted is None else deleted
        self.triples = [] if triples is None else triples

    def values(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as Python values (numbers, strings, DateTime, IRI...; None if unbound)."""
        value = self.query.dictionary.value
        return [tuple(None if v is None else value(v) for v in row) for row in (self.rows if rows is None else rows)]

    def terms(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as RDF terms (None if unbound)."""
        decode = self.query.dictionary.decode
        return [tuple(None if v is None else decode(v) for v in row) for row in (self.rows if rows is None else rows)]


Listener = Callable[[QueryOutput], None]
