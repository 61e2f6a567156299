"""Stateless operators: filter, extend (BIND), project, union, and the row steps that
the plan builder fuses into windows.

Stateless operators need no memory for retractions: the same input row always gives
the same output row, so a negative tuple is transformed exactly like its positive one.
"""

from __future__ import annotations

from collections.abc import Callable

from taxi_rsp.engine.expr import Compiled, ExprError, ebv
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.rdf.dictionary import Dictionary

Step = Callable[[Row], Row | None]


def filter_step(predicate: Compiled) -> Step:
    def step(row: Row) -> Row | None:
        try:
            return row if ebv(predicate(row)) else None
        except ExprError:
            return None

    return step


def extend_step(expr: Compiled, dictionary: Dictionary) -> Step:
    encode = dictionary.encode_value

    def step(row: Row) -> Row:
        try:
            return row + (encode(expr(row)),)
        except ExprError:
            return row + (None,)

    return step


def project_step(positions: tuple[int | None, ...]) -> Step:
    def step(row: Row) -> Row:
        return tuple(row[i] if i is not None else None for i in positions)

    return step


class MapOp(Operator):
    """Applies a stateless step to every delta (rows it drops vanish)."""

    def __init__(self, schema: tuple[str, ...], step: Step, label: str) -> None:
        super().__init__(schema)
        self.step = step
        self.label = label

    def push(self, deltas: list[Delta]) -> None:
        step = self.step
        out = []
        for row, mult in deltas:
            result = step(row)
            if result is not None:
                out.append((result, mult))
        self.emit(out)

    def describe(self) -> str:
        return self.label


class UnionOp(Operator):
    """Bag union; each input is re-laid out to the union schema."""

    def __init__(self, schema: tuple[str, ...], input_schemas: list[tuple[str, ...]]) -> None:
        super().__init__(schema)
        self._layouts = [
            tuple(s.index(v) if v in s else None for v in schema) for s in input_schemas
        ]

    def input(self, port: int) -> Callable[[list[Delta]], None]:
        layout = self._layouts[port]

        def push(deltas: list[Delta]) -> None:
            self.emit([(tuple(row[i] if i is not None else None for i in layout), m) for row, m in deltas])

        return push
