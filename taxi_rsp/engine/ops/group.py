"""Incremental GROUP BY with aggregates.

Per group: the number of input rows and one accumulator per aggregate. Changes are
batched per evaluation instant: :meth:`GroupOp.flush` emits, for every group touched
since the last flush, the retraction of its old output row and its new row (nothing
when they are equal), so a burst of expiries costs one update downstream per group.
"""

from __future__ import annotations

from typing import Any

from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.ops.aggregates import Accumulator, make_accumulator
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.rdf.dictionary import Dictionary

ERROR = object()  # an aggregate argument whose expression raised an error (see GroupOp.values)


class GroupState:
    """One group: how many rows it holds, its aggregates, and the row it last reported."""

    __slots__ = ("accumulators", "output", "rows")

    def __init__(self, accumulators: list[Accumulator]) -> None:
        self.rows = 0
        self.accumulators = accumulators
        self.output: Row | None = None


class GroupOp(Operator):
    def __init__(
        self,
        input_schema: tuple[str, ...],
        keys: tuple[str, ...],
        aggregates: list[tuple],
        dictionary: Dictionary,
    ) -> None:
        """``aggregates``: (output variable, name, distinct, compiled argument or None
        for ``*``[, GROUP_CONCAT separator])."""
        super().__init__(keys + tuple(a[0] for a in aggregates))
        self._key_pos = tuple(input_schema.index(k) for k in keys)
        self._specs = [(a[1], a[2], a[3], a[4] if len(a) > 4 else None) for a in aggregates]
        self._groups: dict[tuple, GroupState] = {}
        self._dirty: dict[tuple, Row | None] = {}
        self._encode = dictionary.encode_value
        self._implicit = not keys  # no GROUP BY: one group that always exists
        if self._implicit:
            self._groups[()] = self._new_state()
            self._dirty[()] = None

    def describe(self) -> str:
        return f"Group by {', '.join('?' + k for k in self.schema[:len(self._key_pos)])}"

    def _new_state(self) -> GroupState:
        return GroupState([make_accumulator(name, distinct, separator)
                            for name, distinct, _, separator in self._specs])

    # -- the hand-over contract: a specialised twin loads its state here -------------------
    def group(self, key: tuple) -> GroupState:
        """The state of group ``key``, made empty if there is none (a twin fills it)."""
        state = self._groups.get(key)
        if state is None:
            state = self._groups[key] = self._new_state()
        return state

    def groups(self) -> dict[tuple, GroupState]:
        """The groups held, by key (read only: change them through :meth:`group`)."""
        return self._groups

    def expect_flush(self, reported: dict[tuple, Row | None]) -> None:
        """The groups changed since the last flush, each with the row it last reported:
        the next :meth:`flush` reports their changes (an emptied group is retracted)."""
        self._dirty = dict(reported)

    def push(self, deltas: list[Delta]) -> None:
        key_pos = self._key_pos
        for row, mult in deltas:
            state = self._touch(tuple(row[i] for i in key_pos))
            state.rows += mult
            for (_, distinct, arg, _), acc in zip(self._specs, state.accumulators):
                for _ in range(abs(mult)):  # an argument is evaluated per solution (RAND())
                    self._apply(acc, self._value(arg, distinct, row), mult > 0)

    def values(self, row: Row) -> tuple[tuple, list]:
        """``row``'s group key and its aggregates' argument values (``ERROR`` for an
        expression error): what :meth:`push` adds, for a caller that keeps these rather
        than rows (see :meth:`push_values`)."""
        return (tuple(row[i] for i in self._key_pos),
                [self._value(arg, distinct, row) for _, distinct, arg, _ in self._specs])

    def push_values(self, key: tuple, values: list, mult: int) -> None:
        """:meth:`push` of one solution (``mult`` 1 or -1) given as :meth:`values`."""
        state = self._touch(key)
        state.rows += mult
        for acc, value in zip(state.accumulators, values):
            self._apply(acc, value, mult > 0)

    def _touch(self, key: tuple) -> GroupState:
        """The state of group ``key`` (new if it has none), noted as changed in this
        instant with the output it had before."""
        state = self._groups.get(key)
        if state is None:
            state = self._groups[key] = self._new_state()
        if key not in self._dirty:
            self._dirty[key] = state.output
        return state

    @staticmethod
    def _value(arg: Compiled | None, distinct: bool, row: Row) -> Any:
        if arg is None:  # COUNT(*): every solution counts; COUNT(DISTINCT *): distinct solutions
            return row if distinct else True
        try:
            return arg(row)
        except ExprError:
            return ERROR

    @staticmethod
    def _apply(acc: Accumulator, value: Any, insert: bool) -> None:
        if value is ERROR:
            (acc.update_error if insert else acc.revert_error)()
        else:
            (acc.update if insert else acc.revert)(value)

    def _output(self, key: tuple, state: GroupState) -> Row | None:
        if state.rows == 0 and not self._implicit:
            return None
        values = []
        for acc in state.accumulators:
            try:
                values.append(self._encode(acc.result()))
            except ExprError:
                values.append(None)
        return key + tuple(values)

    def flush(self) -> None:
        if not self._dirty:
            return
        out: list[Delta] = []
        for key, old in self._dirty.items():
            state = self._groups[key]
            new = self._output(key, state)
            if new is None and not self._implicit:
                del self._groups[key]
            if old == new:
                continue  # the emitted row stays the output: its retraction names that very object
            state.output = new
            if old is not None:
                out.append((old, -1))
            if new is not None:
                out.append((new, 1))
        self._dirty = {}
        self.emit(out)

    def state_size(self) -> int:
        return len(self._groups)
