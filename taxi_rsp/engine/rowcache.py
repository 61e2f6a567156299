"""A function of a result's rows, computed once per row object across results.

An ordered result (a top-k, say) is reported again and again with most of its rows
unchanged: the very tuples its operator holds. What the report path derives from a row
(its fused BIND values, its projection, its output text) is then kept per row object and
found by identity, which costs no hash of a wide tuple and makes consecutive results
compare as identical objects. The cache holds the rows it saw last time, so their ids
cannot be reused while they are looked up; only the rows of the latest result are kept.

A short result (a top-10) is looked up in the last one's rows by scanning them for the
very object, a C pointer comparison each: cheaper than the ``dict`` of row addresses a
long result needs (one made, filled and freed per result, on every output line's path).

>>> calls = []
>>> width = ByIdentity(lambda row: calls.append(row) or len(row))
>>> a, b = ("x", 1), ("y", 2, 3)
>>> width.map([a, b]), width.map([b, a]), len(calls)
([2, 3], [3, 2], 2)
>>> width.map([("x", 1)]), len(calls)  # an equal row, but another object: computed again
([2], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import cython

Row = tuple

SCAN_LIMIT = 32  # results up to this long are matched by scanning the last one's rows


class ByIdentity:
    """``fn(row)`` for the rows of each result, reusing last result's values by row identity."""

    def __init__(self, fn: Callable[[Row], Any]) -> None:
        self._fn = fn
        # the last result: its rows and their values in order (a short one), or by address
        # (a long one) as id(row) -> (row, fn(row)); the other form is empty
        self._rows: list[Row] = []
        self._values: list[Any] = []
        self._last: dict[int, tuple[Row, Any]] = {}

    def map(self, rows: Iterable[Row]) -> list:
        if type(rows) is not list:
            rows = list(rows)
        if len(rows) > SCAN_LIMIT:
            return self._map_hashed(rows)
        fn = self._fn
        if self._last:  # the last result was long: its values are not in the lists
            self._last = {}
        # typed for the compiled module: item reads and comparisons of addresses in C
        before = cython.declare(list, self._rows)
        values_before = cython.declare(list, self._values)
        now = cython.declare(list, [])
        out = cython.declare(list, [])
        n = cython.declare(cython.Py_ssize_t, len(before))
        j = cython.declare(cython.Py_ssize_t)
        start = cython.declare(cython.Py_ssize_t)
        at = cython.declare(cython.Py_ssize_t)
        for row in cython.cast(list, rows):
            found = False
            value = None
            # from the place before the row's own in the last result: most rows keep their
            # place or move down by one (a row entered above them), the next most move up
            start = len(now) - 1 if now else 0
            for j in range(n):
                at = (start + j) % n
                if before[at] is row:
                    value = values_before[at]
                    found = True
                    break
            if not found:
                for j in range(len(now)):  # a row held more than once in this result
                    if now[j] is row:
                        value = out[j]
                        found = True
                        break
            if not found:
                value = fn(row)
            now.append(row)
            out.append(value)
        self._rows = now
        self._values = out
        return out

    def _map_hashed(self, rows: list) -> list:
        """A long result: the last result's values found by the rows' addresses."""
        fn = self._fn
        if self._rows:  # the last result was short: its values are not in the dict
            self._rows, self._values = [], []
        # typed for the compiled module: dict and list methods are C calls
        before = cython.declare(dict, self._last)
        now = cython.declare(dict, {})
        out = cython.declare(list, [])
        for row in rows:
            ident = _address(row)
            known = before.get(ident)  # (its row is alive, held there: no other object has its id)
            if known is None:
                known = now.get(ident)  # (a row held more than once)
                if known is None:
                    known = (row, fn(row))
            now[ident] = known
            out.append(known[1])
        self._last = now
        return out


@cython.inline
@cython.cfunc
def _address(row: object) -> cython.Py_ssize_t:
    """``id(row)``: compiled, the object's address without calling the builtin."""
    return cython.cast(cython.Py_ssize_t, cython.cast(cython.p_void, row)) if cython.compiled else id(row)
