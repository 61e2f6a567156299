"""The latest row of each key in a RANGE window: FILTER NOT EXISTS of a later row of the
same key in the same window, without the inner window or match counts.

The planner puts :class:`LatestPerKey` in place of an anti-join whose inner block is its
outer window again and whose condition asks for a greater value of one column
(:mod:`taxi_rsp.planner.latest`, ``?seq2 > ?seq``). A RANGE window lets rows go in the
order they came, so each key's rows in the window are the newest ones of that key; when
the key's values grow with arrival, the one row without a later, greater one is the
newest. The operator keeps each key's rows in arrival order and answers:

* an arrival: it is output, and the key's previous newest row (output until now) is
  retracted;
* an expiry: the key's oldest row leaves; it was output if it was the key's last row.

Each arrival's value is checked against its key's newest: while the values are ids of
inline non-negative numbers of one type, their ids order like the numbers (a later row is
a greater id). A value that does not grow (an equal or smaller number, another type, an
unbound value or key) or a retraction that is not the key's oldest row hands every row held
to the reference anti-join (replayed without output: it was already emitted), which answers
from then on, its inner rows taken from the outer rows (``right_from_left``).

The reference anti-join over both windows is its oracle (``tests/test_latest_per_key.py``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cython

from taxi_rsp.engine.ops.base import Delta, Operator
from taxi_rsp.engine.ops.minus import AntiJoinOp
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.engine.rows import tuple_getter
from taxi_rsp.rdf.dictionary import T_DECIMAL, T_INTEGER, ordered_number_ids

retired = cython.declare(list, _retired_list)  # typed: appends are C calls (see reclaim)

# ids of non-negative inline numbers: [head, head + 2^57) per type, ordered like the numbers
_HEADS, _ENDS = zip(*(ordered_number_ids(code) for code in (T_INTEGER, T_DECIMAL)))
_SPAN = _ENDS[0] - _HEADS[0]
_SHORT = 16  # a key's rows beyond this many move from a list to a deque (O(1) at its front)


@dataclass(frozen=True)
class LatestStage:
    """The latest row per key as a stage of a window's GROUP BY
    (:class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` with ``latest``: its
    table counts each key's newest entry only, in C): the key and value variables of the
    window's rows, the value's closure (its reference value), and the anti-join it
    stands for with the positions of its inner rows in the outer rows (it answers,
    feeding the reference GROUP BY, after a hand-over)."""

    keys: tuple[str, ...]
    value: str
    value_of: Callable[[tuple], Any]
    reference: AntiJoinOp
    right_from_left: tuple[int, ...]


class LatestPerKey(Operator):
    """Same results as ``reference`` (an :class:`AntiJoinOp` whose inner rows are
    ``right_from_left`` of the outer rows) over the outer window's deltas alone.

    ``keys``: the shared variables' positions in the outer rows; ``value``: the position
    of the compared variable."""

    compiled = True

    def __init__(self, reference: AntiJoinOp, keys: tuple[int, ...], value: int,
                 right_from_left: tuple[int, ...]) -> None:
        super().__init__(reference.schema)
        self._reference = reference  # its outputs reach this operator's sinks after a hand-over
        self._keys = keys
        self._key_of = tuple_getter(keys)
        self._value = value
        self._right_of = tuple_getter(right_from_left)
        # key (a bare value for one shared variable) -> its rows in the window, oldest
        # first: a list while short (most keys hold a few rows), a deque once longer
        self._rows: dict[Any, list | deque] = {}
        self._handed_over: list[bool] = []  # non-empty once the reference answers
        self.push_left = self._bind_push()

    @property
    def mode(self) -> str:
        """"compiled", or "reference" once the reference anti-join answers."""
        return "reference" if self._handed_over else "compiled"

    def describe(self) -> str:
        return f"LatestPerKey, in place of {self._reference.describe()} ({self.mode})"

    def state_size(self) -> int:
        if self._handed_over:
            return self._reference.state_size()
        return sum(len(rows) for rows in self._rows.values())

    def push_right(self, deltas: list[Delta]) -> None:
        raise TypeError("LatestPerKey reads the outer window alone (its inner rows are the outer rows)")

    def _bind_push(self) -> Callable[[list[Delta]], None]:
        """``push_left(deltas)`` as a closure over the state (it runs for every arrival and
        expiry of the window)."""
        held = cython.declare(dict, self._rows)
        sinks, handed_over = self._sinks, self._handed_over
        key_of, value = self._key_of, self._value
        single = len(self._keys) == 1  # one shared variable: its bare value keys the rows
        first = self._keys[0]
        head: list[Any] = [None]  # the values' type head, fixed by the first arrival

        def push_left(deltas: list[Delta]) -> None:
            if handed_over:
                self._to_reference(deltas)
                return
            out: list[Delta] = []
            n = cython.declare(cython.Py_ssize_t)
            for n in range(len(deltas)):
                row, mult = deltas[n]
                key = row[first] if single else key_of(row)
                rows = held.get(key)
                if mult == 1:
                    v = row[value]
                    if type(v) is not int or (key is None if single else None in key):
                        break
                    low = head[0]
                    if low is None:
                        low = head[0] = _head_of(v)
                        if low is None:
                            break
                    if not low <= v < low + _SPAN:
                        break
                    if rows is None:
                        held[key] = [row]
                        out.append((row, 1))
                    elif v > rows[-1][value]:
                        out.append((row, 1))
                        out.append((rows[-1], -1))
                        rows.append(row)
                        if type(rows) is list and len(rows) > _SHORT:
                            held[key] = deque(rows)
                    else:
                        break  # not later than the key's newest row
                elif mult == -1 and rows is not None and (rows[0] is row or rows[0] == row):
                    if type(rows) is list:
                        del rows[0]
                    else:
                        rows.popleft()
                    if not rows:
                        del held[key]
                        out.append((row, -1))
                else:
                    break  # a retraction of a row that is not its key's oldest
            else:
                if out:
                    for sink in sinks:
                        sink(out)
                    retired.append(out)  # freed after the event's outputs (see reclaim)
                return
            self._hand_over(out, deltas[n:])

        return push_left

    def _hand_over(self, pending: list[Delta], rest: list[Delta]) -> None:
        """Emit ``pending``, replay the rows held into the reference without output (what it
        would emit has been emitted), then let it answer ``rest`` and everything after."""
        self.emit(pending)
        reference = self._reference
        rows = [row for key_rows in self._rows.values() for row in key_rows]
        right_of = self._right_of
        reference.push_right([(right_of(row), 1) for row in rows])  # its sinks: none yet
        reference.push_left([(row, 1) for row in rows])
        reference.emit_for(self)
        self._rows.clear()
        self._handed_over.append(True)
        self._to_reference(rest)

    def _to_reference(self, deltas: list[Delta]) -> None:
        """Each outer delta into the reference, then the same row as an inner delta (the
        order of a window's twins: outer consumers first)."""
        reference, right_of = self._reference, self._right_of
        for row, mult in deltas:
            reference.push_left([(row, mult)])
            reference.push_right([(right_of(row), mult)])


def _head_of(ident: int) -> int | None:
    """The type head of an id of a non-negative inline integer or decimal, else None.

    >>> _head_of(_HEADS[0] + 5) == _HEADS[0], _head_of(7)
    (True, None)
    """
    for low in _HEADS:
        if low <= ident < low + _SPAN:
            return low
    return None

