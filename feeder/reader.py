"""The Feeder: a taxi CSV streamed line by line into RDF graph events (SPEC §1).

One accepted line becomes one graph event ⟨g : [dropoff]⟩ whose triples describe the
trip (vocabulary in :mod:`taxi_rsp.feeder.vocabulary`); a rejected line goes to the rejects
file with its line number and reason and is otherwise ignored (SPEC §1.1).

The loop below runs once per input line (2 M times on the 20-day file), so it is
written for speed: fields go through memoising codecs (:mod:`taxi_rsp.feeder.codecs`) and the
common case is a couple of dict lookups per field. It is also the reference for the native
loop, :mod:`taxi_rsp.feeder._native` (Cython, built by the install when a C compiler is
there), which the Feeder runs instead when it imports: same events, counts and rejects
(tests/test_feeder_native.py). ``Feeder(..., native=False)`` or the environment variable
``TAXI_RSP_PURE_PYTHON=1`` keeps the pure-Python loop.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TextIO

from taxi_rsp.feeder import vocabulary as V
from taxi_rsp.feeder.codecs import AxisCodec, ExactCodec, MoneyCodec, StringCodec, TimestampCodec
from taxi_rsp.feeder.records import FeedStats, TripStamps
from taxi_rsp.errors import UserError
from taxi_rsp.native import pure_python_requested
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent, StarGraph, StarLayout
from taxi_rsp.rdf.namespaces import RDF_TYPE, TRIPS_STREAM, XSD_DECIMAL, XSD_INTEGER
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.spec import FIELD_COUNT, FIELD_INDEX, Q1_GRID, Q2_GRID, REJECTS_HEADER

_F = FIELD_INDEX
_MEDALLION, _HACK, _PAYMENT = _F["medallion"], _F["hack_license"], _F["payment_type"]
_FARE, _TIP = _F["fare_amount"], _F["tip_amount"]
_PICKUP, _DROPOFF = _F["pickup_datetime"], _F["dropoff_datetime"]
_PLON, _PLAT = _F["pickup_longitude"], _F["pickup_latitude"]
_DLON, _DLAT = _F["dropoff_longitude"], _F["dropoff_latitude"]
_BOTH_GRIDS = 0b11  # mask bits of AxisCodec: bit 0 = Q1 grid, bit 1 = Q2 grid

# The fields that are only terms (no check reads their value; the medallion's is only
# checked for being there): a Feeder told which predicates its consumers match (``read``)
# neither decodes nor encodes those whose predicate is not among them. Their look-ups
# are most of the loop's cache misses (tens of thousands of medallions and licences).
OPTIONAL_TERMS = ("medallion", "hackLicense", "paymentType", "tripTimeSecs", "tripDistance")


try:  # the native loop is optional: the install builds it when it can
    from taxi_rsp.feeder._native import NativeEvents
except ImportError as exc:
    NativeEvents = None
    NATIVE_ERROR: str | None = str(exc)
else:
    NATIVE_ERROR = None


def native_available() -> bool:
    """Whether the native loop (``taxi_rsp.feeder._native``) is built and imports."""
    return NativeEvents is not None


def _choose_native(native: bool | None) -> bool:
    """``native`` as asked; None: the native loop when it is built, unless this process
    runs pure Python (``taxi_rsp.native.pure_python_requested``)."""
    if native is None:
        return NativeEvents is not None and not pure_python_requested()
    if native and NativeEvents is None:
        raise RuntimeError(f"the Feeder's native loop is not available ({NATIVE_ERROR}); "
                           "reinstall with a C compiler: pip install -e .")
    return native


class Feeder:
    """Iterate to get the graph events of ``path`` in file order; ``stats`` counts as
    it goes. ``rejects``, when given, is an open text file owned by the caller; it
    receives the header and one CSV row per rejected line."""

    def __init__(
        self,
        path: Path,
        dictionary: Dictionary,
        rejects: TextIO | None = None,
        stream_iri: str = TRIPS_STREAM,
        *,
        first_line: int = 1,
        latest_dropoff: int | None = None,
        lines: Iterable[bytes] | None = None,
        native: bool | None = None,
        read: Collection[str] | None = None,
    ) -> None:
        """``first_line``, ``latest_dropoff`` and ``lines`` feed a slice of a larger file
        exactly as a sequential pass would see it (time-partitioned runs, taxi_rsp.scaleout):
        the slice's raw lines (instead of reading ``path``), the global number of its first
        line (= seq) and the latest accepted drop-off in ms before it (out-of-order check).
        ``native``: True runs the native loop (an error if it is not built), False the
        pure-Python one, None (default) the native one when built unless the process
        runs pure Python (``TAXI_RSP_PURE_PYTHON=1``); ``self.native`` says which runs.
        ``read``: the predicate IRIs some consumer of the events matches
        (:func:`~taxi_rsp.algebra.analysis.stream_predicates`); the fields of
        ``OPTIONAL_TERMS`` whose predicate is not among them are left out of the graphs
        (``self.left_out`` names them). None (default): every field, as RDF needs."""
        self.native = _choose_native(native)
        self.left_out = () if read is None else tuple(n for n in OPTIONAL_TERMS if V.PREDICATES[n] not in read)
        # per field of OPTIONAL_TERMS: whether the loop encodes it
        self._reads = tuple(n not in self.left_out for n in OPTIONAL_TERMS)
        self.path = Path(path)
        self.dictionary = dictionary
        self.stats = FeedStats()
        self.stream = dictionary.encode(IRI(stream_iri))
        self._started = False
        self._first_line = first_line
        self._latest_start = -(1 << 62) if latest_dropoff is None else latest_dropoff
        self._lines = lines
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
        if self._started:  # counts, rejects and the out-of-order clock belong to one pass
            raise RuntimeError("a Feeder reads its input once; make a new Feeder to read it again")
        self._started = True
        return self._read()

    def _read(self) -> Iterator[GraphEvent]:
        events = self._native_events if self.native else self._events
        if self._lines is not None:
            yield from events(self._lines)
            return
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise UserError(f"cannot read input {self.path}: {exc.strerror}") from None
        with handle:
            yield from events(handle)

    def _star_layout(self) -> StarLayout:
        """The predicates of a trip's star graph, in the order of its objects tuple."""
        (medallion_p, hack_p, payment_p, pickup_p, dropoff_p, plon_p, plat_p, dlon_p, dlat_p,
         seq_p, fare_p, tip_p, secs_p, dist_p) = self._p
        return StarLayout((self._type[0], medallion_p, hack_p, pickup_p, dropoff_p, plon_p, plat_p, dlon_p,
                           dlat_p, payment_p, seq_p, fare_p, tip_p, secs_p, dist_p))

    def _native_events(self, handle: Iterable[bytes]) -> Iterator[GraphEvent]:
        """The native twin of :meth:`_events` (same events, counts and rejects)."""
        return NativeEvents(self, handle, self._star_layout())

    def _events(self, handle) -> Iterator[GraphEvent]:  # noqa: C901, PLR0915 - one flat hot loop
        # Everything the loop touches is bound to a local first: attribute and global
        # lookups are a large share of the per-line cost in CPython. Codec results are
        # never falsy, so ``get(text) or miss(text)`` parses only on a cache miss (and
        # for invalid texts, which are rare and cached as None).
        stats, outliers, reject = self.stats, self.stats.outliers, self._reject
        perf, decode = time.perf_counter_ns, bytes.decode
        stamp_get, stamp_miss = self._stamps.cache.get, self._stamps.miss
        lon_get, lon_miss = self._lon.cache.get, self._lon.miss
        lat_get, lat_miss = self._lat.cache.get, self._lat.miss
        text_get, text_miss = self._strings.cache.get, self._strings.miss
        money_get, money_miss = self._money.cache.get, self._money.miss
        (secs_codec, secs_at, _), (dist_codec, dist_at, _) = self._optional
        secs_get, secs_miss = secs_codec.cache.get, secs_codec.miss
        dist_get, dist_miss = dist_codec.cache.get, dist_codec.miss
        trip_class = self._type[1]
        read_medallion, read_hack, read_payment, read_secs, read_dist = self._reads
        layout = self._star_layout()
        trip_id, graph_id, integer_id = self._trip_id, self._graph_id, self._integer_id
        stream = self.stream
        latest = self._latest_start  # the latest accepted drop-off, in ms
        accepted = 0
        # Binary iteration splits on b"\n" only; a last line without LF is still a line.
        skipped = self._first_line - 1
        for line_no, raw in enumerate(handle, self._first_line):
            read_ns = perf()
            stats.lines_read = line_no - skipped
            text = decode(raw, "utf-8", "replace")
            fields = text.split(",")  # the line end stays in the 17th field, never read
            if len(fields) != FIELD_COUNT:
                reject(line_no, "field_count", text)
                continue
            medallion = fields[_MEDALLION]
            if not medallion or medallion.isspace():  # = empty once stripped
                reject(line_no, "bad_medallion", text)
                continue
            # Codec caches are keyed by the text as read: a hit strips nothing.
            field = fields[_PICKUP]
            start = stamp_get(field) or stamp_miss(field)
            field = fields[_DROPOFF]
            end = stamp_get(field) or stamp_miss(field)
            if start is None or end is None:
                reject(line_no, "bad_timestamp", text)
                continue
            if start[0] > end[0]:
                reject(line_no, "pickup_after_dropoff", text)
                continue
            field = fields[_PLON]
            plon = lon_get(field) or lon_miss(field)
            field = fields[_PLAT]
            plat = lat_get(field) or lat_miss(field)
            field = fields[_DLON]
            dlon = lon_get(field) or lon_miss(field)
            field = fields[_DLAT]
            dlat = lat_get(field) or lat_miss(field)
            if plon is None or plat is None or dlon is None or dlat is None:
                reject(line_no, "bad_coordinate", text)
                continue
            if end[0] < latest:
                reject(line_no, "out_of_order", text)
                continue
            latest = end[0]
            accepted += 1
            stats.accepted = accepted

            mask = plon[1] & plat[1] & dlon[1] & dlat[1]
            if mask != _BOTH_GRIDS:
                if not mask & 1:
                    outliers["q1"] += 1
                if not mask & 2:
                    outliers["q2"] += 1
            # (terms are encoded in the order the triples list them: ids stay the same)
            medallion_id = (text_get(medallion) or text_miss(medallion)) if read_medallion else None
            field = fields[_HACK]
            hack_id = (text_get(field) or text_miss(field)) if read_hack else None
            field = fields[_PAYMENT]
            payment_id = (text_get(field) or text_miss(field)) if read_payment else None
            field = fields[_FARE]
            fare = money_get(field) or money_miss(field)
            field = fields[_TIP]
            tip = money_get(field) or money_miss(field)
            if fare is None or tip is None or fare[0] < 0 or tip[0] < 0:
                stats.profit_excluded += 1
            field = fields[secs_at]
            secs = (secs_get(field) or secs_miss(field)) if read_secs else None
            field = fields[dist_at]
            dist = (dist_get(field) or dist_miss(field)) if read_dist else None
            # One star graph per trip: objects in layout order, None where a field has no
            # triple; its triples are built only if a consumer iterates them.
            graph = StarGraph(trip_id(line_no), layout, (
                trip_class, medallion_id, hack_id, start[1], end[1], plon[0], plat[0], dlon[0], dlat[0],
                payment_id, integer_id(line_no),
                None if fare is None else fare[1],
                None if tip is None else tip[1],
                secs, dist,
            ))
            yield GraphEvent(line_no, end[0], graph, stream, graph_id(line_no),
                             read_ns, TripStamps(start[2], end[2]))


def _offset_encoder(encode: Callable[[int], int]) -> Callable[[int], int]:
    """``encode`` for line numbers, as one addition when ids of ``n`` are ``id(0) + n``.

    The dictionary inlines integers and numbered IRIs by packing the number into the
    id; the layout is checked here on probes (up to 2^40, far beyond any line count)
    rather than assumed, and any other layout keeps the dictionary's own slower call.
    """
    base = encode(0)
    if all(encode(n) == base + n for n in (1, 2, 12_345, (1 << 20) + 7, (1 << 40) - 1)):
        return base.__add__
    return encode
