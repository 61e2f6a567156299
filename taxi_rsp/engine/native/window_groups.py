"""A window's entries and the groups they count: the pure-Python form and the oracle of
the native ``_window_groups`` (issue 50).

:class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` (a window, its fused steps
and the GROUP BY above it) keeps its state here: each arriving row adds an *entry*
``(expiry, group key, one int argument per aggregate)``; entries leave oldest first
(:meth:`WindowGroups.expire`); every group holds its row count and, per aggregate,

* COUNT, SUM, AVG: the running total of the arguments (COUNT's are 0 or 1);
* MIN, MAX: a monotonic queue — the window retracts in arrival order, so a value a newer
  one beats can never be the extreme again (amortised O(1));
* MEDIAN: the sorted values.

Arguments are integers (decimals scaled by the caller) within int64, like the native
table's C state; a value beyond it, or a total that could leave it, raises OverflowError
before anything changes (a total must fit after any retraction too, so the sum of its
arguments' magnitudes must fit: that bounds every partial sum), and the caller hands over to the reference interpreter, which
is exact. The caller turns totals into RDF term ids; this module knows no terms.

The groups touched since the last :meth:`~WindowGroups.flush` (or
:meth:`~WindowGroups.take_changes`) are visited in first-touch order; an emptied group
is dropped there (the implicit group of a query without GROUP BY never is). ``flush``
builds each touched group's row — its key's term ids, then one term id per aggregate —
and emits a retraction/insertion pair when the row changed, the reference GroupOp's rule
(:meth:`set_results` tells it the arguments' scales and the encoders of the ids that are
not inline: a decimal mean that needs a tenth decimal, an AVG, a value beyond the inline
range).

>>> table = WindowGroups(1, ("COUNT", "MAX", "MEDIAN"))
>>> table.insert(100, (7,), (1, 5, 30))
>>> table.insert(110, (7,), (1, 9, 10))
>>> [change[1:] for change in table.take_changes()]  # key, output, rows, COUNT, MAX, MEDIAN (two middle values)
[((7,), None, 2, 2, 9, 10, 30)]
>>> table.expire(100)
>>> [change[1:] for change in table.take_changes()]
[((7,), None, 1, 1, 9, 10, None)]
>>> table.expire(110); table.take_changes()[0][3], table.group_count()  # emptied: dropped
(0, 0)
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from taxi_rsp.rdf.dictionary import INLINE_FLAG, PAYLOAD_MASK, PAYLOAD_MAX, PAYLOAD_MIN, T_DECIMAL, T_INTEGER, TYPE_SHIFT

KINDS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "MEDIAN")
TOTALS = ("COUNT", "SUM", "AVG")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT_HEAD = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)
DEC_HEAD = INLINE_FLAG | (T_DECIMAL << TYPE_SHIFT)
# A monotonic queue's dead prefix longer than this (and than its live part) is cut: a
# list's front cannot be popped in O(1), so retractions only advance a head index.
COMPACT_AFTER = 16

# A group's state: [rows, last output, touched, key, then per aggregate: a total as
# [sum, sum of magnitudes], a queue [head, values…] or a sorted list]
_ROWS, _OUTPUT, _TOUCHED, _KEY, _FIRST = 0, 1, 2, 3, 4


def _int64(value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"an aggregate argument must be an int, not {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError("an argument beyond 64 bits")
    return value


class WindowGroups:
    """Entries and groups of one window aggregate; ``key_width`` parts per key, one of
    :data:`KINDS` per aggregate argument; ``implicit``: one group, key ``()``, always held."""

    def __init__(self, key_width: int, kinds: Sequence[str], implicit: bool = False) -> None:
        for name in kinds:
            if name not in KINDS:
                raise ValueError(f"no native state for the aggregate {name!r}")
        self.key_width = key_width
        self.kinds = tuple(kinds)
        self.implicit = implicit
        self.ever = False  # the implicit group has held a row (an empty SUM's type depends on it)
        self._totals = [name in TOTALS for name in self.kinds]
        self._entries: deque[tuple[int, list, tuple[int, ...]]] = deque()
        self._groups: dict[tuple, list] = {}
        self._dirty: list[list] = []
        self._scales: tuple[int | None, ...] = ()
        self._encoders: tuple[Callable[..., Any], ...] = ()
        if implicit:
            self._new_group(())

    def set_results(self, scales: Sequence[int | None], int_id: Callable[[int], Any],
                    dec_id: Callable[[int, int], Any], mean_id: Callable[[int, int, int], Any],
                    avg_id: Callable[[int, int, int], Any]) -> None:
        """How :meth:`flush` makes term ids: per aggregate, its arguments' scale (None:
        integers; COUNT's is None), and the ids beyond the inline range: ``int_id(value)``,
        ``dec_id(scaled, scale)``, ``mean_id(low, high, scale)`` (an even count's MEDIAN),
        ``avg_id(total, rows, scale)``."""
        self._scales = tuple(scales)
        self._encoders = (int_id, dec_id, mean_id, avg_id)

    def _new_group(self, key: tuple) -> list:
        state = [0, None, True, key]
        state += [[0, 0] if total else [1] if name in ("MIN", "MAX") else []
                  for name, total in zip(self.kinds, self._totals)]
        self._groups[key] = state
        self._dirty.append(state)
        return state

    def _touch(self, state: list) -> None:
        if not state[_TOUCHED]:
            state[_TOUCHED] = True
            self._dirty.append(state)

    # -- the window ----------------------------------------------------------------------
    def insert(self, expiry: int, key: tuple, args: tuple) -> None:
        """Add one entry; OverflowError (nothing changed) for a value beyond int64."""
        if len(args) != len(self.kinds) or len(key) != self.key_width:
            raise ValueError("a key or argument count that does not match the table")
        for part in key:
            if part is not None:
                _int64(part)
        values = tuple(_int64(value) for value in args)
        state = self._groups.get(key)
        for j, value in enumerate(values):
            if self._totals[j] and (abs(value) > INT64_MAX
                                    or (state is not None and state[_FIRST + j][1] + abs(value) > INT64_MAX)):
                raise OverflowError("a total beyond 64 bits")
        if state is not None:
            self._touch(state)
        else:
            state = self._new_group(key)
        self._entries.append((expiry, state, values))
        state[_ROWS] += 1
        if self.implicit:
            self.ever = True
        for j, (name, value) in enumerate(zip(self.kinds, values)):
            slot = _FIRST + j
            if self._totals[j]:
                total = state[slot]
                total[0] += value
                total[1] += abs(value)
            elif name == "MEDIAN":
                insort(state[slot], value)
            else:
                queue = state[slot]
                if name == "MAX":
                    while len(queue) > queue[0] and queue[-1] < value:
                        queue.pop()
                else:
                    while len(queue) > queue[0] and queue[-1] > value:
                        queue.pop()
                queue.append(value)

    def next_expiry(self) -> int | None:
        """The oldest entry's expiry, None when the window is empty."""
        return self._entries[0][0] if self._entries else None

    def expire(self, until: int) -> None:
        """Retract every entry whose expiry is ``until`` or earlier, oldest first."""
        entries = self._entries
        while entries and entries[0][0] <= until:
            _, state, values = entries.popleft()
            state[_ROWS] -= 1
            for j, (name, value) in enumerate(zip(self.kinds, values)):
                slot = _FIRST + j
                if self._totals[j]:
                    total = state[slot]
                    total[0] -= value
                    total[1] -= abs(value)
                elif name == "MEDIAN":
                    held = state[slot]
                    at = bisect_left(held, value)
                    if at < len(held) and held[at] == value:
                        del held[at]
                else:
                    _retract_oldest(state[slot], value)
            self._touch(state)

    def __len__(self) -> int:
        return len(self._entries)

    # -- the groups' changes -------------------------------------------------------------
    def has_changes(self) -> bool:
        return bool(self._dirty)

    def take_changes(self) -> list[tuple]:
        """``(handle, key, last output, rows, result…)`` per group touched since the last
        call (see the module docstring; MEDIAN gives two items: the middle value and None,
        the two middle values, or None, None)."""
        changes = []
        for state in self._dirty:
            state[_TOUCHED] = False
            item: list[Any] = [state, state[_KEY], state[_OUTPUT], state[_ROWS]]
            for j, name in enumerate(self.kinds):
                held = state[_FIRST + j]
                if self._totals[j]:
                    item.append(held[0])
                elif name == "MEDIAN":
                    n = len(held)
                    item += [None, None] if not n else [held[n // 2], None] if n % 2 else held[n // 2 - 1:n // 2 + 1]
                else:
                    item.append(held[held[0]] if len(held) > held[0] else None)
            changes.append(tuple(item))
            if state[_ROWS] == 0 and not self.implicit:
                del self._groups[state[_KEY]]
        self._dirty.clear()
        return changes

    def flush(self, sinks: Sequence[Callable[[list], None]], retire: Callable[[list], None]) -> None:
        """Emit the changes of the groups touched since the last flush to every sink, as
        one list of ``(row, +1 | -1)``: a changed group's last row retracted, its new row
        inserted (an emptied group's only retracted); ``retire(out)`` then (see
        :mod:`taxi_rsp.engine.reclaim`). An unchanged group keeps the row it emitted, not
        the equal one just built: a retraction names the very object consumers hold."""
        if not self._dirty:
            return
        out = []
        width = self.key_width
        for handle, key, old, rows, *results in self.take_changes():
            new = None if rows == 0 and not self.implicit else key + self._result_ids(rows, results)
            if old is not new and (old is None or new is None or old[width:] != new[width:]):
                self.set_output(handle, new)
                if old is not None:
                    out.append((old, -1))
                if new is not None:
                    out.append((new, 1))
        if out:
            for sink in sinks:
                sink(out)
            retire(out)

    def _result_ids(self, rows: int, results: list) -> tuple:
        int_id, dec_id, mean_id, avg_id = self._encoders
        ids: list[Any] = []
        at = 0
        for name, scale in zip(self.kinds, self._scales):
            value = results[at]
            at += 1
            if name == "MEDIAN":
                high = results[at]
                at += 1
                ids.append(None if value is None else _id_of(value, scale, int_id, dec_id) if high is None
                           else _mean_id(value, high, scale or 0, dec_id, mean_id))
            elif name == "AVG":
                ids.append(avg_id(value, rows, scale or 0))
            elif name == "SUM" and rows == 0 and not (self.implicit and self.ever):
                ids.append(_int_id(value, int_id))  # an empty SUM is the integer 0 (see the reference's Sum)
            else:
                ids.append(None if value is None else _id_of(value, scale, int_id, dec_id))
        return tuple(ids)

    def set_output(self, handle: list, row: Any) -> None:
        """Record the row the group ``handle`` (from :meth:`take_changes`) emitted."""
        handle[_OUTPUT] = row

    # -- hand-over to the reference ------------------------------------------------------
    def entries(self) -> list[tuple[int, tuple, tuple[int, ...]]]:
        """``(expiry, key, arguments)`` of every entry, oldest first."""
        return [(expiry, state[_KEY], values) for expiry, state, values in self._entries]

    def outputs(self) -> dict[tuple, Any]:
        """Key -> last output row of every group held."""
        return {key: state[_OUTPUT] for key, state in self._groups.items()}

    def pending(self) -> list[tuple[tuple, Any]]:
        """``(key, last output)`` of the groups touched since the last :meth:`take_changes`."""
        return [(state[_KEY], state[_OUTPUT]) for state in self._dirty]

    def group_count(self) -> int:
        return len(self._groups)

    def held_values(self) -> int:
        """How many MIN/MAX/MEDIAN values the groups store (a queue's dead prefix
        included): what the window's memory grows with, besides its entries."""
        return sum(len(state[_FIRST + j]) - (name != "MEDIAN")
                   for state in self._groups.values()
                   for j, name in enumerate(self.kinds) if not self._totals[j])


def _int_id(value: int, beyond: Callable[[int], Any]) -> Any:
    """The term id of integer ``value``: inline, or ``beyond(value)``."""
    if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
        return INT_HEAD | (value & PAYLOAD_MASK)
    return beyond(value)


def _dec_id(scaled: int, scale: int, beyond: Callable[[int, int], Any]) -> Any:
    """The term id of the decimal ``scaled`` / 10**``scale``: inline, or ``beyond``'s."""
    nano = scaled * 10 ** (9 - scale)
    if PAYLOAD_MIN <= nano <= PAYLOAD_MAX:
        return DEC_HEAD | (nano & PAYLOAD_MASK)
    return beyond(scaled, scale)


def _id_of(value: int, scale: int | None, int_id: Callable, dec_id: Callable) -> Any:
    return _int_id(value, int_id) if scale is None else _dec_id(value, scale, dec_id)


def _mean_id(low: int, high: int, scale: int, dec_id: Callable, mean_id: Callable) -> Any:
    """The mean of an even count's two middle values: a decimal, inline when it has at
    most 9 decimals (always, for integers and cents)."""
    doubled = (low + high) * 10 ** (9 - scale)
    if doubled % 2 == 0:
        return _dec_id(doubled // 2, 9, dec_id)
    return mean_id(low, high, scale)


def _retract_oldest(queue: list, value: int) -> None:
    """Retract a group's oldest value from its monotonic queue ``[head, values…]``: it
    heads the queue iff no later value beat it (equal values are all kept)."""
    head = queue[0]
    if len(queue) > head and queue[head] == value:
        head += 1
        if head == len(queue):
            del queue[1:]
            head = 1
        elif head > COMPACT_AFTER and head + head > len(queue):
            del queue[1:head]
            head = 1
        queue[0] = head
