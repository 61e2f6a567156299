"""A constant relation: the rows of a static sub-pattern, VALUES, or the unit relation,
emitted once when the query starts."""

from __future__ import annotations

from taxi_rsp.engine.ops.base import Operator


class StaticSource(Operator):
    """A constant relation (static sub-pattern results, or the unit relation)."""

    def __init__(self, schema: tuple[str, ...], rows: list[tuple]) -> None:
        super().__init__(schema)
        self.rows = rows

    def start(self) -> None:
        self.emit([(row, 1) for row in self.rows])

    def describe(self) -> str:
        return f"StaticSource ({len(self.rows)} rows)"
