# Included by _group_table.pyx: a ranked head (issue 50), the best slots of a ranking in
# order and every other ranked slot behind a bound that none of them ranks before. The
# ranked group table (GroupTable.rank_by) and the ranked pairs (RankedPairs) keep one
# each and say how two slots compare (``other`` -1: the bound), what the bound holds and
# which slots are ranked outside the head.

ctypedef int (*Compare)(void *owner, Py_ssize_t slot, Py_ssize_t other) noexcept
ctypedef void (*SetBound)(void *owner, Py_ssize_t slot) noexcept
ctypedef bint (*InRest)(void *owner, Py_ssize_t slot) noexcept


cdef struct Head:
    Py_ssize_t *order  # the head's slots, best first
    Py_ssize_t *best  # a refill's buffer
    char *member  # per slot: it is in the head
    Py_ssize_t size, cap
    bint bounded
    void *owner  # the table or pairs holding this head (borrowed: the head is part of it)
    Compare compare
    SetBound set_bound
    InRest in_rest


cdef int head_init(Head *h, Py_ssize_t cap, void *owner, Compare compare, SetBound set_bound,
                   InRest in_rest) except -1:
    """An empty head of ``cap`` slots (its ``member`` flags are the owner's to size)."""
    h.order = <Py_ssize_t *> grown(h.order, (cap + 1) * sizeof(Py_ssize_t))
    h.best = <Py_ssize_t *> grown(h.best, (cap + 1) * sizeof(Py_ssize_t))
    h.size, h.cap, h.bounded = 0, cap, False
    h.owner, h.compare, h.set_bound, h.in_rest = owner, compare, set_bound, in_rest
    return 0


cdef inline Py_ssize_t head_place(Head *h, Py_ssize_t *ordered, Py_ssize_t size, Py_ssize_t slot) noexcept:
    """Where ``slot`` goes among the ``size`` slots of ``ordered`` (binary search)."""
    cdef Py_ssize_t lo = 0, hi = size, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if h.compare(h.owner, ordered[mid], slot) < 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t head_insert(Head *h, Py_ssize_t slot) noexcept:
    """Put ``slot`` in the head and return its place; past capacity, the head's last
    slot leaves for the rest and becomes the bound."""
    cdef Py_ssize_t at = head_place(h, h.order, h.size, slot), last
    memmove(h.order + at + 1, h.order + at, (h.size - at) * sizeof(Py_ssize_t))
    h.order[at] = slot
    h.size += 1
    h.member[slot] = 1
    if h.size > h.cap:
        h.size -= 1
        last = h.order[h.size]
        h.member[last] = 0
        h.set_bound(h.owner, last)
        h.bounded = True
    return at


cdef inline Py_ssize_t head_remove(Head *h, Py_ssize_t slot) noexcept:
    """Take ``slot`` out of the head; the place it had, or -1 (it was not in the head)."""
    cdef Py_ssize_t i
    if not h.member[slot]:
        return -1
    h.member[slot] = 0
    for i in range(h.size):
        if h.order[i] == slot:
            memmove(h.order + i, h.order + i + 1, (h.size - i - 1) * sizeof(Py_ssize_t))
            h.size -= 1
            return i
    return -1


cdef void head_refill(Head *h, Py_ssize_t slots) noexcept:
    """Move the best of the rest (slots below ``slots`` that ``in_rest``) into the head,
    up to its capacity: one pass keeping the best in a sorted buffer."""
    cdef Py_ssize_t room = h.cap - h.size, found = 0, rest = 0, slot, at
    for slot in range(slots):
        if not h.in_rest(h.owner, slot):
            continue
        rest += 1
        if found == room and h.compare(h.owner, slot, h.best[found - 1]) >= 0:
            continue
        at = head_place(h, h.best, found, slot)
        if found == room:
            found -= 1
        memmove(h.best + at + 1, h.best + at, (found - at) * sizeof(Py_ssize_t))
        h.best[at] = slot
        found += 1
    for at in range(found):
        h.order[h.size + at] = h.best[at]
        h.member[h.best[at]] = 1
    h.size += found
    if found == rest:
        h.bounded = False
    else:
        h.set_bound(h.owner, h.best[found - 1])
        h.bounded = True
