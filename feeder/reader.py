"""The Feeder: a taxi CSV streamed line by line into RDF graph events (SPEC §1).

One accepted line becomes one graph event ⟨g : [dropoff]⟩ whose triples describe the
trip (vocabulary in :mod:`feeder.vocabulary`); a rejected line goes to the rejects
file with its line number and reason and is otherwise ignored (SPEC §1.1).

The loop below runs once per input line (2 M times on the 20-day file), so it is
written for speed: fields go through memoising codecs (:mod:`feeder.codecs`) and the
common case is a couple of dict lookups per field.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from feeder import vocabulary as V
from feeder.codecs import MISS, AxisCodec, ExactCodec, MoneyCodec, StringCodec, TimestampCodec
from feeder.records import FeedStats, TripMeta
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import RDF_TYPE, STREAMS, XSD_DECIMAL, XSD_INTEGER
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.spec import FIELD_COUNT, FIELD_INDEX, Q1_GRID, Q2_GRID, REJECTS_HEADER

_F = FIELD_INDEX
_STRING_FIELDS = (_F["medallion"], _F["hack_license"], _F["payment_type"])
_BOTH_GRIDS = 0b11  # mask bits of AxisCodec: bit 0 = Q1 grid, bit 1 = Q2 grid


class Feeder:
    """Iterate to get the graph events of ``path`` in file order; ``stats`` counts as
    it goes. ``rejects``, when given, is an open text file owned by the caller; it
    receives the header and one CSV row per rejected line."""

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
        self.stream = dictionary.encode(IRI(stream_iri))
        self._rejects = None
        if rejects is not None:
            rejects.write(REJECTS_HEADER + "\n")
            self._rejects = csv.writer(rejects, lineterminator="\n")
        encode = dictionary.encode
        self._predicates = {name: encode(IRI(iri)) for name, iri in V.PREDICATES.items()}
        self._type = (encode(IRI(RDF_TYPE)), encode(IRI(V.TRIP_CLASS)))
        # Register the numbered-IRI prefixes once, so per-event ids are computed inline.
        encode(IRI(V.TRIP_PREFIX + "0"))
        encode(IRI(V.GRAPH_PREFIX + "0"))
        grids = (Q1_GRID, Q2_GRID)
        self._strings = StringCodec(dictionary)
        self._stamps = TimestampCodec(dictionary)
        self._lon = AxisCodec(dictionary, grids, is_longitude=True)
        self._lat = AxisCodec(dictionary, grids, is_longitude=False)
        money = MoneyCodec(dictionary)
        self._optional = (
            (money, _F["fare_amount"]),
            (money, _F["tip_amount"]),
            (ExactCodec(dictionary, XSD_INTEGER), _F["trip_time_in_secs"]),
            (ExactCodec(dictionary, XSD_DECIMAL), _F["trip_distance"]),
        )

    def _reject(self, line_no: int, reason: str, text: str) -> None:
        self.stats.rejected[reason] += 1
        if self._rejects is not None:
            if text.endswith("\n"):  # the raw line is shown without its line end
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            self._rejects.writerow((line_no, reason, text))

    def __iter__(self) -> Iterator[GraphEvent]:
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise UserError(f"cannot read input {self.path}: {exc.strerror}") from None
        with handle:
            yield from self._events(handle)

    def _events(self, handle) -> Iterator[GraphEvent]:  # noqa: C901 - one flat hot loop
        stats = self.stats
        outliers = stats.outliers
        reject = self._reject
        perf = time.perf_counter_ns
        stamps, stamp_get = self._stamps, self._stamps.cache.get
        lon, lat = self._lon, self._lat
        axes = tuple((codec, codec.cache.get, _F[name]) for codec, name in (
            (lon, "pickup_longitude"), (lat, "pickup_latitude"),
            (lon, "dropoff_longitude"), (lat, "dropoff_latitude"),
        ))
        medallion, pickup_at, dropoff_at = _F["medallion"], _F["pickup_datetime"], _F["dropoff_datetime"]
        latest = -(1 << 62)  # the latest accepted drop-off, in ms
        accepted = 0
        # Binary iteration splits on b"\n" only; a last line without LF is still a line.
        for line_no, raw in enumerate(handle, 1):
            read_ns = perf()
            stats.lines_read = line_no
            text = raw.decode("utf-8", "replace")
            fields = text.split(",")  # the line end stays in the 17th field, never read
            if len(fields) != FIELD_COUNT:
                reject(line_no, "field_count", text)
                continue
            if not fields[medallion].strip():
                reject(line_no, "bad_medallion", text)
                continue
            pickup = fields[pickup_at].strip()
            dropoff = fields[dropoff_at].strip()
            start = stamp_get(pickup, MISS)
            if start is MISS:
                start = stamps.miss(pickup)
            end = stamp_get(dropoff, MISS)
            if end is MISS:
                end = stamps.miss(dropoff)
            if start is None or end is None:
                reject(line_no, "bad_timestamp", text)
                continue
            if start[0] > end[0]:
                reject(line_no, "pickup_after_dropoff", text)
                continue
            coords = []
            for codec, get, index in axes:
                field = fields[index].strip()
                coded = get(field, MISS)
                if coded is MISS:
                    coded = codec.miss(field)
                if coded is None:
                    break
                coords.append(coded)
            else:
                if end[0] < latest:
                    reject(line_no, "out_of_order", text)
                    continue
                latest = end[0]
                mask = coords[0][1] & coords[1][1] & coords[2][1] & coords[3][1]
                if mask != _BOTH_GRIDS:
                    if not mask & 1:
                        outliers["q1"] += 1
                    if not mask & 2:
                        outliers["q2"] += 1
                accepted += 1
                stats.accepted = accepted
                yield self._event(line_no, fields, pickup, dropoff, start, end, coords, read_ns)
                continue
            reject(line_no, "bad_coordinate", text)

    def _event(self, seq: int, fields: list[str], pickup: str, dropoff: str,
               start: tuple[int, int], end: tuple[int, int],
               coords: list[tuple[int, int]], read_ns: int) -> GraphEvent:
        """The graph event of an accepted line (triples listed in :mod:`feeder.vocabulary`)."""
        d = self.dictionary
        p = self._predicates
        trip = d.numbered_iri_id(V.TRIP_PREFIX, seq)
        strings = self._strings
        texts = []
        for index in _STRING_FIELDS:  # medallion, hack license, payment type
            text = fields[index].strip()
            found = strings.cache.get(text)
            texts.append(found if found is not None else strings.miss(text))
        triples = [
            (trip, *self._type),
            (trip, p["medallion"], texts[0]),
            (trip, p["hackLicense"], texts[1]),
            (trip, p["pickupDatetime"], start[1]),
            (trip, p["dropoffDatetime"], end[1]),
            (trip, p["pickupLongitude"], coords[0][0]),
            (trip, p["pickupLatitude"], coords[1][0]),
            (trip, p["dropoffLongitude"], coords[2][0]),
            (trip, p["dropoffLatitude"], coords[3][0]),
            (trip, p["paymentType"], texts[2]),
            (trip, p["seq"], d.integer_id(seq)),
        ]
        coded = []
        for codec, index in self._optional:  # fare, tip, trip time, distance
            text = fields[index].strip()
            found = codec.cache.get(text, MISS)
            coded.append(codec.miss(text) if found is MISS else found)
        fare, tip, seconds, distance = coded
        if fare is None or tip is None or fare[0] < 0 or tip[0] < 0:
            self.stats.profit_excluded += 1
        if fare is not None:
            triples.append((trip, p["fareAmount"], fare[1]))
        if tip is not None:
            triples.append((trip, p["tipAmount"], tip[1]))
        if seconds is not None:
            triples.append((trip, p["tripTimeSecs"], seconds))
        if distance is not None:
            triples.append((trip, p["tripDistance"], distance))
        return GraphEvent(
            seq=seq,
            time=end[0],
            triples=tuple(triples),
            stream=self.stream,
            graph=d.numbered_iri_id(V.GRAPH_PREFIX, seq),
            meta=TripMeta(seq, pickup, dropoff, read_ns),
        )
