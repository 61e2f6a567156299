"""The native tier (issue 50): operator state in C memory, compiled ahead of time by the
install, each structure with a pure-Python twin that is its oracle and its fallback.

* :class:`GroupTable` — the groups of a GROUP BY (open-addressing table of int64 keys,
  COUNT/SUM/AVG/MIN/MAX/MEDIAN, error counts, result ids and the emission of changed
  rows) and, for a window, its entries (a ring buffer of int64 records): the state of
  :class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` and
  :class:`~taxi_rsp.engine.compiled.group.CompiledGroup`.
* :class:`CorrelationTable` — the two sides of FILTER NOT EXISTS / MINUS / FILTER EXISTS
  per key of int64 ids, with their match counts: the state of
  :class:`~taxi_rsp.engine.compiled.correlated.CompiledCorrelated` (its own dict-based
  loops are the twin here: the operator runs them when the table is not built).
* :class:`RankedPairs` — the groups of two C group tables paired by key and ranked by
  ORDER BY values computed from both: the state of
  :class:`~taxi_rsp.engine.compiled.ranked_join.RankedJoin` (without it the planned join
  and top-k run, and are its oracle with the reference interpreter).

:func:`group_table_class` gives the C class when the install built it (and the run does
not ask for pure Python), else the twin: the answers are the same, the twin is slower.

>>> group_table_class(native=False).__module__
'taxi_rsp.engine.native.group_table'
"""

from __future__ import annotations

from taxi_rsp.engine.native.group_table import GroupTable as PyGroupTable
from taxi_rsp.native import pure_python_requested

try:  # built by the install when it has a C compiler
    from taxi_rsp.engine.native._group_table import GroupTable as CGroupTable
    from taxi_rsp.engine.native._group_table import RankedPairs as CRankedPairs
except ImportError as exc:
    CGroupTable = CRankedPairs = None
    NATIVE_ERROR: str | None = str(exc)
else:
    NATIVE_ERROR = None

try:
    from taxi_rsp.engine.native._correlation import CorrelationTable as CCorrelationTable
except ImportError:
    CCorrelationTable = None

__all__ = ["CCorrelationTable", "CGroupTable", "CRankedPairs", "PyGroupTable", "correlation_table_class",
           "group_table_class", "native_available", "ranked_pairs_class"]


def native_available() -> bool:
    """Whether the C structures are built and import."""
    return CGroupTable is not None


def group_table_class(native: bool | None = None) -> type:
    """The :class:`GroupTable` to use: ``native`` as asked (True without a build raises
    RuntimeError), None: the C one when built, unless this process runs pure Python."""
    if native is None:
        native = CGroupTable is not None and not pure_python_requested()
    if not native:
        return PyGroupTable
    if CGroupTable is None:
        raise RuntimeError(f"the native group table is not built ({NATIVE_ERROR}); "
                           "reinstall with a C compiler: pip install -e .")
    return CGroupTable


def correlation_table_class(native: bool | None = None) -> type | None:
    """The C :class:`CorrelationTable`, or None: the operator then keeps its state in
    Python dicts (``native`` False, a pure-Python run, or no build).

    >>> correlation_table_class(native=False) is None
    True
    """
    if native is None:
        native = not pure_python_requested()
    return CCorrelationTable if native else None


def ranked_pairs_class(native: bool | None = None) -> type | None:
    """The C :class:`RankedPairs`, or None (``native`` False, a pure-Python run, or no
    build): the planned join and top-k run then.

    >>> ranked_pairs_class(native=False) is None
    True
    """
    if native is None:
        native = not pure_python_requested()
    return CRankedPairs if native else None
