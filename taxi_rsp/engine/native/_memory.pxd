# cython: language_level=3
# Growing the native tables' arrays (_group_table.pyx, _correlation.pyx): inline, so each
# table compiles it in.

from cpython.mem cimport PyMem_Realloc


cdef inline void *grown(void *memory, size_t size) except NULL:
    """``memory`` reallocated to ``size`` bytes (MemoryError when it cannot be; the old
    block then stays valid, and its owner frees it)."""
    cdef void *moved = PyMem_Realloc(memory, size)
    if moved == NULL:
        raise MemoryError()
    return moved
