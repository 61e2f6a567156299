"""Two GROUP BYs joined on their keys and ranked in C: the ordered root of
``{ SELECT … GROUP BY k } { SELECT … GROUP BY k } BIND(…) ORDER BY … LIMIT n`` (issue 50).

Planned as a join of the two groups' rows and a top-k over the joined rows, every group
change costs a row from the table, a joined row, a sort key and their freeing, though
almost none reaches the reported rows (Q2: 94 % of them). Here the two native group
tables stay where they are and a :class:`RankedPairs` (``native/_ranked_pairs.pxi``)
pairs their groups by key slot and ranks the pairs: each ORDER BY part is a small rank
program over both groups' aggregates, key parts and numeric constants (``+ - * /``,
unary minus, ``IF(a < b, x, y)`` with any comparison), evaluated on exact fractions of
int64 (a quotient compared by 128-bit cross-multiplication), the best pairs in a sorted
head and the rest behind a bound, as the ranked group table does. Rows are built only
for the reported pairs: the left group's row, the right group's aggregates, then the
BINDs the top-k would have added (the reference chain, run on those rows alone).

The order is the reference top-k's: per part, an unbound value (an error: an unbound
aggregate, a division by zero, a comparison with an unbound operand) before every number
ascending and after every number descending, numbers by exact value; ties by the joined
row's ids, whose first difference between two pairs is in the left key (the row starts
with it). A value without an exact int64 form (a key that is not an inline number, a
product beyond 64 bits) raises ``OverflowError`` before anything changed, and so does
either group operator leaving its table (a hand-over): the ranked pairs then hand over to
the planned join and top-k, which were built beside them and receive every group once
as a row; the top-k answers from then on.

>>> from taxi_rsp.lang import ast
>>> from taxi_rsp.rdf.terms import Literal
>>> two = ast.Const(Literal("2", "http://www.w3.org/2001/XMLSchema#integer"))
>>> rank_programs([(ast.Call("/", (ast.Var("m"), ast.Var("n"))), True), (ast.Var("k"), False)],
...     {}, ("k",), ("m",), ("n",))
[(((1, 0, 0, 0), (1, 1, 0, 0), (7, 0, 0, 0)), True), (((2, 0, 0, 0),), False)]
>>> rank_programs([(ast.Call("STR", (ast.Var("k"),)), False)], {}, ("k",), ("m",), ("n",)) is None
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from taxi_rsp.engine.ops.base import Operator, Row
from taxi_rsp.lang import ast
from taxi_rsp.rdf.terms import Literal

_XSD = "http://www.w3.org/2001/XMLSchema#"
_NUMERIC = {_XSD + name for name in ("integer", "decimal", "int", "long", "short", "byte", "nonNegativeInteger",
                                     "positiveInteger", "negativeInteger", "nonPositiveInteger",
                                     "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte")}
# the rank program's instructions (native/_ranked_pairs.pxi)
AGG, KEY, CONST, ADD, SUB, MUL, DIV, NEG, IF = 1, 2, 3, 4, 5, 6, 7, 8, 9
_ARITHMETIC = {"+": ADD, "-": SUB, "*": MUL, "/": DIV}
_COMPARISONS = {"<": 0, "<=": 1, ">": 2, ">=": 3, "=": 4, "!=": 5}
_INT64 = 1 << 63


def rank_programs(order: list[tuple[Any, bool]], extends: dict[str, Any], keys: tuple[str, ...],
                  left: tuple[str, ...], right: tuple[str, ...]) -> list[tuple[tuple, bool]] | None:
    """Each ORDER BY part (expression, descending) as a rank program over the key
    variables ``keys``, the left group's aggregate variables ``left`` and the right
    group's ``right``, BIND variables (``extends``: variable -> expression) read through
    their expressions; None when a part has another form."""
    programs = []
    for expr, descending in order:
        code: list[tuple[int, int, int, int]] = []
        if not _emit(expr, extends, keys, left, right, code, set()):
            return None
        programs.append((tuple(code), descending))
    return programs


def _emit(expr: Any, extends: dict[str, Any], keys: tuple[str, ...], left: tuple[str, ...],
          right: tuple[str, ...], code: list, seen: set[str]) -> bool:
    """Append the postfix instructions of ``expr`` to ``code``; False for what has no
    rank form."""
    def again(e: Any) -> bool:
        return _emit(e, extends, keys, left, right, code, seen)

    if isinstance(expr, ast.Var):
        name = expr.name
        if name in keys:
            code.append((KEY, keys.index(name), 0, 0))
        elif name in left:
            code.append((AGG, 0, left.index(name), 0))
        elif name in right:
            code.append((AGG, 1, right.index(name), 0))
        elif name in extends and name not in seen:
            return _emit(extends[name], extends, keys, left, right, code, seen | {name})
        else:
            return False
        return True
    if isinstance(expr, ast.Const):
        term = expr.term
        if not (isinstance(term, Literal) and term.datatype in _NUMERIC):
            return False
        try:
            value = Fraction(term.lexical.strip())
        except (ValueError, ZeroDivisionError):
            return False
        if not (-_INT64 <= value.numerator < _INT64 and value.denominator < _INT64):
            return False
        code.append((CONST, value.numerator, value.denominator, 0))
        return True
    if not isinstance(expr, ast.Call):
        return False
    args = expr.args
    if expr.op in _ARITHMETIC and len(args) == 2:
        if not (again(args[0]) and again(args[1])):
            return False
        code.append((_ARITHMETIC[expr.op], 0, 0, 0))
        return True
    if expr.op == "NEG" and len(args) == 1:
        if not again(args[0]):
            return False
        code.append((NEG, 0, 0, 0))
        return True
    if expr.op == "IF" and len(args) == 3:
        condition = args[0]
        if not (isinstance(condition, ast.Call) and condition.op in _COMPARISONS and len(condition.args) == 2):
            return False
        if not all(again(part) for part in (*condition.args, args[1], args[2])):
            return False
        code.append((IF, _COMPARISONS[condition.op], 0, 0))
        return True
    return False


class RankedJoin(Operator):
    """The ordered root over two specialised group operators (``left``, ``right``: a
    :class:`CompiledAggregate` or :class:`CompiledGroup` each) joined on their keys,
    ranked by ``programs`` (:func:`rank_programs`). ``topk`` is the planned top-k (with
    its fused BINDs) over the planned join of the two, connected but idle: they answer
    after a hand-over."""

    compiled = True

    def __init__(self, left: Any, right: Any, topk: Any, programs: list[tuple[tuple, bool]],
                 pairs_class: Any, order_text: str) -> None:
        """``order_text``: the ORDER BY as written (for :meth:`describe`)."""
        super().__init__(topk.schema)
        self._order_text = order_text
        self.limit, self.offset = topk.limit, topk.offset
        self._left, self._right, self._topk = left, right, topk
        self._pairs = pairs_class(left.table_state(), right.table_state(), programs, topk.offset, topk.limit)
        self._extend = topk.extend_row
        self._rows: list[Row] = []
        self.mode = "compiled"  # or "reference": the join and top-k answer
        self.changed = True  # whether the reported rows may differ from the last snapshot
        left.hold_rows(self)
        right.hold_rows(self)

    def describe(self) -> str:
        if self.mode == "reference":
            return f"RankedJoin (handed over to the join and the top-k: {self._topk.describe()})"
        return (f"RankedJoin: pairs of groups ranked by {self._order_text} "
                f"offset {self.offset} limit {self.limit} (compiled, native state)")

    def state_size(self) -> int:
        return self._topk.state_size() if self.mode == "reference" else self._pairs.pair_count()

    def flush(self) -> None:
        """After both group operators' (idle) flushes: rank the instant's changes."""
        if self.mode == "reference":
            self.changed = self._topk.changed
            return
        try:
            rows = self._pairs.flush(self._extend)
        except OverflowError:  # a value without an exact int64 form: nothing changed
            self.hand_over()
            self.changed = self._topk.changed
            return
        if rows is not None:
            self._rows = rows
            self.changed = True

    def snapshot(self) -> list[Row]:
        """The reported rows (OFFSET/LIMIT applied), as the reference top-k orders them."""
        if self.mode == "reference":
            rows = self._topk.snapshot()
            self.changed = self._topk.changed
            return rows
        self.changed = False
        return self._rows

    def hand_over(self) -> None:
        """Hand over to the join and the top-k: each group operator reports every group
        once as a row (then every change, as planned without this operator), so the
        top-k, empty until now, holds every current pair; the report compares its next
        content with the last one reported, as always. Called by a group operator before
        it hands its own table over, or on a value the rank programs cannot hold."""
        if self.mode == "reference":
            return
        self.mode = "reference"
        self._pairs.reset()
        self._topk.changed = True
        self._left.release_rows()
        self._right.release_rows()
