# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The Feeder's per-line loop in C (issue 15 §4): the same events, counts and rejects
as :meth:`taxi_rsp.feeder.reader.Feeder._events`, the pure-Python reference.

Per line, C code splits the bytes on commas, validates the line in SPEC §1.1 order,
parses both timestamps (strict ``YYYY-MM-DD HH:MM:SS``, real calendar), the four
coordinates (exact nano-degrees) and fare and tip (exact cents), both rounded once half
to even like :func:`taxi_rsp.feeder.validate.to_scaled`, computes the grid masks and the
inline dictionary ids. No field text becomes a Python string unless something needs
one: the string fields and the optional exact fields (trip time, distance) go through
the Feeder's own codecs, and so does every field the C code cannot decide exactly -
a field with non-ASCII bytes (decoded as the reference does), a number with more
significant digits than 64 bits hold, a value outside the inline id range (whose term
goes into the dictionary table, in the same order as the reference encodes it).

The inline id layout and the grid bounds are read from the Python modules at start-up
(:mod:`taxi_rsp.rdf.dictionary`, the Feeder's :class:`AxisCodec` instances) and checked
against :class:`Dictionary` on probes; nothing about them is written down twice.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Calloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.stdint cimport INT64_MAX, INT64_MIN, int64_t, uint64_t
from libc.string cimport memcmp, memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

import time

from taxi_rsp.feeder.records import TripStamps
from taxi_rsp.rdf import dictionary as _layout
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent, StarGraph
from taxi_rsp.spec import FIELD_COUNT, FIELD_INDEX

# -- the inline id layout, from taxi_rsp.rdf.dictionary ------------------------------------
cdef uint64_t INLINE_FLAG = _layout.INLINE_FLAG
cdef uint64_t PAYLOAD_MASK = _layout.PAYLOAD_MASK
cdef int64_t PAYLOAD_MIN = _layout.PAYLOAD_MIN
cdef int64_t PAYLOAD_MAX = _layout.PAYLOAD_MAX
cdef uint64_t DECIMAL_TAG = (<uint64_t>_layout.T_DECIMAL) << <int>_layout.TYPE_SHIFT
cdef uint64_t DATETIME_TAG = (<uint64_t>_layout.T_DATETIME) << <int>_layout.TYPE_SHIFT
cdef int DECIMAL_PLACES = len(str(_layout.DECIMAL_SCALE)) - 1  # 10**9 -> 9

# -- the line layout, from taxi_rsp.spec --------------------------------------------------
cdef enum:
    MAX_FIELDS = 64
    MAX_GRIDS = 8
    STAMP_LEN = 19  # len("YYYY-MM-DD HH:MM:SS")
cdef Py_ssize_t NFIELDS = FIELD_COUNT
cdef Py_ssize_t F_MEDALLION = FIELD_INDEX["medallion"]
cdef Py_ssize_t F_HACK = FIELD_INDEX["hack_license"]
cdef Py_ssize_t F_PAYMENT = FIELD_INDEX["payment_type"]
cdef Py_ssize_t F_FARE = FIELD_INDEX["fare_amount"]
cdef Py_ssize_t F_TIP = FIELD_INDEX["tip_amount"]
cdef Py_ssize_t F_PICKUP = FIELD_INDEX["pickup_datetime"]
cdef Py_ssize_t F_DROPOFF = FIELD_INDEX["dropoff_datetime"]
cdef Py_ssize_t F_PLON = FIELD_INDEX["pickup_longitude"]
cdef Py_ssize_t F_PLAT = FIELD_INDEX["pickup_latitude"]
cdef Py_ssize_t F_DLON = FIELD_INDEX["dropoff_longitude"]
cdef Py_ssize_t F_DLAT = FIELD_INDEX["dropoff_latitude"]
if not 0 < FIELD_COUNT <= MAX_FIELDS:
    raise ImportError(f"the native Feeder handles at most {MAX_FIELDS} fields, SPEC has {FIELD_COUNT}")

cdef int64_t POW10[19]
POW10[0] = 1
for _i in range(1, 19):
    POW10[_i] = POW10[_i - 1] * 10

cdef bint PERF_IS_MONOTONIC = time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)"
_perf_counter_ns = time.perf_counter_ns
_tuple_new = tuple.__new__

# Fast-path results of the number and timestamp parsers.
cdef enum:
    NOT_VALID = 0
    VALID = 1
    ASK_PYTHON = 2  # valid or not, the C code cannot represent it: the Python codec decides


# -- pure C helpers ------------------------------------------------------------------------

cdef inline bint is_space(unsigned char c) noexcept nogil:
    """``str.isspace`` on an ASCII character (what ``str.strip()`` removes)."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef inline void strip(const unsigned char** text, Py_ssize_t* size) noexcept nogil:
    cdef const unsigned char* p = text[0]
    cdef Py_ssize_t n = size[0]
    while n > 0 and is_space(p[0]):
        p += 1
        n -= 1
    while n > 0 and is_space(p[n - 1]):
        n -= 1
    text[0] = p
    size[0] = n


cdef inline bint is_digit(unsigned char c) noexcept nogil:
    return 48 <= c <= 57


cdef int scaled(const unsigned char* p, Py_ssize_t n, int places, int64_t* out) noexcept nogil:
    """:func:`to_scaled` of the stripped ASCII text ``p[:n]``: VALID with ``*out``,
    NOT_VALID, or ASK_PYTHON when the value needs more than 18 significant digits."""
    cdef bint negative = False
    cdef Py_ssize_t i = 0, dot = -1, frac_start, frac_len, k
    cdef int64_t value = 0
    cdef int significant = 0, digit
    cdef unsigned char c, first
    cdef bint rest_nonzero = False
    if n > 0 and (p[0] == 43 or p[0] == 45):  # '+' or '-'
        negative = p[0] == 45
        i = 1
    for k in range(i, n):
        if p[k] == 46:  # '.': the first one splits whole and fraction
            dot = k
            break
    if dot < 0:
        dot = n
        frac_start = n
    else:
        frac_start = dot + 1
    frac_len = n - frac_start
    if dot - i + frac_len == 0:  # "", "+", ".", "-." are not numbers
        return NOT_VALID
    for k in range(i, dot):  # the whole part, then the kept fraction digits
        c = p[k]
        if not is_digit(c):
            return NOT_VALID
        if value == 0 and c == 48:
            continue
        significant += 1
        if significant <= 18:
            value = value * 10 + (c - 48)
    for k in range(places):
        if k < frac_len:
            c = p[frac_start + k]
            if not is_digit(c):
                return NOT_VALID
            digit = c - 48
        else:
            digit = 0
        if value == 0 and digit == 0:
            continue
        significant += 1
        if significant <= 18:
            value = value * 10 + digit
    if frac_len > places:  # digits below the unit: validate, then round half to even
        first = p[frac_start + places]
        if not is_digit(first):
            return NOT_VALID
        for k in range(frac_start + places + 1, n):
            c = p[k]
            if not is_digit(c):
                return NOT_VALID
            if c != 48:
                rest_nonzero = True
        if significant > 18:
            return ASK_PYTHON
        if first > 53 or (first == 53 and (rest_nonzero or value & 1)):
            value += 1
    elif significant > 18:
        return ASK_PYTHON
    out[0] = -value if negative else value
    return VALID


cdef inline bint is_leap(int64_t year) noexcept nogil:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


cdef inline int two_digits(const unsigned char* p) noexcept nogil:
    if not (is_digit(p[0]) and is_digit(p[1])):
        return -1
    return (p[0] - 48) * 10 + (p[1] - 48)


cdef int timestamp(const unsigned char* p, Py_ssize_t n, int64_t* out) noexcept nogil:
    """:func:`timestamp_millis` of the stripped ASCII text ``p[:n]``: VALID with the
    milliseconds since 1970-01-01 in ``*out``, or NOT_VALID."""
    cdef int64_t year, month, day, hour, minute, second, days, era, yoe, doy, doe, y, m
    cdef int hi, lo
    if n != STAMP_LEN or p[4] != 45 or p[7] != 45 or p[10] != 32 or p[13] != 58 or p[16] != 58:
        return NOT_VALID
    hi = two_digits(p)
    lo = two_digits(p + 2)
    month = two_digits(p + 5)
    day = two_digits(p + 8)
    hour = two_digits(p + 11)
    minute = two_digits(p + 14)
    second = two_digits(p + 17)
    if hi < 0 or lo < 0 or month < 0 or day < 0 or hour < 0 or minute < 0 or second < 0:
        return NOT_VALID
    year = hi * 100 + lo
    if year < 1 or month < 1 or month > 12 or day < 1 or hour > 23 or minute > 59 or second > 59:
        return NOT_VALID  # datetime.date's range; no leap seconds, no 24:00:00
    if month == 2:
        if day > (29 if is_leap(year) else 28):
            return NOT_VALID
    elif day > (30 if month == 4 or month == 6 or month == 9 or month == 11 else 31):
        return NOT_VALID
    # days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil)
    y = year - 1 if month <= 2 else year
    m = month
    era = y // 400  # y >= 0 here
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    out[0] = ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000
    return VALID


cdef inline uint64_t inline_id(uint64_t tag, int64_t payload) noexcept nogil:
    return INLINE_FLAG | tag | (<uint64_t>payload & PAYLOAD_MASK)


cdef int decimal_payload(int64_t scaled_value, int places, int64_t* out) noexcept nogil:
    """``Dictionary.decimal_id``'s payload of ``scaled_value / 10**places``; 0 when it
    does not fit (the dictionary then keeps the term in its table)."""
    cdef int64_t factor = POW10[DECIMAL_PLACES - places]
    if scaled_value > PAYLOAD_MAX // factor or scaled_value < -(-PAYLOAD_MIN // factor):
        return 0
    out[0] = scaled_value * factor
    if not PAYLOAD_MIN <= out[0] <= PAYLOAD_MAX:
        return 0
    return 1


def _check_layout() -> None:
    """The formulas above against :class:`Dictionary` itself, on probes; a layout this
    module cannot follow stops the import (the Feeder then names the problem)."""
    cdef int64_t payload
    probes = (0, 1, -1, 5, 1_234_567, -73_956_528_000, 40_716_976_000, PAYLOAD_MAX // 1000,
              PAYLOAD_MIN // 1000, 10**17, -(10**17), 1_356_998_520_000, -62_135_596_800_000)
    for places in (2, DECIMAL_PLACES):
        for value in probes:
            try:
                expected = Dictionary.decimal_id(value, places)
            except OverflowError:
                expected = None
            got = inline_id(DECIMAL_TAG, payload) if decimal_payload(value, places, &payload) else None
            if got != expected:
                raise ImportError(f"the native Feeder does not follow Dictionary.decimal_id({value}, {places})")
    for value in probes:
        if inline_id(DATETIME_TAG, value) != Dictionary.datetime_id(value):
            raise ImportError(f"the native Feeder does not follow Dictionary.datetime_id({value})")


_check_layout()


cdef inline int64_t now_ns() except? -1:
    cdef timespec ts
    if PERF_IS_MONOTONIC:
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return <int64_t>ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    return _perf_counter_ns()


# line numbers below this are added to an inline base in C (``_offset_encoder`` probes
# the layout up to it); larger ones take the encoder's own call
cdef int64_t LINE_LIMIT = 1 << 40


cdef (int64_t, int64_t) offset_of(object encode):
    """(1, base) when ``encode`` is ``base.__add__`` (the Feeder's inline id of a line
    number, see ``_offset_encoder``) and ``base + n`` fits 64 signed bits for every
    ``n`` below LINE_LIMIT, else (0, 0): call ``encode`` per line. (Inline ids carry
    their flag in bit 62: a base is 2**62 or more.)"""
    owner = getattr(encode, "__self__", None)
    if (type(owner) is int and getattr(encode, "__name__", None) == "__add__"
            and 0 <= owner <= INT64_MAX - LINE_LIMIT):
        return 1, owner
    return 0, 0


# -- field bytes -> codec result ----------------------------------------------------------

# log2 of the memo table sizes (a memo holds up to half as many entries, then is emptied):
# medallions and licences run to tens of thousands, trip times and distances to thousands.
STRING_MEMO_BITS = 17
NUMBER_MEMO_BITS = 15


cdef struct MemoSlot:
    uint64_t hash
    PyObject* key  # the field's bytes (owned); NULL: a free slot
    PyObject* value  # the codec's result (owned)


cdef inline uint64_t hash_bytes(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """FNV-1a over 8-byte words, then a final mix (not for adversaries: a collision
    costs a longer probe, never a wrong answer)."""
    cdef uint64_t h = 14695981039346656037ULL ^ <uint64_t>n
    cdef uint64_t word
    while n >= 8:
        memcpy(&word, p, 8)
        h = (h ^ word) * 1099511628211ULL
        p += 8
        n -= 8
    word = 0
    memcpy(&word, p, n)
    h = (h ^ word) * 1099511628211ULL
    h ^= h >> 32
    h *= 0x9E3779B97F4A7C15ULL
    return h ^ (h >> 29)


cdef class FieldMemo:
    """A bounded memo of a field's raw bytes -> what a Python codec (``get(text) or
    miss(text)``) gives for the decoded text; the codec runs only on a miss, so its
    dictionary encodes happen exactly when the reference's would first happen. Spares
    building a string and hashing it for the fields whose values repeat (medallions,
    licences, payment types, trip times and distances). Emptied when full, like the
    codec caches."""

    cdef MemoSlot* slots
    cdef Py_ssize_t mask, used, limit
    cdef object get, miss

    def __cinit__(self, codec, int bits) -> None:
        if not 1 <= bits <= 30:
            raise ValueError(f"memo size 2**{bits} out of range")
        self.slots = <MemoSlot*>PyMem_Calloc(1 << bits, sizeof(MemoSlot))
        if self.slots == NULL:
            raise MemoryError()
        self.mask = (1 << bits) - 1
        self.limit = 1 << (bits - 1)  # at most half full: short probe runs
        self.used = 0
        self.get, self.miss = codec.cache.get, codec.miss

    def __dealloc__(self) -> None:
        if self.slots != NULL:
            self.clear()
            PyMem_Free(self.slots)

    cdef void clear(self) noexcept:
        cdef Py_ssize_t k
        for k in range(self.mask + 1):
            if self.slots[k].key != NULL:
                Py_XDECREF(self.slots[k].key)
                Py_XDECREF(self.slots[k].value)
                self.slots[k].key = self.slots[k].value = NULL
        self.used = 0

    cdef object lookup(self, const unsigned char* p, Py_ssize_t n):
        cdef uint64_t h = hash_bytes(p, n)
        cdef Py_ssize_t k = h & self.mask
        cdef MemoSlot* slot
        while self.slots[k].key != NULL:
            slot = &self.slots[k]
            if (slot.hash == h and PyBytes_GET_SIZE(<object>slot.key) == n
                    and memcmp(PyBytes_AS_STRING(<object>slot.key), p, n) == 0):
                return <object>slot.value
            k = (k + 1) & self.mask
        text = PyUnicode_DecodeUTF8(<const char*>p, n, "replace")
        value = self.get(text) or self.miss(text)
        if self.used >= self.limit:
            self.clear()
            k = h & self.mask
        key = PyBytes_FromStringAndSize(<const char*>p, n)
        slot = &self.slots[k]
        Py_INCREF(key)
        Py_INCREF(value)
        slot.key, slot.value, slot.hash = <PyObject*>key, <PyObject*>value, h
        self.used += 1
        return value


# -- the loop -----------------------------------------------------------------------------

cdef class NativeEvents:
    """Iterator over the graph events of ``handle`` (an iterable of ``bytes`` lines) for
    ``feeder``: the native twin of ``Feeder._events``, sharing its codecs, dictionary,
    counts and rejects writer."""

    cdef object lines, stats, reject, outliers, layout, trip_class, stream
    cdef object stamp_get, stamp_miss, lon_get, lon_miss, lat_get, lat_miss
    cdef object money_get, money_miss
    cdef FieldMemo strings, secs, dist
    cdef object trip_fn, graph_fn, integer_fn
    cdef int64_t trip_base, graph_base, integer_base
    cdef bint trip_inline, graph_inline, integer_inline
    cdef bint read_medallion, read_hack, read_payment, read_secs, read_dist  # see Feeder.left_out
    cdef Py_ssize_t secs_at, dist_at
    cdef int64_t line_no, skipped, accepted, profit_excluded, latest
    cdef int ngrids
    cdef int64_t lon_low[MAX_GRIDS]
    cdef int64_t lon_high[MAX_GRIDS]
    cdef int64_t lat_low[MAX_GRIDS]
    cdef int64_t lat_high[MAX_GRIDS]
    # the line being read
    cdef bytes raw
    cdef const unsigned char* buf
    cdef Py_ssize_t starts[MAX_FIELDS]
    cdef Py_ssize_t ends[MAX_FIELDS]
    cdef bint line_ascii
    # the last timestamp texts seen in each of the two fields, and what they gave
    cdef unsigned char memo_bytes[2][STAMP_LEN]
    cdef int64_t memo_ms[2]
    cdef object memo_text0, memo_text1
    # per-field results of the line being read
    cdef int64_t stamp_ms[2]
    cdef object stamp_text0, stamp_text1
    cdef int64_t coord_id[4]
    cdef int coord_mask[4]
    cdef int64_t money_id[2]
    cdef bint money_ok[2]
    cdef bint money_negative[2]

    def __init__(self, feeder, lines, layout) -> None:
        stats = feeder.stats
        self.lines = iter(lines)
        self.stats = stats
        self.outliers = stats.outliers
        self.reject = feeder._reject
        self.layout = layout
        self.trip_class = feeder._type[1]
        self.stream = feeder.stream
        self.stamp_get, self.stamp_miss = feeder._stamps.cache.get, feeder._stamps.miss
        self.lon_get, self.lon_miss = feeder._lon.cache.get, feeder._lon.miss
        self.lat_get, self.lat_miss = feeder._lat.cache.get, feeder._lat.miss
        self.money_get, self.money_miss = feeder._money.cache.get, feeder._money.miss
        (secs_codec, self.secs_at, _), (dist_codec, self.dist_at, _) = feeder._optional
        self.strings = FieldMemo(feeder._strings, STRING_MEMO_BITS)
        self.secs = FieldMemo(secs_codec, NUMBER_MEMO_BITS)
        self.dist = FieldMemo(dist_codec, NUMBER_MEMO_BITS)
        self.read_medallion, self.read_hack, self.read_payment, self.read_secs, self.read_dist = feeder._reads
        self.trip_fn, self.graph_fn, self.integer_fn = feeder._trip_id, feeder._graph_id, feeder._integer_id
        self.trip_inline, self.trip_base = offset_of(self.trip_fn)
        self.graph_inline, self.graph_base = offset_of(self.graph_fn)
        self.integer_inline, self.integer_base = offset_of(self.integer_fn)
        lon_bounds, lat_bounds = feeder._lon.bounds, feeder._lat.bounds
        if len(lon_bounds) != len(lat_bounds) or len(lon_bounds) > MAX_GRIDS:
            raise ValueError("the native Feeder needs one (low, high) pair per grid on each axis")
        self.ngrids = len(lon_bounds)
        for k in range(self.ngrids):
            self.lon_low[k], self.lon_high[k] = lon_bounds[k]
            self.lat_low[k], self.lat_high[k] = lat_bounds[k]
        self.line_no = feeder._first_line - 1
        self.skipped = feeder._first_line - 1
        self.accepted = stats.accepted
        self.profit_excluded = stats.profit_excluded
        self.latest = feeder._latest_start
        self.memo_ms[0] = self.memo_ms[1] = INT64_MIN  # no memo yet (no text matches)
        self.memo_text0 = self.memo_text1 = None

    def __iter__(self):
        return self

    def line_ids_in_c(self) -> tuple[bool, bool, bool]:
        """Whether the trip, integer and graph ids of a line number are one C addition
        (the dictionary inlines them) rather than a call per line."""
        return bool(self.trip_inline), bool(self.integer_inline), bool(self.graph_inline)

    def __next__(self):
        try:
            return self.next_event()
        finally:  # the counts hold between lines, also when a write of the rejects fails
            stats = self.stats
            stats.lines_read = self.line_no - self.skipped
            stats.accepted = self.accepted
            stats.profit_excluded = self.profit_excluded

    # -- one field at a time -----------------------------------------------------------
    cdef inline bint field_ascii(self, Py_ssize_t i) noexcept:
        cdef Py_ssize_t k
        if self.line_ascii:
            return True
        for k in range(self.starts[i], self.ends[i]):
            if self.buf[k] >= 128:
                return False
        return True

    cdef inline object field_text(self, Py_ssize_t i):
        """The field as the reference sees it: decoded, not stripped."""
        return PyUnicode_DecodeUTF8(<const char*>self.buf + self.starts[i], self.ends[i] - self.starts[i],
                                    "replace")

    cdef bint stamp(self, int slot, Py_ssize_t i) except -1:
        """Pickup (slot 0) or drop-off (slot 1): millis and text into ``stamp_*[slot]``."""
        cdef const unsigned char* p = self.buf + self.starts[i]
        cdef Py_ssize_t n = self.ends[i] - self.starts[i]
        cdef int64_t millis
        if not self.field_ascii(i):
            text = self.field_text(i)
            found = self.stamp_get(text) or self.stamp_miss(text)
            if found is None:
                return False
            self.stamp_ms[slot] = found[0]
            if slot == 0:
                self.stamp_text0 = found[2]
            else:
                self.stamp_text1 = found[2]
            return True
        strip(&p, &n)
        if n == STAMP_LEN and self.memo_ms[slot] != INT64_MIN and memcmp(p, self.memo_bytes[slot], STAMP_LEN) == 0:
            self.stamp_ms[slot] = self.memo_ms[slot]
            if slot == 0:
                self.stamp_text0 = self.memo_text0
            else:
                self.stamp_text1 = self.memo_text1
            return True
        if timestamp(p, n, &millis) != VALID:
            return False
        text = PyUnicode_DecodeASCII(<const char*>p, n, NULL)
        memcpy(self.memo_bytes[slot], p, STAMP_LEN)
        self.memo_ms[slot] = self.stamp_ms[slot] = millis
        if slot == 0:
            self.memo_text0 = self.stamp_text0 = text
        else:
            self.memo_text1 = self.stamp_text1 = text
        return True

    cdef bint coordinate(self, int slot, Py_ssize_t i, bint longitude) except -1:
        """One coordinate: its id and grid mask into ``coord_*[slot]``."""
        cdef const unsigned char* p = self.buf + self.starts[i]
        cdef Py_ssize_t n = self.ends[i] - self.starts[i]
        cdef int64_t nano, payload
        cdef int mask = 0, k
        cdef int state = ASK_PYTHON
        if self.field_ascii(i):
            strip(&p, &n)
            state = scaled(p, n, DECIMAL_PLACES, &nano)
            if state == NOT_VALID:
                return False
            if state == VALID and not decimal_payload(nano, DECIMAL_PLACES, &payload):
                state = ASK_PYTHON  # the term goes into the table: the codec encodes it
        if state == ASK_PYTHON:
            text = self.field_text(i)
            if longitude:
                found = self.lon_get(text) or self.lon_miss(text)
            else:
                found = self.lat_get(text) or self.lat_miss(text)
            if found is None:
                return False
            self.coord_id[slot] = found[0]
            self.coord_mask[slot] = found[1]
            return True
        if longitude:
            for k in range(self.ngrids):
                if self.lon_low[k] <= nano < self.lon_high[k]:
                    mask |= 1 << k
        else:
            for k in range(self.ngrids):
                if self.lat_low[k] <= nano < self.lat_high[k]:
                    mask |= 1 << k
        self.coord_id[slot] = <int64_t>inline_id(DECIMAL_TAG, payload)
        self.coord_mask[slot] = mask
        return True

    cdef int money(self, int slot, Py_ssize_t i) except -1:
        """Fare (slot 0) or tip (slot 1): whether it parses, its id, and its sign."""
        cdef const unsigned char* p = self.buf + self.starts[i]
        cdef Py_ssize_t n = self.ends[i] - self.starts[i]
        cdef int64_t cents, payload
        cdef int state = ASK_PYTHON
        if self.field_ascii(i):
            strip(&p, &n)
            state = scaled(p, n, 2, &cents)
            if state == VALID and not decimal_payload(cents, 2, &payload):
                state = ASK_PYTHON
        if state == ASK_PYTHON:
            text = self.field_text(i)
            found = self.money_get(text) or self.money_miss(text)
            self.money_ok[slot] = found is not None
            if found is not None:
                self.money_negative[slot] = found[0] < 0
                self.money_id[slot] = found[1]
            return 0
        self.money_ok[slot] = state == VALID
        if state == VALID:
            self.money_negative[slot] = cents < 0
            self.money_id[slot] = <int64_t>inline_id(DECIMAL_TAG, payload)
        return 0

    cdef inline object memo_field(self, Py_ssize_t i, FieldMemo memo):
        return memo.lookup(self.buf + self.starts[i], self.ends[i] - self.starts[i])

    cdef object line_id(self, bint inline, int64_t base, object encode, int64_t number):
        if inline and 0 <= number < LINE_LIMIT:
            return base + number
        return encode(number)

    # -- one line at a time ------------------------------------------------------------
    cdef object next_event(self):
        cdef int64_t read_ns, start, end, start_id, end_id
        cdef Py_ssize_t n, k, count, field_start
        cdef const unsigned char* buf
        cdef unsigned char c, high
        cdef int mask
        cdef bint ok
        cdef int full = (1 << self.ngrids) - 1
        while True:
            line = next(self.lines, None)
            if line is None:
                raise StopIteration
            read_ns = now_ns()
            self.line_no += 1
            self.raw = <bytes?>line
            buf = self.buf = <const unsigned char*><const char*>self.raw
            n = len(self.raw)
            # Split on every comma; the line end stays in the last field, never read.
            count = 0
            field_start = 0
            high = 0
            for k in range(n):
                c = buf[k]
                high |= c
                if c == 44:  # ','
                    if count < MAX_FIELDS:
                        self.starts[count] = field_start
                        self.ends[count] = k
                    count += 1
                    field_start = k + 1
            if count < MAX_FIELDS:
                self.starts[count] = field_start
                self.ends[count] = n
            count += 1
            self.line_ascii = high < 128
            if count != NFIELDS:
                self.reject_line("field_count")
                continue
            if not self.medallion_present():
                self.reject_line("bad_medallion")
                continue
            ok = self.stamp(0, F_PICKUP)
            ok = self.stamp(1, F_DROPOFF) and ok
            if not ok:
                self.reject_line("bad_timestamp")
                continue
            start, end = self.stamp_ms[0], self.stamp_ms[1]
            if start > end:
                self.reject_line("pickup_after_dropoff")
                continue
            # all four are read before the test, as in the reference (same table encodes)
            ok = self.coordinate(0, F_PLON, True)
            ok = self.coordinate(1, F_PLAT, False) and ok
            ok = self.coordinate(2, F_DLON, True) and ok
            ok = self.coordinate(3, F_DLAT, False) and ok
            if not ok:
                self.reject_line("bad_coordinate")
                continue
            if end < self.latest:
                self.reject_line("out_of_order")
                continue
            self.latest = end
            self.accepted += 1
            line_no = self.line_no
            mask = self.coord_mask[0] & self.coord_mask[1] & self.coord_mask[2] & self.coord_mask[3]
            if mask != full:
                if not mask & 1:
                    self.outliers["q1"] += 1
                if not mask & 2:
                    self.outliers["q2"] += 1
            # terms are encoded in the reference's order, so table ids come out the same
            medallion_id = self.memo_field(F_MEDALLION, self.strings) if self.read_medallion else None
            hack_id = self.memo_field(F_HACK, self.strings) if self.read_hack else None
            payment_id = self.memo_field(F_PAYMENT, self.strings) if self.read_payment else None
            self.money(0, F_FARE)
            self.money(1, F_TIP)
            if not (self.money_ok[0] and self.money_ok[1]) or self.money_negative[0] or self.money_negative[1]:
                self.profit_excluded += 1
            secs = self.memo_field(self.secs_at, self.secs) if self.read_secs else None
            dist = self.memo_field(self.dist_at, self.dist) if self.read_dist else None
            start_id = <int64_t>inline_id(DATETIME_TAG, start)
            end_id = <int64_t>inline_id(DATETIME_TAG, end)
            graph = StarGraph(self.line_id(self.trip_inline, self.trip_base, self.trip_fn, line_no), self.layout, (
                self.trip_class, medallion_id, hack_id, start_id, end_id,
                self.coord_id[0], self.coord_id[1], self.coord_id[2], self.coord_id[3],
                payment_id, self.line_id(self.integer_inline, self.integer_base, self.integer_fn, line_no),
                self.money_id[0] if self.money_ok[0] else None,
                self.money_id[1] if self.money_ok[1] else None,
                secs, dist,
            ))
            stamps = _tuple_new(TripStamps, (self.stamp_text0, self.stamp_text1))
            return GraphEvent(line_no, end, graph, self.stream,
                              self.line_id(self.graph_inline, self.graph_base, self.graph_fn, line_no), read_ns, stamps)

    cdef bint medallion_present(self) except -1:
        cdef Py_ssize_t k
        if self.field_ascii(F_MEDALLION):
            for k in range(self.starts[F_MEDALLION], self.ends[F_MEDALLION]):
                if not is_space(self.buf[k]):
                    return True
            return False
        text = self.field_text(F_MEDALLION)
        return not (not text or text.isspace())

    cdef int reject_line(self, str reason) except -1:
        self.reject(self.line_no, reason,
                    PyUnicode_DecodeUTF8(<const char*>self.buf, len(self.raw), "replace"))
        return 0
