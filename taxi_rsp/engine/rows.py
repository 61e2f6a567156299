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


def contiguous(positions: Sequence[int]) -> tuple[int, int] | None:
    """``(start, stop)`` when ``positions`` are ``start, start + 1, ..., stop - 1`` (at
    least one): the projection is then the slice ``row[start:stop]``, which compiled code
    takes without calling anything.

    >>> contiguous([0, 1, 2]), contiguous([3, 4]), contiguous([2, 0]), contiguous([])
    ((0, 3), (3, 5), None, None)
    """
    if positions and list(positions) == list(range(positions[0], positions[0] + len(positions))):
        return positions[0], positions[0] + len(positions)
    return None


def tuple_getter(positions: Sequence[int]) -> Callable[[Row], tuple]:
    """``row -> tuple(row[i] for i in positions)``."""
    if len(positions) >= 2:
        return itemgetter(*positions)  # returns a tuple of the items
    if len(positions) == 1:
        item = itemgetter(positions[0])
        return lambda row: (item(row),)
    return lambda row: ()
