"""The symmetric join on its shared variables, with generated key and merge code.

The reference :class:`~taxi_rsp.engine.ops.join.JoinOp` must cope with unbound shared
variables (rows from OPTIONAL are compatible with any value there), so it keeps each
side in a ring index probed with wildcards and checks compatibility per pair. While no
key holds an unbound value, a join is a plain hash join: each side a ``dict`` from key
to the rows under it with their multiplicities, the key and the merged row's tail
projected in C (:func:`~taxi_rsp.engine.rows.tuple_getter`; every pair under
one key is compatible: the shared variables are the key); rows under a key are visited newest first, in the ring index's
order, so results come out in the same order. The first key with an unbound value hands both sides to the
reference join, which answers from then on.
"""

from __future__ import annotations

from collections.abc import Callable

import cython

from taxi_rsp.engine.rows import contiguous, tuple_getter
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.reclaim import retired as _retired_list

retired = cython.declare(list, _retired_list)  # typed: appends are C calls (see reclaim)


class CompiledJoin(Operator):
    """Same results as :class:`JoinOp`; ``push_left`` / ``push_right`` like it."""

    compiled = True

    def __init__(self, left: tuple[str, ...], right: tuple[str, ...], reference: JoinOp) -> None:
        super().__init__(reference.schema)
        self.shared = reference.shared
        self._reference = reference
        reference.emit_for(self)
        # key -> its slot [left rows, right rows, merged]: one look-up of a key finds both
        # sides. A side's rows are None (none), the row itself when it is the only one and
        # held once (the common case under a GROUP BY: no dict per key, and a group's new
        # row takes its old row's place), or a dict of rows to multiplicities. ``merged`` is
        # the row emitted for the two lone rows held, or None: a retraction of either emits
        # that very object (a consumer keyed by rows finds it by identity, no comparison)
        self._slots: dict[tuple, list] = {}
        self._handed_over: list[bool] = []  # non-empty once the reference answers
        self._left_positions = [left.index(v) for v in self.shared]
        self._right_positions = [right.index(v) for v in self.shared]
        self._tail_positions = [i for i, v in enumerate(right) if v not in left]  # merged = left + tail(right)
        self._left_key = tuple_getter(self._left_positions)
        self._right_key = tuple_getter(self._right_positions)
        self._tail = tuple_getter(self._tail_positions)
        # push_left / push_right: closures, not methods (see _side)
        self.push_left = self._side(from_left=True)
        self.push_right = self._side(from_left=False)

    @property
    def mode(self) -> str:
        """"compiled", or "reference" once the reference operator answers."""
        return "reference" if self._handed_over else "compiled"

    def describe(self) -> str:
        return f"CompiledJoin on {', '.join('?' + v for v in self.shared) or '(cross product)'} ({self.mode})"

    def state_size(self) -> int:
        if self._handed_over:
            return self._reference.state_size()
        return sum(len(_counted(slot[side])) for slot in self._slots.values() for side in (0, 1))

    def _side(self, from_left: bool) -> Callable[[list[Delta]], None]:
        """The push of one side: a closure over the slots, so a call reads no attribute (it
        runs for every batch of deltas of its input); the first key with an unbound value
        hands both sides to the reference join, which answers from then on."""
        # typed for the compiled module: dict methods called directly, not looked up per call
        slots = cython.declare(dict, self._slots)
        own_at = cython.declare(cython.Py_ssize_t, 0 if from_left else 1)
        other_at = cython.declare(cython.Py_ssize_t, 1 - own_at)
        key_of, tail = (self._left_key if from_left else self._right_key), self._tail
        # keys and tails at consecutive positions (a group's key leads its rows, its
        # aggregates follow) are sliced in C: no call per delta
        key_span = contiguous(self._left_positions if from_left else self._right_positions)
        tail_span = contiguous(self._tail_positions)
        key_sliced = cython.declare(cython.bint, key_span is not None)
        key_from = cython.declare(cython.Py_ssize_t, key_span[0] if key_span else 0)
        key_to = cython.declare(cython.Py_ssize_t, key_span[1] if key_span else 0)
        tail_sliced = cython.declare(cython.bint, tail_span is not None)
        tail_from = cython.declare(cython.Py_ssize_t, tail_span[0] if tail_span else 0)
        tail_to = cython.declare(cython.Py_ssize_t, tail_span[1] if tail_span else 0)
        reference = self._reference
        to_reference = reference.push_left if from_left else reference.push_right
        sinks = self._sinks  # the consumers connected (now or later) to this operator
        handed_over = self._handed_over

        def push(deltas: list[Delta]) -> None:
            """Probe the other side, emit merged rows, then hold the row on its own side."""
            if handed_over:
                to_reference(deltas)
                return
            out = cython.declare(list, [])  # compiled: out.append is a C call, not a bound method
            n = cython.declare(cython.Py_ssize_t)  # compiled: a C counter, not an int object per delta
            looked = cython.declare(cython.bint, False)  # whether last_key / slot are set
            same = cython.declare(cython.bint)  # the delta's key is last_key
            slot = cython.declare(list, None)  # the slot of last_key (None: the key has none yet)
            last_key: tuple = ()
            lone_tail = None  # the tail of the other side's lone row, once taken (it holds still)
            for n, (row, mult) in enumerate(deltas):
                # a group's change arrives as (old row, -1), (new row, +1) under one key:
                # the second finds its key in place and shares the first's (checked) key
                if key_sliced:
                    same = looked and _has_key(cython.cast(tuple, row), key_from, last_key)
                    key = last_key if same else cython.cast(tuple, row)[key_from:key_to]
                else:
                    key = key_of(row)
                    same = looked and _has_key(key, 0, last_key)  # (no comparison with a non-tuple first)
                if not same:
                    unbound = False
                    for part in key:  # `None in key` compares each part with == (slow for ints)
                        if part is None:
                            unbound = True
                            break
                    if unbound:
                        self._hand_over()
                        reference.emit(out)
                        to_reference(deltas[n:])
                        return
                    if looked and slot is not None and slot[0] is None and slot[1] is None:
                        del slots[last_key]  # the previous key's rows all left
                    # the other side does not change during this push: look it up once per run
                    last_key, slot, looked, lone_tail = key, slots.get(key), True, None
                    if slot is None:
                        slot = [None, None, None]
                        slots[key] = slot
                held = slot[own_at]
                matches = slot[other_at]
                merged = None
                if matches is not None:
                    if type(matches) is not dict:  # one row, held once
                        if mult == -1 and held is row and slot[2] is not None:
                            merged = slot[2]  # the very row emitted when it arrived
                        elif from_left:
                            if lone_tail is None:
                                lone_tail = cython.cast(tuple, matches)[tail_from:tail_to] if tail_sliced else tail(matches)
                            merged = row + lone_tail
                        else:
                            merged = matches + (cython.cast(tuple, row)[tail_from:tail_to] if tail_sliced else tail(row))
                        out.append((merged, mult))
                    elif from_left:
                        for other_row, count in reversed(matches.items()):  # newest first, like the ring
                            out.append((row + tail(other_row), mult * count))
                    else:
                        extra = tail(row)
                        for other_row, count in reversed(matches.items()):
                            out.append((other_row + extra, mult * count))
                # the row's own side: a group's change is (old row, -1), (new row, +1) under
                # one key, the lone old row's place empty in between (no dict for the pair)
                if held is None:
                    slot[own_at] = row if mult == 1 else {row: mult}
                elif type(held) is not dict:  # one row, held once
                    if held is row or held == row:  # a group's old row is the very row it emitted
                        count = 1 + mult
                        slot[own_at] = None if count == 0 else held if count == 1 else {held: count}
                    else:
                        slot[own_at] = {held: 1, row: mult}
                else:
                    count = cython.cast(dict, held).get(row, 0) + mult
                    if count:
                        cython.cast(dict, held)[row] = count
                    else:
                        del cython.cast(dict, held)[row]
                        if not held:
                            slot[own_at] = None
                # the merged row of two lone rows, kept for the retraction of either
                slot[2] = merged if mult == 1 and slot[own_at] is row and type(matches) is not dict else None
            if looked and slot is not None and slot[0] is None and slot[1] is None:
                del slots[last_key]
            if out:
                for sink in sinks:
                    sink(out)
                retired.append(out)  # the retracted merged rows it may hold last: freed after the outputs

        return push

    def _hand_over(self) -> None:
        """Load both sides into the reference join's indexes (emitting nothing)."""
        reference = self._reference
        for key, slot in self._slots.items():
            for held, from_left in ((slot[0], True), (slot[1], False)):
                for row, mult in _counted(held):
                    reference.hold(from_left, key, row, mult)
        self._slots.clear()
        self._handed_over.append(True)


@cython.cfunc
@cython.locals(row=tuple, start=cython.Py_ssize_t, key=tuple, n=cython.Py_ssize_t, i=cython.Py_ssize_t)
@cython.returns(cython.bint)
def _has_key(row: tuple, start: int, key: tuple) -> bool:
    """``row[start:start + len(key)] == key`` without slicing (``start`` 0: two keys of one
    length), part by part as the tuple comparison does: parts that are the same objects (a
    group's old and new rows share their key's ids) are equal without a rich comparison,
    and the first unequal part ends it without the tuple comparison's set-up."""
    n = len(key)
    for i in range(n):
        x, y = row[start + i], key[i]
        if x is not y and not x == y:  # a part at a time: the first unequal one decides at once
            return False
    return True


def _counted(held: Row | dict[Row, int] | None) -> list[tuple[Row, int]]:
    """The (row, multiplicity) pairs of one side of a slot: a lone row held once is kept
    as itself (a group's output has one row per key: no dict per key then).

    >>> _counted(None), _counted(("a",)), _counted({("a",): 2, ("b",): -1})
    ([], [(('a',), 1)], [(('a',), 2), (('b',), -1)])
    """
    if held is None:
        return []
    return list(held.items()) if type(held) is dict else [(held, 1)]
