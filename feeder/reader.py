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
from collections.abc import Callable, Iterator
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
_MEDALLION, _HACK, _PAYMENT = _F["medallion"], _F["hack_license"], _F["payment_type"]
_FARE, _TIP = _F["fare_amount"], _F["tip_amount"]
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
        self._rejects = self._rejects_quoted = None
        if rejects is not None:
            rejects.write(REJECTS_HEADER + "\n")
            self._rejects = csv.writer(rejects, lineterminator="\n")
            # Python 3.11's writer quotes only the terminator's characters, so a lone CR
            # would come out bare and split the row for readers: quote such rows fully.
            self._rejects_quoted = csv.writer(rejects, lineterminator="\n", quoting=csv.QUOTE_ALL)
        encode = dictionary.encode
        self._p = tuple(encode(IRI(V.PREDICATES[name])) for name in (
            "medallion", "hackLicense", "paymentType", "pickupDatetime", "dropoffDatetime",
            "pickupLongitude", "pickupLatitude", "dropoffLongitude", "dropoffLatitude",
            "seq", "fareAmount", "tipAmount", "tripTimeSecs", "tripDistance",
        ))
        self._type = (encode(IRI(RDF_TYPE)), encode(IRI(V.TRIP_CLASS)))
        # Register the numbered-IRI prefixes once, so per-event ids are computed inline.
        encode(IRI(V.TRIP_PREFIX + "0"))
        encode(IRI(V.GRAPH_PREFIX + "0"))
        self._trip_id = _offset_encoder(lambda n: dictionary.numbered_iri_id(V.TRIP_PREFIX, n))
        self._graph_id = _offset_encoder(lambda n: dictionary.numbered_iri_id(V.GRAPH_PREFIX, n))
        self._integer_id = _offset_encoder(dictionary.integer_id)
        grids = (Q1_GRID, Q2_GRID)
        self._strings = StringCodec(dictionary)
        self._stamps = TimestampCodec(dictionary)
        self._lon = AxisCodec(dictionary, grids, is_longitude=True)
        self._lat = AxisCodec(dictionary, grids, is_longitude=False)
        self._money = MoneyCodec(dictionary)
        self._optional = (
            (ExactCodec(dictionary, XSD_INTEGER), _F["trip_time_in_secs"], self._p[12]),
            (ExactCodec(dictionary, XSD_DECIMAL), _F["trip_distance"], self._p[13]),
        )

    def _reject(self, line_no: int, reason: str, text: str) -> None:
        self.stats.rejected[reason] += 1
        if self._rejects is not None:
            if text.endswith("\n"):  # the raw line is shown without its line end
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            writer = self._rejects_quoted if "\r" in text else self._rejects
            writer.writerow((line_no, reason, text))

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
        pickup_at, dropoff_at = _F["pickup_datetime"], _F["dropoff_datetime"]
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
            if not fields[_MEDALLION].strip():
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
        (medallion, hack, payment, pickup_at, dropoff_at, plon, plat, dlon, dlat,
         number, fare_p, tip_p, seconds_p, distance_p) = self._p
        trip = self._trip_id(seq)
        strings = self._strings
        get = strings.cache.get
        texts = [get(text) or strings.miss(text) for text in  # ids are never 0
                 (fields[_MEDALLION].strip(), fields[_HACK].strip(), fields[_PAYMENT].strip())]
        triples = [
            (trip, self._type[0], self._type[1]),
            (trip, medallion, texts[0]),
            (trip, hack, texts[1]),
            (trip, pickup_at, start[1]),
            (trip, dropoff_at, end[1]),
            (trip, plon, coords[0][0]),
            (trip, plat, coords[1][0]),
            (trip, dlon, coords[2][0]),
            (trip, dlat, coords[3][0]),
            (trip, payment, texts[2]),
            (trip, number, self._integer_id(seq)),
        ]
        money = self._money
        text = fields[_FARE].strip()
        fare = money.cache.get(text, MISS)
        if fare is MISS:
            fare = money.miss(text)
        text = fields[_TIP].strip()
        tip = money.cache.get(text, MISS)
        if tip is MISS:
            tip = money.miss(text)
        if fare is None or tip is None or fare[0] < 0 or tip[0] < 0:
            self.stats.profit_excluded += 1
        if fare is not None:
            triples.append((trip, fare_p, fare[1]))
        if tip is not None:
            triples.append((trip, tip_p, tip[1]))
        for codec, index, predicate in self._optional:  # trip time and distance
            text = fields[index].strip()
            found = codec.cache.get(text, MISS)
            if found is MISS:
                found = codec.miss(text)
            if found is not None:
                triples.append((trip, predicate, found))
        return GraphEvent(seq, end[0], tuple(triples), self.stream, self._graph_id(seq),
                          TripMeta(seq, pickup, dropoff, read_ns))


def _offset_encoder(encode: Callable[[int], int]) -> Callable[[int], int]:
    """``encode`` for line numbers, as one addition when ids of ``n`` are ``id(0) + n``.

    The dictionary inlines integers and numbered IRIs by packing the number into the
    id; the layout is checked here on probes rather than assumed, and any other layout
    keeps the dictionary's own (slower) call.
    """
    base = encode(0)
    if all(encode(n) == base + n for n in (1, 2, 12_345, (1 << 20) + 7, (1 << 40) - 1)):
        return base.__add__
    return encode
