"""Output of queries that are not challenge queries: CSV rows and N-Quads streams."""

from __future__ import annotations

import csv
import itertools
import time
from collections.abc import Callable
from typing import TextIO

from taxi_rsp.listener.formats import timestamp
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.outputs.delay_log import DelayLog
from taxi_rsp.rdf.namespaces import PROV_GENERATED_AT, XSD, XSD_DATETIME
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI, DateTime, Literal, Term


def _lexical(term: object) -> str:
    """A term's CSV text (an unbound value is RenderedTerms' to write)."""
    if isinstance(term, IRI):
        return term.value
    if isinstance(term, Literal):
        return term.lexical
    return str(term)


class RenderedTerms:
    """Each value of a result row rendered by ``render`` (CSV text, a SPARQL JSON
    binding …), memoised per term id: a result's ids repeat from report to report (an
    ordered query writes its whole top-k at every change), and decoding one builds a
    term object each time. An unbound value is ``unbound``; a value that is not an id (a
    computed number) is decoded every time; the memo is emptied when it reaches
    ``limit`` ids, and when the rows come from another dictionary.

    >>> from taxi_rsp.rdf.dictionary import Dictionary
    >>> from taxi_rsp.rdf.terms import Literal
    >>> d = Dictionary()
    >>> texts = RenderedTerms(_lexical, "")
    >>> texts.row(d, (d.encode(IRI("http://x")), None, d.encode(Literal("2.50", XSD + "decimal"))))
    ['http://x', '', '2.5']
    """

    def __init__(self, render: Callable[[Term], object], unbound: object, limit: int = 1 << 16) -> None:
        self._render, self._unbound, self._limit = render, unbound, limit
        self._memo: dict[int, object] = {}
        self._dictionary: Dictionary | None = None

    def row(self, dictionary: Dictionary, row: tuple) -> list:
        if dictionary is not self._dictionary:
            self._dictionary = dictionary
            self._memo.clear()
        memo, decode, render, out = self._memo, dictionary.decode, self._render, []
        for value in row:
            if value is None:
                out.append(self._unbound)
            elif type(value) is not int:
                out.append(render(decode(value)))
            else:
                rendered = memo.get(value)
                if rendered is None:
                    if len(memo) >= self._limit:
                        memo.clear()
                    rendered = memo[value] = render(decode(value))
                out.append(rendered)
        return out


class Counts:
    """What every generic writer records for the summary: output lines (``emitted``,
    rows of data, headers excluded), reports (one per instant the query answered) and the
    SPEC §5 delay of each report an arriving event triggered (from reading the event's
    line to writing its report; expiry-triggered reports have none, as in the DEBS files)."""

    def __init__(self) -> None:
        self.emitted = 0
        self.reports = 0
        self.delays_ms = DelayLog()

    def _reported(self, output: QueryOutput) -> None:
        self.reports += 1
        event = output.trigger.event
        if event is not None and event.read_ns:
            self.delays_ms.append((time.perf_counter_ns() - event.read_ns) / 1e6)


def _instant(time: int) -> str:
    """``YYYY-MM-DD HH:MM:SS``, with ``.mmm`` when the instant is not a whole second
    (RDF streams such as the ISWC RFID stream have millisecond timestamps)."""
    text = timestamp(time)
    return text if time % 1000 == 0 else f"{text}.{time % 1000:03d}"


class CsvResultWriter(Counts):
    """SELECT results as CSV: ``time,trigger,change,rank,<variables...>``.

    Ordered queries write their whole (changed) result with ranks; others write the
    rows inserted (``+``) and deleted (``-``) at each instant.
    """

    def __init__(self, out: TextIO, columns: tuple[str, ...], ordered: bool) -> None:
        self.writer = csv.writer(out, lineterminator="\n")
        super().__init__()
        self.writer.writerow(["time", "trigger", "change", "rank", *columns])
        self.ordered = ordered
        self._texts = RenderedTerms(_lexical, "")

    def __call__(self, output: QueryOutput) -> None:
        when = _instant(output.trigger.time)
        trigger = "expiry" if output.trigger.is_expiry else f"event:{output.trigger.event.seq}"
        texts, dictionary = self._texts, output.dictionary
        if self.ordered:
            rows = output.rows
            if not rows:
                self.writer.writerow([when, trigger, "=", "", *([""] * len(output.columns))])
                self.emitted += 1
            for rank, row in enumerate(rows, 1):
                self.writer.writerow([when, trigger, "=", rank, *texts.row(dictionary, row)])
            self.emitted += len(rows)
        else:
            for sign, rows in (("+", output.rows), ("-", output.deleted)):
                for row in rows:
                    self.writer.writerow([when, trigger, sign, "", *texts.row(dictionary, row)])
                self.emitted += len(rows)
        self._reported(output)


class NQuadsResultWriter(Counts):
    """CONSTRUCT results as an RDF stream: one named graph per instant, stamped with
    ``prov:generatedAtTime`` in the default graph."""

    def __init__(self, out: TextIO, graph_prefix: str = "urn:taxi-rsp:result:") -> None:
        super().__init__()
        self.out = out
        self.prefix = graph_prefix
        self._numbers = itertools.count(1)

    def __call__(self, output: QueryOutput) -> None:
        graph = IRI(f"{self.prefix}{next(self._numbers)}")
        for s, p, o in output.triples:
            self.out.write(f"{s.n3()} {p.n3()} {o.n3()} {graph.n3()} .\n")
        stamp = Literal(DateTime(output.trigger.time).isoformat(), XSD_DATETIME)
        self.out.write(f"{graph.n3()} <{PROV_GENERATED_AT}> {stamp.n3()} .\n")
        self.emitted += len(output.triples) + 1
        self._reported(output)
