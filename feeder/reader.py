"""The Feeder: a taxi CSV streamed line by line into RDF graph events (SPEC §1).

One accepted line becomes one graph event ⟨g : [dropoff]⟩ whose triples describe the
trip (vocabulary in :mod:`feeder.vocabulary`); a rejected line goes to the rejects
file with its line number and reason and is otherwise ignored.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TextIO

from feeder import vocabulary as V
from feeder.validate import timestamp_valid, to_scaled
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import STREAMS, XSD_STRING
from taxi_rsp.rdf.terms import IRI, Literal
from taxi_rsp.spec import FIELD_COUNT, Q1_GRID, Q2_GRID, REJECT_REASONS, REJECTS_HEADER

_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


@dataclass(frozen=True, slots=True)
class TripMeta:
    """What a listener needs about a triggering trip; the engine never looks at it."""

    line_no: int
    pickup: str
    dropoff: str
    read_ns: int


@dataclass
class FeedStats:
    lines_read: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=lambda: {r: 0 for r in REJECT_REASONS})
    outliers: dict[str, int] = field(default_factory=lambda: {"q1": 0, "q2": 0})
    profit_excluded: int = 0


class Feeder:
    """Iterate to get the graph events of ``path``; ``stats`` counts as it goes."""

    def __init__(
        self,
        path: Path,
        dictionary: Dictionary,
        rejects: TextIO | None = None,
        stream_iri: str = STREAMS + "trips",
    ) -> None:
        self.path = Path(path)
        self.dictionary = dictionary
        self.stats = FeedStats()
        self._rejects = csv.writer(rejects, lineterminator="\n") if rejects is not None else None
        if self._rejects is not None:
            rejects.write(REJECTS_HEADER + "\n")  # type: ignore[union-attr]
        self.stream = dictionary.encode(IRI(stream_iri))
        encode = dictionary.encode
        self._p = {name: encode(IRI(iri)) for name, iri in V.PREDICATES.items()}
        self._type = (encode(IRI(V.RDF_TYPE)), encode(IRI(V.TRIP_CLASS)))
        # Register the numbered-IRI prefixes once, so per-event ids are inline.
        encode(IRI(V.TRIP_PREFIX + "0"))
        encode(IRI(V.GRAPH_PREFIX + "0"))
        self._strings: dict[str, int] = {}
        self._days: dict[str, int] = {}

    # -- helpers -------------------------------------------------------------------
    def _string_id(self, text: str) -> int:
        found = self._strings.get(text)
        if found is None:
            found = self.dictionary.encode(Literal(text, XSD_STRING))
            if len(self._strings) < 1_000_000:  # bounded cache; the dictionary keeps ids
                self._strings[text] = found
        return found

    def _millis(self, stamp: str) -> int:
        day = self._days.get(stamp[:10])
        if day is None:
            day = (date(int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])).toordinal() - _EPOCH_ORDINAL) * 86_400_000
            if len(self._days) < 100_000:
                self._days[stamp[:10]] = day
        return day + (int(stamp[11:13]) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])) * 1000

    def _reject(self, line_no: int, reason: str, text: str) -> None:
        self.stats.rejected[reason] += 1
        if self._rejects is not None:
            self._rejects.writerow([line_no, reason, text])

    # -- the stream --------------------------------------------------------------------
    def __iter__(self) -> Iterator[GraphEvent]:
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise UserError(f"cannot read input {self.path}: {exc.strerror}") from None
        stats = self.stats
        latest = ""
        perf = time.perf_counter_ns
        with handle:
            for line_no, raw in enumerate(handle, 1):
                read_ns = perf()
                stats.lines_read += 1
                text = raw.decode("utf-8", errors="replace")
                if text.endswith("\n"):
                    text = text[:-1]
                fields = [f.strip() for f in text.split(",")]
                shown = text[:-1] if text.endswith("\r") else text
                if len(fields) != FIELD_COUNT:
                    self._reject(line_no, "field_count", shown)
                    continue
                medallion, hack, pickup, dropoff = fields[0], fields[1], fields[2], fields[3]
                if not medallion:
                    self._reject(line_no, "bad_medallion", shown)
                    continue
                if not (timestamp_valid(pickup) and timestamp_valid(dropoff)):
                    self._reject(line_no, "bad_timestamp", shown)
                    continue
                if pickup > dropoff:  # fixed-width form: string order is time order
                    self._reject(line_no, "pickup_after_dropoff", shown)
                    continue
                coords = [to_scaled(fields[i], 9) for i in (6, 7, 8, 9)]
                if None in coords:
                    self._reject(line_no, "bad_coordinate", shown)
                    continue
                if dropoff < latest:
                    self._reject(line_no, "out_of_order", shown)
                    continue
                latest = dropoff
                stats.accepted += 1
                yield self._event(line_no, fields, coords, read_ns)  # type: ignore[arg-type]

    def _event(self, seq: int, fields: list[str], coords: list[int], read_ns: int) -> GraphEvent:
        d = self.dictionary
        p = self._p
        stats = self.stats
        plon, plat, dlon, dlat = coords
        if Q1_GRID.cell(plon, plat) is None or Q1_GRID.cell(dlon, dlat) is None:
            stats.outliers["q1"] += 1
        if Q2_GRID.cell(plon, plat) is None or Q2_GRID.cell(dlon, dlat) is None:
            stats.outliers["q2"] += 1
        trip = d.numbered_iri_id(V.TRIP_PREFIX, seq)
        triples = [
            (trip, *self._type),
            (trip, p["medallion"], self._string_id(fields[0])),
            (trip, p["hackLicense"], self._string_id(fields[1])),
            (trip, p["pickupDatetime"], d.datetime_id(self._millis(fields[2]))),
            (trip, p["dropoffDatetime"], d.datetime_id(self._millis(fields[3]))),
            (trip, p["pickupLongitude"], d.decimal_id(plon, 9)),
            (trip, p["pickupLatitude"], d.decimal_id(plat, 9)),
            (trip, p["dropoffLongitude"], d.decimal_id(dlon, 9)),
            (trip, p["dropoffLatitude"], d.decimal_id(dlat, 9)),
            (trip, p["paymentType"], self._string_id(fields[10])),
            (trip, p["seq"], d.integer_id(seq)),
        ]
        fare, tip = to_scaled(fields[11], 2), to_scaled(fields[14], 2)
        if fare is None or tip is None or fare < 0 or tip < 0:
            stats.profit_excluded += 1
        if fare is not None:
            triples.append((trip, p["fareAmount"], _decimal_or_literal(d, fare, 2, fields[11])))
        if tip is not None:
            triples.append((trip, p["tipAmount"], _decimal_or_literal(d, tip, 2, fields[14])))
        seconds = fields[4]
        if seconds.isascii() and seconds.isdigit():
            triples.append((trip, p["tripTimeSecs"], _integer_or_literal(d, int(seconds))))
        distance = to_scaled(fields[5], 9)
        if distance is not None:
            triples.append((trip, p["tripDistance"], _decimal_or_literal(d, distance, 9, fields[5])))
        dropoff_ms = self._millis(fields[3])
        return GraphEvent(
            seq=seq,
            time=dropoff_ms,
            triples=tuple(triples),
            stream=self.stream,
            graph=d.numbered_iri_id(V.GRAPH_PREFIX, seq),
            meta=TripMeta(seq, fields[2], fields[3], read_ns),
        )


def _decimal_or_literal(d: Dictionary, scaled: int, places: int, text: str) -> int:
    try:
        return d.decimal_id(scaled, places)
    except OverflowError:  # absurdly large amounts: keep them exact in the table
        from taxi_rsp.rdf.namespaces import XSD_DECIMAL
        from feeder.validate import format_scaled

        return d.encode(Literal(format_scaled(scaled, places), XSD_DECIMAL))


def _integer_or_literal(d: Dictionary, value: int) -> int:
    try:
        return d.integer_id(value)
    except OverflowError:
        from taxi_rsp.rdf.namespaces import XSD_INTEGER

        return d.encode(Literal(str(value), XSD_INTEGER))
