"""The symmetric join on its shared variables, with generated key and merge code.

The reference :class:`~taxi_rsp.engine.ops.join.JoinOp` must cope with unbound shared
variables (rows from OPTIONAL are compatible with any value there), so it keeps each
side in a ring index probed with wildcards and checks compatibility per pair. While no
key holds an unbound value, a join is a plain hash join: each side a ``dict`` from key
to the rows under it with their multiplicities, the key and the merged row built by
straight-line generated code (every pair under one key is compatible: the shared
variables are the key); rows under a key are visited newest first, in the ring index's
order, so results come out in the same order. The first key with an unbound value hands both sides to the
reference join, which answers from then on.
"""

from __future__ import annotations

from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.join import JoinOp


class CompiledJoin(Operator):
    """Same results as :class:`JoinOp`; ``push_left`` / ``push_right`` like it."""

    compiled = True

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...], reference: JoinOp) -> None:
        super().__init__(reference.schema)
        self.shared = reference.shared
        self._reference = reference
        reference._sinks = self._sinks
        self._left: dict[tuple, dict[Row, int]] = {}
        self._right: dict[tuple, dict[Row, int]] = {}
        self.mode = "compiled"
        lkey = _tuple_source("row", [left.index(v) for v in self.shared])
        rkey = _tuple_source("row", [right.index(v) for v in self.shared])
        extra = [i for i, v in enumerate(right) if v not in left]
        tail = _tuple_source("rrow", extra)
        self.source = "\n".join([
            f"def left_key(row): return {lkey}",
            f"def right_key(row): return {rkey}",
            f"def merge(lrow, rrow): return lrow + {tail}",
        ])
        namespace: dict = {}
        exec(compile(self.source, "<taxi_rsp compiled join>", "exec"), namespace)  # noqa: S102 - our own source
        self._left_key, self._right_key, self._merge = (namespace[n] for n in ("left_key", "right_key", "merge"))

    def describe(self) -> str:
        return f"CompiledJoin on {', '.join('?' + v for v in self.shared) or '(cross product)'} ({self.mode})"

    def state_size(self) -> int:
        if self.mode == "reference":
            return self._reference.state_size()
        return sum(len(rows) for side in (self._left, self._right) for rows in side.values())

    def push_left(self, deltas: list[Delta]) -> None:
        if self.mode == "reference":
            self._reference.push_left(deltas)
        else:
            self._push(deltas, from_left=True)

    def push_right(self, deltas: list[Delta]) -> None:
        if self.mode == "reference":
            self._reference.push_right(deltas)
        else:
            self._push(deltas, from_left=False)

    def _push(self, deltas: list[Delta], from_left: bool) -> None:
        """Probe the other side, emit merged rows, then hold the row on its own side."""
        own, other = (self._left, self._right) if from_left else (self._right, self._left)
        key_of, merge = (self._left_key if from_left else self._right_key), self._merge
        out: list[Delta] = []
        for n, (row, mult) in enumerate(deltas):
            key = key_of(row)
            if None in key:
                self._hand_over()
                self._reference.emit(out)
                (self._reference.push_left if from_left else self._reference.push_right)(deltas[n:])
                return
            matches = other.get(key)
            if matches:
                for held, count in reversed(matches.items()):  # newest first, like the ring
                    merged = merge(row, held) if from_left else merge(held, row)
                    out.append((merged, mult * count))
            _add(own, key, row, mult)
        self.emit(out)

    def _hand_over(self) -> None:
        """Load both sides into the reference join's indexes (emitting nothing)."""
        reference = self._reference
        for side, index in ((self._left, reference._left), (self._right, reference._right)):
            for key, rows in side.items():
                for row, mult in rows.items():
                    index.add(key, row, mult)
            side.clear()
        self.mode = "reference"


def _add(side: dict[tuple, dict[Row, int]], key: tuple, row: Row, mult: int) -> None:
    rows = side.get(key)
    if rows is None:
        side[key] = {row: mult}
        return
    count = rows.get(row, 0) + mult
    if count:
        rows[row] = count
    else:
        del rows[row]
        if not rows:
            del side[key]


def _tuple_source(name: str, positions: list[int]) -> str:
    if not positions:
        return "()"
    return "(" + ", ".join(f"{name}[{i}]" for i in positions) + ("," if len(positions) == 1 else "") + ")"
