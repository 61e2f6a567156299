"""TMA grid top-k (Mouratidis, Bakiras, Papadias, SIGMOD 2006; CQELS DEBS 2015 §3.4).

For ``ORDER BY DESC(?score) ... LIMIT k`` where ``?score`` is a monotone function of
some input variables (increasing in some, decreasing in others, e.g. profit / empty
taxis), the rows are kept in a grid over those inputs instead of one sorted list. Each
grid cell has a *maxscore*: the score at its best corner, an upper bound for every row
in it. The operator keeps only the current top-k sorted. An arriving row enters the
top-k iff it beats the k-th; a departing top-k row triggers a refill that visits grid
cells in decreasing maxscore order and stops at the first cell whose maxscore is below
the k-th score (the *influence region* of the k-th entry). Updates that touch neither
the top-k nor its influence region cost O(1).

Monotonicity is decided by :func:`taxi_rsp.planner.monotone.monotonicity` at plan time under sign assumptions
(products and quotients of non-negative values, positive divisors). If a row ever
violates them, the bounds are no longer valid and refills scan every cell (still exact,
just slower); ``bounds_valid`` tells which mode is on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sortedcontainers import SortedList

from taxi_rsp.engine.expr import Compiled
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.ordering import descending_key
from taxi_rsp.engine.ops.topk import sort_entry
from taxi_rsp.lang import ast

INF = math.inf


def bound(expr: Any, corner: dict[str, Any]) -> Any:
    """Evaluate a monotone expression on plain values (``corner``: var -> value)."""
    if isinstance(expr, ast.Var):
        return corner[expr.name]
    if isinstance(expr, ast.Const):
        return expr.term.value()
    a, b = (bound(arg, corner) for arg in expr.args)
    if expr.op == "+":
        return a + b
    if expr.op == "-":
        return a - b
    if expr.op == "*":
        return a * b
    if b == 0:
        return INF if a > 0 else 0
    if b == INF:
        return 0
    return a / b if a != INF else INF


class TmaTopKOp(Operator):
    """Same results as :class:`~taxi_rsp.engine.ops.topk.TopKOp` (root, ordered)."""

    def __init__(
        self,
        schema: tuple[str, ...],
        order: list[tuple[Compiled, bool]],
        limit: int,
        offset: int,
        score_expr: Any,
        directions: dict[str, int],
        value_of: Callable[[Any], Any],
        cell_size: Fraction = Fraction(1),
    ) -> None:
        super().__init__(schema)
        self._order = order
        self.limit = limit
        self.offset = offset
        self.k = limit + offset
        self._score_expr = score_expr
        self._inputs = [(schema.index(v), d) for v, d in directions.items()]
        self._names = list(directions)
        self._value_of = value_of
        self._cell_size = cell_size
        self._unit_cells = cell_size == 1
        self._cells: dict[tuple, dict[Row, list]] = {}  # cell -> row -> [entry, mult]
        self._where: dict[Row, tuple] = {}
        self._top: SortedList = SortedList()  # entries of the current top-k rows
        self._in_top: set[Row] = set()
        self.bounds_valid = True
        self.changed = True  # the top-k may differ from the last snapshot
        self.refills = 0
        self.cells_visited = 0

    def describe(self) -> str:
        return f"TmaTopK k={self.k} over {', '.join('?' + n for n in self._names)}"

    # -- keys and cells -----------------------------------------------------------------
    def _entry(self, row: Row) -> tuple:
        return sort_entry(self._order, row)

    def _cell(self, row: Row) -> tuple:
        coords = []
        for position, _ in self._inputs:
            value = self._value_of(row[position]) if row[position] is not None else None
            if type(value) not in (int, Fraction) or value < 0:
                self.bounds_valid = False  # outside the assumptions: scan everything
                coords.append(None)
                continue
            # (cells of size 1 need no division: floor of the value itself)
            coords.append(math.floor(value if self._unit_cells else value / self._cell_size))
        return tuple(coords)

    def _maxscore(self, cell: tuple) -> Any:
        if not self.bounds_valid or None in cell:
            return INF
        corner = {}
        for (_, direction), name, index in zip(self._inputs, self._names, cell):
            low, high = index * self._cell_size, (index + 1) * self._cell_size
            corner[name] = high if direction > 0 else low
        try:
            return bound(self._score_expr, corner)
        except (ArithmeticError, TypeError):
            return INF

    def _kth_score_key(self) -> tuple | None:
        if len(self._top) < self.k:
            return None
        return self._top[self.k - 1][0]

    # -- updates ------------------------------------------------------------------------
    def push(self, deltas: list[Delta]) -> None:
        refill = False
        for row, mult in deltas:
            cell_key = self._where.get(row)
            if cell_key is None:
                if mult < 0:
                    raise ValueError(f"retraction of a row not in the top-k input: {row!r}")
                cell_key = self._cell(row)
                entry = self._entry(row)
                self._cells.setdefault(cell_key, {})[row] = [entry, mult]
                self._where[row] = cell_key
                kth = self._kth_score_key()
                if kth is None or entry < self._top[self.k - 1]:
                    self.changed = True
                    self._top.add(entry)
                    self._in_top.add(row)
                    if len(self._top) > self.k:  # the old k-th leaves the result, stays in its cell
                        dropped = self._top.pop()
                        self._in_top.discard(dropped[2])
                continue
            held = self._cells[cell_key][row]
            if row in self._in_top:
                self.changed = True
            held[1] += mult
            if held[1] < 0:
                raise ValueError(f"retraction below zero in top-k: {row!r}")
            if held[1] == 0:
                del self._cells[cell_key][row]
                if not self._cells[cell_key]:
                    del self._cells[cell_key]
                del self._where[row]
                if row in self._in_top:
                    self._top.remove(held[0])
                    self._in_top.discard(row)
                    refill = True
        # A top-k row left: rows outside the result may now belong in it (even if rows
        # that arrived in the same batch already filled the k places).
        if refill and len(self._where) > len(self._top):
            self._refill()

    def _refill(self) -> None:
        """Rebuild the top-k from the grid, visiting cells by decreasing maxscore."""
        self.refills += 1
        cells = sorted(self._cells, key=lambda c: descending_key(self._maxscore(c)))
        candidates = SortedList(self._top)
        for cell in cells:
            if len(candidates) >= self.k:
                kth_score = self._primary_value(candidates[self.k - 1])
                if kth_score is not None and self._maxscore(cell) < kth_score:
                    break  # outside the influence region: no row here can enter
            self.cells_visited += 1
            for row, (entry, _) in self._cells[cell].items():
                if row in self._in_top:
                    continue
                if len(candidates) < self.k or entry < candidates[self.k - 1]:
                    candidates.add(entry)
                    if len(candidates) > self.k:
                        candidates.pop()
        self._top = candidates
        self._in_top = {entry[2] for entry in candidates}

    def _primary_value(self, entry: tuple) -> Any:
        key = entry[0][0]  # descending_key of the score: (-rank, -value) for numbers
        if key[0] == -4:
            return -key[1]
        return None  # not a number: no bound applies

    def snapshot(self) -> list[Row]:
        self.changed = False
        rows: list[Row] = []
        for _, _, row in self._top:
            cell = self._cells[self._where[row]]
            rows.extend([row] * cell[row][1])
            if len(rows) >= self.k:
                break
        return rows[self.offset:self.k]

    def state_size(self) -> int:
        return len(self._where)
