"""What a query reports: the trigger of an evaluation instant and the output a report
policy (:mod:`taxi_rsp.engine.policies`) makes of it; listeners receive these."""

from __future__ import annotations

from collections.abc import Callable

import cython

from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import Term


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


@cython.cclass
class QueryOutput:
    """One report of the query ``name``: its ``rows`` (term ids; the ordered snapshot or
    the inserted rows), ``deleted`` rows and CONSTRUCT ``triples``, with the instant's
    ``trigger``; ``dictionary`` decodes the ids (:meth:`values`, :meth:`terms`).
    One is made per report and every listener reads its fields, before the line it
    writes is timed: compiled, an extension type whose fields are C struct fields.

    >>> out = QueryOutput("q", None, Trigger(5), ("x",), rows=[(1,)])
    >>> out.rows, out.deleted, out == QueryOutput("q", None, Trigger(5), ("x",), [(1,)])
    ([(1,)], [], True)
    """

    name = cython.declare(object, visibility="public")  # str: the query's name
    dictionary = cython.declare(object, visibility="public")  # Dictionary: decodes the ids
    trigger = cython.declare(object, visibility="public")  # Trigger
    columns = cython.declare(object, visibility="public")  # tuple[str, ...]
    rows = cython.declare(object, visibility="public")  # list[tuple]
    deleted = cython.declare(object, visibility="public")  # list[tuple]
    triples = cython.declare(object, visibility="public")  # list[tuple[Term, Term, Term]] (CONSTRUCT)

    def __init__(self, name: str, dictionary: Dictionary | None, trigger: Trigger, columns: tuple[str, ...],
                 rows: list[tuple] | None = None, deleted: list[tuple] | None = None,
                 triples: list[tuple[Term, Term, Term]] | None = None) -> None:
        self.name = name
        self.dictionary = dictionary
        self.trigger = trigger
        self.columns = columns
        self.rows = [] if rows is None else rows
        self.deleted = [] if deleted is None else deleted
        self.triples = [] if triples is None else triples

    def __eq__(self, other: object) -> bool:
        # by value, as the dataclass it was (and so unhashable: no __hash__)
        return isinstance(other, QueryOutput) and self._fields() == other._fields()  # type: ignore[attr-defined]

    def _fields(self) -> tuple:
        return (self.name, self.trigger, self.columns, self.rows, self.deleted, self.triples)

    def __repr__(self) -> str:
        return (f"QueryOutput(name={self.name!r}, trigger={self.trigger!r}, columns={self.columns!r}, "
                f"rows={self.rows!r}, deleted={self.deleted!r}, triples={self.triples!r})")

    def values(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as Python values (numbers, strings, DateTime, IRI...; None if unbound)."""
        value = self.dictionary.value
        return [tuple(None if v is None else value(v) for v in row) for row in (self.rows if rows is None else rows)]

    def terms(self, rows: list[tuple] | None = None) -> list[tuple]:
        """Rows as RDF terms (None if unbound)."""
        decode = self.dictionary.decode
        return [tuple(None if v is None else decode(v) for v in row) for row in (self.rows if rows is None else rows)]


Listener = Callable[[QueryOutput], None]
