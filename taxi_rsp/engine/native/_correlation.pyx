# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The state of FILTER NOT EXISTS, MINUS and FILTER EXISTS in C memory (issue 50).

:class:`~taxi_rsp.engine.compiled.correlated.CompiledCorrelated` keeps, per value of the
shared variables (the *key*), the left rows with their multiplicity and match count and
the right rows with their multiplicity, in Python dicts and lists. A
:class:`CorrelationTable` keeps the same in C memory and runs the same loops in C:

* keys are the shared variables' 64-bit term ids, found by an **open-addressing hash
  table**; a key's rows are two arrays of ``{row, multiplicity, matches}`` in arrival order
  (a row is found by identity first, then equality, in that order: the rule of the
  Python operator, so the same entry answers);
* the correlation condition of a pair is decided in C when it compares a left and a right
  variable (or two of one side) holding non-negative inline numbers of one type (ids of
  such numbers order like the values, as ``?seq2 > ?seq`` of a later trip of the same
  taxi); any other pair calls the operator's compiled condition (``cells[0]``);
* the rows stay Python tuples (they are what the operator emits); a row the table lets go
  is appended to ``retired`` first, so its memory is not reused before the event's outputs
  are written (consumers key rows by identity).

A key part that is unbound or not an int stops a push at that delta (its index is
returned): the operator then hands its state, from :meth:`entries`, to the reference
operator, which answers from then on. The Python operator is this table's oracle and its
fallback without a C compiler (``tests/test_native_correlation.py``).
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport Py_EQ, PyObject_RichCompareBool
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.stdint cimport int64_t
from libc.string cimport memmove

from taxi_rsp.engine.native._key_index cimport KeyIndex, index_add, index_find, index_init, index_make_room, index_remove
from taxi_rsp.engine.native._memory cimport grown

cdef extern from "Python.h":
    bint PyLong_CheckExact(object o)
    long long PyLong_AsLongLongAndOverflow(object o, int *overflow) except? -1

from taxi_rsp.rdf import dictionary as _dictionary

cdef enum:  # comparisons of the id-order condition
    C_LT = 0
    C_LE = 1
    C_GT = 2
    C_GE = 3
    C_EQ = 4
    C_NE = 5

cdef dict _OPS = {"<": C_LT, "<=": C_LE, ">": C_GT, ">=": C_GE, "=": C_EQ, "!=": C_NE}
# ids of non-negative inline numbers of one type: [low, low + 2^57) per type
cdef int64_t INT_LOW = _dictionary.INLINE_FLAG | (_dictionary.T_INTEGER << _dictionary.TYPE_SHIFT)
cdef int64_t DEC_LOW = _dictionary.INLINE_FLAG | (_dictionary.T_DECIMAL << _dictionary.TYPE_SHIFT)
cdef int64_t SPAN = (<int64_t> 1) << (_dictionary.PAYLOAD_BITS - 1)


cdef struct Held:  # one row under a key
    PyObject *row
    int64_t mult
    int64_t matches  # a left row: the multiplicity of the right rows it matches


cdef struct Rows:  # the rows of one side under one key, in arrival order
    Held *data
    Py_ssize_t size
    Py_ssize_t cap


cdef int rows_append(Rows *rows, object row, int64_t mult, int64_t matches) except -1:
    cdef Py_ssize_t cap
    if rows.size == rows.cap:
        cap = rows.cap * 2 if rows.cap else 2
        rows.data, rows.cap = <Held *> grown(rows.data, cap * sizeof(Held)), cap
    Py_INCREF(row)
    rows.data[rows.size].row = <PyObject *> row
    rows.data[rows.size].mult = mult
    rows.data[rows.size].matches = matches
    rows.size += 1
    return 0


cdef Py_ssize_t rows_find(Rows *rows, object row) except -2:
    """The place of ``row`` (the first entry that is it or equals it), or -1."""
    cdef Py_ssize_t i
    cdef PyObject *found
    for i in range(rows.size):
        found = rows.data[i].row
        if found == <PyObject *> row or PyObject_RichCompareBool(<object> found, row, Py_EQ):
            return i
    return -1


cdef class CorrelationTable:
    """The two sides of an anti-join (``anti``) or semi-join, keyed by the shared
    variables at ``left_positions`` / ``right_positions`` of their rows.

    ``cells[0]``: the pair condition ``holds(left row, right row)``, or None for none;
    ``id_order``: None, or ``(side, position, side, position, op)`` of a condition that
    compares two variables (side 0 the left row, 1 the right row; op one of ``<``, ``<=``,
    ``>``, ``>=``, ``=``, ``!=``), decided here for ids of non-negative inline numbers of
    one type; ``retired``: the list rows are handed to when the table lets them go.
    """

    cdef readonly Py_ssize_t key_width
    cdef readonly bint anti
    cdef Py_ssize_t *_lpos
    cdef Py_ssize_t *_rpos
    cdef list _cells, _retired
    cdef bint _fast
    cdef Py_ssize_t _fa_side, _fa_pos, _fb_side, _fb_pos
    cdef int _fop
    # key slots: parallel arrays; a free slot's sides are empty
    cdef Py_ssize_t _slot_cap, _slots_used, _n_free, _held
    cdef int64_t *_keys
    cdef Rows *_left
    cdef Rows *_right
    cdef Py_ssize_t *_free
    cdef KeyIndex _index  # key ids -> slot (open addressing, see _key_index.pxd)
    cdef int64_t *_key_buf

    def __cinit__(self, left_positions, right_positions, bint anti, list cells, id_order, list retired):
        cdef Py_ssize_t i
        self.key_width = len(left_positions)
        if self.key_width == 0 or len(right_positions) != self.key_width:
            raise ValueError("one position per shared variable on each side, at least one")
        self.anti = anti
        self._cells, self._retired = cells, retired
        self._lpos = <Py_ssize_t *> PyMem_Malloc(self.key_width * sizeof(Py_ssize_t))
        self._rpos = <Py_ssize_t *> PyMem_Malloc(self.key_width * sizeof(Py_ssize_t))
        self._key_buf = <int64_t *> PyMem_Malloc(self.key_width * sizeof(int64_t))
        if self._lpos == NULL or self._rpos == NULL or self._key_buf == NULL:
            raise MemoryError()
        for i in range(self.key_width):
            self._lpos[i], self._rpos[i] = left_positions[i], right_positions[i]
        self._fast = id_order is not None
        if self._fast:
            self._fa_side, self._fa_pos, self._fb_side, self._fb_pos, op = id_order
            self._fop = _OPS[op]
        self._grow_slots(8)
        index_init(&self._index, 16)

    def __dealloc__(self):
        cdef Py_ssize_t s, i
        if self._left != NULL and self._right != NULL:
            for s in range(self._slot_cap):  # (a cleared or freed slot holds no row, maybe memory)
                for i in range(self._left[s].size):
                    Py_DECREF(<object> self._left[s].data[i].row)
                for i in range(self._right[s].size):
                    Py_DECREF(<object> self._right[s].data[i].row)
                PyMem_Free(self._left[s].data)
                PyMem_Free(self._right[s].data)
        PyMem_Free(self._lpos)
        PyMem_Free(self._rpos)
        PyMem_Free(self._key_buf)
        PyMem_Free(self._keys)
        PyMem_Free(self._left)
        PyMem_Free(self._right)
        PyMem_Free(self._free)
        PyMem_Free(self._index.places)

    def __reduce__(self):
        raise TypeError("a CorrelationTable is not picklable")

    def __len__(self) -> int:
        """The rows held on both sides (entries, not multiplicities)."""
        return self._held

    # -- keys ----------------------------------------------------------------------------
    cdef int _grow_slots(self, Py_ssize_t cap) except -1:
        cdef Py_ssize_t s
        self._keys = <int64_t *> grown(self._keys, cap * self.key_width * sizeof(int64_t))
        self._left = <Rows *> grown(self._left, cap * sizeof(Rows))
        self._right = <Rows *> grown(self._right, cap * sizeof(Rows))
        self._free = <Py_ssize_t *> grown(self._free, cap * sizeof(Py_ssize_t))
        for s in range(self._slot_cap, cap):
            self._left[s].data, self._left[s].size, self._left[s].cap = NULL, 0, 0
            self._right[s].data, self._right[s].size, self._right[s].cap = NULL, 0, 0
        self._slot_cap = cap
        return 0

    cdef bint _key_of(self, object row, Py_ssize_t *positions) except -1:
        """The key of ``row`` into ``_key_buf``; False when a part is not an int id."""
        cdef Py_ssize_t i
        cdef int overflow = 0
        cdef long long value
        for i in range(self.key_width):
            part = <object> PyTuple_GET_ITEM(row, positions[i])
            if not PyLong_CheckExact(part):
                return False
            value = PyLong_AsLongLongAndOverflow(part, &overflow)
            if overflow or value < 0:
                return False
            self._key_buf[i] = value
        return True

    cdef inline Py_ssize_t _find(self):
        """The slot of the key in ``_key_buf``, or -1."""
        return index_find(&self._index, self._keys, self.key_width, self._key_buf)

    cdef Py_ssize_t _new_slot(self) except -1:
        """A slot for the key in ``_key_buf`` (not held yet), indexed."""
        cdef Py_ssize_t slot
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
        index_add(&self._index, self._key_buf, self.key_width, slot)
        return slot

    cdef int _drop_if_empty(self, Py_ssize_t slot) except -1:
        """Unindex a key whose rows all left and free its slot."""
        if self._left[slot].size or self._right[slot].size:
            return 0
        index_remove(&self._index, self._keys + slot * self.key_width, self.key_width, slot)
        self._free[self._n_free] = slot
        self._n_free += 1
        return 0

    cdef int _let_go(self, Rows *rows, Py_ssize_t at) except -1:
        """Remove the entry at ``at`` (order kept); its row goes to ``retired``."""
        cdef PyObject *row = rows.data[at].row
        self._retired.append(<object> row)
        Py_DECREF(<object> row)
        memmove(rows.data + at, rows.data + at + 1, (rows.size - at - 1) * sizeof(Held))
        rows.size -= 1
        self._held -= 1
        return 0

    # -- the condition -------------------------------------------------------------------
    cdef int _holds(self, object lrow, object rrow) except -1:
        """Whether the pair satisfies the condition (1) or not (0)."""
        cdef int overflow = 0
        cdef long long a, b
        holds = self._cells[0]
        if holds is None:
            return 1
        if self._fast:
            x = <object> PyTuple_GET_ITEM(lrow if self._fa_side == 0 else rrow, self._fa_pos)
            y = <object> PyTuple_GET_ITEM(lrow if self._fb_side == 0 else rrow, self._fb_pos)
            if PyLong_CheckExact(x) and PyLong_CheckExact(y):
                a = PyLong_AsLongLongAndOverflow(x, &overflow)
                if not overflow:
                    b = PyLong_AsLongLongAndOverflow(y, &overflow)
                if not overflow and ((INT_LOW <= a < INT_LOW + SPAN and INT_LOW <= b < INT_LOW + SPAN)
                                     or (DEC_LOW <= a < DEC_LOW + SPAN and DEC_LOW <= b < DEC_LOW + SPAN)):
                    if self._fop == C_LT:
                        return a < b
                    if self._fop == C_LE:
                        return a <= b
                    if self._fop == C_GT:
                        return a > b
                    if self._fop == C_GE:
                        return a >= b
                    if self._fop == C_EQ:
                        return a == b
                    return a != b
        return 1 if holds(lrow, rrow) else 0

    # -- deltas --------------------------------------------------------------------------
    def push_left(self, list deltas):
        """``(out, stop)``: the output deltas of ``deltas[:stop]``; ``stop`` is
        ``len(deltas)`` unless a key part was unbound (or not an int) there."""
        cdef list out = []
        cdef Py_ssize_t n, slot, at, i
        cdef int64_t mult, matches
        cdef tuple delta
        cdef Rows *rows
        for n in range(len(deltas)):
            delta = <tuple> deltas[n]
            row, mult = delta[0], delta[1]
            if not self._key_of(row, self._lpos):
                return out, n
            slot = self._find()
            at = rows_find(&self._left[slot], row) if slot >= 0 else -1
            if at < 0:
                if mult < 0:
                    raise ValueError(f"retraction of an unknown left row {row!r}")
                matches = 0
                if slot >= 0:
                    rows = &self._right[slot]
                    for i in range(rows.size):  # (a condition cannot change the table)
                        if self._holds(row, <object> rows.data[i].row):
                            matches += rows.data[i].mult
                if mult:
                    if slot < 0:
                        slot = self._new_slot()
                    rows_append(&self._left[slot], row, mult, matches)
                    self._held += 1
            else:
                rows = &self._left[slot]
                matches = rows.data[at].matches
                rows.data[at].mult += mult
                if rows.data[at].mult == 0:
                    self._let_go(rows, at)
                    self._drop_if_empty(slot)
            if (matches == 0) == self.anti:
                out.append((row, mult))
        return out, len(deltas)

    def push_right(self, list deltas):
        """Like :meth:`push_left`, for right rows: each changes the match counts of the
        left rows under its key that it satisfies the condition with."""
        cdef list out = []
        cdef Py_ssize_t n, slot, at, i
        cdef int64_t mult, before, after, count, sign = -1 if self.anti else 1
        cdef tuple delta
        cdef Rows *rows
        cdef Held *held
        for n in range(len(deltas)):
            delta = <tuple> deltas[n]
            row, mult = delta[0], delta[1]
            if not self._key_of(row, self._rpos):
                return out, n
            slot = self._find()
            if slot >= 0:
                rows = &self._left[slot]
                for i in range(rows.size):
                    lrow = <object> rows.data[i].row
                    if self._holds(lrow, row):
                        held = &rows.data[i]
                        before = held.matches
                        after = held.matches = before + mult
                        if before == 0:
                            if after > 0:
                                out.append((lrow, sign * held.mult))
                        elif after == 0:
                            out.append((lrow, -sign * held.mult))
                at = rows_find(&self._right[slot], row)
            else:
                at = -1
            if at < 0:
                if mult < 0:
                    raise ValueError(f"retraction of a row that is not held: {row!r}")
                if mult:
                    if slot < 0:
                        slot = self._new_slot()
                    rows_append(&self._right[slot], row, mult, 0)
                    self._held += 1
                continue
            rows = &self._right[slot]
            count = rows.data[at].mult + mult
            if count < 0:
                raise ValueError(f"retraction below zero for row {row!r}")
            if count:
                rows.data[at].mult = count
            else:
                self._let_go(rows, at)
                self._drop_if_empty(slot)
        return out, len(deltas)

    # -- the hand-over -------------------------------------------------------------------
    def entries(self) -> tuple:
        """``(left, right)``: ``(key, row, multiplicity, matches)`` per left row and
        ``(key, row, multiplicity)`` per right row, each key's rows in arrival order."""
        cdef list left = [], right = []
        cdef Py_ssize_t s, i, j
        for s in range(self._slots_used):
            if not (self._left[s].size or self._right[s].size):
                continue
            key = tuple([self._keys[s * self.key_width + j] for j in range(self.key_width)])
            for i in range(self._left[s].size):
                left.append((key, <object> self._left[s].data[i].row, self._left[s].data[i].mult,
                             self._left[s].data[i].matches))
            for i in range(self._right[s].size):
                right.append((key, <object> self._right[s].data[i].row, self._right[s].data[i].mult))
        return left, right

    def clear(self) -> None:
        """Let every row go (to ``retired``)."""
        cdef Py_ssize_t s
        for s in range(self._slots_used):
            while self._left[s].size:
                self._let_go(&self._left[s], self._left[s].size - 1)
            while self._right[s].size:
                self._let_go(&self._right[s], self._right[s].size - 1)
        self._slots_used = self._n_free = 0
        PyMem_Free(self._index.places)
        self._index.places = NULL  # (freed again by __dealloc__ if index_init fails)
        index_init(&self._index, 16)
