# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The groups of a GROUP BY (and a window's entries) in C memory (issue 50, the native tier).

The same class, API and answers as :class:`taxi_rsp.engine.native.group_table.GroupTable`,
its pure-Python twin and oracle (``tests/test_native_group_table.py`` runs both on
generated operation sequences); read that module's docstring for the semantics. Here:

* a window is a **ring buffer of fixed-width records** ``[expiry, group slot, argument…]``
  (int64), appended at the back and retracted from the front: no Python object per entry;
* groups live in **slots** (parallel arrays: rows, int64 accumulators, value vectors,
  error counts, held flags),
  found by an **open-addressing hash table** keyed by the group key's 64-bit term ids
  (None, an unbound key part, is -1: ids are non-negative); an emptied slot is reused;
* in a window MIN/MAX are monotonic queues; over deltas they and MEDIAN are a sorted
  vector per group (insert and remove by binary search and ``memmove``: the values of
  one group are few, and the pure twin's ``insort`` costs the same order);
* the **latest row per key** (``latest``, see the pure twin): per latest key a slot
  (its ids, entries held, newest value, the newest entry's number) found by a second
  open-addressing index; each entry records its latest slot and value after its
  arguments, and superseding or expiring an entry retracts it from its group in C; an
  entry's ``payload`` ids (the window's row, for a hand-over) follow in its record;
* Python objects only at the edge: a group's key tuple (made on first use when its
  entry came through the C entry of a native program, :meth:`c_entry`) and last output
  row (kept to return them), the changes :meth:`take_changes` lists, the hand-over's
  :meth:`entries`.

Every check that can fail (a value beyond int64, a total that could leave it) runs
before anything changes, so a raised ``OverflowError`` leaves the state as it was: the caller
hands the window over to the reference interpreter, which is exact.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport INT64_MIN, int64_t
from libc.string cimport memmove, memset

from taxi_rsp.engine.native._memory cimport grown
from taxi_rsp.engine.native._key_index cimport KeyIndex, index_add, index_find, index_init, index_make_room, index_remove

cdef extern from *:
    bint __builtin_add_overflow(int64_t a, int64_t b, int64_t *out) nogil
    bint __builtin_mul_overflow(int64_t a, int64_t b, int64_t *out) nogil

cdef enum:
    K_COUNT = 0
    K_SUM = 1
    K_AVG = 2
    K_MIN = 3
    K_MAX = 4
    K_MEDIAN = 5

cdef dict _KIND_CODES = {"COUNT": K_COUNT, "SUM": K_SUM, "AVG": K_AVG, "MIN": K_MIN, "MAX": K_MAX,
                         "MEDIAN": K_MEDIAN}

cdef enum:
    COMPACT_AFTER = 16  # a monotonic queue's dead prefix longer than this (and its live part) is cut

cdef enum:
    HEAD_SLACK = 4  # a ranked head holds up to this many times the rows to report...
    HEAD_MIN = 64  # ... and at least this many groups

cdef int64_t UNBOUND = -1  # a key part that is None (ids are non-negative)

# The inline id layout, read from the dictionary module (not written down twice).
from taxi_rsp.rdf import dictionary as _dictionary

cdef int64_t PAYLOAD_MIN = _dictionary.PAYLOAD_MIN
cdef int64_t PAYLOAD_MAX = _dictionary.PAYLOAD_MAX
cdef int64_t PAYLOAD_MASK = _dictionary.PAYLOAD_MASK
cdef int64_t INT_HEAD = _dictionary.INLINE_FLAG | (_dictionary.T_INTEGER << _dictionary.TYPE_SHIFT)
cdef int64_t DEC_HEAD = _dictionary.INLINE_FLAG | (_dictionary.T_DECIMAL << _dictionary.TYPE_SHIFT)
cdef int64_t[10] POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000]


cdef struct Vec:
    int64_t *data
    Py_ssize_t head  # first live value (monotonic queues; 0 for sorted vectors)
    Py_ssize_t size
    Py_ssize_t cap


cdef int vec_reserve(Vec *v, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap
    cdef int64_t *data
    if need <= v.cap:
        return 0
    cap = v.cap * 2 if v.cap else 4
    if cap < need:
        cap = need
    data = <int64_t *> PyMem_Realloc(v.data, cap * sizeof(int64_t))
    if data == NULL:
        raise MemoryError()
    v.data, v.cap = data, cap
    return 0


cdef inline void queue_push(Vec *v, int64_t value, bint is_max):
    """Monotonic queue: values a newer one beats can never be the extreme again."""
    if is_max:
        while v.size > v.head and v.data[v.size - 1] < value:
            v.size -= 1
    else:
        while v.size > v.head and v.data[v.size - 1] > value:
            v.size -= 1
    v.data[v.size] = value
    v.size += 1


cdef inline void queue_retract(Vec *v, int64_t value):
    """Retract the group's oldest value: it heads the queue iff no later value beat it."""
    if v.size > v.head and v.data[v.head] == value:
        v.head += 1
        if v.head == v.size:
            v.head = v.size = 0
        elif v.head > COMPACT_AFTER and v.head + v.head > v.size:
            memmove(v.data, v.data + v.head, (v.size - v.head) * sizeof(int64_t))
            v.size -= v.head
            v.head = 0


cdef inline Py_ssize_t bisect_left(Vec *v, int64_t value):
    cdef Py_ssize_t lo = 0, hi = v.size, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if v.data[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline void sorted_insert(Vec *v, int64_t value):
    cdef Py_ssize_t at = bisect_left(v, value)
    memmove(v.data + at + 1, v.data + at, (v.size - at) * sizeof(int64_t))
    v.data[at] = value
    v.size += 1


cdef inline void sorted_remove(Vec *v, int64_t value):
    cdef Py_ssize_t at = bisect_left(v, value)
    if at < v.size and v.data[at] == value:
        memmove(v.data + at, v.data + at + 1, (v.size - at - 1) * sizeof(int64_t))
        v.size -= 1


cdef inline int64_t as_int64(object value) except? -1:
    """A Python int as int64 (OverflowError beyond it, TypeError for another type)."""
    if type(value) is not int:
        raise TypeError(f"an aggregate argument must be an int, not {type(value).__name__}")
    return value


include "_ranked_head.pxi"


cdef class GroupTable:
    """See the module docstring and the pure twin's; ``key_width`` parts per group key,
    one ``kinds`` entry (COUNT, SUM, AVG, MIN, MAX, MEDIAN) per aggregate argument;
    ``ordered``: a window's table (insert/expire), else one of deltas (push); ``latest``:
    the latest key's width when only each latest key's newest entry counts; ``payload``:
    the ids each entry keeps besides (:meth:`records`)."""

    cdef readonly Py_ssize_t key_width, width, latest, payload
    cdef readonly bint implicit, ordered
    cdef public bint ever
    cdef tuple _kind_names
    cdef int *_kinds
    cdef char *_queue  # aggregate j is a monotonic queue (MIN/MAX of a window)
    cdef Py_ssize_t *_place  # aggregate j -> its accumulator or vector index
    cdef Py_ssize_t n_args, n_acc, n_vec
    # the ring: `width` int64 per entry (expiry, slot, arguments), capacity a power of 2
    cdef int64_t *_ring
    cdef Py_ssize_t _ring_cap, _ring_head, _ring_size
    # the groups' slots
    cdef Py_ssize_t _slot_cap, _slots_used
    cdef int64_t *_rows
    cdef int64_t *_acc
    cdef int64_t *_abs  # per total: the sum of its values' magnitudes (see _check)
    cdef int64_t *_errors  # per group and aggregate: rows whose argument is an error
    cdef char *_held  # per group and aggregate: it has held a value
    cdef Vec *_vecs
    cdef int64_t *_keys
    cdef char *_touched
    cdef list _py_keys, _outputs
    cdef Py_ssize_t *_free
    cdef Py_ssize_t _n_free
    # touched since the last take_changes, in first-touch order
    cdef Py_ssize_t *_dirty
    cdef Py_ssize_t _n_dirty
    cdef KeyIndex _index  # key ids -> slot (open addressing, see _key_index.pxd)
    cdef int64_t *_key_buf
    cdef int64_t *_arg_buf
    cdef char *_arg_error
    # set_results: per aggregate its arguments' scale (-1: integers), the encoders
    cdef int *_scales
    cdef object _int_id, _dec_id, _mean_id, _avg_id
    # ranked (see rank_by): ORDER BY parts, the head of best slots in order, the bound
    cdef readonly bint ranked
    cdef Py_ssize_t _rank_n, _rank_offset, _rank_wanted
    cdef Py_ssize_t *_rank_j
    cdef char *_rank_desc
    cdef Head _rank
    cdef int64_t *_bound
    cdef list _reported
    # latest: per latest slot its key ids, entries held, newest value and newest entry's
    # number (entries are numbered in arrival order; the ring's head is `_head_number`)
    cdef int64_t *_latest_keys
    cdef int64_t *_latest_count
    cdef int64_t *_latest_value
    cdef int64_t *_latest_entry
    cdef Py_ssize_t *_latest_free
    cdef Py_ssize_t _latest_cap, _latest_used, _n_latest_free
    cdef KeyIndex _latest_index
    cdef int64_t *_latest_buf
    cdef int64_t _head_number
    cdef int64_t *_payload_buf

    def __cinit__(self, Py_ssize_t key_width, kinds, bint implicit=False, bint ordered=True,
                  Py_ssize_t latest=0, Py_ssize_t payload=0):
        cdef Py_ssize_t j
        if (latest or payload) and not ordered:
            raise ValueError("only a window's table keeps the latest row per key or a payload")
        self._kind_names = tuple(kinds)
        self.key_width = key_width
        self.implicit = implicit
        self.ordered = ordered
        self.latest = latest
        self.payload = payload
        self.n_args = len(self._kind_names)
        # [expiry, group slot, arguments…, latest slot and value (latest), payload…]
        self.width = 2 + self.n_args + (2 if latest else 0) + payload
        self._kinds = <int *> PyMem_Malloc((self.n_args + 1) * sizeof(int))
        self._queue = <char *> PyMem_Malloc((self.n_args + 1) * sizeof(char))
        self._place = <Py_ssize_t *> PyMem_Malloc((self.n_args + 1) * sizeof(Py_ssize_t))
        self._key_buf = <int64_t *> PyMem_Malloc((key_width + 1) * sizeof(int64_t))
        self._arg_buf = <int64_t *> PyMem_Malloc((self.n_args + 1) * sizeof(int64_t))
        self._arg_error = <char *> PyMem_Malloc((self.n_args + 1) * sizeof(char))
        self._scales = <int *> PyMem_Malloc((self.n_args + 1) * sizeof(int))
        self._payload_buf = <int64_t *> PyMem_Malloc((payload + 1) * sizeof(int64_t))
        if not (self._kinds and self._queue and self._place and self._key_buf and self._arg_buf and self._arg_error
                and self._scales and self._payload_buf):
            raise MemoryError()
        for j, name in enumerate(self._kind_names):
            self._scales[j] = -1  # integers until set_results says otherwise
            if name not in _KIND_CODES:
                raise ValueError(f"no native state for the aggregate {name!r}")
            self._kinds[j] = _KIND_CODES[name]
            self._queue[j] = ordered and not latest and self._kinds[j] in (K_MIN, K_MAX)
            if self._kinds[j] <= K_AVG:
                self._place[j] = self.n_acc
                self.n_acc += 1
            else:
                self._place[j] = self.n_vec
                self.n_vec += 1
        self._py_keys, self._outputs = [], []
        self._grow_ring(64)
        self._grow_slots(16)
        index_init(&self._index, 32)
        if latest:
            self._latest_buf = <int64_t *> PyMem_Malloc((latest + 1) * sizeof(int64_t))  # the ids, then the value
            if self._latest_buf == NULL:
                raise MemoryError()
            self._grow_latest(16)
            index_init(&self._latest_index, 32)
        if implicit:
            self._new_group(())

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self._vecs != NULL:
            for i in range(self._slot_cap * self.n_vec):
                PyMem_Free(self._vecs[i].data)
        PyMem_Free(self._kinds)
        PyMem_Free(self._queue)
        PyMem_Free(self._errors)
        PyMem_Free(self._held)
        PyMem_Free(self._place)
        PyMem_Free(self._key_buf)
        PyMem_Free(self._arg_buf)
        PyMem_Free(self._arg_error)
        PyMem_Free(self._scales)
        PyMem_Free(self._ring)
        PyMem_Free(self._rows)
        PyMem_Free(self._acc)
        PyMem_Free(self._abs)
        PyMem_Free(self._vecs)
        PyMem_Free(self._keys)
        PyMem_Free(self._touched)
        PyMem_Free(self._rank.member)
        PyMem_Free(self._rank_j)
        PyMem_Free(self._rank_desc)
        PyMem_Free(self._rank.order)
        PyMem_Free(self._rank.best)
        PyMem_Free(self._bound)
        PyMem_Free(self._free)
        PyMem_Free(self._dirty)
        PyMem_Free(self._index.places)
        PyMem_Free(self._latest_keys)
        PyMem_Free(self._latest_count)
        PyMem_Free(self._latest_value)
        PyMem_Free(self._latest_entry)
        PyMem_Free(self._latest_free)
        PyMem_Free(self._latest_buf)
        PyMem_Free(self._payload_buf)
        PyMem_Free(self._latest_index.places)

    def __reduce__(self):
        raise TypeError("a GroupTable is not picklable")

    @property
    def kinds(self) -> tuple:
        return self._kind_names

    # -- storage -----------------------------------------------------------------------
    cdef int _grow_ring(self, Py_ssize_t cap) except -1:
        """A larger ring with the entries unwrapped to its front."""
        cdef int64_t *ring = <int64_t *> PyMem_Malloc(cap * self.width * sizeof(int64_t))
        cdef Py_ssize_t i, src
        if ring == NULL:
            raise MemoryError()
        for i in range(self._ring_size):
            src = ((self._ring_head + i) & (self._ring_cap - 1)) * self.width
            memmove(ring + i * self.width, self._ring + src, self.width * sizeof(int64_t))
        PyMem_Free(self._ring)
        self._ring, self._ring_cap, self._ring_head = ring, cap, 0
        return 0

    cdef int _grow_slots(self, Py_ssize_t cap) except -1:
        """Room for ``cap`` groups in every per-group array (a realloc each; the new
        value vectors start empty)."""
        cdef Py_ssize_t old = self._slot_cap
        self._rows = <int64_t *> grown(self._rows, cap * sizeof(int64_t))
        self._acc = <int64_t *> grown(self._acc, (cap * self.n_acc + 1) * sizeof(int64_t))
        self._abs = <int64_t *> grown(self._abs, (cap * self.n_acc + 1) * sizeof(int64_t))
        self._errors = <int64_t *> grown(self._errors, (cap * self.n_args + 1) * sizeof(int64_t))
        self._held = <char *> grown(self._held, (cap * self.n_args + 1) * sizeof(char))
        self._vecs = <Vec *> grown(self._vecs, (cap * self.n_vec + 1) * sizeof(Vec))
        memset(self._vecs + old * self.n_vec, 0, (cap - old) * self.n_vec * sizeof(Vec))
        self._keys = <int64_t *> grown(self._keys, (cap * self.key_width + 1) * sizeof(int64_t))
        self._touched = <char *> grown(self._touched, cap * sizeof(char))
        self._rank.member = <char *> grown(self._rank.member, cap * sizeof(char))
        memset(self._rank.member + old, 0, (cap - old) * sizeof(char))
        self._free = <Py_ssize_t *> grown(self._free, cap * sizeof(Py_ssize_t))
        self._dirty = <Py_ssize_t *> grown(self._dirty, cap * sizeof(Py_ssize_t))
        self._py_keys.extend([None] * (cap - old))
        self._outputs.extend([None] * (cap - old))
        self._slot_cap = cap
        return 0

    cdef int _grow_latest(self, Py_ssize_t cap) except -1:
        """Room for ``cap`` latest keys."""
        self._latest_keys = <int64_t *> grown(self._latest_keys, cap * self.latest * sizeof(int64_t))
        self._latest_count = <int64_t *> grown(self._latest_count, cap * sizeof(int64_t))
        self._latest_value = <int64_t *> grown(self._latest_value, cap * sizeof(int64_t))
        self._latest_entry = <int64_t *> grown(self._latest_entry, cap * sizeof(int64_t))
        self._latest_free = <Py_ssize_t *> grown(self._latest_free, cap * sizeof(Py_ssize_t))
        self._latest_cap = cap
        return 0

    cdef Py_ssize_t _new_latest(self, int64_t value, int64_t number) except -1:
        """A slot for the latest key in ``_latest_buf``, indexed, holding one entry."""
        cdef Py_ssize_t slot
        index_make_room(&self._latest_index, self._latest_keys, self.latest)
        if self._n_latest_free:
            self._n_latest_free -= 1
            slot = self._latest_free[self._n_latest_free]
        else:
            if self._latest_used == self._latest_cap:
                self._grow_latest(self._latest_cap * 2)
            slot = self._latest_used
            self._latest_used += 1
        memmove(self._latest_keys + slot * self.latest, self._latest_buf, self.latest * sizeof(int64_t))
        self._latest_count[slot] = 1
        self._latest_value[slot] = value
        self._latest_entry[slot] = number
        index_add(&self._latest_index, self._latest_buf, self.latest, slot)
        return slot

    cdef inline Py_ssize_t _find(self, int64_t *key):
        """The slot of ``key`` or -1."""
        return index_find(&self._index, self._keys, self.key_width, key)

    cdef Py_ssize_t _new_group(self, tuple key) except -1:
        """A slot for ``key`` (its parts already in ``_key_buf``; None: its key tuple is
        made when first asked for, see :meth:`_key`), indexed and touched."""
        cdef Py_ssize_t slot, j
        index_make_room(&self._index, self._keys, self.key_width)
        if self._n_free:
            self._n_free -= 1
            slot = self._free[self._n_free]
        else:
            if self._slots_used == self._slot_cap:
                self._grow_slots(self._slot_cap * 2)
            slot = self._slots_used
            self._slots_used += 1
        memmove(self._keys + slot * self.key_width, self._key_buf, self.key_width * sizeof(int64_t))
        self._rows[slot] = 0
        for j in range(self.n_acc):
            self._acc[slot * self.n_acc + j] = 0
            self._abs[slot * self.n_acc + j] = 0
        for j in range(self.n_vec):
            self._vecs[slot * self.n_vec + j].head = 0
            self._vecs[slot * self.n_vec + j].size = 0
        for j in range(self.n_args):
            self._errors[slot * self.n_args + j] = 0
            self._held[slot * self.n_args + j] = 0
        self._py_keys[slot] = key
        self._outputs[slot] = None
        self._touched[slot] = 1
        self._dirty[self._n_dirty] = slot
        self._n_dirty += 1
        index_add(&self._index, self._key_buf, self.key_width, slot)
        return slot

    cdef tuple _key(self, Py_ssize_t slot):
        """Group ``slot``'s key tuple, made from its ids on first use: a group entered
        through the C entry has none until a row, a change or a hand-over needs it (most
        of a ranked table's groups never do)."""
        cdef tuple key = self._py_keys[slot]
        cdef Py_ssize_t j
        cdef int64_t part
        if key is None:
            parts = []
            for j in range(self.key_width):
                part = self._keys[slot * self.key_width + j]
                parts.append(None if part == UNBOUND else part)
            key = self._py_keys[slot] = tuple(parts)
        return key

    cdef void _drop_group(self, Py_ssize_t slot):
        """Unindex an emptied group and free its slot for reuse."""
        index_remove(&self._index, self._keys + slot * self.key_width, self.key_width, slot)
        self._py_keys[slot] = None
        self._outputs[slot] = None
        self._free[self._n_free] = slot
        self._n_free += 1

    cdef inline void _touch(self, Py_ssize_t slot):
        if not self._touched[slot]:
            self._touched[slot] = 1
            self._dirty[self._n_dirty] = slot
            self._n_dirty += 1

    # -- validation and update ----------------------------------------------------------
    cdef Py_ssize_t _check(self, tuple key, tuple args, int64_t mult) except -2:
        """Read ``key`` into ``_key_buf`` and ``args`` into ``_arg_buf`` (None, an error:
        flagged in ``_arg_error``), then :meth:`_checked_slot`."""
        cdef Py_ssize_t i, j
        if len(args) != self.n_args + (self.latest + 1 if self.latest else 0) + self.payload or len(key) != self.key_width:
            raise ValueError("a key or argument count that does not match the table")
        for i in range(self.key_width):
            part = key[i]
            self._key_buf[i] = UNBOUND if part is None else as_int64(part)
        for j in range(self.n_args):
            if args[j] is None:
                self._arg_error[j] = 1
                self._arg_buf[j] = 0
            else:
                self._arg_error[j] = 0
                self._arg_buf[j] = as_int64(args[j])
        return self._checked_slot(mult)

    cdef Py_ssize_t _checked_slot(self, int64_t mult) except -2:
        """Check that every total stays within int64 — the sum of its values' magnitudes
        must fit, which bounds every partial sum, whatever leaves later — and return the
        group's slot or -1: nothing has changed if this raises."""
        cdef Py_ssize_t j, slot
        cdef int64_t value, magnitude, total, size_of_mult
        slot = self._find(self._key_buf)
        if mult == INT64_MIN:
            raise OverflowError("a multiplicity beyond 64 bits")
        size_of_mult = mult if mult >= 0 else -mult
        for j in range(self.n_args):
            if self._kinds[j] <= K_AVG and not self._arg_error[j]:
                value = self._arg_buf[j]
                if value == INT64_MIN or __builtin_mul_overflow(value if value >= 0 else -value, size_of_mult, &magnitude):
                    raise OverflowError("a total beyond 64 bits")
                if slot >= 0 and __builtin_add_overflow(self._abs[slot * self.n_acc + self._place[j]], magnitude, &total):
                    raise OverflowError("a total beyond 64 bits")
        return slot

    cdef int _add(self, Py_ssize_t slot, int64_t mult) except -1:
        """Add ``mult`` rows with the arguments in ``_arg_buf`` to group ``slot``."""
        cdef Py_ssize_t j, k, at
        cdef int64_t value, size_of_mult = mult if mult >= 0 else -mult
        cdef Vec *v
        self._rows[slot] += mult
        if self.implicit:
            self.ever = True
        for j in range(self.n_args):
            if self._arg_error[j]:
                self._errors[slot * self.n_args + j] += mult
                continue
            self._held[slot * self.n_args + j] = 1
            value = self._arg_buf[j]
            if self._kinds[j] <= K_AVG:
                at = slot * self.n_acc + self._place[j]
                self._acc[at] += value * mult
                self._abs[at] += (value if value >= 0 else -value) * size_of_mult
                continue
            v = &self._vecs[slot * self.n_vec + self._place[j]]
            if self._queue[j]:
                vec_reserve(v, v.size + 1)
                queue_push(v, value, self._kinds[j] == K_MAX)
            elif mult > 0:
                vec_reserve(v, v.size + mult)
                for k in range(mult):
                    sorted_insert(v, value)
            else:
                for k in range(-mult):
                    sorted_remove(v, value)
        return 0

    # -- a window: entries in, oldest out ------------------------------------------------
    def insert(self, int64_t expiry, tuple key, tuple args) -> None:
        """Add one entry (a window's table) expiring at ``expiry``; raises
        OverflowError, leaving everything as it was, for a value the int64 state cannot
        hold or, with ``latest``, an unbound latest key or a value not greater than its
        key's newest (``args`` then ends with the latest key's ids and the value)."""
        cdef Py_ssize_t j, slot
        cdef Py_ssize_t tail = self.n_args + (self.latest + 1 if self.latest else 0)
        if not self.ordered:
            raise ValueError("insert is a window's; a table of deltas takes push")
        slot = self._check(key, args, 1)
        for j in range(self.n_args):
            if self._arg_error[j]:
                raise TypeError("a window's entry has no error arguments")
        for j in range(self.payload):  # read before anything changes
            part = args[tail + j]
            self._payload_buf[j] = UNBOUND if part is None else as_int64(part)
        if self.latest:
            for j in range(self.latest + 1):
                if args[self.n_args + j] is None:
                    raise OverflowError("an unbound latest key or value")
                self._latest_buf[j] = as_int64(args[self.n_args + j])
        self._insert_read(expiry, key, slot)

    cdef int _insert_ids(self, int64_t expiry, const int64_t *values, Py_ssize_t n) except -1:
        """:meth:`insert` of ``values``: the key's ids, the arguments, the latest key's
        ids and value, the payload, all int64 and bound (a caller with an unbound one
        takes :meth:`insert`) — the C entry of :meth:`c_entry`; the key tuple is made only
        for a new group."""
        cdef Py_ssize_t j, at = 0
        if not self.ordered or n != self.key_width + self.n_args + (self.latest + 1 if self.latest else 0) + self.payload:
            raise ValueError("ids that do not match a window's table")
        for j in range(self.key_width):
            self._key_buf[j] = values[at + j]
        at += self.key_width
        for j in range(self.n_args):
            self._arg_error[j] = 0
            self._arg_buf[j] = values[at + j]
        at += self.n_args
        if self.latest:
            for j in range(self.latest + 1):
                self._latest_buf[j] = values[at + j]
            at += self.latest + 1
        for j in range(self.payload):
            self._payload_buf[j] = values[at + j]
        return self._insert_read(expiry, None, self._checked_slot(1))

    cdef int _insert_read(self, int64_t expiry, tuple key, Py_ssize_t slot) except -1:
        """The entry read into the buffers (``slot`` its group's, -1: a new one) added."""
        cdef Py_ssize_t j, latest_slot = -1
        cdef int64_t *record
        cdef int64_t order = 0, number
        if self.latest:
            order = self._latest_buf[self.latest]
            latest_slot = index_find(&self._latest_index, self._latest_keys, self.latest, self._latest_buf)
            if latest_slot >= 0 and order <= self._latest_value[latest_slot]:
                raise OverflowError("a value not greater than its key's newest")
        if self._ring_size == self._ring_cap:
            self._grow_ring(self._ring_cap * 2)
        number = self._head_number + self._ring_size
        if slot < 0:
            slot = self._new_group(key)
        else:
            self._touch(slot)
        if latest_slot >= 0:  # its newest entry so far no longer counts (touched second, as the
            # anti-join emits: the arrival, then the retraction)
            self._retract(self._ring + ((self._ring_head + (self._latest_entry[latest_slot] - self._head_number))
                                        & (self._ring_cap - 1)) * self.width)
            self._latest_count[latest_slot] += 1
            self._latest_value[latest_slot] = order
            self._latest_entry[latest_slot] = number
        elif self.latest:
            latest_slot = self._new_latest(order, number)
        record = self._ring + ((self._ring_head + self._ring_size) & (self._ring_cap - 1)) * self.width
        record[0] = expiry
        record[1] = slot
        for j in range(self.n_args):
            record[2 + j] = self._arg_buf[j]
        if self.latest:
            record[2 + self.n_args] = latest_slot
            record[3 + self.n_args] = order
        memmove(record + self.width - self.payload, self._payload_buf, self.payload * sizeof(int64_t))
        self._ring_size += 1
        self._add(slot, 1)
        return 0

    def c_entry(self):
        """:meth:`insert` for C callers (a native program): a capsule named
        ``taxi_rsp.GroupTable.insert_ids`` of ``int f(table, expiry, const int64_t *ids,
        Py_ssize_t n) except -1``, the same entry without a key or argument tuple."""
        return PyCapsule_New(<void *> _insert_ids, "taxi_rsp.GroupTable.insert_ids", NULL)

    # -- deltas --------------------------------------------------------------------------
    def push(self, tuple key, tuple args, int64_t mult) -> None:
        """Add (``mult`` > 0) or retract ``mult`` rows of group ``key`` with ``args``
        (None: an error); OverflowError, nothing changed, for a value beyond int64."""
        cdef Py_ssize_t slot
        if self.ordered:
            raise ValueError("push is for a table of deltas; a window's takes insert")
        slot = self._check(key, args, mult)
        if slot < 0:
            slot = self._new_group(key)
        else:
            self._touch(slot)
        self._add(slot, mult)

    def next_expiry(self):
        """The oldest entry's expiry, None when the window is empty."""
        if self._ring_size == 0:
            return None
        return self._ring[self._ring_head * self.width]

    def expire(self, int64_t until) -> None:
        """Retract every entry whose expiry is ``until`` or earlier, oldest first (with
        ``latest``, only an entry that was its key's last: the others were retracted
        when superseded)."""
        cdef int64_t *record
        cdef Py_ssize_t latest_slot
        cdef Py_ssize_t mask = self._ring_cap - 1
        while self._ring_size:
            record = self._ring + self._ring_head * self.width
            if record[0] > until:
                break
            if self.latest:
                latest_slot = record[2 + self.n_args]
                self._latest_count[latest_slot] -= 1
                if self._latest_count[latest_slot] == 0:
                    index_remove(&self._latest_index, self._latest_keys + latest_slot * self.latest, self.latest,
                                 latest_slot)
                    self._latest_free[self._n_latest_free] = latest_slot
                    self._n_latest_free += 1
                    self._retract(record)
            else:
                self._retract(record)
            self._ring_head = (self._ring_head + 1) & mask
            self._ring_size -= 1
            self._head_number += 1

    cdef void _retract(self, int64_t *record):
        """Take the entry ``record`` out of its group."""
        cdef Py_ssize_t slot = record[1], j
        self._rows[slot] -= 1
        for j in range(self.n_args):
            if self._kinds[j] <= K_AVG:
                self._acc[slot * self.n_acc + self._place[j]] -= record[2 + j]
                self._abs[slot * self.n_acc + self._place[j]] -= record[2 + j] if record[2 + j] >= 0 else -record[2 + j]
            elif self._queue[j]:
                queue_retract(&self._vecs[slot * self.n_vec + self._place[j]], record[2 + j])
            else:
                sorted_remove(&self._vecs[slot * self.n_vec + self._place[j]], record[2 + j])
        self._touch(slot)

    def __len__(self) -> int:
        return self._ring_size

    # -- the groups' changes -------------------------------------------------------------
    def has_changes(self) -> bool:
        return self._n_dirty != 0

    def take_changes(self) -> list:
        """For each group touched since the last call, in first-touch order:
        ``(handle, key, last output, rows, result…)``; an emptied group (not the implicit
        one) is dropped here. Results per aggregate: COUNT, SUM, AVG its int64 total;
        MIN, MAX the extreme or None; MEDIAN two items, the middle value and None (odd
        count), the two middle values (even), or None, None (empty)."""
        cdef list changes = []
        cdef Py_ssize_t d, slot, j, n
        cdef Vec *v
        cdef list item
        for d in range(self._n_dirty):
            slot = self._dirty[d]
            self._touched[slot] = 0
            item = [slot, self._key(slot), self._outputs[slot], self._rows[slot]]
            for j in range(self.n_args):
                if self._kinds[j] <= K_AVG:
                    item.append(self._acc[slot * self.n_acc + self._place[j]])
                    continue
                v = &self._vecs[slot * self.n_vec + self._place[j]]
                n = v.size - v.head
                if self._queue[j]:
                    item.append(v.data[v.head] if n else None)
                elif self._kinds[j] != K_MEDIAN:
                    item.append((v.data[0] if self._kinds[j] == K_MIN else v.data[n - 1]) if n else None)
                elif n == 0:
                    item += [None, None]
                elif n % 2:
                    item += [v.data[n // 2], None]
                else:
                    item += [v.data[n // 2 - 1], v.data[n // 2]]
            changes.append(tuple(item))
            if self._rows[slot] == 0 and not self.implicit:
                self._drop_group(slot)
        self._n_dirty = 0
        return changes

    def set_results(self, scales, encoders) -> None:
        """See the pure twin: the arguments' scales (None: integers) and the encoders of
        the ids that are not made in place (a ``TermEncoders``)."""
        cdef Py_ssize_t j
        if len(scales) != self.n_args:
            raise ValueError("one scale per aggregate")
        for j in range(self.n_args):
            scale = scales[j]
            if scale is not None and not 0 <= scale <= 9:
                raise ValueError(f"a scale of 0 to 9 decimals, not {scale}")
            self._scales[j] = -1 if scale is None else scale
        self._int_id, self._dec_id = encoders.int_id, encoders.dec_id
        self._mean_id, self._avg_id = encoders.mean_id, encoders.avg_id

    cdef object _int_term(self, int64_t value):
        if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            return INT_HEAD | (value & PAYLOAD_MASK)
        return self._int_id(value)

    cdef object _dec_term(self, int64_t scaled, int scale):
        cdef int64_t nano
        if not __builtin_mul_overflow(scaled, POW10[9 - scale], &nano) and PAYLOAD_MIN <= nano <= PAYLOAD_MAX:
            return DEC_HEAD | (nano & PAYLOAD_MASK)
        return self._dec_id(scaled, scale)

    cdef inline object _term(self, int64_t value, int scale):
        return self._int_term(value) if scale < 0 else self._dec_term(value, scale)

    cdef object _mean_term(self, int64_t low, int64_t high, int scale):
        cdef int64_t total, doubled
        if scale < 0:
            scale = 0
        if (not __builtin_add_overflow(low, high, &total)
                and not __builtin_mul_overflow(total, POW10[9 - scale], &doubled) and doubled % 2 == 0):
            return self._dec_term(doubled // 2, 9)
        return self._mean_id(low, high, scale)

    cdef tuple _new_row(self, Py_ssize_t slot):
        """The group's key ids, then one term id per aggregate."""
        cdef list row = list(self._key(slot))
        cdef Py_ssize_t j, n
        cdef int64_t rows = self._rows[slot], total
        cdef int kind, scale
        cdef Vec *v
        for j in range(self.n_args):
            kind, scale = self._kinds[j], self._scales[j]
            if kind != K_COUNT and self._errors[slot * self.n_args + j]:
                row.append(None)  # a row whose argument is an error: the aggregate is one
                continue
            if kind <= K_AVG:
                total = self._acc[slot * self.n_acc + self._place[j]]
                if kind == K_AVG:
                    row.append(self._avg_id(total, rows, scale if scale > 0 else 0))
                elif kind == K_SUM and not self._held[slot * self.n_args + j]:
                    row.append(self._int_term(total))  # no value ever: the integer 0
                else:
                    row.append(self._term(total, scale))
                continue
            v = &self._vecs[slot * self.n_vec + self._place[j]]
            n = v.size - v.head
            if n == 0:
                row.append(None)
            elif self._queue[j]:
                row.append(self._term(v.data[v.head], scale))
            elif kind != K_MEDIAN:
                row.append(self._term(v.data[0] if kind == K_MIN else v.data[n - 1], scale))
            elif n % 2:
                row.append(self._term(v.data[n // 2], scale))
            else:
                row.append(self._mean_term(v.data[n // 2 - 1], v.data[n // 2], scale))
        return tuple(row)

    def flush(self, list sinks, retire) -> None:
        """See the pure twin: emit the touched groups' changed rows to every sink."""
        cdef list out
        cdef Py_ssize_t d, slot, j, width = self.key_width
        cdef tuple old_row, new_row
        cdef bint changed
        if self._n_dirty == 0:
            return
        out = []
        for d in range(self._n_dirty):
            slot = self._dirty[d]
            self._touched[slot] = 0
            old = self._outputs[slot]
            if self._rows[slot] == 0 and not self.implicit:
                new = None
                self._drop_group(slot)
            else:
                new = self._new_row(slot)
            if old is None or new is None:
                changed = old is not new
            else:
                old_row, new_row = old, new
                changed = len(old_row) != len(new_row)  # (set_output may have been given any row)
                for j in range(width, width + self.n_args if not changed else 0):
                    a, b = old_row[j], new_row[j]
                    if a is not b and a != b:
                        changed = True
                        break
            if changed:
                if new is not None:
                    self._outputs[slot] = new
                    out.append((new, 1) if old is None else (old, -1))
                    if old is not None:
                        out.append((new, 1))
                else:
                    out.append((old, -1))
        self._n_dirty = 0
        if out:
            for sink in sinks:
                sink(out)
            retire(out)

    def set_output(self, Py_ssize_t handle, row) -> None:
        """Record the row the group ``handle`` (from :meth:`take_changes`) emitted."""
        self._outputs[handle] = row

    # -- ranked: ORDER BY aggregates LIMIT k, kept in the table ---------------------------
    def rank_by(self, parts, Py_ssize_t offset, Py_ssize_t limit, capacity=None) -> None:
        """See the pure twin: rank the groups by aggregates ``(index, descending)``, ties
        by key ids; :meth:`ranked_flush` reports rows ``offset`` to ``offset + limit``."""
        cdef Py_ssize_t p, j
        parts = tuple(parts)
        if self.implicit:
            raise ValueError("only a table with GROUP BY keys is ranked")
        if offset < 0 or limit < 0 or (capacity is not None and capacity < max(offset + limit, 1)):
            raise ValueError("a negative offset or limit, or a head shorter than the rows to report")
        for j, _ in parts:
            if not 0 <= j < self.n_args or self._kinds[j] not in (K_COUNT, K_SUM, K_MIN, K_MAX):
                raise ValueError(f"{self._kind_names[j] if 0 <= j < self.n_args else j} is not ranked in the table")
        self._rank_n = len(parts)
        self._rank_offset = offset
        self._rank_wanted = offset + limit
        self._rank_j = <Py_ssize_t *> grown(self._rank_j, (self._rank_n + 1) * sizeof(Py_ssize_t))
        self._rank_desc = <char *> grown(self._rank_desc, (self._rank_n + 1) * sizeof(char))
        head_init(&self._rank, max(HEAD_MIN, HEAD_SLACK * self._rank_wanted) if capacity is None else capacity,
                  <void *> self, _table_compare, _table_set_bound, _table_in_rest)
        self._bound = <int64_t *> grown(self._bound, (2 * self._rank_n + self.key_width + 1) * sizeof(int64_t))
        for p in range(self._rank_n):
            self._rank_j[p] = parts[p][0]
            self._rank_desc[p] = bool(parts[p][1])
        self._reported = []
        self.ranked = True

    cdef inline int _rank_part(self, Py_ssize_t slot, Py_ssize_t p, int64_t *value):
        """Part ``p`` of a slot's rank: its class (the unbound aggregate of an error or of
        no value sorts before every number, so it comes first ascending and last
        descending), and in ``value`` the aggregate's total or extreme."""
        cdef Py_ssize_t j = self._rank_j[p]
        cdef Vec *v
        cdef int desc = self._rank_desc[p]
        if self._kinds[j] != K_COUNT and self._errors[slot * self.n_args + j]:
            value[0] = 0
            return desc
        if self._kinds[j] <= K_AVG:
            value[0] = self._acc[slot * self.n_acc + self._place[j]]
            return 1 - desc
        v = &self._vecs[slot * self.n_vec + self._place[j]]
        if v.size == v.head:
            value[0] = 0
            return desc
        if self._queue[j]:
            value[0] = v.data[v.head]
        else:
            value[0] = v.data[0] if self._kinds[j] == K_MIN else v.data[v.size - 1]
        return 1 - desc

    cdef int _compare(self, Py_ssize_t slot, Py_ssize_t other) noexcept:
        """-1 if ``slot`` ranks before ``other`` (-1: the bound), 1 after, 0 the same."""
        cdef Py_ssize_t p, i
        cdef int64_t a, b
        cdef int ca, cb
        cdef int64_t *key = self._keys + slot * self.key_width
        cdef int64_t *theirs = self._bound + 2 * self._rank_n if other < 0 else self._keys + other * self.key_width
        for p in range(self._rank_n):
            ca = self._rank_part(slot, p, &a)
            if other < 0:
                cb, b = <int>self._bound[2 * p], self._bound[2 * p + 1]
            else:
                cb = self._rank_part(other, p, &b)
            if ca != cb:
                return -1 if ca < cb else 1
            if a != b:
                return -1 if (a < b) != self._rank_desc[p] else 1
        for i in range(self.key_width):
            if key[i] != theirs[i]:
                return -1 if key[i] < theirs[i] else 1
        return 0

    cdef void _set_bound(self, Py_ssize_t slot) noexcept:
        cdef Py_ssize_t p
        for p in range(self._rank_n):
            self._bound[2 * p] = self._rank_part(slot, p, &self._bound[2 * p + 1])
        memmove(self._bound + 2 * self._rank_n, self._keys + slot * self.key_width, self.key_width * sizeof(int64_t))

    def ranked_flush(self):
        """See the pure twin: the reported rows, or None when they did not change."""
        cdef Py_ssize_t d, i, slot, end
        cdef list rows
        cdef bint reported = False  # a change at or before the last reported place
        if not self.ranked:
            raise ValueError("rank_by first")
        if self._n_dirty == 0:
            return None
        for d in range(self._n_dirty):
            slot = self._dirty[d]
            i = head_remove(&self._rank, slot)
            reported = reported or 0 <= i < self._rank_wanted
            if self._rows[slot] == 0:
                self._touched[slot] = 0
                self._drop_group(slot)
        for d in range(self._n_dirty):
            slot = self._dirty[d]
            if self._touched[slot] and (not self._rank.bounded or self._compare(slot, -1) < 0):
                reported = head_insert(&self._rank, slot) < self._rank_wanted or reported
        if self._rank.size < self._rank_wanted and self._index.used > self._rank.size:
            head_refill(&self._rank, self._slots_used)
            reported = True
        if not reported:  # the reported groups and their order are as they were
            self._forget_unreported()
            return None
        rows = []
        end = min(self._rank_wanted, self._rank.size)
        for i in range(self._rank_offset, end):
            slot = self._rank.order[i]
            old = self._outputs[slot]
            if self._touched[slot] or old is None:
                new = self._new_row(slot)
                if old is None or old != new:
                    self._outputs[slot] = old = new
                self._touched[slot] = 0
            rows.append(old)
        self._forget_unreported()
        if rows == self._reported:
            return None
        self._reported = rows
        return rows

    cdef void _forget_unreported(self):
        """End a ranked flush: a touched group not reported now has a stale last row."""
        cdef Py_ssize_t d, slot
        for d in range(self._n_dirty):
            slot = self._dirty[d]
            if self._touched[slot]:
                self._touched[slot] = 0
                self._outputs[slot] = None
        self._n_dirty = 0

    def ranked_head(self) -> tuple:
        """See the pure twin: the head's rank keys in order, and the bound."""
        cdef Py_ssize_t i, p
        head = [self._rank_key(self._rank.order[i]) for i in range(self._rank.size)]
        bound = None
        if self._rank.bounded:
            bound = []
            for p in range(self._rank_n):
                bound += [self._bound[2 * p], -<object>self._bound[2 * p + 1] if self._rank_desc[p] else self._bound[2 * p + 1]]
            bound = tuple(bound + [self._bound[2 * self._rank_n + p] for p in range(self.key_width)])
        return head, bound

    cdef tuple _rank_key(self, Py_ssize_t slot):
        """The twin's rank key: per part its class and its value (negated descending),
        then the key ids."""
        cdef Py_ssize_t p
        cdef int64_t value
        cdef int cls
        key = []
        for p in range(self._rank_n):
            cls = self._rank_part(slot, p, &value)
            key += [cls, -<object>value if self._rank_desc[p] else value]
        return tuple(key + [self._keys[slot * self.key_width + p] for p in range(self.key_width)])

    # -- hand-over to the reference ------------------------------------------------------
    def records(self) -> list:
        """``(expiry, payload)`` of every entry, oldest first (see the pure twin)."""
        cdef list out = []
        cdef Py_ssize_t i, j
        cdef int64_t *record
        cdef int64_t *payload
        for i in range(self._ring_size):
            record = self._ring + ((self._ring_head + i) & (self._ring_cap - 1)) * self.width
            payload = record + self.width - self.payload
            out.append((record[0], tuple([None if payload[j] == UNBOUND else payload[j] for j in range(self.payload)])))
        return out

    def entries(self) -> list:
        """``(expiry, key, arguments)`` of every entry that counts in its group, oldest
        first (a latest table's superseded entries do not)."""
        cdef list out = []
        cdef Py_ssize_t i, j
        cdef int64_t *record
        for i in range(self._ring_size):
            record = self._ring + ((self._ring_head + i) & (self._ring_cap - 1)) * self.width
            if self.latest and self._latest_entry[record[2 + self.n_args]] != self._head_number + i:
                continue  # superseded: its group slot may hold another group by now
            out.append((record[0], self._key(record[1]), tuple([record[2 + j] for j in range(self.n_args)])))
        return out

    def states(self) -> list:
        """``(key, rows, last output, values, errors, held)`` of every group held (see the
        pure twin)."""
        cdef list out = [], values
        cdef Py_ssize_t i, j, k, slot
        cdef Vec *v
        for i in range(self._index.cap):
            slot = self._index.places[i]
            if slot < 0:
                continue
            values = []
            for j in range(self.n_args):
                if self._kinds[j] <= K_AVG:
                    values.append(self._acc[slot * self.n_acc + self._place[j]])
                else:
                    v = &self._vecs[slot * self.n_vec + self._place[j]]
                    values.append([v.data[k] for k in range(v.head, v.size)])
            out.append((self._key(slot), self._rows[slot], self._outputs[slot], values,
                        [self._errors[slot * self.n_args + j] for j in range(self.n_args)],
                        [bool(self._held[slot * self.n_args + j]) for j in range(self.n_args)]))
        return out

    def outputs(self) -> dict:
        """Key -> last output row of every group held."""
        cdef Py_ssize_t i, slot
        cdef dict out = {}
        for i in range(self._index.cap):
            slot = self._index.places[i]
            if slot >= 0:
                out[self._key(slot)] = self._outputs[slot]
        return out

    def touch_all(self) -> None:
        """Mark every group changed: the next flush reports each one (a table whose rows
        were not emitted, see RankedPairs, starts emitting them)."""
        cdef Py_ssize_t i, slot
        for i in range(self._index.cap):
            slot = self._index.places[i]
            if slot >= 0:
                self._touch(slot)

    def pending(self) -> list:
        """``(key, last output)`` of the groups touched since the last :meth:`take_changes`."""
        return [(self._key(self._dirty[d]), self._outputs[self._dirty[d]]) for d in range(self._n_dirty)]

    def group_count(self) -> int:
        return self._index.used

    def held_values(self) -> int:
        """How many MIN/MAX/MEDIAN values the groups store (a queue's dead prefix included)."""
        cdef Py_ssize_t i, j, slot, held = 0
        for i in range(self._index.cap):
            slot = self._index.places[i]
            if slot >= 0:
                for j in range(self.n_vec):
                    held += self._vecs[slot * self.n_vec + j].size
        return held


# the ranked table's head (see _ranked_head.pxi) calls back into its table
cdef int _table_compare(void *owner, Py_ssize_t slot, Py_ssize_t other) noexcept:
    return (<GroupTable> owner)._compare(slot, other)


cdef void _table_set_bound(void *owner, Py_ssize_t slot) noexcept:
    (<GroupTable> owner)._set_bound(slot)


cdef bint _table_in_rest(void *owner, Py_ssize_t slot) noexcept:
    """A group ranked outside the head (a free slot has no rows)."""
    return not (<GroupTable> owner)._rank.member[slot] and (<GroupTable> owner)._rows[slot] != 0


include "_ranked_pairs.pxi"


cdef int _insert_ids(object table, int64_t expiry, const int64_t *values, Py_ssize_t n) except -1:
    """The C entry of :meth:`GroupTable.c_entry`."""
    return (<GroupTable> table)._insert_ids(expiry, values, n)
