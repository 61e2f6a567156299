# cython: language_level=3
"""CPython's small-object arenas carved from one region backed by transparent huge pages.

pymalloc serves every object of at most 512 bytes (rows, ids, entries, lists, dicts'
small tables) from 1 MiB *arenas*, each its own ``mmap`` of 4 KiB pages. A run's window
state is spread over many of them, so the engine touches a few thousand pages per second
of stream, and on a virtual machine every TLB miss is a two-level page walk. This module
installs an arena allocator (``PyObject_SetArenaAllocator``, a documented hook) that hands
pymalloc 1 MiB arenas cut from one reserved region that the kernel is asked
(``madvise(MADV_HUGEPAGE)``) to back with 2 MiB pages: the same objects, the same
allocator above, 512 times fewer pages. Measured in docs/performance.md ("Stop 35").

* Only allocations of exactly the arena size are served here. CPython also asks this hook
  for other sizes (the frames' data-stack chunks, ``_PyObject_VirtualAlloc``): they pass
  through to the previous allocator, as do arenas made before the install.
* A freed arena goes on a free list (its first word links the next) and is handed out
  again before the region grows: the resident size follows the peak of the heap, flat in
  the stream's length, and is not returned to the system while the process lives.
* The region is reserved with ``MAP_NORESERVE`` (address space, not memory); when it is
  used up, or cannot be reserved, arenas come from the previous allocator as before.
* Install once, never uninstall: arenas of the region must never reach ``munmap``.
"""

from libc.stdint cimport uintptr_t

cdef extern from *:
    """
    #include <sys/mman.h>
    #ifndef MAP_NORESERVE
    #define MAP_NORESERVE 0
    #endif
    static void *taxi_rsp_reserve(size_t n) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    static int taxi_rsp_advise_huge(void *p, size_t n) {
    #ifdef MADV_HUGEPAGE
        return madvise(p, n, MADV_HUGEPAGE);
    #else
        (void)p; (void)n;
        return -1;
    #endif
    }
    """
    void *taxi_rsp_reserve(size_t n) nogil
    int taxi_rsp_advise_huge(void *p, size_t n) nogil

cdef extern from "Python.h":
    ctypedef struct PyObjectArenaAllocator:
        void *ctx
        void *(*alloc)(void *ctx, size_t size) noexcept nogil
        void (*free)(void *ctx, void *ptr, size_t size) noexcept nogil
    void PyObject_GetArenaAllocator(PyObjectArenaAllocator *allocator)
    void PyObject_SetArenaAllocator(PyObjectArenaAllocator *allocator)

# pymalloc's arena on 64-bit CPython 3.10+ (ARENA_BITS 20). A build with another arena size
# asks for other sizes only, all passed through: nothing changes there.
DEF ARENA = 1 << 20
DEF HUGE_PAGE = 2 << 20

cdef PyObjectArenaAllocator previous
cdef bint installed = False
cdef char *region_start = NULL
cdef size_t region_size = 0
cdef size_t carved = 0  # bytes of the region handed out so far (from its start)
cdef void **free_arenas = NULL  # freed arenas of the region, linked through their first word
cdef size_t free_count = 0, reused = 0, passed_through = 0


cdef inline bint in_region(void *ptr) noexcept nogil:
    return region_start <= <char *>ptr < region_start + region_size


cdef void *arena_alloc(void *ctx, size_t size) noexcept nogil:
    global carved, free_arenas, free_count, reused, passed_through
    cdef void *arena
    if size != ARENA:
        passed_through += 1
        return previous.alloc(previous.ctx, size)
    if free_arenas != NULL:
        arena = <void *>free_arenas
        free_arenas = <void **>free_arenas[0]
        free_count -= 1
        reused += 1
        return arena
    if carved + ARENA <= region_size:
        arena = region_start + carved
        carved += ARENA
        return arena
    passed_through += 1
    return previous.alloc(previous.ctx, size)


cdef void arena_free(void *ctx, void *ptr, size_t size) noexcept nogil:
    global free_arenas, free_count
    if size == ARENA and in_region(ptr):
        (<void **>ptr)[0] = <void *>free_arenas
        free_arenas = <void **>ptr
        free_count += 1
    else:
        previous.free(previous.ctx, ptr, size)


def install(size_t reserve_mib) -> bool:
    """Reserve ``reserve_mib`` MiB of address space and serve pymalloc's arenas from it
    (advised to huge pages). True once installed (again: no-op); False when the region
    cannot be reserved (the allocator stays as it was)."""
    global installed, region_start, region_size
    cdef PyObjectArenaAllocator mine
    cdef size_t size = reserve_mib << 20
    cdef char *raw
    if installed:
        return True
    if size < HUGE_PAGE:
        raise ValueError(f"reserve at least {HUGE_PAGE >> 20} MiB, not {reserve_mib}")
    raw = <char *>taxi_rsp_reserve(size + HUGE_PAGE)
    if raw == NULL:
        return False
    # a huge page is one aligned 2 MiB frame: start the region on such a boundary
    region_start = <char *>((<uintptr_t>raw + HUGE_PAGE - 1) & ~(<uintptr_t>HUGE_PAGE - 1))
    region_size = size
    taxi_rsp_advise_huge(region_start, region_size)  # advice: without it, small pages
    PyObject_GetArenaAllocator(&previous)
    mine.ctx = NULL
    mine.alloc = arena_alloc
    mine.free = arena_free
    PyObject_SetArenaAllocator(&mine)
    installed = True
    return True


def stats() -> dict:
    """What the allocator has done so far (MiB and counts).

    ``carved_mib``: arenas cut from the region; ``free_arenas``: freed ones waiting for
    reuse; ``reused``: arenas handed out again; ``passed_through``: requests served by the
    previous allocator (other sizes, or the region used up)."""
    return {"installed": bool(installed), "reserved_mib": region_size >> 20, "carved_mib": carved >> 20,
            "free_arenas": free_count, "reused": reused, "passed_through": passed_through}
