"""A total order on expression values (SPARQL 1.1 §15.1, made total for determinism).

Unbound < blank nodes < IRIs < booleans < numbers < dateTimes < strings; within a kind
by value. ``order_key`` gives an ascending key; ``descending_key`` its reverse.

>>> sorted([3, Fraction(5, 2), "a", None], key=order_key)
[None, Fraction(5, 2), 3, 'a']
"""

from __future__ import annotations

from fractions import Fraction
from functools import total_ordering
from typing import Any

from taxi_rsp.rdf.terms import IRI, BNode, DateTime


def order_key(value: Any) -> tuple:
    kind = type(value)
    if kind is int or kind is Fraction or kind is float:  # the common case first
        return (4, value)
    if value is None:
        return (0, 0)
    if isinstance(value, BNode):
        return (1, value.label)
    if isinstance(value, IRI):
        return (2, value.value)
    if isinstance(value, bool):
        return (3, value)
    if isinstance(value, DateTime):
        return (5, int(value))
    if isinstance(value, (int, Fraction, float)):
        return (4, value)
    return (6, str(value))


@total_ordering
class _Reversed:
    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.key == other.key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __hash__(self) -> int:
        return hash(self.key)


def descending_key(value: Any) -> Any:
    kind = type(value)
    if kind is int or kind is Fraction or kind is float:
        return (-4, -value)
    rank, inner = order_key(value)
    if rank in (0, 3, 4, 5):  # unbound, numbers, booleans, dateTimes negate cheaply
        return (-rank, -inner)
    return (-rank, _Reversed(inner))


__all__ = ["Fraction", "descending_key", "order_key"]
