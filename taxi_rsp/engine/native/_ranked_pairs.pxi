# Included by _group_table.pyx (it reads both tables' slots directly): the pairs of two
# group tables joined on their keys, ranked in C by ORDER BY values computed from both
# groups' aggregates (issue 50). Semantics and oracles: compiled/ranked_join.py.

cdef extern from *:
    """
    typedef __int128 taxi_rsp_i128;
    """
    ctypedef long long i128 "taxi_rsp_i128"
    bint __builtin_sub_overflow(int64_t a, int64_t b, int64_t *out) nogil


# rank program instructions, four int64 each: [op, a, b, c]
cdef enum:
    R_AGG = 1  # a: side (0 left, 1 right), b: aggregate index
    R_KEY = 2  # a: key part
    R_CONST = 3  # a / b (b > 0)
    R_ADD = 4
    R_SUB = 5
    R_MUL = 6
    R_DIV = 7
    R_NEG = 8
    R_IF = 9  # a: comparison (C_LT ...): pops p, q, then, else
    C_LT = 0
    C_LE = 1
    C_GT = 2
    C_GE = 3
    C_EQ = 4
    C_NE = 5
    STACK_MAX = 32


cdef struct Val:
    int64_t n
    int64_t d  # > 0
    bint bound


cdef inline int64_t _gcd(int64_t a, int64_t b):
    if a < 0:
        a = -a
    while b:
        a, b = b, a % b
    return a


cdef inline Val _reduced(int64_t n, int64_t d):
    cdef int64_t g = _gcd(n, d)
    cdef Val v
    if g > 1:
        n //= g
        d //= g
    v.n, v.d, v.bound = n, d, True
    return v


cdef inline int _cmp(Val a, Val b):
    """Both bound: -1, 0, 1 as a < b, a == b, a > b (exact: 128-bit cross products)."""
    cdef i128 x = <i128>a.n * <i128>b.d
    cdef i128 y = <i128>b.n * <i128>a.d
    return -1 if x < y else (1 if x > y else 0)


cdef class RankedPairs:
    """The groups of ``left`` and ``right`` (two :class:`GroupTable` objects with one key
    layout) paired by key and ranked by ``parts``: per ORDER BY part a rank program
    (instructions over the two groups' aggregates, key parts and constants) and whether
    it is descending; ties by the left key's ids. :meth:`flush` consumes both tables'
    changes (their own flush must not run) and returns the rows ``offset`` to
    ``offset + limit`` or None when they did not change."""

    cdef GroupTable left, right
    cdef Py_ssize_t kw, n_parts, width, offset, wanted, n_pairs, lcap, rcap
    cdef int64_t *code
    cdef Py_ssize_t *part_at  # part p's instructions: code[part_at[p]:part_at[p + 1]] (quads)
    cdef char *desc
    cdef Py_ssize_t *lpart  # left slot -> its right slot, or -1
    cdef Py_ssize_t *rpart  # right slot -> its left slot, or -1
    cdef int64_t *keys  # per left slot: per part [class, n, d]
    cdef int64_t *fresh  # the same, computed before anything changes
    cdef Py_ssize_t *future  # per affected pair: its right slot after this flush, or -1
    cdef Py_ssize_t *affected
    cdef char *mark
    cdef Head rank  # the best pairs in order (by left slot), the rest behind the bound
    cdef int64_t *bound
    cdef list rows  # per left slot: the pair's reported row, or None
    cdef list reported

    def __cinit__(self, GroupTable left, GroupTable right, parts, Py_ssize_t offset, Py_ssize_t limit,
                  capacity=None):
        cdef Py_ssize_t p, i, n = 0
        if left.key_width != right.key_width or left.key_width == 0:
            raise ValueError("two tables with GROUP BY keys of one width")
        if offset < 0 or limit < 0 or (capacity is not None and capacity < max(offset + limit, 1)):
            raise ValueError("a negative offset or limit, or a head shorter than the rows to report")
        self.left, self.right, self.kw = left, right, left.key_width
        parts = [(tuple(tuple(q) for q in program), bool(descending)) for program, descending in parts]
        self.n_parts = len(parts)
        self.width = 3 * self.n_parts
        self.offset, self.wanted = offset, offset + limit
        for program, _ in parts:
            n += len(program)
        self.code = <int64_t *> grown(NULL, (4 * n + 1) * sizeof(int64_t))
        self.part_at = <Py_ssize_t *> grown(NULL, (self.n_parts + 1) * sizeof(Py_ssize_t))
        self.desc = <char *> grown(NULL, (self.n_parts + 1) * sizeof(char))
        n = 0
        for p, (program, descending) in enumerate(parts):
            self.part_at[p] = n
            self.desc[p] = descending
            _check_program(program, left, right)
            for q in program:
                for i in range(4):
                    self.code[4 * n + i] = q[i] if i < len(q) else 0
                n += 1
        self.part_at[self.n_parts] = n
        head_init(&self.rank, max(HEAD_MIN, HEAD_SLACK * self.wanted) if capacity is None else capacity,
                  <void *> self, _pairs_compare, _pairs_set_bound, _pairs_in_rest)
        self.bound = <int64_t *> grown(NULL, (self.width + self.kw + 1) * sizeof(int64_t))
        self.rows, self.reported = [], []
        self._fit()

    def __dealloc__(self):
        PyMem_Free(self.code)
        PyMem_Free(self.part_at)
        PyMem_Free(self.desc)
        PyMem_Free(self.lpart)
        PyMem_Free(self.rpart)
        PyMem_Free(self.keys)
        PyMem_Free(self.fresh)
        PyMem_Free(self.future)
        PyMem_Free(self.affected)
        PyMem_Free(self.mark)
        PyMem_Free(self.rank.member)
        PyMem_Free(self.rank.order)
        PyMem_Free(self.rank.best)
        PyMem_Free(self.bound)

    cdef int _fit(self) except -1:
        """Grow the per-slot arrays to the tables' slot capacities (new slots unpaired)."""
        cdef Py_ssize_t i, cap = self.left._slot_cap, rcap = self.right._slot_cap
        if cap > self.lcap:
            self.lpart = <Py_ssize_t *> grown(self.lpart, cap * sizeof(Py_ssize_t))
            self.keys = <int64_t *> grown(self.keys, (cap * self.width + 1) * sizeof(int64_t))
            self.fresh = <int64_t *> grown(self.fresh, (cap * self.width + 1) * sizeof(int64_t))
            self.future = <Py_ssize_t *> grown(self.future, cap * sizeof(Py_ssize_t))
            self.affected = <Py_ssize_t *> grown(self.affected, cap * sizeof(Py_ssize_t))
            self.mark = <char *> grown(self.mark, cap)
            self.rank.member = <char *> grown(self.rank.member, cap)
            for i in range(self.lcap, cap):
                self.lpart[i] = -1
                self.mark[i] = 0
                self.rank.member[i] = 0
            self.rows.extend([None] * (cap - self.lcap))
            self.lcap = cap
        if rcap > self.rcap:
            self.rpart = <Py_ssize_t *> grown(self.rpart, rcap * sizeof(Py_ssize_t))
            for i in range(self.rcap, rcap):
                self.rpart[i] = -1
            self.rcap = rcap
        return 0

    # -- values ---------------------------------------------------------------------------
    cdef Val _aggregate(self, GroupTable t, Py_ssize_t slot, Py_ssize_t j) except *:
        """Aggregate ``j`` of group ``slot`` as the exact n / d its row's term holds."""
        cdef Val v
        cdef Vec *vec
        cdef int kind = t._kinds[j], scale = t._scales[j]
        cdef int64_t unit = POW10[scale] if scale > 0 else 1, low, high, size
        v.bound, v.n, v.d = False, 0, 1
        if kind != K_COUNT and t._errors[slot * t.n_args + j]:
            return v
        if kind <= K_AVG:
            v.n = t._acc[slot * t.n_acc + t._place[j]]
            if kind == K_AVG:
                if __builtin_mul_overflow(unit, t._rows[slot], &v.d) or v.d <= 0:
                    raise OverflowError("an average beyond 64 bits")
                return _reduced(v.n, v.d)
            return _reduced(v.n, unit)
        vec = &t._vecs[slot * t.n_vec + t._place[j]]
        size = vec.size - vec.head
        if size == 0:
            return v
        if t._queue[j]:
            return _reduced(vec.data[vec.head], unit)
        if kind == K_MIN:
            return _reduced(vec.data[0], unit)
        if kind == K_MAX:
            return _reduced(vec.data[size - 1], unit)
        if size % 2:
            return _reduced(vec.data[size // 2], unit)
        low, high = vec.data[size // 2 - 1], vec.data[size // 2]
        if __builtin_add_overflow(low, high, &v.n) or __builtin_mul_overflow(unit, 2, &v.d):
            raise OverflowError("a median beyond 64 bits")
        return _reduced(v.n, v.d)

    cdef Val _key_part(self, Py_ssize_t slot, Py_ssize_t i) except *:
        """Key part ``i`` of left group ``slot``: an inline integer or decimal, else stop."""
        cdef int64_t term = self.left._keys[slot * self.kw + i], payload
        cdef Val v
        v.bound, v.n, v.d = False, 0, 1
        if term == UNBOUND:
            return v
        payload = term & PAYLOAD_MASK
        if payload > PAYLOAD_MAX:
            payload -= PAYLOAD_MASK + 1
        if (term & ~PAYLOAD_MASK) == INT_HEAD:
            return _reduced(payload, 1)
        if (term & ~PAYLOAD_MASK) == DEC_HEAD:
            return _reduced(payload, POW10[9])
        raise OverflowError("an ORDER BY key that is not an inline number")

    cdef Val _run(self, Py_ssize_t p, Py_ssize_t l, Py_ssize_t r) except *:
        """Part ``p`` of the pair (``l``, ``r``): its program on a stack of exact values."""
        cdef Val stack[STACK_MAX]
        cdef Val a, b, t, e
        cdef Py_ssize_t at, top = 0
        cdef int64_t *q
        cdef int64_t x, y, d
        cdef int c
        cdef bint holds
        for at in range(self.part_at[p], self.part_at[p + 1]):
            q = self.code + 4 * at
            if q[0] == R_AGG:
                stack[top] = self._aggregate(self.left if q[1] == 0 else self.right, l if q[1] == 0 else r, q[2])
                top += 1
                continue
            if q[0] == R_KEY:
                stack[top] = self._key_part(l, q[1])
                top += 1
                continue
            if q[0] == R_CONST:
                stack[top].n, stack[top].d, stack[top].bound = q[1], q[2], True
                top += 1
                continue
            if q[0] == R_NEG:
                if stack[top - 1].bound:
                    if stack[top - 1].n == INT64_MIN:
                        raise OverflowError("a negation beyond 64 bits")
                    stack[top - 1].n = -stack[top - 1].n
                continue
            if q[0] == R_IF:
                e, t, b, a = stack[top - 1], stack[top - 2], stack[top - 3], stack[top - 4]
                top -= 4
                if not (a.bound and b.bound):
                    stack[top].bound = False  # the condition is an error: so is IF
                else:
                    c = _cmp(a, b)
                    holds = (c < 0 if q[1] == C_LT else c <= 0 if q[1] == C_LE else c > 0 if q[1] == C_GT
                             else c >= 0 if q[1] == C_GE else c == 0 if q[1] == C_EQ else c != 0)
                    stack[top] = t if holds else e
                top += 1
                continue
            b, a = stack[top - 1], stack[top - 2]
            top -= 1
            if not (a.bound and b.bound):
                stack[top - 1].bound = False  # an error (unbound operand) spreads
                continue
            if q[0] == R_MUL:
                if __builtin_mul_overflow(a.n, b.n, &x) or __builtin_mul_overflow(a.d, b.d, &y):
                    raise OverflowError("a product beyond 64 bits")
            elif q[0] == R_DIV:
                if b.n == 0:
                    stack[top - 1].bound = False  # division by zero: an error
                    continue
                if __builtin_mul_overflow(a.n, b.d, &x) or __builtin_mul_overflow(a.d, b.n, &y):
                    raise OverflowError("a quotient beyond 64 bits")
                if y < 0:
                    if x == INT64_MIN or y == INT64_MIN:
                        raise OverflowError("a quotient beyond 64 bits")
                    x, y = -x, -y
            else:
                if (__builtin_mul_overflow(a.n, b.d, &x) or __builtin_mul_overflow(b.n, a.d, &y)
                        or __builtin_mul_overflow(a.d, b.d, &d)):
                    raise OverflowError("a sum beyond 64 bits")
                if (__builtin_sub_overflow(x, y, &x) if q[0] == R_SUB else __builtin_add_overflow(x, y, &x)):
                    raise OverflowError("a sum beyond 64 bits")
                y = d
            stack[top - 1] = _reduced(x, y)
        return stack[0]

    cdef void _evaluate(self, Py_ssize_t l, Py_ssize_t r, int64_t *out) except *:
        """The pair's rank key: per part its class (unbound first ascending, last
        descending) and its exact value."""
        cdef Py_ssize_t p
        cdef Val v
        for p in range(self.n_parts):
            v = self._run(p, l, r)
            out[3 * p] = (1 - self.desc[p]) if v.bound else self.desc[p]
            out[3 * p + 1] = v.n if v.bound else 0
            out[3 * p + 2] = v.d if v.bound else 1

    # -- order ----------------------------------------------------------------------------
    cdef int _compare(self, Py_ssize_t l, Py_ssize_t other) noexcept:
        """-1 if pair ``l`` ranks before pair ``other`` (-1: the bound), 1 after, 0 the same."""
        cdef Py_ssize_t p, i
        cdef int c
        cdef Val a, b
        cdef int64_t *mine = self.keys + l * self.width
        cdef int64_t *theirs = self.bound if other < 0 else self.keys + other * self.width
        cdef int64_t *key = self.left._keys + l * self.kw
        cdef int64_t *their_key = self.bound + self.width if other < 0 else self.left._keys + other * self.kw
        for p in range(self.n_parts):
            if mine[3 * p] != theirs[3 * p]:
                return -1 if mine[3 * p] < theirs[3 * p] else 1
            if mine[3 * p] == self.desc[p]:
                continue  # both unbound
            a.n, a.d, b.n, b.d = mine[3 * p + 1], mine[3 * p + 2], theirs[3 * p + 1], theirs[3 * p + 2]
            c = _cmp(a, b)
            if c:
                return -c if self.desc[p] else c
        for i in range(self.kw):
            if key[i] != their_key[i]:
                return -1 if key[i] < their_key[i] else 1
        return 0

    cdef void _set_bound(self, Py_ssize_t l) noexcept:
        memmove(self.bound, self.keys + l * self.width, self.width * sizeof(int64_t))
        memmove(self.bound + self.width, self.left._keys + l * self.kw, self.kw * sizeof(int64_t))

    # -- the instant's changes --------------------------------------------------------------
    cdef Py_ssize_t _affected_pairs(self) except -1:
        """Mark and list the left slots whose pair may change: every touched left group,
        and the left group of every touched right group's key; note each one's right
        group after this flush (-1: none)."""
        cdef GroupTable left = self.left, right = self.right
        cdef Py_ssize_t d, l, r, n = 0
        for d in range(left._n_dirty + right._n_dirty):
            if d < left._n_dirty:
                l = left._dirty[d]
            else:
                r = right._dirty[d - left._n_dirty]
                l = self.rpart[r] if self.rpart[r] >= 0 else left._find(right._keys + r * self.kw)
                if l < 0:
                    continue
            if self.mark[l]:
                continue
            self.mark[l] = 1
            self.affected[n] = l
            n += 1
            r = -1
            if left._rows[l] > 0:
                r = self.lpart[l] if self.lpart[l] >= 0 else right._find(left._keys + l * self.kw)
                if r >= 0 and right._rows[r] == 0:
                    r = -1  # leaves at this flush
            self.future[l] = r
        return n

    cdef void _drop_emptied(self, GroupTable table, Py_ssize_t *part, Py_ssize_t *other_part):
        """End the instant of one table: its emptied groups leave (and their pairs)."""
        cdef Py_ssize_t d, slot
        for d in range(table._n_dirty):
            slot = table._dirty[d]
            table._touched[slot] = 0
            if table._rows[slot] == 0:
                if part[slot] >= 0:
                    other_part[part[slot]] = -1
                    part[slot] = -1
                    self.n_pairs -= 1
                table._drop_group(slot)
        table._n_dirty = 0

    def flush(self, extend):
        """Apply both tables' changes since the last flush; the reported rows (each the
        left row, the right row's aggregates, then ``extend`` of that) when they
        changed, else None. OverflowError, before anything changed, for a value the
        rank programs cannot hold exactly in int64 (a key that is not an inline number, a
        product beyond 64 bits)."""
        cdef Py_ssize_t n, i, l, r, end
        cdef bint reported = False
        cdef list rows
        self._fit()
        n = self._affected_pairs()
        try:
            for i in range(n):
                l = self.affected[i]
                if self.future[l] >= 0:
                    self._evaluate(l, self.future[l], self.fresh + l * self.width)
        except OverflowError:
            for i in range(n):
                self.mark[self.affected[i]] = 0
            raise
        for i in range(n):
            end = head_remove(&self.rank, self.affected[i])
            reported = reported or 0 <= end < self.wanted
        self._drop_emptied(self.left, self.lpart, self.rpart)
        self._drop_emptied(self.right, self.rpart, self.lpart)
        for i in range(n):
            l = self.affected[i]
            self.mark[l] = 0
            self.rows[l] = None
            r = self.future[l]
            if r < 0:
                continue
            if self.lpart[l] < 0:
                self.lpart[l], self.rpart[r] = r, l
                self.n_pairs += 1
            memmove(self.keys + l * self.width, self.fresh + l * self.width, self.width * sizeof(int64_t))
            if not self.rank.bounded or self._compare(l, -1) < 0:
                reported = head_insert(&self.rank, l) < self.wanted or reported
        if self.rank.size < self.wanted and self.n_pairs > self.rank.size:
            head_refill(&self.rank, self.lcap)
            reported = True
        if not reported:
            return None
        rows = []
        end = min(self.wanted, self.rank.size)
        for i in range(self.offset, end):
            l = self.rank.order[i]
            row = self.rows[l]
            if row is None:
                row = extend(self.left._new_row(l) + self.right._new_row(self.lpart[l])[self.kw:])
                self.rows[l] = row
            rows.append(row)
        if rows == self.reported:
            return None
        self.reported = rows
        return rows

    def reset(self) -> None:
        """Forget every pair (the tables' groups are reported as rows from now on)."""
        cdef Py_ssize_t i
        for i in range(self.lcap):
            self.lpart[i] = -1
            self.rank.member[i] = 0
            self.rows[i] = None
        for i in range(self.rcap):
            self.rpart[i] = -1
        self.rank.size = self.n_pairs = 0
        self.rank.bounded = False
        self.reported = []

    def pair_count(self) -> int:
        return self.n_pairs


# the pairs' head (see _ranked_head.pxi) calls back into them
cdef int _pairs_compare(void *owner, Py_ssize_t l, Py_ssize_t other) noexcept:
    return (<RankedPairs> owner)._compare(l, other)


cdef void _pairs_set_bound(void *owner, Py_ssize_t l) noexcept:
    (<RankedPairs> owner)._set_bound(l)


cdef bint _pairs_in_rest(void *owner, Py_ssize_t l) noexcept:
    """A pair ranked outside the head."""
    return (<RankedPairs> owner).lpart[l] >= 0 and not (<RankedPairs> owner).rank.member[l]


cdef _check_program(tuple program, GroupTable left, GroupTable right):
    """Reject a rank program that reads outside the tables or the stack."""
    cdef Py_ssize_t depth = 0
    for q in program:
        op = q[0]
        if op == R_AGG:
            table = left if q[1] == 0 else right
            if q[1] not in (0, 1) or not 0 <= q[2] < table.n_args:
                raise ValueError(f"no aggregate {q[2]} on side {q[1]}")
            depth += 1
        elif op == R_KEY:
            if not 0 <= q[1] < left.key_width:
                raise ValueError(f"no key part {q[1]}")
            depth += 1
        elif op == R_CONST:
            if q[2] <= 0:
                raise ValueError("a constant's divisor must be positive")
            depth += 1
        elif op == R_NEG:
            if depth < 1:
                raise ValueError("an empty stack")
        elif op == R_IF:
            if depth < 4 or not C_LT <= q[1] <= C_NE:
                raise ValueError("IF takes four values and a comparison")
            depth -= 3
        elif R_ADD <= op <= R_DIV:
            if depth < 2:
                raise ValueError("an operator takes two values")
            depth -= 1
        else:
            raise ValueError(f"unknown rank instruction {op}")
        if depth > STACK_MAX:
            raise ValueError("a rank program deeper than the stack")
    if depth != 1:
        raise ValueError("a rank program leaves one value")
