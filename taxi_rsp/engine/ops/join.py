"""Symmetric incremental join of two inputs on their shared variables.

Each side keeps its rows in a :class:`taxi_rsp.engine.index.ring.RingIndex` keyed by the
shared variables; an arriving row (positive or negative) probes the other side's
index and emits merged rows with the product of the multiplicities.
"""

from __future__ import annotations

from collections.abc import Callable

from taxi_rsp.engine.index.ring import RingIndex
from taxi_rsp.engine.ops.base import Delta, Operator, Row, compatible_merger


def key_function(schema: tuple[str, ...], shared: tuple[str, ...]) -> Callable[[Row], tuple]:
    positions = tuple(schema.index(v) for v in shared)
    if len(positions) == 1:
        (p,) = positions
        return lambda row: (row[p],)
    return lambda row: tuple(row[p] for p in positions)


class JoinOp(Operator):
    def __init__(self, left: tuple[str, ...], right: tuple[str, ...]) -> None:
        schema, merge = compatible_merger(left, right)
        super().__init__(schema)
        self.shared = tuple(v for v in left if v in right)
        self._merge = merge
        self._left_key = key_function(left, self.shared)
        self._right_key = key_function(right, self.shared)
        self._left = RingIndex()
        self._right = RingIndex()
        right_pos = {v: i for i, v in enumerate(right)}
        self._shared_pos = tuple((left.index(v), right_pos[v]) for v in self.shared)

    def describe(self) -> str:
        return f"Join on {', '.join('?' + v for v in self.shared) or '(cross product)'}"

    def _compatible(self, lrow: Row, rrow: Row) -> bool:
        for i, j in self._shared_pos:
            a, b = lrow[i], rrow[j]
            if a is not None and b is not None and a != b:
                return False
        return True

    def _candidates(self, index: RingIndex, key: tuple):
        # Rows with an unbound shared variable (from OPTIONAL) are compatible with any
        # value there: they live under keys containing None and are probed separately.
        if None in key:
            return index.all_rows()
        return index.probe_with_wildcards(key)

    def hold(self, from_left: bool, key: tuple, row: Row, mult: int) -> None:
        """Load a row of one side into its index without emitting anything (a
        specialised twin handing its state over)."""
        (self._left if from_left else self._right).add(key, row, mult)

    def push_left(self, deltas: list[Delta]) -> None:
        self._push(deltas, from_left=True)

    def push_right(self, deltas: list[Delta]) -> None:
        self._push(deltas, from_left=False)

    def _push(self, deltas: list[Delta], from_left: bool) -> None:
        """Probe the other side's index, emit merged rows, then index the row itself."""
        own, other_index = (self._left, self._right) if from_left else (self._right, self._left)
        own_key = self._left_key if from_left else self._right_key
        out: list[Delta] = []
        for row, mult in deltas:
            key = own_key(row)
            for other, count in self._candidates(other_index, key):
                lrow, rrow = (row, other) if from_left else (other, row)
                if self._compatible(lrow, rrow):
                    out.append((self._merge(lrow, rrow), mult * count))
            own.add(key, row, mult)
        self.emit(out)

    def state_size(self) -> int:
        return len(self._left) + len(self._right)
