"""Tree-based MINUS, FILTER NOT EXISTS and FILTER EXISTS with negative tuples.

Correct incremental rules (the printed equations of CQELS DEBS 2015 §3.3 are wrong,
ERRATA S2-10). With ``matches(l)`` = number of right mappings compatible with left
mapping l that satisfy the condition:

* left insert l:   count matches(l) by probing the right index; output l iff 0.
* left retract l:  retract l from the output iff matches(l) = 0.
* right insert r:  for each compatible l satisfying the condition, matches(l) += 1;
  a 0 -> 1 change retracts l from the output.
* right retract r: matches(l) -= 1 for the same l; a 1 -> 0 change re-inserts l.

The condition is evaluated on the merged mapping, so correlated inner FILTERs such as
``FILTER(?seq3 > ?seq2)`` work (a theta anti-join, ERRATA S2-9). EXISTS is the same
operator with the output rule inverted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from taxi_rsp.engine.expr import Compiled, ExprError, ebv
from taxi_rsp.engine.index.oneway import Entry, OneWayIndex
from taxi_rsp.engine.index.ring import RingIndex
from taxi_rsp.engine.ops.base import Delta, Operator, Row, compatible_merger
from taxi_rsp.engine.ops.join import key_function


class Correlated(Operator, ABC):
    """Shared state of operators that relate each left row to its right matches."""

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...], schema: tuple[str, ...],
                 require_shared_binding: bool) -> None:
        super().__init__(schema)
        self.shared = tuple(v for v in left if v in right)
        self.merged_schema, self._merge = compatible_merger(left, right)
        self._left_key = key_function(left, self.shared)
        self._right_key = key_function(right, self.shared)
        self._shared_pos = tuple((left.index(v), right.index(v)) for v in self.shared)
        self._require_shared = require_shared_binding
        self._condition: Callable[[Row], bool] | None = None
        self.left = OneWayIndex()
        self.right = RingIndex()

    @property
    def condition(self) -> Callable[[Row], bool] | None:
        """The correlation condition of a merged row (None: none); errors are False."""
        return self._condition

    @property
    def merge(self) -> Callable[[Row, Row], Row]:
        """(left row, right row) -> the merged row."""
        return self._merge

    def set_condition(self, condition: Compiled | None) -> None:
        """``condition`` is compiled against :attr:`merged_schema`."""
        if condition is None:
            self._condition = None
            return

        def holds(row: Row) -> bool:
            try:
                return ebv(condition(row))
            except ExprError:
                return False

        self._condition = holds

    def _matches(self, lrow: Row, rrow: Row) -> bool:
        bound_pair = False
        for i, j in self._shared_pos:
            a, b = lrow[i], rrow[j]
            if a is not None and b is not None:
                if a != b:
                    return False
                bound_pair = True
        if self._require_shared and not bound_pair:
            return False
        return self._condition is None or self._condition(self._merge(lrow, rrow))

    def _count_matches(self, lrow: Row, key: tuple) -> int:
        probe = self.right.all_rows() if None in key else self.right.probe_with_wildcards(key)
        return sum(mult for rrow, mult in probe if self._matches(lrow, rrow))

    def push_left(self, deltas: list[Delta]) -> None:
        out: list[Delta] = []
        for row, mult in deltas:
            key = self._left_key(row)
            entry = self.left.get(key, row)
            if entry is None:
                if mult < 0:
                    raise ValueError(f"retraction of an unknown left row {row!r}")
                entry = Entry(0, self._count_matches(row, key))
                self.left.put(key, row, entry)
            entry.mult += mult
            self.on_left(row, entry, mult, out)
            if entry.mult == 0:
                self.left.remove(key, row)
        self.emit(out)

    def push_right(self, deltas: list[Delta]) -> None:
        out: list[Delta] = []
        for row, mult in deltas:
            key = self._right_key(row)
            for lrow, entry in self.left.rows_matching(key):
                if self._matches(lrow, row):
                    before = entry.matches
                    entry.matches += mult
                    self.on_right(lrow, row, entry, before, mult, out)
            self.right.add(key, row, mult)
        self.emit(out)

    @abstractmethod
    def on_left(self, row: Row, entry: Entry, mult: int, out: list[Delta]) -> None:
        """Output rule for a left delta (``entry`` already updated)."""

    @abstractmethod
    def on_right(self, lrow: Row, rrow: Row, entry: Entry, before: int, mult: int, out: list[Delta]) -> None:
        """Output rule for a right delta that matches ``lrow`` (``before`` = old count)."""

    def state_size(self) -> int:
        return len(self.left) + len(self.right)


class AntiJoinOp(Correlated):
    """MINUS (``minus=True``: needs a shared bound variable) and FILTER NOT EXISTS."""

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...], minus: bool) -> None:
        super().__init__(left, right, left, require_shared_binding=minus)
        self.minus = minus

    def describe(self) -> str:
        return ("Minus" if self.minus else "NotExists") + f" on {', '.join('?' + v for v in self.shared)}"

    def on_left(self, row, entry, mult, out):
        if entry.matches == 0:
            out.append((row, mult))

    def on_right(self, lrow, rrow, entry, before, mult, out):
        if before == 0 and entry.matches > 0:
            out.append((lrow, -entry.mult))
        elif before > 0 and entry.matches == 0:
            out.append((lrow, entry.mult))


class SemiJoinOp(Correlated):
    """FILTER EXISTS."""

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...]) -> None:
        super().__init__(left, right, left, require_shared_binding=False)

    def describe(self) -> str:
        return f"Exists on {', '.join('?' + v for v in self.shared)}"

    def on_left(self, row, entry, mult, out):
        if entry.matches > 0:
            out.append((row, mult))

    def on_right(self, lrow, rrow, entry, before, mult, out):
        if before == 0 and entry.matches > 0:
            out.append((lrow, entry.mult))
        elif before > 0 and entry.matches == 0:
            out.append((lrow, -entry.mult))


class LeftJoinOp(Correlated):
    """OPTIONAL: merged rows for each match, or the left row padded with unbound."""

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...]) -> None:
        merged, _ = compatible_merger(left, right)
        super().__init__(left, right, merged, require_shared_binding=False)
        self._padding = (None,) * (len(merged) - len(left))

    def describe(self) -> str:
        return f"Optional on {', '.join('?' + v for v in self.shared)}"

    def on_left(self, row, entry, mult, out):
        if entry.matches == 0:
            out.append((row + self._padding, mult))
            return
        key = self._left_key(row)
        probe = self.right.all_rows() if None in key else self.right.probe_with_wildcards(key)
        for rrow, rmult in probe:
            if self._matches(row, rrow):
                out.append((self._merge(row, rrow), mult * rmult))

    def on_right(self, lrow, rrow, entry, before, mult, out):
        if before == 0 and entry.matches > 0:
            out.append((lrow + self._padding, -entry.mult))
        out.append((self._merge(lrow, rrow), mult * entry.mult))
        if before > 0 and entry.matches == 0:
            out.append((lrow + self._padding, entry.mult))
