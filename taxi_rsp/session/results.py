"""Query results for Python: each report of a query as a :class:`Result` with decoded
values, delivered to callbacks or read from an iterator (:class:`QueryHandle`)."""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from taxi_rsp.engine.info import QueryInfo
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.terms import DateTime, Term
from taxi_rsp.session.frames import frame
from taxi_rsp.session.frames import plain as plain_value

if TYPE_CHECKING:  # polars is the optional [polars] extra
    import polars as pl

DECODINGS = ("values", "terms")


@dataclass(frozen=True)
class Result:
    """One report of a continuous query.

    ``rows`` are the whole ordered result (ORDER BY queries) or the rows inserted during
    the instant (others), ``deleted`` the rows deleted during it, ``triples`` the
    CONSTRUCT result graph. Row values are Python values (``int``, ``Fraction`` for
    xsd:decimal, ``float``, ``bool``, ``str``, :class:`~taxi_rsp.rdf.terms.DateTime`,
    :class:`~taxi_rsp.rdf.terms.IRI`) or, decoded as ``"terms"``, RDF terms; None is
    unbound.
    """

    query: str
    time: int  # the instant, ms (DateTime: print it, or .to_datetime())
    trigger: str  # "event" (an arriving event) or "expiry" (a window boundary)
    seq: int | None  # the arriving event's sequence number (None for an expiry)
    columns: tuple[str, ...]
    rows: list[tuple]
    deleted: list[tuple] = field(default_factory=list)
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)

    @property
    def at(self) -> dt.datetime:
        """The instant as a naive ``datetime``."""
        return DateTime(self.time).to_datetime()

    def dicts(self, rows: list[tuple] | None = None, *, plain: bool = False) -> list[dict[str, object]]:
        """``rows`` (default: :attr:`rows`) as ``{column: value}`` dictionaries; with
        ``plain=True`` IRIs are their text, decimals ``Decimal``, dateTimes ``datetime``
        (:func:`taxi_rsp.session.frames.plain`)."""
        chosen = self.rows if rows is None else rows
        if plain:
            return [{column: plain_value(value) for column, value in zip(self.columns, row)} for row in chosen]
        return [dict(zip(self.columns, row)) for row in chosen]

    def to_polars(self, rows: list[tuple] | None = None) -> pl.DataFrame:
        """``rows`` (default: :attr:`rows`; :attr:`deleted` for the deleted ones) as a
        polars DataFrame of plain values, one column per result column (the
        ``[polars]`` extra)."""
        return frame(self.columns, self.rows if rows is None else rows)

    @classmethod
    def of(cls, output: QueryOutput, decode: str = "values") -> Result:
        convert = output.values if decode == "values" else output.terms
        trigger = output.trigger
        return cls(output.name, trigger.time, "expiry" if trigger.is_expiry else "event",
                   None if trigger.event is None else trigger.event.seq, output.columns,
                   convert(), convert(output.deleted) if output.deleted else [], list(output.triples))


def check_decoding(decode: str) -> str:
    if decode not in DECODINGS:
        raise UserError(f"decode must be one of {', '.join(DECODINGS)} (not {decode!r})")
    return decode


class QueryHandle:
    """A registered query seen from Python: its :attr:`info`, callbacks, and the results
    reported since they were last read (:meth:`results`)."""

    def __init__(self, info: QueryInfo, listen: Callable[[Callable[[QueryOutput], None]], None],
                 keep: bool = True, decode: str = "values") -> None:
        self.info = info
        self._listen = listen
        self._decode = check_decoding(decode)
        self._kept: deque[QueryOutput] | None = deque() if keep else None
        if self._kept is not None:
            listen(self._kept.append)

    @property
    def name(self) -> str:
        return self.info.name

    def subscribe(self, callback: Callable[[Result], None], decode: str | None = None) -> None:
        """Call ``callback`` with every later report, as it happens."""
        how = check_decoding(decode or self._decode)
        self._listen(lambda output: callback(Result.of(output, how)))

    def results(self, decode: str | None = None) -> Iterator[Result]:
        """The reports not read yet, oldest first (each is read once)."""
        if self._kept is None:
            raise UserError(f"query {self.name} was registered with keep=False: subscribe() to its results")
        how = check_decoding(decode or self._decode)
        kept = self._kept
        while kept:
            yield Result.of(kept.popleft(), how)

    def __iter__(self) -> Iterator[Result]:
        return self.results()

    def to_polars(self) -> pl.DataFrame:
        """The reports not read yet (as :meth:`results` would give them) in one polars
        DataFrame, a row per result row: ``at`` (the instant, a datetime), ``trigger``
        (``event`` or ``expiry``), ``seq`` (the arriving event's number, null for an
        expiry), ``deleted`` (False for a row of :attr:`Result.rows`, True for one of
        :attr:`Result.deleted`), then the query's columns, with plain values (a query
        column named like one of the first four keeps its name, which then takes a
        leading ``_``). An ORDER BY query's rows of one report are its ordered result,
        in order."""
        extra: dict[str, list[object]] = {"at": [], "trigger": [], "seq": [], "deleted": []}
        rows: list[tuple] = []
        for result in self.results("terms" if self._decode == "terms" else "values"):
            for deleted, chosen in ((False, result.rows), (True, result.deleted)):
                rows += chosen
                extra["at"] += [result.at] * len(chosen)
                extra["trigger"] += [result.trigger] * len(chosen)
                extra["seq"] += [result.seq] * len(chosen)
                extra["deleted"] += [deleted] * len(chosen)
        return frame(self.info.columns, rows, extra)

    def __repr__(self) -> str:
        return f"<QueryHandle {self.name}: {self.info.form}, columns {', '.join(self.info.columns)}>"
