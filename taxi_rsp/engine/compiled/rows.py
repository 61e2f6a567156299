"""Row projections as C-level callables.

Keys and merged rows are tuples of some positions of a row; ``operator.itemgetter``
builds them in C. (The compiled operators used to generate a one-line Python function
per projection; calling it cost more than the projection itself.)

>>> tuple_getter([2, 0])(("a", "b", "c")), tuple_getter([1])(("a", "b")), tuple_getter([])(("a",))
(('c', 'a'), ('b',), ())
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter

from taxi_rsp.engine.ops.base import Row


def tuple_getter(positions: Sequence[int]) -> Callable[[Row], tuple]:
    """``row -> tuple(row[i] for i in positions)``."""
    if len(positions) >= 2:
        return itemgetter(*positions)  # returns a tuple of the items
    if len(positions) == 1:
        item = itemgetter(positions[0])
        return lambda row: (item(row),)
    return lambda row: ()
