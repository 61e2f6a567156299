"""The operator base class and the delta type."""

from __future__ import annotations

from collections.abc import Callable

Row = tuple
Delta = tuple[Row, int]
Sink = Callable[[list[Delta]], None]


class Operator:
    """A node of the physical plan: holds its output ``schema`` and its consumers.

    Operators push deltas to their sinks as soon as they know them; stateful
    operators that batch per evaluation instant do so in :meth:`flush`, which the
    query calls bottom-up once per instant before reading the result.
    """

    def __init__(self, schema: tuple[str, ...]) -> None:
        self.schema = schema
        self.position = {name: i for i, name in enumerate(schema)}
        self._sinks: list[Sink] = []

    def connect(self, sink: Sink) -> None:
        self._sinks.append(sink)

    def redirect(self, old: Sink, new: Sink) -> None:
        """Deliver to ``new`` what was connected to go to ``old`` (the planner fusing an
        operator into its consumer)."""
        self._sinks[:] = [new if sink == old else sink for sink in self._sinks]

    def emit_for(self, stand_in: Operator) -> None:
        """Send this operator's deltas to ``stand_in``'s consumers, now and as they are
        connected: a specialised operator that holds this one as its reference twin
        stands for it in the plan, and hands over to it (its state, then its work)."""
        self._sinks = stand_in._sinks

    def emit(self, deltas: list[Delta]) -> None:
        if deltas:
            for sink in self._sinks:
                sink(deltas)

    def flush(self) -> None:
        """End of an evaluation instant: emit what was batched (default: nothing)."""

    def state_size(self) -> int:
        """Number of rows held in state (for memory checks and --explain)."""
        return 0

    def describe(self) -> str:
        return type(self).__name__


def compatible_merger(left: tuple[str, ...], right: tuple[str, ...]) -> tuple[tuple[str, ...], Callable[[Row, Row], Row]]:
    """Schema and merge function for joining rows of ``left`` and ``right`` schemas.

    Shared variables keep the left value unless it is unbound (``None``).
    """
    extra = tuple(v for v in right if v not in left)
    extra_pos = tuple(right.index(v) for v in extra)
    shared = tuple((left.index(v), right.index(v)) for v in right if v in left)
    schema = left + extra

    if not shared:
        def merge(lrow: Row, rrow: Row) -> Row:
            return lrow + tuple(rrow[i] for i in extra_pos)
    else:
        def merge(lrow: Row, rrow: Row) -> Row:
            if any(lrow[i] is None for i, _ in shared):
                lrow = list(lrow)
                for i, j in shared:
                    if lrow[i] is None:
                        lrow[i] = rrow[j]
                lrow = tuple(lrow)
            return lrow + tuple(rrow[i] for i in extra_pos)

    return schema, merge
