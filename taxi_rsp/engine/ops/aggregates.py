"""Incremental aggregates with a symmetric ``update`` / ``revert`` pair.

Every accumulator supports retraction in O(log n) or better, which is what window
expiry needs: COUNT, SUM, AVG keep running totals; MIN, MAX and MEDIAN keep the
multiset of values in a sorted list (exact values, no floats: the median of an even
count is the exact mean of the two middle values).

>>> acc = make_accumulator("MEDIAN", distinct=False)
>>> for v in (3, 1, 4, 2): acc.update(v)
>>> acc.result()
Fraction(5, 2)
>>> acc.revert(4); acc.result()
2
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from sortedcontainers import SortedList

from taxi_rsp.engine.expr import ExprError, is_numeric, lexical
from taxi_rsp.engine.ops.ordering import order_key


def _term(value: Any) -> tuple[type, Any]:
    """A value as the RDF term it stands for: numerically equal values of different
    types (2, 2.0 decimal, 2.0E0 double, true and 1) are different terms, so DISTINCT,
    SAMPLE and GROUP_CONCAT keep them apart, and a retraction removes the one that
    arrived, not an equal one of another type (the result must not depend on history)."""
    return type(value), value


class Accumulator:
    """Base: counts erroring inputs; a non-zero error count makes the result an error."""

    __slots__ = ("errors",)

    def __init__(self) -> None:
        self.errors = 0

    def update_error(self) -> None:
        self.errors += 1

    def revert_error(self) -> None:
        self.errors -= 1

    def update(self, value: Any) -> None:
        self._update(value)

    def revert(self, value: Any) -> None:
        self._revert(value)

    def result(self) -> Any:
        if self.errors:
            raise ExprError
        return self._result()

    def _update(self, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} must define _update")

    def _revert(self, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} must define _revert")

    def _result(self) -> Any:
        raise TypeError(f"{type(self).__name__} must define _result")


class Count(Accumulator):
    __slots__ = ("n",)

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def update_error(self) -> None:  # COUNT(expr) skips rows where expr is an error
        pass

    def revert_error(self) -> None:
        pass

    def _update(self, value: Any) -> None:
        self.n += 1

    def _revert(self, value: Any) -> None:
        self.n -= 1

    def _result(self) -> int:
        return self.n


class Sum(Accumulator):
    __slots__ = ("n", "total")

    def __init__(self) -> None:
        super().__init__()
        self.total: Any = 0
        self.n = 0

    def _update(self, value: Any) -> None:
        if not is_numeric(value):
            self.errors += 1
            return
        self.total += value
        self.n += 1

    def _revert(self, value: Any) -> None:
        if not is_numeric(value):
            self.errors -= 1
            return
        self.total -= value
        self.n -= 1

    def _result(self) -> Any:
        return self.total


class Avg(Sum):
    __slots__ = ()

    def _result(self) -> Any:
        if self.n == 0:
            return 0
        if isinstance(self.total, float):
            return self.total / self.n
        return Fraction(self.total, 1) / self.n


def _term_order(value: Any) -> tuple:
    """ORDER BY's key, then the type: numerically equal terms of different types (2,
    2.0, 2.0E0) sort in a fixed order, not in their order of arrival, so MIN, MAX and
    MEDIAN pick the same one whatever left in between (docs/semantics.md)."""
    return order_key(value), type(value).__name__


def _numeric_order(value: Any) -> tuple:
    """:func:`_term_order` for numbers only (MEDIAN): the value itself, then the type."""
    return value, type(value).__name__


class _Sorted(Accumulator):
    __slots__ = ("values",)

    def __init__(self) -> None:
        super().__init__()
        self.values = SortedList(key=_term_order)

    def _update(self, value: Any) -> None:
        self.values.add(value)

    def _revert(self, value: Any) -> None:
        _remove_same_term(self.values, value, self.values.bisect_key_left(_term_order(value)))


def _remove_same_term(values: SortedList, value: Any, start: int) -> None:
    """Remove ``value`` from the run of equal values from ``start`` on: the first of its
    own type (2 and 2.0 sort as equals but are different terms)."""
    kind = type(value)
    for index in range(start, len(values)):
        found = values[index]
        if found != value:  # past the run of equals
            break
        if type(found) is kind:
            del values[index]
            return
    raise ValueError(f"{value!r} is not in the aggregate")


class Min(_Sorted):
    __slots__ = ()

    def _result(self) -> Any:
        if not self.values:
            raise ExprError
        return self.values[0]


class Max(_Sorted):
    __slots__ = ()

    def _result(self) -> Any:
        if not self.values:
            raise ExprError
        return self.values[-1]


class Median(_Sorted):
    """Exact median of numeric values (non-numeric values make it an error)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__()
        self.values = SortedList(key=_numeric_order)  # numbers only

    def _update(self, value: Any) -> None:
        if not is_numeric(value):
            self.errors += 1
            return
        self.values.add(value)

    def _revert(self, value: Any) -> None:
        if not is_numeric(value):
            self.errors -= 1
            return
        _remove_same_term(self.values, value, self.values.bisect_key_left(_numeric_order(value)))

    def _result(self) -> Any:
        n = len(self.values)
        if n == 0:
            raise ExprError
        if n % 2:
            return self.values[n // 2]
        low, high = self.values[n // 2 - 1], self.values[n // 2]
        if isinstance(low, float) or isinstance(high, float):
            return (low + high) / 2
        return Fraction(low + high) / 2


class Sample(Accumulator):
    __slots__ = ("values",)

    def __init__(self) -> None:
        super().__init__()
        self.values: Counter = Counter()

    def _update(self, value: Any) -> None:
        self.values[_term(value)] += 1

    def _revert(self, value: Any) -> None:
        key = _term(value)
        self.values[key] -= 1
        if not self.values[key]:
            del self.values[key]

    def _result(self) -> Any:
        for _, value in self.values:
            return value
        raise ExprError


class GroupConcat(Accumulator):
    """GROUP_CONCAT: the string forms of the values joined by the separator, in
    arrival order (SPARQL leaves the order undefined; arrival order is reproducible).
    A value of a non-string type is an error, as for CONCAT over non-strings."""

    __slots__ = ("separator", "values")

    def __init__(self, separator: str | None = None) -> None:
        super().__init__()
        self.separator = " " if separator is None else separator
        self.values: dict[tuple[type, Any], int] = {}  # term -> count, insertion-ordered

    def _update(self, value: Any) -> None:
        key = _term(value)
        self.values[key] = self.values.get(key, 0) + 1

    def _revert(self, value: Any) -> None:
        key = _term(value)
        left = self.values[key] - 1
        if left:
            self.values[key] = left
        else:
            del self.values[key]

    def _result(self) -> Any:
        parts = []
        for (_, value), count in self.values.items():
            text = lexical(value)
            parts.extend([text] * count)
        return self.separator.join(parts)


class Distinct(Accumulator):
    """Wraps an accumulator so that each distinct value is seen once."""

    __slots__ = ("inner", "seen")

    def __init__(self, inner: Accumulator) -> None:
        super().__init__()
        self.inner = inner
        self.seen: Counter = Counter()

    def update_error(self) -> None:
        self.inner.update_error()

    def revert_error(self) -> None:
        self.inner.revert_error()

    def _update(self, value: Any) -> None:
        key = _term(value)
        self.seen[key] += 1
        if self.seen[key] == 1:
            self.inner.update(value)

    def _revert(self, value: Any) -> None:
        key = _term(value)
        self.seen[key] -= 1
        if self.seen[key] == 0:
            del self.seen[key]
            self.inner.revert(value)

    def result(self) -> Any:
        return self.inner.result()


_KINDS: dict[str, type[Accumulator]] = {
    "COUNT": Count, "SUM": Sum, "AVG": Avg, "MIN": Min, "MAX": Max, "MEDIAN": Median, "SAMPLE": Sample,
    "GROUP_CONCAT": GroupConcat,
}


def make_accumulator(name: str, distinct: bool, separator: str | None = None) -> Accumulator:
    accumulator = GroupConcat(separator) if name == "GROUP_CONCAT" else _KINDS[name]()
    return Distinct(accumulator) if distinct else accumulator
