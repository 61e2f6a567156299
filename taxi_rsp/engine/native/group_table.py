"""The groups of a GROUP BY (and, for a window, its entries): the pure-Python form and
the oracle of the native ``_group_table`` (issue 50).

Two operators keep their state in a :class:`GroupTable`:

* :class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate`, a window with the
  GROUP BY above it (``ordered=True``): each arriving row adds an *entry* ``(expiry,
  group key, one int argument per aggregate)`` (:meth:`GroupTable.insert`); entries leave
  oldest first (:meth:`GroupTable.expire`);
* :class:`~taxi_rsp.engine.compiled.group.CompiledGroup`, a GROUP BY over any operator's
  deltas (``ordered=False``): :meth:`GroupTable.push` adds or retracts ``mult`` rows of
  one group, and an argument may be an error (None here), counted per group.

Every group holds its row count and, per aggregate,

* COUNT, SUM, AVG: the running total of the arguments (COUNT's are 0 or 1);
* MIN, MAX: in a window a monotonic queue (retractions come in arrival order, so a value
  a newer one beats can never be the extreme again: amortised O(1)); over deltas the
  sorted values, since any value may leave;
* MEDIAN: the sorted values;
* how many of its rows have an error for it (the aggregate is then unbound, as the
  reference's accumulators answer), and whether it ever held a value (the type of an
  empty SUM of decimals depends on it: the reference's total starts as the integer 0).

Arguments are integers (decimals scaled by the caller) within int64, like the native
table's C state; a value beyond it, or a total that could leave it, raises OverflowError
before anything changes (a total must fit after any retraction too, so the sum of its
values' magnitudes must fit: that bounds every partial sum), and the caller hands over
to the reference interpreter, which is exact. The table knows no RDF terms: what it
needs to make term ids comes from :meth:`GroupTable.set_results` (a
:class:`~taxi_rsp.engine.native.encoders.TermEncoders`).

A window's table may keep only the **latest row per key** (``latest``: the width of that
key; the planner's fusion of :class:`~taxi_rsp.engine.compiled.latest.LatestPerKey` into
the window's GROUP BY): each entry then also carries a *latest key* (ids) and an ordering
value, and only each latest key's newest entry counts in its group. An arrival retracts
its key's previous newest entry from that entry's group (it stays in the window until it
expires, uncounted); an expiry retracts an entry only when it was its key's last. Entries
of one key leave in arrival order, so the last to leave is the newest. An arrival whose
value is not greater than its key's newest, or whose latest key or value is unbound,
raises OverflowError before anything changes: the caller hands over to the reference
anti-join, which is exact. MIN/MAX are then sorted values (a retraction may be of any
entry). An entry may also carry a *payload* of ids (``payload``: how many) the table only
keeps, for :meth:`~GroupTable.records` (the window's rows, for that hand-over).

>>> latest = GroupTable(1, ("COUNT",), latest=1)
>>> latest.insert(100, (7,), (1, 42, 1))  # group 7, taxi 42, seq 1
>>> latest.insert(110, (8,), (1, 42, 2))  # taxi 42 again: it now counts in group 8 only
>>> sorted((change[1], change[3]) for change in latest.take_changes())
[((7,), 0), ((8,), 1)]
>>> latest.expire(100); latest.has_changes()  # its superseded entry leaves uncounted
False

The groups touched since the last :meth:`~GroupTable.flush` (or
:meth:`~GroupTable.take_changes`) are visited in first-touch order; an emptied group is
dropped there (the implicit group of a query without GROUP BY never is). ``flush``
builds each touched group's row (its key's term ids, then one term id per aggregate) and
emits a retraction/insertion pair when the row changed: the reference GroupOp's rule.

>>> table = GroupTable(1, ("COUNT", "MAX", "MEDIAN"))
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
from heapq import nsmallest
from collections.abc import Callable, Sequence
from typing import Any

from taxi_rsp.engine.native.encoders import TermEncoders
from taxi_rsp.rdf.dictionary import INLINE_FLAG, PAYLOAD_MASK, PAYLOAD_MAX, PAYLOAD_MIN, T_DECIMAL, T_INTEGER, TYPE_SHIFT

KINDS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "MEDIAN")
TOTALS = ("COUNT", "SUM", "AVG")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT_HEAD = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)
DEC_HEAD = INLINE_FLAG | (T_DECIMAL << TYPE_SHIFT)
RANKABLE = ("COUNT", "SUM", "MIN", "MAX")  # a value in the table that orders as the reference's
HEAD_SLACK = 4  # a ranked head holds up to this many times the rows to report...
HEAD_MIN = 64  # ... and at least this many groups
# A monotonic queue's dead prefix longer than this (and than its live part) is cut: a
# list's front cannot be popped in O(1), so retractions only advance a head index.
COMPACT_AFTER = 16


class Group:
    """One group's state (``values``: per aggregate a total ``[sum, sum of magnitudes]``,
    a queue ``[head, values…]`` or a sorted list)."""

    __slots__ = ("rows", "output", "touched", "key", "values", "errors", "held", "rank")

    def __init__(self, key: tuple, values: list, width: int) -> None:
        self.rank: tuple | None = None  # its sort key while in a ranked table's head
        self.rows = 0
        self.output: Any = None
        self.touched = True
        self.key = key
        self.values = values
        self.errors = [0] * width
        self.held = [False] * width


def _int64(value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"an aggregate argument must be an int, not {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError("an argument beyond 64 bits")
    return value


class Ranking:
    """A ranked table's head (``(rank key, group)`` in order), bound and last report."""

    __slots__ = ("parts", "offset", "wanted", "capacity", "head", "bound", "reported")

    def __init__(self, parts: tuple[tuple[int, bool], ...], offset: int, wanted: int, capacity: int | None) -> None:
        self.parts, self.offset, self.wanted = parts, offset, wanted
        self.capacity = max(HEAD_MIN, HEAD_SLACK * wanted) if capacity is None else capacity
        self.head: list[tuple[tuple, Group]] = []
        self.bound: tuple | None = None  # None: no group is in the rest
        self.reported: list = []


class GroupTable:
    """Groups of one GROUP BY; ``key_width`` parts per key, one of :data:`KINDS` per
    aggregate argument; ``implicit``: one group, key ``()``, always held; ``ordered``:
    a window's (insert/expire), else deltas' (push); ``latest``: the width of the latest
    key when only each latest key's newest entry counts, ``payload`` the ids each entry
    keeps besides (see the module docstring)."""

    def __init__(self, key_width: int, kinds: Sequence[str], implicit: bool = False, ordered: bool = True,
                 latest: int = 0, payload: int = 0) -> None:
        for name in kinds:
            if name not in KINDS:
                raise ValueError(f"no native state for the aggregate {name!r}")
        self.key_width = key_width
        self.kinds = tuple(kinds)
        self.implicit = implicit
        self.ordered = ordered
        if (latest or payload) and not ordered:
            raise ValueError("only a window's table keeps the latest row per key or a payload")
        self.latest = latest
        self.payload = payload
        self.ever = False  # the implicit group has held a row
        self._totals = [name in TOTALS for name in self.kinds]
        self._queues = [ordered and not latest and name in ("MIN", "MAX") for name in self.kinds]
        # (expiry, group, arguments, latest key or None, payload)
        self._entries: deque[tuple] = deque()
        self._newest: dict[tuple, list] = {}  # latest key -> [entries held, newest value, newest entry]
        self._groups: dict[tuple, Group] = {}
        self._dirty: list[Group] = []
        self._scales: tuple[int | None, ...] = (None,) * len(self.kinds)
        self._encoders: tuple[Callable[..., Any], ...] = ()
        self._ranking: Ranking | None = None
        if implicit:
            self._new_group(())

    def set_results(self, scales: Sequence[int | None], encoders: TermEncoders) -> None:
        """How :meth:`flush` makes term ids: per aggregate, its arguments' scale (None:
        integers; COUNT's is None), and the ids it does not make in place (beyond the
        inline range, a mean that needs a tenth decimal, AVG) from ``encoders``."""
        if len(scales) != len(self.kinds):
            raise ValueError("one scale per aggregate")
        for scale in scales:
            if scale is not None and not 0 <= scale <= 9:
                raise ValueError(f"a scale of 0 to 9 decimals, not {scale}")
        self._scales = tuple(scales)
        self._encoders = (encoders.int_id, encoders.dec_id, encoders.mean_id, encoders.avg_id)

    def _new_group(self, key: tuple) -> Group:
        values = [[0, 0] if total else [1] if queue else []
                  for total, queue in zip(self._totals, self._queues)]
        group = self._groups[key] = Group(key, values, len(self.kinds))
        self._dirty.append(group)
        return group

    def _touch(self, group: Group) -> None:
        if not group.touched:
            group.touched = True
            self._dirty.append(group)

    def _check(self, key: tuple, args: tuple, mult: int) -> tuple[Group | None, tuple]:
        """The group of ``key`` (None if new) and the arguments, validated: nothing has
        changed when this raises."""
        if len(args) != len(self.kinds) or len(key) != self.key_width:
            raise ValueError("a key or argument count that does not match the table")
        for part in key:
            if part is not None:
                _int64(part)
        values = tuple(None if value is None else _int64(value) for value in args)
        if _int64(mult) == INT64_MIN:
            raise OverflowError("a multiplicity beyond 64 bits")
        group = self._groups.get(key)
        for j, value in enumerate(values):
            if self._totals[j] and value is not None:
                magnitude = abs(value) * abs(mult)
                if magnitude > INT64_MAX or (group is not None and group.values[j][1] + magnitude > INT64_MAX):
                    raise OverflowError("a total beyond 64 bits")
        return group, values

    def _add(self, group: Group, values: tuple, mult: int) -> None:
        group.rows += mult
        if self.implicit:
            self.ever = True
        for j, value in enumerate(values):
            if value is None:
                group.errors[j] += mult
                continue
            group.held[j] = True
            held = group.values[j]
            if self._totals[j]:
                held[0] += value * mult
                held[1] += abs(value) * abs(mult)
            elif self._queues[j]:  # mult is 1: a window's arrival
                if self.kinds[j] == "MAX":
                    while len(held) > held[0] and held[-1] < value:
                        held.pop()
                else:
                    while len(held) > held[0] and held[-1] > value:
                        held.pop()
                held.append(value)
            elif mult > 0:
                for _ in range(mult):
                    insort(held, value)
            else:
                for _ in range(-mult):
                    _remove(held, value)

    # -- a window: entries in, oldest out ------------------------------------------------
    def insert(self, expiry: int, key: tuple, args: tuple) -> None:
        """Add one entry (a window's table); OverflowError (nothing changed) for a value
        beyond int64. With ``latest``, the arguments are followed by the entry's latest key
        (ids) and its ordering value, then by the payload (see the module docstring)."""
        if not self.ordered:
            raise ValueError("insert is a window's; a table of deltas takes push")
        if self.payload:
            if len(args) < self.payload:
                raise ValueError("a key or argument count that does not match the table")
            args, payload = args[:-self.payload], args[-self.payload:]
            for part in payload:
                if part is not None:
                    _int64(part)
        else:
            payload = ()
        newest = latest_key = None
        if self.latest:
            args, latest_key, order = _split_latest(args, len(self.kinds), self.latest)
            newest = self._newest.get(latest_key)
            if newest is not None and order <= newest[1]:
                raise OverflowError("a value not greater than its key's newest")
        group, values = self._check(key, args, 1)
        if None in values:
            raise TypeError("a window's entry has no error arguments")
        if group is None:
            group = self._new_group(key)
        else:
            self._touch(group)
        if newest is not None:  # its newest entry so far no longer counts (touched second, as
            _, superseded, old_values, *_ = newest[2]  # the anti-join emits: the arrival, then it)
            self._retract(superseded, old_values)
        entry = (expiry, group, values, latest_key, payload)
        if self.latest:
            if newest is None:
                self._newest[latest_key] = [1, order, entry]
            else:
                newest[0] += 1
                newest[1], newest[2] = order, entry
        self._entries.append(entry)
        self._add(group, values, 1)

    def next_expiry(self) -> int | None:
        """The oldest entry's expiry, None when the window is empty."""
        return self._entries[0][0] if self._entries else None

    def expire(self, until: int) -> None:
        """Retract every entry whose expiry is ``until`` or earlier, oldest first."""
        entries = self._entries
        while entries and entries[0][0] <= until:
            entry = entries.popleft()
            if self.latest:
                newest = self._newest[entry[3]]
                newest[0] -= 1
                if newest[0]:
                    continue  # superseded: retracted when its key's next entry came
                del self._newest[entry[3]]
            self._retract(entry[1], entry[2])

    def _retract(self, group: Group, values: tuple) -> None:
        """Take one entry's ``values`` out of ``group``."""
        group.rows -= 1
        for j, value in enumerate(values):
            held = group.values[j]
            if self._totals[j]:
                held[0] -= value
                held[1] -= abs(value)
            elif self._queues[j]:
                _retract_oldest(held, value)
            else:
                _remove(held, value)
        self._touch(group)

    def __len__(self) -> int:
        return len(self._entries)

    # -- deltas --------------------------------------------------------------------------
    def push(self, key: tuple, args: tuple, mult: int) -> None:
        """Add (``mult`` > 0) or retract ``mult`` rows of group ``key`` with ``args`` (None:
        an error); OverflowError, nothing changed, for a value beyond int64."""
        if self.ordered:
            raise ValueError("push is for a table of deltas; a window's takes insert")
        group, values = self._check(key, args, mult)
        if group is None:
            group = self._new_group(key)
        else:
            self._touch(group)
        self._add(group, values, mult)

    # -- the groups' changes -------------------------------------------------------------
    def has_changes(self) -> bool:
        return bool(self._dirty)

    def take_changes(self) -> list[tuple]:
        """``(handle, key, last output, rows, result…)`` per group touched since the last
        call: per aggregate its total (COUNT, SUM, AVG), its extreme or None (MIN, MAX),
        or two items for MEDIAN: the middle value and None, the two middle values, or
        None, None. (Errors and held flags are in :meth:`states`.)"""
        changes = []
        for group in self._dirty:
            group.touched = False
            changes.append((group, group.key, group.output, group.rows, *self._results(group)))
            if group.rows == 0 and not self.implicit:
                del self._groups[group.key]
        self._dirty.clear()
        return changes

    def _results(self, group: Group) -> list:
        results: list[Any] = []
        for j, name in enumerate(self.kinds):
            held = group.values[j]
            if self._totals[j]:
                results.append(held[0])
            elif name == "MEDIAN":
                n = len(held)
                results += [None, None] if not n else [held[n // 2], None] if n % 2 else held[n // 2 - 1:n // 2 + 1]
            elif self._queues[j]:
                results.append(held[held[0]] if len(held) > held[0] else None)
            else:
                results.append((held[0] if name == "MIN" else held[-1]) if held else None)
        return results

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
        for handle, key, old, rows, *results in self.take_changes():  # (a handle is its Group here)
            new = None if rows == 0 and not self.implicit else key + self._result_ids(handle, results)
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

    def _result_ids(self, group: Group, results: list) -> tuple:
        int_id, dec_id, mean_id, avg_id = self._encoders
        ids: list[Any] = []
        at = 0
        for j, (name, scale) in enumerate(zip(self.kinds, self._scales)):
            value = results[at]
            at += 1
            high = None
            if name == "MEDIAN":
                high = results[at]
                at += 1
            if name != "COUNT" and group.errors[j]:
                ids.append(None)  # a row whose argument is an error: the aggregate is one
            elif name == "MEDIAN":
                ids.append(None if value is None else _id_of(value, scale, int_id, dec_id) if high is None
                           else _mean_id(value, high, scale or 0, dec_id, mean_id))
            elif name == "AVG":
                ids.append(avg_id(value, group.rows, scale or 0))
            elif name == "SUM" and not group.held[j]:
                ids.append(_int_id(value, int_id))  # no value ever: the integer 0 (see the reference's Sum)
            else:
                ids.append(None if value is None else _id_of(value, scale, int_id, dec_id))
        return tuple(ids)

    def set_output(self, handle: Group, row: Any) -> None:
        """Record the row the group ``handle`` (from :meth:`take_changes`) emitted."""
        handle.output = row

    # -- ranked: ORDER BY aggregates LIMIT k, kept in the table ---------------------------
    def rank_by(self, parts: Sequence[tuple[int, bool]], offset: int, limit: int, capacity: int | None = None) -> None:
        """Rank the groups by aggregates and report rows ``offset`` to ``offset + limit``
        (:meth:`ranked_flush`) instead of emitting every change: ``parts`` are
        ``(aggregate index, descending)``, each a COUNT, SUM, MIN or MAX; ties go to the
        key ids (None as -1), as the reference top-k's row-id tie-break orders them.

        The *head* holds the best groups in order (up to ``max(HEAD_MIN, HEAD_SLACK ×
        (offset + limit))``), every one of them ranked before every other group (the
        *rest*, unordered); ``bound`` is a key no rest group ranks before. A change far
        from the top is then one comparison with ``bound``; the rest is scanned only when
        removals leave the head shorter than the rows to report (TMA's top-k buffer
        between k and k_max, Yi et al., ICDE 2003). ``capacity`` sets the head's size
        (tests use small ones).

        >>> from taxi_rsp.rdf.dictionary import Dictionary
        >>> table = GroupTable(1, ("COUNT", "MAX"))
        >>> table.set_results((None, None), TermEncoders(Dictionary()))
        >>> table.rank_by([(0, True), (1, True)], 0, 2)
        >>> for key, seq in [(1, 10), (2, 11), (1, 12), (3, 13)]:
        ...     table.insert(100, (key,), (1, seq))
        >>> [(row[0], row[1] & 0xFF) for row in table.ranked_flush()]  # key, COUNT (payload)
        [(1, 2), (3, 1)]
        >>> table.ranked_flush() is None  # nothing changed
        True
        """
        if self.implicit:
            raise ValueError("only a table with GROUP BY keys is ranked")
        for j, _ in parts:
            if self.kinds[j] not in RANKABLE:
                raise ValueError(f"{self.kinds[j]} is not ranked in the table")
        if offset < 0 or limit < 0 or (capacity is not None and capacity < max(offset + limit, 1)):
            raise ValueError("a negative offset or limit, or a head shorter than the rows to report")
        self._ranking = Ranking(tuple(parts), offset, offset + limit, capacity)

    def ranked_flush(self) -> list | None:
        """Bring the ranking up to date with the groups touched since the last call and
        return the reported rows (key ids, then one term id per aggregate), or None when
        they are the rows returned last time. A reported row that did not change is the
        very object returned before."""
        ranking = self._ranking
        if ranking is None:
            raise ValueError("rank_by first")
        if not self._dirty:
            return None  # (after every flush the head holds the rows to report, or all groups)
        head, wanted = ranking.head, ranking.wanted
        dirty, self._dirty = self._dirty, []
        reported = False  # a change at or before the last reported place
        live = []
        for group in dirty:
            if group.rank is not None:
                at = bisect_left(head, (group.rank,))
                del head[at]
                reported = reported or at < wanted
                group.rank = None
            if group.rows == 0:
                del self._groups[group.key]
                group.output = None
            else:
                live.append(group)
        for group in live:
            key = self._rank_key(group)
            if ranking.bound is None or key < ranking.bound:
                at = bisect_left(head, (key,))
                head.insert(at, (key, group))
                reported = reported or at < wanted
                group.rank = key
        while len(head) > ranking.capacity:
            key, group = head.pop()
            group.rank = None
            ranking.bound = key
        rest = len(self._groups) - len(head)
        if len(head) < wanted and rest:
            taken = nsmallest(ranking.capacity - len(head),
                              ((self._rank_key(group), group) for group in self._groups.values() if group.rank is None))
            for key, group in taken:
                group.rank = key
            head.extend(taken)  # each after every head key: the rest ranks after the bound
            ranking.bound = None if len(taken) == rest else taken[-1][0]
            reported = True
        if not reported:  # the reported groups and their order are as they were
            _forget_unreported(dirty)
            return None
        rows = []
        for _, group in head[ranking.offset:wanted]:
            if group.touched or group.output is None:
                new = group.key + self._result_ids(group, self._results(group))
                if group.output != new:
                    group.output = new
            group.touched = False
            rows.append(group.output)
        _forget_unreported(dirty)
        if rows == ranking.reported:
            return None
        ranking.reported = rows
        return rows

    def ranked_head(self) -> tuple[list[tuple], tuple | None]:
        """The head's rank keys in order, and the bound (None: none): the state the
        differential tests compare with the native table's."""
        return [key for key, _ in self._ranking.head], self._ranking.bound  # type: ignore[union-attr]

    def _rank_key(self, group: Group) -> tuple:
        """A group's place in the ranking: per part a class and the aggregate's value
        (negated descending), then its key ids (None as -1). An unbound aggregate (an
        error, or MIN/MAX of no value) sorts before every number, as the reference's
        order has it: first ascending (class 0), last descending (class 1)."""
        key: list[int] = []
        for j, descending in self._ranking.parts:  # type: ignore[union-attr]
            value = self._rank_value(group, j)
            if value is None:
                key += [int(descending), 0]
            else:
                key += [int(not descending), -value if descending else value]
        return (*key, *(-1 if part is None else part for part in group.key))

    def _rank_value(self, group: Group, j: int) -> int | None:
        """Aggregate ``j``'s value as the table holds it (None: unbound)."""
        if self.kinds[j] != "COUNT" and group.errors[j]:
            return None
        held = group.values[j]
        if self._totals[j]:
            return held[0]
        if self._queues[j]:
            return held[held[0]] if len(held) > held[0] else None
        return (held[0] if self.kinds[j] == "MIN" else held[-1]) if held else None

    # -- hand-over to the reference ------------------------------------------------------
    def records(self) -> list[tuple[int, tuple]]:
        """``(expiry, payload)`` of every entry, oldest first (a latest table's superseded
        entries too: they are still in the window)."""
        return [(entry[0], entry[4]) for entry in self._entries]

    def entries(self) -> list[tuple[int, tuple, tuple[int, ...]]]:
        """``(expiry, key, arguments)`` of every entry that counts in its group, oldest
        first (a latest table's superseded entries do not)."""
        return [(entry[0], entry[1].key, entry[2]) for entry in self._entries
                if not self.latest or self._newest[entry[3]][2] is entry]

    def states(self) -> list[tuple]:
        """``(key, rows, last output, values, errors, held)`` of every group held, where
        ``values`` has per aggregate its total or its values (sorted; a queue's live ones)."""
        out = []
        for group in self._groups.values():
            values = [held[0] if total else held[held[0]:] if queue else list(held)
                      for held, total, queue in zip(group.values, self._totals, self._queues)]
            out.append((group.key, group.rows, group.output, values, list(group.errors), list(group.held)))
        return out

    def outputs(self) -> dict[tuple, Any]:
        """Key -> last output row of every group held."""
        return {key: group.output for key, group in self._groups.items()}

    def pending(self) -> list[tuple[tuple, Any]]:
        """``(key, last output)`` of the groups touched since the last :meth:`take_changes`."""
        return [(group.key, group.output) for group in self._dirty]

    def group_count(self) -> int:
        return len(self._groups)

    def held_values(self) -> int:
        """How many MIN/MAX/MEDIAN values the groups store (a queue's dead prefix
        included): what the table's memory grows with, besides entries and groups."""
        return sum(len(held) - queue for group in self._groups.values()
                   for held, total, queue in zip(group.values, self._totals, self._queues) if not total)


def _split_latest(args: tuple, n_args: int, width: int) -> tuple[tuple, tuple, int]:
    """A latest table's entry arguments: (the aggregates', the latest key, the ordering
    value); OverflowError when the key or the value is unbound, ValueError when the count
    is wrong.

    >>> _split_latest((1, 5, 6, 9), 1, 2)
    ((1,), (5, 6), 9)
    """
    if len(args) != n_args + width + 1:
        raise ValueError("a latest table's entry: the arguments, the latest key and its value")
    latest_key, order = args[n_args:n_args + width], args[-1]
    if order is None or None in latest_key:
        raise OverflowError("an unbound latest key or value")
    for part in latest_key:
        _int64(part)
    return args[:n_args], latest_key, _int64(order)


def _forget_unreported(dirty: list[Group]) -> None:
    """End a ranked flush: a touched group not reported now has a stale last row."""
    for group in dirty:
        if group.touched:
            group.touched = False
            group.output = None


def _remove(values: list, value: int) -> None:
    """Remove one ``value`` from the sorted ``values`` (none there: nothing)."""
    at = bisect_left(values, value)
    if at < len(values) and values[at] == value:
        del values[at]


def _retract_oldest(queue: list, value: int) -> None:
    """Retract a group's oldest value from its monotonic queue ``[head, values…]``: it
    heads the queue iff no later value beat it (equal values are all kept)."""
    head = queue[0]
    if len(queue) > head and queue[head] == value:
        head += 1
        if head == len(queue):
            del queue[1:]
            head = 1
        elif head - 1 > COMPACT_AFTER and head - 1 > len(queue) - head:  # dead: head - 1, live: len - head
            del queue[1:head]
            head = 1
        queue[0] = head


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
