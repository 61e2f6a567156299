# cython: language_level=3
# An open-addressing index from keys of int64 term ids to slots, shared by the native
# tables (_group_table.pyx, _correlation.pyx; with _memory.pxd): inline functions, so each table's lookups
# are compiled into it (no call across modules). The keys live in the table's own array
# (``width`` int64 per slot); the index holds slot numbers, EMPTY where no key ever was and
# GONE where one left (probing goes on past it). Linear probing over a power-of-two size,
# kept at most half full (tombstones counted).

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint64_t

cdef enum:
    EMPTY = -1
    GONE = -2


cdef struct KeyIndex:
    Py_ssize_t *places
    Py_ssize_t cap  # a power of two
    Py_ssize_t used
    Py_ssize_t gone


cdef inline uint64_t mix(uint64_t h, int64_t part):
    h ^= <uint64_t> part
    h *= 0xbf58476d1ce4e5b9ULL
    return h ^ (h >> 31)


cdef inline uint64_t hash_key(const int64_t *key, Py_ssize_t width):
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL
    cdef Py_ssize_t i
    for i in range(width):
        h = mix(h, key[i])
    return h


cdef inline bint same_key(const int64_t *held, const int64_t *key, Py_ssize_t width):
    cdef Py_ssize_t i
    for i in range(width):
        if held[i] != key[i]:
            return False
    return True


cdef inline int index_init(KeyIndex *ix, Py_ssize_t cap) except -1:
    """An empty index of ``cap`` places (a power of two)."""
    cdef Py_ssize_t i
    ix.places = <Py_ssize_t *> PyMem_Malloc(cap * sizeof(Py_ssize_t))
    if ix.places == NULL:
        raise MemoryError()
    for i in range(cap):
        ix.places[i] = EMPTY
    ix.cap, ix.used, ix.gone = cap, 0, 0
    return 0


cdef inline Py_ssize_t index_find(const KeyIndex *ix, const int64_t *keys, Py_ssize_t width, const int64_t *key):
    """The slot holding ``key``, or -1."""
    cdef Py_ssize_t mask = ix.cap - 1
    cdef Py_ssize_t at = hash_key(key, width) & mask, slot
    while True:
        slot = ix.places[at]
        if slot == EMPTY:
            return -1
        if slot >= 0 and same_key(keys + slot * width, key, width):
            return slot
        at = (at + 1) & mask


cdef inline int index_rehash(KeyIndex *ix, const int64_t *keys, Py_ssize_t width, Py_ssize_t cap) except -1:
    """A fresh index of ``cap`` places holding every indexed slot (tombstones dropped)."""
    cdef Py_ssize_t *places = <Py_ssize_t *> PyMem_Malloc(cap * sizeof(Py_ssize_t))
    cdef Py_ssize_t i, slot, at
    if places == NULL:
        raise MemoryError()
    for i in range(cap):
        places[i] = EMPTY
    for i in range(ix.cap):
        slot = ix.places[i]
        if slot >= 0:
            at = hash_key(keys + slot * width, width) & (cap - 1)
            while places[at] != EMPTY:
                at = (at + 1) & (cap - 1)
            places[at] = slot
    PyMem_Free(ix.places)
    ix.places, ix.cap, ix.gone = places, cap, 0
    return 0


cdef inline int index_make_room(KeyIndex *ix, const int64_t *keys, Py_ssize_t width) except -1:
    """Room for one more key: twice the places when live keys fill a quarter, else the
    same number without the tombstones, once keys and tombstones would fill half."""
    if (ix.used + ix.gone + 1) * 2 > ix.cap:
        index_rehash(ix, keys, width, ix.cap * 2 if ix.used * 4 >= ix.cap else ix.cap)
    return 0


cdef inline void index_add(KeyIndex *ix, const int64_t *key, Py_ssize_t width, Py_ssize_t slot):
    """Index ``slot`` under ``key`` (not indexed yet; room made first)."""
    cdef Py_ssize_t mask = ix.cap - 1
    cdef Py_ssize_t at = hash_key(key, width) & mask
    while ix.places[at] >= 0:
        at = (at + 1) & mask
    if ix.places[at] == GONE:
        ix.gone -= 1
    ix.places[at] = slot
    ix.used += 1


cdef inline void index_remove(KeyIndex *ix, const int64_t *key, Py_ssize_t width, Py_ssize_t slot):
    """Unindex ``slot`` (indexed under ``key``): its place becomes a tombstone. A slot not
    indexed under ``key`` (a caller's mistake) leaves the index as it was: the probe ends
    at the first place no key ever held, instead of running on forever."""
    cdef Py_ssize_t mask = ix.cap - 1
    cdef Py_ssize_t at = hash_key(key, width) & mask
    while ix.places[at] != slot:
        if ix.places[at] == EMPTY:
            return
        at = (at + 1) & mask
    ix.places[at] = GONE
    ix.used -= 1
    ix.gone += 1
