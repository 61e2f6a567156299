"""FILTER NOT EXISTS, MINUS, FILTER EXISTS and OPTIONAL with plain dictionaries and a
generated correlation condition.

The reference operators (:mod:`taxi_rsp.engine.ops.minus`) keep the left rows in a
one-way index with a match counter each and the right rows in a ring index, both able
to hold keys with unbound parts, and evaluate a correlated condition such as
``FILTER(?seq2 > ?seq)`` by merging the two rows and running the generic closure. While
no key has an unbound part, the same counting rules (ERRATA S2-10) run here on
``dict`` s, and the condition is one generated function of the two rows that decodes
just the ids it reads (:class:`~taxi_rsp.engine.compiled.codegen.ChunkCompiler`; a pair it cannot
decide goes to the generic closure). Rows are visited in the reference's order, so
results come out in the same order. The first key with an unbound part hands both
sides to the reference operator.

The rows under one key are few (a taxi's trips in a window), so each key keeps them in a
list of entries, found by identity first (a window retracts the very row object it
inserted) and by equality otherwise, instead of a dict that hashes every (wide) row on
each arrival, expiry and match; a key that gathers more than ``_LIST_LIMIT`` rows turns
its list into a dict of the same entries (in the same order) so no key scans long lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.native import correlation_table_class
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.rows import contiguous, tuple_getter
from taxi_rsp.engine.index.oneway import Entry
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.minus import AntiJoinOp, LeftJoinOp, SemiJoinOp, Correlated
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import T_DECIMAL, T_INTEGER, Dictionary, ordered_number_ids

retired = cython.declare(list, _retired_list)  # typed: appends and clear() are C calls (see reclaim)

_LOCAL = re.compile(r"\bx(\d+)\b")
_COMPARISONS = {"<": "<", ">": ">", "<=": "<=", ">=": ">=", "=": "==", "!=": "!="}  # SPARQL -> Python


class CompiledCorrelated(Operator):
    """Same results as the reference :class:`AntiJoinOp` / :class:`SemiJoinOp` /
    :class:`LeftJoinOp`."""

    compiled = True
    _holds = InCell(0)

    def __init__(self, reference: AntiJoinOp | SemiJoinOp, left: tuple[str, ...], right: tuple[str, ...],
                 condition: Any, dictionary: Dictionary) -> None:
        """``condition``: the correlation expression (over the merged schema) or None."""
        super().__init__(reference.schema)
        self._reference = reference
        reference.emit_for(self)
        self.shared = reference.shared
        self._left_width = len(left)
        self._extra = [i for i, v in enumerate(right) if v not in left]
        self._optional = isinstance(reference, LeftJoinOp)
        self._tail = tuple_getter(self._extra)  # merged row = left row + tail(right row)
        self._padding = (None,) * len(self._extra)  # an OPTIONAL row without a match
        self._condition_expr = condition
        self._dictionary = dictionary
        self._generic_holds = reference.condition  # merged row -> bool (errors are False)
        self._merge = reference.merge
        # key -> the rows under it as entries (see _find, _row_of): [row, multiplicity,
        # matches] on the left, the row (or [row, multiplicity]) on the right, in arrival order
        self._left: dict[tuple, list | dict] = {}
        self._right: dict[tuple, list | dict] = {}
        # _holds (see InCell): the correlation condition of a pair, None without one;
        # replaced after the first pair (see _first_pair) and when compiled code is installed
        self._cells: list[Any] = [None if condition is None else self._first_pair]
        self.source = ""
        self._left_positions = [left.index(v) for v in self.shared]
        self._right_positions = [right.index(v) for v in self.shared]
        self._left_key = tuple_getter(self._left_positions)
        self._right_key = tuple_getter(self._right_positions)
        self._handed_over: list[bool] = []  # non-empty once the reference answers
        # the state in C memory (native tier) for NOT EXISTS / MINUS / EXISTS; the dicts
        # above (and the closures over them) when it is not built or the run is pure Python
        table_class = None if self._optional else correlation_table_class()
        self._native = None if table_class is None else table_class(
            self._left_positions, self._right_positions, isinstance(reference, AntiJoinOp), self._cells,
            self._id_order(left, right) if condition is not None else None, retired)
        if self._native is not None:
            self.push_left = self._native_side(from_left=True)
            self.push_right = self._native_side(from_left=False)
        else:
            self.push_left = self._left_side()
            self.push_right = self._right_side()

    @property
    def mode(self) -> str:
        """"compiled", or "reference" once the reference operator answers."""
        return "reference" if self._handed_over else "compiled"

    def describe(self) -> str:
        state = ", native state" if self._native is not None and not self._handed_over else ""
        return f"Compiled{self._reference.describe()} ({self.mode}{state})"

    def state_size(self) -> int:
        if self._handed_over:
            return self._reference.state_size()
        if self._native is not None:
            return len(self._native)
        return sum(len(rows) for side in (self._left, self._right) for rows in side.values())

    # -- the correlation condition ------------------------------------------------------
    def _first_pair(self, lrow: Row, rrow: Row) -> bool:
        try:
            self._holds = self._compile(self._merge(lrow, rrow))
        except NoFast:
            self._holds = self._generic_pair
        return self._holds(lrow, rrow)

    def _generic_pair(self, lrow: Row, rrow: Row) -> bool:
        return self._generic_holds(self._merge(lrow, rrow))  # type: ignore[misc]

    def _compile(self, sample: Row) -> Callable[[Row, Row], bool]:
        schema = self._reference.merged_schema
        codes = type_codes(sample)
        c = ChunkCompiler(self._dictionary, schema, codes)
        code, kind = c.expr(self._condition_expr)
        test = c._ebv(code, kind)
        w = c.w
        guard = c.guard_test()
        used = sorted({int(m) for line in w.lines for m in _LOCAL.findall(line)} | set(w.guards))
        src = ["def holds(lrow, rrow):", "    try:"]
        for k in used:  # the merged row's variable k, read from the side that has it
            src.append(f"        x{k} = lrow[{k}]" if k < self._left_width
                       else f"        x{k} = rrow[{self._extra[k - self._left_width]}]")
        if guard:
            src.append(f"        if {guard}: raise Miss")
        src += [f"        {line}" for line in w.lines]
        src += [f"        return {test}", "    except Exception:", "        return _generic(lrow, rrow)"]
        shortcut = self._id_order_source(schema, codes)
        self.source = "\n".join(src + shortcut)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace.update(Miss=Miss, _generic=self._generic_pair)
        entry = "holds_ids" if shortcut else "holds"
        functions = define(self.source, "<taxi_rsp compiled condition>", namespace)
        return functions[entry]

    def _id_order_source(self, schema: tuple[str, ...], codes: dict[int, int]) -> list[str]:
        """Source of ``holds_ids`` when the condition compares two variables holding
        inline numbers of one type (``?seq2 > ?seq``, a later event of the same key):
        ids of non-negative numbers of one type are the type's head plus the value, so
        they compare like the values and the pair needs no decoding; any other pair
        (a negative number, another type, an unbound value) goes to ``holds``."""
        compared = _compared_variables(self._condition_expr, schema)
        if compared is None:
            return []
        first, second = (schema.index(name) for name in compared[:2])
        code = codes.get(first)
        if code not in (T_INTEGER, T_DECIMAL) or codes.get(second) != code:
            return []
        low, high = ordered_number_ids(code)  # high: the first id of a negative number
        reads = [f"lrow[{k}]" if k < self._left_width else f"rrow[{self._extra[k - self._left_width]}]"
                 for k in (first, second)]
        # a guarded region (except Exception): compiled, the ids are compared as C integers
        return ["", "def holds_ids(lrow, rrow):",
                "    try:",
                f"        a = {reads[0]}", f"        b = {reads[1]}",
                f"        if {low} <= a < {high} and {low} <= b < {high}:",
                f"            return a {_COMPARISONS[compared[2]]} b",
                "    except Exception:  # an unbound value",
                "        return holds(lrow, rrow)",
                "    return holds(lrow, rrow)"]

    def _id_order(self, left: tuple[str, ...], right: tuple[str, ...]) -> tuple[int, int, int, int, str] | None:
        """The native table's form of a condition comparing two variables: ``(side,
        position, side, position, op)`` (side 0: the left row; a shared variable is read
        on the left, where the merged row takes it from), or None."""
        compared = _compared_variables(self._condition_expr, self._reference.merged_schema)
        if compared is None:
            return None
        first, second, op = compared
        (a_side, a_pos), (b_side, b_pos) = ((0, left.index(v)) if v in left else (1, right.index(v))
                                            for v in (first, second))
        return a_side, a_pos, b_side, b_pos, op

    # -- deltas --------------------------------------------------------------------------
    # push_left / push_right are closures over the state, built once (no attribute read
    # per call: they run for every arrival and expiry on either input). A left row's state
    # is a two-item list [multiplicity, matches] (item access, not attribute access), and
    # the reference's output rules (on_left / on_right of AntiJoinOp, SemiJoinOp and
    # LeftJoinOp) are inlined: a NOT EXISTS / MINUS row is out while it has no match, an
    # EXISTS row while it has one; an OPTIONAL row is out padded with unbound values while
    # it has no match, else merged with each match.
    def _native_side(self, from_left: bool) -> Callable[[list[Delta]], None]:
        """The push of one side over the native table: it runs the loop of
        :meth:`_left_side` / :meth:`_right_side` in C and says where a key part was
        unbound; from there the reference operator answers."""
        table = self._native
        run = table.push_left if from_left else table.push_right
        sinks, handed_over = self._sinks, self._handed_over
        reference = self._reference
        to_reference = reference.push_left if from_left else reference.push_right

        def push(deltas: list[Delta]) -> None:
            if handed_over:
                to_reference(deltas)
                return
            out, stop = run(deltas)
            if stop < len(deltas):  # an unbound key part
                self._hand_over(out)
                to_reference(deltas[stop:])
                return
            if out:
                for sink in sinks:
                    sink(out)
                retired.append(out)  # freed after the event's outputs (see reclaim)

        return push

    def _left_side(self) -> Callable[[list[Delta]], None]:
        # typed for the compiled module: dict methods called directly
        left = cython.declare(dict, self._left)
        right = cython.declare(dict, self._right)
        cells = cython.declare(list, self._cells)
        key_of = cython.declare(_KeyOf, _KeyOf(self._left_positions, self._left_key))
        sinks, handed_over, to_reference = self._sinks, self._handed_over, self._reference.push_left
        optional, tail, padding = self._optional, self._tail, self._padding
        out_when_unmatched = isinstance(self._reference, AntiJoinOp)

        def push_left(deltas: list[Delta]) -> None:
            if handed_over:
                to_reference(deltas)
                return
            out: list[Delta] = []
            holds = cells[0]  # replaced once, after the first pair (see _first_pair)
            n = cython.declare(cython.Py_ssize_t)  # compiled: a C counter, not an int object per delta
            for n, (row, mult) in enumerate(deltas):
                key = key_of.of(row)
                if key is None:  # an unbound part
                    self._hand_over(out)
                    to_reference(deltas[n:])
                    return
                rows = left.get(key)
                state = _find(rows, row) if rows is not None else None
                matched = None  # a new OPTIONAL row's matches, found once for count and output
                if state is None:
                    if mult < 0:
                        raise ValueError(f"retraction of an unknown left row {row!r}")
                    matches = 0
                    candidates = right.get(key)
                    if candidates is not None:
                        if holds is None:
                            for entry in _in_order(candidates):
                                matches += _count_of(entry)
                        elif optional:
                            matched = [(_row_of(entry), _count_of(entry)) for entry in _in_order(candidates)
                                       if holds(row, _row_of(entry))]
                            matches = sum(count for _, count in matched)
                            holds = cells[0]
                        else:
                            for entry in _in_order(candidates):
                                if holds(row, _row_of(entry)):
                                    matches += _count_of(entry)
                            holds = cells[0]
                    if mult:
                        if rows is None:
                            left[key] = [[row, mult, matches]]
                        else:
                            _add(left, key, rows, [row, mult, matches])
                else:
                    matches = state[2]
                    count = state[1] = state[1] + mult
                    if count == 0:
                        _remove(left, key, rows, state)
                if not optional:
                    if (matches == 0) is out_when_unmatched:
                        out.append((row, mult))
                elif matches == 0:
                    out.append((row + padding, mult))
                elif matched is not None:
                    for rrow, count in reversed(matched):  # newest first, like the ring
                        out.append((row + tail(rrow), mult * count))
                else:
                    for entry in _newest_first(right[key]):
                        rrow = _row_of(entry)
                        if holds is None or holds(row, rrow):
                            out.append((row + tail(rrow), mult * _count_of(entry)))
                    holds = cells[0]
            if out:
                for sink in sinks:
                    sink(out)
                retired.append(out)  # freed after the event's outputs (see reclaim)

        return push_left

    def _right_side(self) -> Callable[[list[Delta]], None]:
        left = cython.declare(dict, self._left)
        right = cython.declare(dict, self._right)
        cells = cython.declare(list, self._cells)
        key_of = cython.declare(_KeyOf, _KeyOf(self._right_positions, self._right_key))
        sinks, handed_over, to_reference = self._sinks, self._handed_over, self._reference.push_right
        optional, tail, padding = self._optional, self._tail, self._padding
        sign = -1 if isinstance(self._reference, AntiJoinOp) else 1  # of a left row's change on its first match

        def push_right(deltas: list[Delta]) -> None:
            if handed_over:
                to_reference(deltas)
                return
            out: list[Delta] = []
            holds = cells[0]
            n = cython.declare(cython.Py_ssize_t)  # compiled: a C counter, not an int object per delta
            for n, (row, mult) in enumerate(deltas):
                key = key_of.of(row)
                if key is None:  # an unbound part
                    self._hand_over(out)
                    to_reference(deltas[n:])
                    return
                rows = left.get(key)
                if rows is not None:
                    for state in _in_order(rows):
                        lrow = state[0]
                        if holds is None or holds(lrow, row):
                            before = state[2]
                            after = state[2] = before + mult
                            if optional:  # the padded row gives way to the merged ones, and back
                                if before == 0 and after > 0:
                                    out.append((lrow + padding, -state[1]))
                                out.append((lrow + tail(row), mult * state[1]))
                                if before > 0 and after == 0:
                                    out.append((lrow + padding, state[1]))
                            elif before == 0:
                                if after > 0:
                                    out.append((lrow, sign * state[1]))
                            elif after == 0:
                                out.append((lrow, -sign * state[1]))
                    holds = cells[0]
                held = right.get(key)
                entry = _find(held, row) if held is not None else None
                if entry is None:
                    if mult < 0:
                        raise ValueError(f"retraction of a row that is not held: {row!r}")
                    if held is None:
                        right[key] = [row if mult == 1 else [row, mult]]
                    elif mult:
                        _add(right, key, held, row if mult == 1 else [row, mult])
                    continue
                count = _count_of(entry) + mult
                if count < 0:
                    raise ValueError(f"retraction below zero for row {row!r}")
                if count:
                    if type(entry) is list:
                        cython.cast(list, entry)[1] = count
                    else:  # a row held once, now more often
                        _replace(right, key, held, entry, [entry, count])
                else:
                    _remove(right, key, held, entry)
            if out:
                for sink in sinks:
                    sink(out)
                retired.append(out)  # freed after the event's outputs (see reclaim)

        return push_right

    def _hand_over(self, pending: list[Delta]) -> None:
        """Emit what is pending, then load both sides into the reference operator."""
        self.emit(pending)
        reference = self._reference
        lefts, rights = self._native.entries() if self._native is not None else self._dict_entries()
        for key, row, mult, matches in lefts:
            reference.left.put(key, row, Entry(mult, matches))
        for key, row, count in rights:
            reference.right.add(key, row, count)
        if self._native is not None:
            self._native.clear()
        self._left.clear()
        self._right.clear()
        self._handed_over.append(True)

    def _dict_entries(self) -> tuple[list[tuple], list[tuple]]:
        """What the dicts hold, as the native table's ``entries()`` lists it: ``(key, row,
        multiplicity, matches)`` per left row, ``(key, row, multiplicity)`` per right row."""
        bare = len(self.shared) == 1  # _KeyOf keys one variable by its bare value
        lefts = [((key,) if bare else key, row, mult, matches)
                 for key, rows in self._left.items() for row, mult, matches in _in_order(rows)]
        rights = [((key,) if bare else key, _row_of(entry), _count_of(entry))
                  for key, held in self._right.items() for entry in _in_order(held)]
        return lefts, rights


def compile_correlated(reference: Correlated, left: tuple[str, ...], right: tuple[str, ...],
                       condition: Any, dictionary: Dictionary) -> Operator:
    """The compiled form of an anti-/semi-join or OPTIONAL, or the reference itself when
    it does not apply (no shared variable)."""
    if not isinstance(reference, (AntiJoinOp, SemiJoinOp, LeftJoinOp)) or not reference.shared:
        return reference
    return CompiledCorrelated(reference, left, right, condition, dictionary)


# The rows under one key: a list of entries while there are at most _LIST_LIMIT of them,
# else a dict row -> the same entry. A left entry is [row, multiplicity, matches]; a right
# entry is the row itself while it is held once (the common case: a window inserts a row
# once and retracts it once; no list per row held for the whole window), else [row,
# multiplicity]. A row is a tuple, never a list, so the entry's type tells them apart.
_LIST_LIMIT = 8


@cython.cfunc
@cython.inline
def _row_of(entry: Any) -> Any:
    return cython.cast(list, entry)[0] if type(entry) is list else entry


@cython.cfunc
@cython.inline
@cython.returns(cython.Py_ssize_t)
def _count_of(entry: Any) -> int:
    return cython.cast(list, entry)[1] if type(entry) is list else 1


@cython.cfunc
def _replace(side: dict, key: Any, held: list | dict, entry: Any, new: list) -> None:
    """Put ``new`` in the place of ``entry`` under ``key``."""
    if type(held) is list:
        rows = cython.cast(list, held)
        i = cython.declare(cython.Py_ssize_t)
        for i in range(len(rows)):
            if rows[i] is entry:
                rows[i] = new
                return
    else:
        cython.cast(dict, held)[_row_of(entry)] = new


@cython.cfunc
def _find(held: list | dict, row: Row) -> Any:
    """The entry of ``row`` under a key, or None."""
    if type(held) is list:
        for entry in cython.cast(list, held):
            found = _row_of(entry)
            if found is row or found == row:  # a window retracts the very row it inserted
                return entry
        return None
    return cython.cast(dict, held).get(row)


@cython.cfunc
def _add(side: dict, key: Any, held: list | dict, entry: Any) -> None:
    """Hold a new ``entry`` under ``key`` (``held``: its entries so far, not empty)."""
    if type(held) is list:
        cython.cast(list, held).append(entry)
        if len(held) > _LIST_LIMIT:
            side[key] = {_row_of(kept): kept for kept in held}  # same entries, same order
    else:
        cython.cast(dict, held)[_row_of(entry)] = entry


@cython.cfunc
def _remove(side: dict, key: Any, held: list | dict, entry: Any) -> None:
    """Drop ``entry`` from under ``key``, and the key once nothing is under it (the
    entry is freed after the event's outputs, see reclaim)."""
    retired.append(entry)
    if type(held) is list:
        rows = cython.cast(list, held)
        i = cython.declare(cython.Py_ssize_t)
        for i in range(len(rows)):
            if rows[i] is entry:
                del rows[i]
                break
    else:
        del cython.cast(dict, held)[_row_of(entry)]
    if not held:
        del side[key]


@cython.cfunc
def _in_order(held: list | dict) -> Any:
    """The entries under a key, oldest first."""
    return held if type(held) is list else held.values()


@cython.cfunc
def _newest_first(held: list | dict) -> Any:
    """The entries under a key, newest first (the reference's ring order)."""
    return reversed(held) if type(held) is list else reversed(held.values())


@cython.final
@cython.cclass
class _KeyOf:
    """The key of a row (the shared variables' values), or None when one is unbound: the
    value itself for one variable (a taxi: no 1-tuple to build, hash and compare), a
    slice taken in C for consecutive positions, else ``getter`` (a projection)."""

    bare = cython.declare(cython.bint)
    sliced = cython.declare(cython.bint)
    start = cython.declare(cython.Py_ssize_t)
    stop = cython.declare(cython.Py_ssize_t)
    getter = cython.declare(object)

    def __init__(self, positions: list[int], getter: Callable[[Row], tuple]) -> None:
        span = contiguous(positions)
        self.bare = len(positions) == 1
        self.sliced = span is not None
        self.start, self.stop = span if span is not None else (0, 0)
        self.getter = getter

    @cython.cfunc
    def of(self, row: Row) -> Any:
        if self.bare:
            return cython.cast(tuple, row)[self.start]
        key = cython.cast(tuple, row)[self.start:self.stop] if self.sliced else self.getter(row)
        return None if _unbound(key) else key


@cython.cfunc
def _unbound(key: tuple) -> bool:
    """Whether a key holds an unbound value (``None in key`` compares every part with
    ``==``, which costs more than the identity test for ints)."""
    for part in key:
        if part is None:
            return True
    return False


def _compared_variables(expr: Any, schema: tuple[str, ...]) -> tuple[str, str, str] | None:
    """``(first, second, op)`` when ``expr`` compares two variables of ``schema``
    (``?seq2 > ?seq``), else None.

    >>> _compared_variables(ast.Call(">", (ast.Var("b"), ast.Var("a"))), ("a", "b"))
    ('b', 'a', '>')
    """
    if not (isinstance(expr, ast.Call) and expr.op in _COMPARISONS and len(expr.args) == 2
            and all(isinstance(a, ast.Var) and a.name in schema for a in expr.args)):
        return None
    first, second = expr.args
    return first.name, second.name, expr.op
