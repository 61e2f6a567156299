# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Typed programs over term ids, interpreted in C (issue 50, the native tier).

A :class:`Program` is what :mod:`taxi_rsp.engine.native.program` compiles a chain of
fused steps (BIND, FILTER, projection) into: straight-line instructions over int64
registers — integers as themselves, decimals as integers scaled by a power of ten
known when compiling, booleans as 0/1, strings as their term ids — run here for each
row without making a Python object until the output row. Constants sit in registers
filled once, when the program is made.

Every instruction is five int64: ``[op, d, a, b, c]`` (``d`` the register written,
``a``/``b``/``c`` registers or, for a load, a row position). An input id of another
type than the program was compiled for, an arithmetic result beyond int64, a division
by zero, an id beyond the inline range: each is a *miss*, and the row goes to the
fallback the program was given (the reference steps), which decides it exactly. A miss
is never an answer, so the program can only be as right as the reference, or missing.

A string made from typed values (``CONCAT(STR(?x), ".", STR(?y))``) is one ``MEMO``
instruction: its inputs' values are looked up in a bounded open-addressing memo of
the string's term id; only a new combination calls back into Python, which makes the
string and its id once.

The row a program reads is an array of object pointers: a row tuple's items, or — for a
window over star graphs (:meth:`Program.read_star`) — the graph's subject and objects
themselves, bound by position without a row tuple. A window aggregate's program hands
its outputs to the window's table as int64 through the table's C entry
(:meth:`Program.bind_table`), without a key or argument tuple.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport INT64_MIN, int64_t, uint64_t
from libc.string cimport memset

cdef extern from "Python.h":
    ctypedef struct PyTupleObject:
        PyObject *ob_item[1]

cdef extern from *:
    bint __builtin_add_overflow(int64_t a, int64_t b, int64_t *out) nogil
    bint __builtin_sub_overflow(int64_t a, int64_t b, int64_t *out) nogil
    bint __builtin_mul_overflow(int64_t a, int64_t b, int64_t *out) nogil

cdef enum:
    OP_LOAD_INT = 1  # d := the payload of row[a], an inline xsd:integer id (else miss)
    OP_LOAD_DEC = 2  # d := the scaled payload of row[a], an inline xsd:decimal id
    OP_LOAD_BOOL = 3  # d := row[a], an inline xsd:boolean id, as 0/1
    OP_BOUND = 4  # d := row[a] is not None
    OP_MOV = 5
    OP_ADD = 6
    OP_SUB = 7
    OP_MUL = 8
    OP_NEG = 9
    OP_ABS = 10
    OP_FLOORDIV = 11  # d := floor(a / b)
    OP_CEILDIV = 12
    OP_TRUNCDIV = 13
    OP_LT = 14
    OP_LE = 15
    OP_GT = 16
    OP_GE = 17
    OP_EQ = 18
    OP_NE = 19
    OP_NOT = 20
    OP_TRUTH = 21  # d := a != 0
    OP_AND = 22
    OP_OR = 23
    OP_IF = 24  # d := b if a else c
    OP_FILTER = 25  # the row is dropped when a is 0
    OP_MEMO = 26  # d := memo[b](registers a .. a + c - 1): a string's term id
    OP_ENC_INT = 27  # d := the inline id of the integer a (else miss)
    OP_ENC_DEC = 28  # d := the inline id of the decimal a, scaled by 10^9
    OP_ENC_BOOL = 29

OPCODES = {name[3:]: value for name, value in {
    "OP_LOAD_INT": OP_LOAD_INT, "OP_LOAD_DEC": OP_LOAD_DEC, "OP_LOAD_BOOL": OP_LOAD_BOOL,
    "OP_BOUND": OP_BOUND, "OP_MOV": OP_MOV, "OP_ADD": OP_ADD, "OP_SUB": OP_SUB, "OP_MUL": OP_MUL,
    "OP_NEG": OP_NEG, "OP_ABS": OP_ABS, "OP_FLOORDIV": OP_FLOORDIV, "OP_CEILDIV": OP_CEILDIV,
    "OP_TRUNCDIV": OP_TRUNCDIV, "OP_LT": OP_LT, "OP_LE": OP_LE, "OP_GT": OP_GT, "OP_GE": OP_GE,
    "OP_EQ": OP_EQ, "OP_NE": OP_NE, "OP_NOT": OP_NOT, "OP_TRUTH": OP_TRUTH, "OP_AND": OP_AND,
    "OP_OR": OP_OR, "OP_IF": OP_IF, "OP_FILTER": OP_FILTER, "OP_MEMO": OP_MEMO,
    "OP_ENC_INT": OP_ENC_INT, "OP_ENC_DEC": OP_ENC_DEC, "OP_ENC_BOOL": OP_ENC_BOOL}.items()}

# What an output position is (``outputs``: (kind, source) pairs).
cdef enum:
    OUT_INPUT = 0  # the input row's item at ``source`` (the same object, None included)
    OUT_ID = 1  # the term id in register ``source``
    OUT_VALUE = 2  # the raw value in register ``source`` (an aggregate's argument)
    OUT_NONE = 3  # unbound

OUTPUT_KINDS = {"input": OUT_INPUT, "id": OUT_ID, "value": OUT_VALUE, "none": OUT_NONE}

# What a star read does with an object (``read_star``; see CompiledMatcher.star_plan).
cdef enum:
    STAR_BIND = 0  # the object is the row's item at ``slot``
    STAR_SAME = 1  # it equals the row's item at ``slot``, bound before
    STAR_CONST = 2  # it equals the constant ``slot`` (an index into the constants)

STAR_ACTIONS = {"bind": STAR_BIND, "same": STAR_SAME, "const": STAR_CONST}

# A window table's C entry (GroupTable.c_entry): the outputs as int64, no tuples.
ctypedef int (*insert_ids_t)(object table, int64_t expiry, const int64_t *ids, Py_ssize_t n) except -1

cdef enum:
    RAN = 1
    FILTERED = 0
    MISSED = -1

# The inline id layout, read from the dictionary module (not written down twice).
from taxi_rsp.rdf import dictionary as _dictionary

cdef int TYPE_SHIFT = _dictionary.TYPE_SHIFT
cdef int64_t PAYLOAD_MIN = _dictionary.PAYLOAD_MIN
cdef int64_t PAYLOAD_MAX = _dictionary.PAYLOAD_MAX
cdef int64_t PAYLOAD_MASK = _dictionary.PAYLOAD_MASK
cdef int64_t SIGN_BIT = 1 << (_dictionary.PAYLOAD_BITS - 1)
cdef int64_t SIGN_SPAN = 1 << _dictionary.PAYLOAD_BITS
cdef int64_t INT_HEAD = _dictionary.INLINE_FLAG | (_dictionary.T_INTEGER << _dictionary.TYPE_SHIFT)
cdef int64_t DEC_HEAD = _dictionary.INLINE_FLAG | (_dictionary.T_DECIMAL << _dictionary.TYPE_SHIFT)
cdef int64_t BOOL_HEAD = _dictionary.INLINE_FLAG | (_dictionary.T_BOOLEAN << _dictionary.TYPE_SHIFT)

cdef enum:
    MEMO_LIMIT = 1 << 16  # remembered strings per MEMO instruction (then forgotten at once)


cdef struct Memo:
    int64_t *keys  # cap * width input values
    int64_t *ids
    char *used
    Py_ssize_t cap, count, width


cdef inline uint64_t mix(uint64_t h, int64_t part):
    h ^= <uint64_t> part
    h *= 0xbf58476d1ce4e5b9ULL
    return h ^ (h >> 31)


cdef inline int64_t payload(int64_t ident):
    cdef int64_t raw = ident & PAYLOAD_MASK
    return raw - SIGN_SPAN if raw & SIGN_BIT else raw


cdef inline int64_t floor_div(int64_t a, int64_t b):
    """floor(a / b) for b != 0 (C division truncates toward zero)."""
    cdef int64_t q = a / b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef class Program:
    """One compiled chain (see the module docstring): ``code`` the instructions (five
    ints each), ``registers`` their count, ``constants`` (register, value) pairs filled
    once, ``outputs`` what each output position is, ``memos`` one callable per MEMO
    site (input values -> the string's term id), ``small_ids`` the shared id objects
    of the integers 0 .. len - 1, ``fallback`` the reference steps (row -> row or None)."""

    cdef int64_t *_code
    cdef Py_ssize_t _n_code
    cdef int64_t *_regs
    cdef Py_ssize_t _n_regs
    cdef int *_out_kind
    cdef Py_ssize_t *_out_src
    cdef readonly Py_ssize_t width  # output positions
    cdef Py_ssize_t _row_width  # the shortest row it reads: one past the highest input position
    cdef Memo *_memos
    cdef Py_ssize_t _n_memos
    cdef list _memo_calls
    cdef tuple _small_ids
    cdef Py_ssize_t _n_small
    cdef object _fallback
    cdef readonly Py_ssize_t runs, misses
    # feed(): the aggregate form, the first `_n_key` outputs a group key, then arguments
    cdef Py_ssize_t _n_key
    cdef object _insert, _slow, _overflow
    cdef object _c_table  # the table whose C entry _c_insert is (None: insert takes tuples)
    cdef insert_ids_t _c_insert
    cdef int64_t *_ids  # the outputs of a run as int64, for _c_insert
    # read_star(): a star graph's objects read into the row without a row tuple
    cdef Py_ssize_t _n_reads, _star_width, _star_objects
    cdef Py_ssize_t *_read_pos
    cdef int *_read_action
    cdef Py_ssize_t *_read_slot
    cdef PyObject **_star_row  # borrowed from the graph's objects during feed_star
    cdef Py_ssize_t _subject_slot  # -1: the subject is the constant _star_subject
    cdef object _star_subject
    cdef tuple _star_constants

    def __cinit__(self, code, Py_ssize_t registers, constants, outputs, memos, tuple small_ids, fallback):
        cdef Py_ssize_t i
        self._n_code = len(code)
        if self._n_code % 5:
            raise ValueError("instructions are five ints each")
        self._n_regs = registers
        self.width = len(outputs)
        self._n_memos = len(memos)
        self._code = <int64_t *> PyMem_Malloc((self._n_code + 1) * sizeof(int64_t))
        self._regs = <int64_t *> PyMem_Malloc((registers + 1) * sizeof(int64_t))
        self._out_kind = <int *> PyMem_Malloc((self.width + 1) * sizeof(int))
        self._out_src = <Py_ssize_t *> PyMem_Malloc((self.width + 1) * sizeof(Py_ssize_t))
        self._memos = <Memo *> PyMem_Malloc((self._n_memos + 1) * sizeof(Memo))
        if not (self._code and self._regs and self._out_kind and self._out_src and self._memos):
            raise MemoryError()
        memset(self._memos, 0, (self._n_memos + 1) * sizeof(Memo))
        memset(self._regs, 0, (registers + 1) * sizeof(int64_t))
        for i in range(self._n_code):
            self._code[i] = code[i]
        self._check_code()
        for register, value in constants:
            if not 0 <= register < registers:
                raise ValueError(f"constant register {register} out of range")
            self._regs[register] = value
        for i, (kind, source) in enumerate(outputs):
            self._out_kind[i] = OUTPUT_KINDS[kind]
            self._out_src[i] = source
            if kind in ("id", "value") and not 0 <= source < registers:
                raise ValueError(f"output register {source} out of range")
            if kind == "input":
                if source < 0:
                    raise ValueError(f"output of input position {source}")
                self._row_width = max(self._row_width, source + 1)
        self._memo_calls = []
        for i, (width, call) in enumerate(memos):
            self._memos[i].width = width
            self._memo_calls.append(call)
        self._small_ids = small_ids
        self._n_small = len(small_ids)
        self._fallback = fallback

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self._memos != NULL:
            for i in range(self._n_memos):
                PyMem_Free(self._memos[i].keys)
                PyMem_Free(self._memos[i].ids)
                PyMem_Free(self._memos[i].used)
        PyMem_Free(self._code)
        PyMem_Free(self._regs)
        PyMem_Free(self._out_kind)
        PyMem_Free(self._out_src)
        PyMem_Free(self._memos)
        PyMem_Free(self._read_pos)
        PyMem_Free(self._read_action)
        PyMem_Free(self._read_slot)
        PyMem_Free(self._star_row)
        PyMem_Free(self._ids)

    def __reduce__(self):
        raise TypeError("a Program is not picklable")

    @property
    def form(self) -> str:
        """How a chain compiled into a program runs (what ``describe()`` prints)."""
        return "native program"

    cdef int _check_code(self) except -1:
        """Every register and memo an instruction names exists (the loop trusts them)."""
        cdef Py_ssize_t at, op, i
        if self._n_regs < 1:
            raise ValueError("a program has at least one register")
        for at in range(0, self._n_code, 5):
            op = self._code[at]
            if not OP_LOAD_INT <= op <= OP_ENC_BOOL:
                raise ValueError(f"unknown opcode {op}")
            if op != OP_FILTER and not 0 <= self._code[at + 1] < self._n_regs:
                raise ValueError(f"instruction {at // 5} writes no register")
            if op <= OP_BOUND:
                if self._code[at + 2] < 0:
                    raise ValueError(f"instruction {at // 5} reads input position {self._code[at + 2]}")
                self._row_width = max(self._row_width, self._code[at + 2] + 1)
            if op == OP_MEMO:
                if not (0 <= self._code[at + 3] < self._n_memos and 0 <= self._code[at + 2]
                        and self._code[at + 2] + self._code[at + 4] <= self._n_regs):
                    raise ValueError(f"instruction {at // 5}: a memo or registers out of range")
            elif op > OP_BOUND:
                for i in range(2, 5):
                    if not 0 <= self._code[at + i] < self._n_regs:
                        raise ValueError(f"instruction {at // 5} reads no register")
        return 0

    # -- the interpreter -----------------------------------------------------------------
    cdef int _exec(self, PyObject **row, Py_ssize_t n) except -2:
        """Run the instructions on the ``n`` items of ``row``: RAN, FILTERED or MISSED."""
        cdef int64_t *code = self._code
        cdef int64_t *r = self._regs
        cdef Py_ssize_t at
        cdef int64_t op, a, b, value
        cdef object item
        if n < self._row_width:
            return MISSED  # not a row of the schema it was compiled for
        for at in range(0, self._n_code, 5):
            op = code[at]
            if op <= OP_BOUND:
                item = <object> row[code[at + 2]]
                if op == OP_BOUND:
                    r[code[at + 1]] = item is not None
                    continue
                if type(item) is not int:
                    return MISSED
                value = item
                if op == OP_LOAD_INT:
                    if (value >> TYPE_SHIFT) != (INT_HEAD >> TYPE_SHIFT):
                        return MISSED
                    r[code[at + 1]] = payload(value)
                elif op == OP_LOAD_DEC:
                    if (value >> TYPE_SHIFT) != (DEC_HEAD >> TYPE_SHIFT):
                        return MISSED
                    r[code[at + 1]] = payload(value)
                else:
                    if (value >> TYPE_SHIFT) != (BOOL_HEAD >> TYPE_SHIFT):
                        return MISSED
                    r[code[at + 1]] = value & 1
                continue
            if op == OP_MEMO:
                value = self._memo(code[at + 3], r + code[at + 2])
                if value < 0:
                    return MISSED
                r[code[at + 1]] = value
                continue
            a, b = r[code[at + 2]], r[code[at + 3]]
            if op == OP_ADD:
                if __builtin_add_overflow(a, b, &value):
                    return MISSED
            elif op == OP_SUB:
                if __builtin_sub_overflow(a, b, &value):
                    return MISSED
            elif op == OP_MUL:
                if __builtin_mul_overflow(a, b, &value):
                    return MISSED
            elif op == OP_MOV:
                value = a
            elif op == OP_NEG or op == OP_ABS:
                if a == INT64_MIN:
                    return MISSED
                value = -a if (op == OP_NEG or a < 0) else a
            elif op == OP_FLOORDIV or op == OP_CEILDIV or op == OP_TRUNCDIV:
                if b == 0 or a == INT64_MIN:
                    return MISSED
                if op == OP_FLOORDIV:
                    value = floor_div(a, b)
                elif op == OP_CEILDIV:
                    value = -floor_div(-a, b)
                else:
                    value = a / b
            elif op == OP_LT:
                value = a < b
            elif op == OP_LE:
                value = a <= b
            elif op == OP_GT:
                value = a > b
            elif op == OP_GE:
                value = a >= b
            elif op == OP_EQ:
                value = a == b
            elif op == OP_NE:
                value = a != b
            elif op == OP_NOT:
                value = a == 0
            elif op == OP_TRUTH:
                value = a != 0
            elif op == OP_AND:
                value = a != 0 and b != 0
            elif op == OP_OR:
                value = a != 0 or b != 0
            elif op == OP_IF:
                value = b if a != 0 else r[code[at + 4]]
            elif op == OP_FILTER:
                if a == 0:
                    return FILTERED
                continue
            elif op == OP_ENC_INT:
                if a < PAYLOAD_MIN or a > PAYLOAD_MAX:
                    return MISSED
                value = INT_HEAD | (a & PAYLOAD_MASK)
            elif op == OP_ENC_DEC:
                if a < PAYLOAD_MIN or a > PAYLOAD_MAX:
                    return MISSED
                value = DEC_HEAD | (a & PAYLOAD_MASK)
            else:  # OP_ENC_BOOL
                value = BOOL_HEAD | (a != 0)
            r[code[at + 1]] = value
        return RAN

    cdef int64_t _memo(self, Py_ssize_t site, int64_t *inputs) except -2:
        """The id remembered for ``inputs`` at MEMO ``site``, made by its callable when
        new; -1 when the callable raised (a miss: the fallback decides)."""
        cdef Memo *m = &self._memos[site]
        cdef Py_ssize_t i, at, width = m.width
        cdef uint64_t h = 0x9E3779B97F4A7C15ULL
        cdef int64_t ident
        for i in range(width):
            h = mix(h, inputs[i])
        if m.cap:
            at = h & (m.cap - 1)
            while m.used[at]:
                for i in range(width):
                    if m.keys[at * width + i] != inputs[i]:
                        break
                else:
                    return m.ids[at]
                at = (at + 1) & (m.cap - 1)
        try:
            ident = self._memo_calls[site](*[inputs[i] for i in range(width)])
        except Exception:  # the fallback decides this row, errors included
            return -1
        if (m.count + 1) * 2 > m.cap:
            self._memo_reset(m, 64 if m.cap == 0 else (m.cap * 2 if m.cap < 2 * MEMO_LIMIT else m.cap))
        at = h & (m.cap - 1)
        while m.used[at]:
            at = (at + 1) & (m.cap - 1)
        m.used[at] = 1
        for i in range(width):
            m.keys[at * width + i] = inputs[i]
        m.ids[at] = ident
        m.count += 1
        return ident

    cdef int _memo_reset(self, Memo *m, Py_ssize_t cap) except -1:
        """``cap`` places, the remembered ids rehashed into them; a full memo (at its
        limit) forgets everything instead, as a bounded cache does."""
        cdef int64_t *keys = <int64_t *> PyMem_Malloc((cap * m.width + 1) * sizeof(int64_t))
        cdef int64_t *ids = <int64_t *> PyMem_Malloc(cap * sizeof(int64_t))
        cdef char *used = <char *> PyMem_Malloc(cap)
        cdef Py_ssize_t i, j, at, count = 0
        cdef uint64_t h
        if keys == NULL or ids == NULL or used == NULL:
            PyMem_Free(keys)
            PyMem_Free(ids)
            PyMem_Free(used)
            raise MemoryError()
        memset(used, 0, cap)
        if cap > m.cap:  # growing: keep what is remembered
            for i in range(m.cap):
                if not m.used[i]:
                    continue
                h = 0x9E3779B97F4A7C15ULL
                for j in range(m.width):
                    h = mix(h, m.keys[i * m.width + j])
                at = h & (cap - 1)
                while used[at]:
                    at = (at + 1) & (cap - 1)
                used[at] = 1
                for j in range(m.width):
                    keys[at * m.width + j] = m.keys[i * m.width + j]
                ids[at] = m.ids[i]
                count += 1
        PyMem_Free(m.keys)
        PyMem_Free(m.ids)
        PyMem_Free(m.used)
        m.keys, m.ids, m.used, m.cap, m.count = keys, ids, used, cap, count
        return 0

    cdef object _output(self, PyObject **row, Py_ssize_t i):
        """Output position ``i`` of the last run as a Python object."""
        cdef int kind = self._out_kind[i]
        cdef int64_t value
        if kind == OUT_INPUT:
            return <object> row[self._out_src[i]]
        if kind == OUT_NONE:
            return None
        value = self._regs[self._out_src[i]]
        if kind == OUT_ID and INT_HEAD <= value < INT_HEAD + self._n_small:
            return self._small_ids[value - INT_HEAD]  # the shared object of a small integer
        return value

    cdef tuple _outputs(self, PyObject **row, Py_ssize_t start, Py_ssize_t stop):
        cdef tuple out = PyTuple_New(stop - start)
        cdef object item
        cdef Py_ssize_t i
        for i in range(start, stop):
            item = self._output(row, i)
            Py_INCREF(item)
            PyTuple_SET_ITEM(out, i - start, item)
        return out

    # -- the two forms ------------------------------------------------------------------
    def run(self, tuple row):
        """The derived row of ``row`` (None when a FILTER drops it); a miss returns what
        the fallback makes of it."""
        cdef PyObject **items = (<PyTupleObject *> row).ob_item
        cdef int done = self._exec(items, PyTuple_GET_SIZE(row))
        self.runs += 1
        if done == RAN:
            return self._outputs(items, 0, self.width)
        if done == FILTERED:
            return None
        self.misses += 1
        return self._fallback(row)

    def bind_table(self, Py_ssize_t key_width, insert, slow, overflow, table=None) -> None:
        """The aggregate forms: :meth:`feed` (a window's rows) and :meth:`push_deltas`
        hand the first ``key_width`` outputs (the group key's ids) and the rest (the
        arguments' values) to ``insert``; a miss goes to ``slow``, an OverflowError of
        ``insert`` to ``overflow``. ``table``: the window table ``insert`` belongs to;
        when it has a C entry (``c_entry``) :meth:`feed` hands it the outputs as int64
        instead, whenever they are all int64 (else ``insert`` takes them as tuples)."""
        if not 0 <= key_width <= self.width:
            raise ValueError("a key wider than the outputs")
        self._n_key, self._insert, self._slow, self._overflow = key_width, insert, slow, overflow
        self._c_table, self._c_insert = None, NULL
        entry = getattr(table, "c_entry", None)
        if entry is not None:
            PyMem_Free(self._ids)
            self._ids = <int64_t *> PyMem_Malloc((self.width + 1) * sizeof(int64_t))
            if self._ids == NULL:
                raise MemoryError()
            self._c_insert = <insert_ids_t> PyCapsule_GetPointer(entry(), "taxi_rsp.GroupTable.insert_ids")
            self._c_table = table

    cdef bint _int64_outputs(self, PyObject **row) except -1:
        """The last run's outputs into ``_ids``: False when one is not an int64 (an
        unbound or non-integer input, an id beyond int64), which the tuples carry."""
        cdef Py_ssize_t i
        cdef int overflow
        cdef int kind
        for i in range(self.width):
            kind = self._out_kind[i]
            if kind == OUT_INPUT:
                item = <object> row[self._out_src[i]]
                if type(item) is not int:
                    return False
                self._ids[i] = PyLong_AsLongLongAndOverflow(item, &overflow)
                if overflow:
                    return False
            elif kind == OUT_NONE:
                return False
            else:
                self._ids[i] = self._regs[self._out_src[i]]
        return True

    def push_deltas(self, list deltas) -> int:
        """The delta form (a group over any input): run on each ``(row, mult)`` and hand
        its key and arguments to ``insert(key, args, mult)`` (see :meth:`bind_table`); a
        miss goes to ``slow(row, mult)``, which returns True when the operator handed over
        to the reference; an OverflowError of ``insert`` to ``overflow(row, mult)``, which
        hands over. Returns where the reference takes over (the rest of ``deltas`` is
        its to push), or -1."""
        cdef Py_ssize_t n
        cdef int done
        cdef tuple delta, row
        cdef PyObject **items
        for n in range(len(deltas)):
            delta = deltas[n]
            row, mult = delta
            items = (<PyTupleObject *> row).ob_item
            done = self._exec(items, PyTuple_GET_SIZE(row))
            self.runs += 1
            if done == FILTERED:
                continue
            if done == MISSED:
                self.misses += 1
                if self._slow(row, mult):
                    return n + 1
                continue
            try:
                self._insert(self._outputs(items, 0, self._n_key), self._outputs(items, self._n_key, self.width), mult)
            except OverflowError:  # a total beyond int64: the reference is exact
                self._overflow(row, mult)
                return n
        return -1

    def feed(self, tuple row, int64_t expiry):
        """Run on ``row`` and insert its key and arguments: ``insert(expiry, key, args)``,
        ``slow(row, expiry)``, ``overflow(row, expiry)`` (see :meth:`bind_table`)."""
        self._feed((<PyTupleObject *> row).ob_item, PyTuple_GET_SIZE(row), expiry)

    cdef int _feed(self, PyObject **row, Py_ssize_t n, int64_t expiry) except -1:
        cdef int done = self._exec(row, n)
        self.runs += 1
        if done == FILTERED:
            return 0
        if done == MISSED:
            self.misses += 1
            self._slow(_row_tuple(row, n), expiry)
            return 0
        try:
            if self._c_insert != NULL and self._int64_outputs(row):
                self._c_insert(self._c_table, expiry, self._ids, self.width)
            else:
                self._insert(expiry, self._outputs(row, 0, self._n_key), self._outputs(row, self._n_key, self.width))
        except OverflowError:  # a total beyond int64: the reference is exact
            self._overflow(_row_tuple(row, n), expiry)
        return 0

    # -- a star graph's objects as the row ----------------------------------------------
    def read_star(self, plan, Py_ssize_t width, Py_ssize_t objects) -> None:
        """Read rows of ``width`` items from star graphs of ``objects`` objects as
        ``plan`` (a :class:`~taxi_rsp.engine.compiled.match.StarPlan`) says, for
        :meth:`feed_star`: the graph's objects are the row, without a row tuple, a
        match list or a call into the matcher."""
        cdef Py_ssize_t k
        (s_var, s), reads, never = plan
        if never:
            raise ValueError("a star plan that never matches has nothing to read")
        if s_var and not 0 <= s < width:
            raise ValueError("the subject's row position is out of range")
        bound = {s} if s_var else set()
        bound.update(slot for _, action, slot in reads if action == "bind")
        if bound != set(range(width)):  # feed_star reads every row position it runs on
            raise ValueError("a star plan that does not bind every row position")
        PyMem_Free(self._read_pos)  # a program reads one layout: the last one set
        PyMem_Free(self._read_action)
        PyMem_Free(self._read_slot)
        PyMem_Free(self._star_row)
        self._read_pos = self._read_slot = NULL
        self._read_action = NULL
        self._star_row = NULL
        self._n_reads = len(reads)
        self._read_pos = <Py_ssize_t *> PyMem_Malloc((self._n_reads + 1) * sizeof(Py_ssize_t))
        self._read_action = <int *> PyMem_Malloc((self._n_reads + 1) * sizeof(int))
        self._read_slot = <Py_ssize_t *> PyMem_Malloc((self._n_reads + 1) * sizeof(Py_ssize_t))
        self._star_row = <PyObject **> PyMem_Malloc((width + 1) * sizeof(PyObject *))
        if not (self._read_pos and self._read_action and self._read_slot and self._star_row):
            raise MemoryError()
        constants = []
        for k, (position, action, slot) in enumerate(reads):
            if not 0 <= position < objects:
                raise ValueError(f"object position {position} beyond the layout")
            self._read_pos[k] = position
            self._read_action[k] = STAR_ACTIONS[action]
            if action == "const":
                self._read_slot[k] = len(constants)
                constants.append(slot)
            elif 0 <= slot < width:
                self._read_slot[k] = slot
            else:
                raise ValueError(f"row position {slot} out of range")
        self._star_constants = tuple(constants)
        self._subject_slot = s if s_var else -1
        self._star_subject = None if s_var else s
        self._star_width = width
        self._star_objects = objects

    def feed_star(self, tuple objects, subject, int64_t expiry):
        """:meth:`feed` of the row a star graph (``subject``, ``objects``) matches as
        :meth:`read_star` set, if it matches."""
        cdef Py_ssize_t k
        cdef PyObject **row = self._star_row
        cdef PyObject *item
        cdef PyObject *other
        if PyTuple_GET_SIZE(objects) != self._star_objects or row == NULL:
            raise ValueError("a star graph of another layout than the program reads")
        if self._subject_slot >= 0:
            row[self._subject_slot] = <PyObject *> subject
        elif not (subject is self._star_subject or subject == self._star_subject):
            return
        for k in range(self._n_reads):
            item = PyTuple_GET_ITEM(objects, self._read_pos[k])
            if <object> item is None:
                return
            if self._read_action[k] == STAR_BIND:
                row[self._read_slot[k]] = item
                continue
            if self._read_action[k] == STAR_SAME:
                other = row[self._read_slot[k]]
            else:
                other = PyTuple_GET_ITEM(self._star_constants, self._read_slot[k])
            if not (item == other or <object> item == <object> other):
                return
        self._feed(row, self._star_width, expiry)


cdef tuple _row_tuple(PyObject **row, Py_ssize_t n):
    """The items of ``row`` as a tuple (for the Python paths: slow rows, hand-over)."""
    cdef tuple out = PyTuple_New(n)
    cdef Py_ssize_t i
    for i in range(n):
        Py_INCREF(<object> row[i])
        PyTuple_SET_ITEM(out, i, <object> row[i])
    return out
