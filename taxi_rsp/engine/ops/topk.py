"""ORDER BY ... LIMIT as an incremental top-k over a changing relation.

The whole input relation is kept in a sorted list keyed by the ORDER BY values (plus
the row ids as a final tie-break, so the order is total and deterministic); insert and
retraction are O(log n) and the top-k is read off the front. As the root of a query it
is read by R2S as a snapshot; inside a sub-select it emits the changes of its top-k
membership at each flush.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sortedcontainers import SortedList

from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.ordering import descending_key, order_key


def sort_entry(order: list[tuple[Compiled, bool]], row: Row) -> tuple:
    """``(ORDER BY key, row-id tie-break, row)``: a total, deterministic order of rows."""
    parts = []
    for compiled, descending in order:
        try:
            value = compiled(row)
        except ExprError:
            value = None  # an error sorts like unbound (SPARQL 1.1 §15.1)
        parts.append(descending_key(value) if descending else order_key(value))
    return (tuple(parts), row_key(row), row)


def row_key(row: Row) -> tuple:
    # Ids are non-negative ints; computed values (exact numbers, see Dictionary) sort
    # after them by their (deterministic) numeric hash. Only used to make ties total.
    return tuple(v if type(v) is int else (-1 if v is None else (1 << 64) + (hash(v) & 0xFFFFFFFF)) for v in row)


def snapshot_deltas(last: list[Row], current: list[Row]) -> list[Delta]:
    """The retractions and insertions that turn the bag ``last`` into ``current``.

    >>> snapshot_deltas([("a",), ("b",)], [("b",), ("c",)])
    [(('a',), -1), (('c',), 1)]
    """
    old, new = Counter(last), Counter(current)
    return [(row, -n) for row, n in (old - new).items()] + [(row, n) for row, n in (new - old).items()]


def emit_snapshot_change(op: Any) -> None:
    """Emit, as deltas, how ``op``'s ordered result changed since its last snapshot
    (``op.last_snapshot``, updated); nothing when it did not (a top-k that is not the root)."""
    current = op.snapshot()
    if current != op.last_snapshot:
        out = snapshot_deltas(op.last_snapshot, current)
        op.last_snapshot = current
        op.emit(out)


class TopKOp(Operator):
    def __init__(
        self,
        schema: tuple[str, ...],
        order: list[tuple[Compiled, bool]],
        limit: int | None,
        offset: int,
        emits_deltas: bool,
    ) -> None:
        super().__init__(schema)
        self._order = order
        self.limit = limit
        self.offset = offset
        self._emits_deltas = emits_deltas
        self._sorted: SortedList = SortedList()
        self._entries: dict[Row, list] = {}  # row -> [sort entry, multiplicity]
        self.last_snapshot: list[Row] = []  # the ordered result last emitted as deltas
        # Whether a push touched the first offset+limit positions since the last
        # snapshot: R2S skips building and comparing snapshots when it did not.
        self.changed = True

    def describe(self) -> str:
        return f"TopK offset {self.offset} limit {self.limit}"

    def _in_window(self, entry: tuple) -> bool:
        if self.limit is None:
            return True
        return self._sorted.bisect_left(entry) < self.offset + self.limit

    def push(self, deltas: list[Delta]) -> None:
        for row, mult in deltas:
            held = self._entries.get(row)
            if held is None:
                if mult < 0:
                    raise ValueError(f"retraction of a row not in the top-k input: {row!r}")
                entry = sort_entry(self._order, row)
                if not self.changed and self._in_window(entry):
                    self.changed = True
                self._sorted.add(entry)
                self._entries[row] = [entry, mult]
                continue
            if not self.changed and self._in_window(held[0]):
                self.changed = True
            held[1] += mult
            if held[1] < 0:
                raise ValueError(f"retraction below zero in top-k: {row!r}")
            if held[1] == 0:
                self._sorted.remove(held[0])
                del self._entries[row]

    def snapshot(self) -> list[Row]:
        """The current ordered result rows (OFFSET/LIMIT applied, duplicates kept)."""
        self.changed = False
        wanted = None if self.limit is None else self.offset + self.limit
        rows: list[Row] = []
        for _, _, row in self._sorted:
            rows.extend([row] * self._entries[row][1])
            if wanted is not None and len(rows) >= wanted:
                break
        return rows[self.offset:wanted]

    def flush(self) -> None:
        if self._emits_deltas:
            emit_snapshot_change(self)

    def state_size(self) -> int:
        return len(self._entries)
