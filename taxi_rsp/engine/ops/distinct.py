"""DISTINCT under retraction: a row is in the output while its count is positive."""

from __future__ import annotations

from collections import Counter

from taxi_rsp.engine.ops.base import Delta, Operator


class DistinctOp(Operator):
    def __init__(self, schema: tuple[str, ...]) -> None:
        super().__init__(schema)
        self._counts: Counter = Counter()

    def push(self, deltas: list[Delta]) -> None:
        out: list[Delta] = []
        counts = self._counts
        for row, mult in deltas:
            before = counts[row]
            after = before + mult
            if after < 0:
                raise ValueError(f"retraction below zero in DISTINCT: {row!r}")
            if after:
                counts[row] = after
            else:
                del counts[row]
            if before == 0 and after > 0:
                out.append((row, 1))
            elif before > 0 and after == 0:
                out.append((row, -1))
        self.emit(out)

    def state_size(self) -> int:
        return len(self._counts)
