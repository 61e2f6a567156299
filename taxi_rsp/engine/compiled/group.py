"""GROUP BY over any input of deltas (a join, a NOT EXISTS, a union …) as generated code.

:class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` fuses a group with the
window below it and relies on the window's first-in-first-out retractions. Here the
input is any operator's delta stream, so a retraction may remove any value: the groups
live in a :class:`~taxi_rsp.engine.native.GroupTable` of deltas (C memory, or its
pure-Python twin without a C compiler), where MIN, MAX and MEDIAN keep sorted values
per group and COUNT/SUM/AVG int64 totals. One generated ``push(deltas)`` decodes the
key and argument ids of each delta and hands them to the table in one call; the table's
``flush`` emits each touched group's old and new row, exactly like the reference
:class:`~taxi_rsp.engine.ops.group.GroupOp`.

With the native interpreter built, the key and arguments of each delta come from a typed
program (:mod:`taxi_rsp.engine.native.program`, ``Program.push_deltas``) instead, until a
row with an unbound argument is seen: the generated code has branches for those.

A delta the generated code cannot take goes to the reference closures (slow path).
An argument that is an error there (an unbound ``?tip`` from OPTIONAL, a type error)
is counted per group and aggregate, as the reference accumulators count them: while a
group holds such a row, that aggregate is unbound (COUNT skips it). When values do not
fit the compiled kinds (or a total leaves int64), the operator hands its whole state
over to a reference ``GroupOp`` (the table's totals, sorted values and error counts
become the reference's accumulators), which answers from then on.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.compiled.aggregate import (FUSABLE, CompiledAggregate, Deopt, compiled_form, reference_value,
                                                report_before_first_row)
from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.aggregates import Count, Max, Median, Min, Sum
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.group import ERROR as _ERROR  # an argument that is an error (slow path, unbound branches)
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.native import group_table_class
from taxi_rsp.engine.native.program import ProgramCompiler, programs_available
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary

_UNBOUND_BRANCHES = 3  # at most this many variables get an unbound branch in push


class _KindKnown(Exception):
    """An argument unbound in every row so far is bound: time to compile its kind."""


def _unknown() -> Any:
    """Generated code's value of an argument whose kind is not known yet: the slow path."""
    raise Miss


class CompiledGroup(Operator):
    """Same results as :class:`GroupOp` (``push`` / ``flush``)."""

    compiled = True
    _fast_value = staticmethod(CompiledAggregate._fast_value)

    def __init__(self, input_schema: tuple[str, ...], keys: tuple[str, ...],
                 aggregates: list[tuple[str, str, bool, Any, Compiled | None]], reference: GroupOp,
                 dictionary: Dictionary) -> None:
        """``aggregates``: (output variable, name, distinct, argument, its reference closure)."""
        super().__init__(reference.schema)
        self.dictionary = dictionary
        self._input_schema = input_schema
        self._keys = keys
        self._key_pos = tuple(input_schema.index(k) for k in keys)
        self._aggs = [(name, arg, closure) for _, name, _, arg, closure in aggregates]
        self._kinds: list[Any] = []
        self._unknown: set[int] = set()  # aggregates whose argument was never bound yet
        # the generated push has branches for rows with unbound arguments only once an
        # error was seen (the table counts errors from the start)
        self._errors_seen = False
        self._sample: Row = ()
        self._ranker: Any = None  # a RankedJoin reading the table's changes (see hold_rows)
        self._reference = reference
        reference.emit_for(self)
        self._implicit = not keys
        table_class = group_table_class()
        self.state_kind = "native" if table_class.__module__.endswith("._group_table") else "python"
        self._table = table_class(len(keys), tuple(name for name, _, _ in self._aggs), self._implicit, False)
        self.mode = "specialised on the first row"  # then "compiled" or "reference"
        self.source = ""  # the generated push, when that is what runs
        self.program: Any = None  # else the native program
        # _push, _flush (see InCell): the generated push once compiled, the table's flush
        self._cells: list[Any] = [self._first_push, partial(report_before_first_row, self._table, reference)]
        self._bind_calls()

    def describe(self) -> str:
        state = "" if self.mode == "reference" else f", {self.state_kind} state"
        if self.program is not None and self.mode != "reference":
            state = ", native program" + state
        return f"{type(self).__name__} by {', '.join('?' + k for k in self._keys) or '()'} ({self.mode}{state})"

    def state_size(self) -> int:
        return self._reference.state_size() if self.mode == "reference" else self._table.group_count()

    # -- deltas --------------------------------------------------------------------------
    def _bind_calls(self) -> None:
        """``push(deltas)`` and ``flush()`` as closures calling the generated functions
        through ``_cells`` (swapped when compiled or handed over): a producer calls push
        for every batch of deltas, the query flush at every instant."""
        cells = cython.declare(list, self._cells)

        def push(deltas: list[Delta]) -> None:
            cells[0](deltas)

        def flush() -> None:
            cells[1]()

        self.push, self.flush = push, flush

    def _first_push(self, deltas: list[Delta]) -> None:
        try:
            self._compile(deltas[0][0])
            self.mode = "compiled"
        except NoFast:
            self._hand_over()
        self._push(deltas)

    def _compile(self, sample: Row) -> None:
        self._sample = sample
        self.program = None
        if programs_available() and not self._errors_seen:
            try:
                self._compile_program(sample)
                return
            except NoFast:
                pass  # an argument without a typed form, or unbound in the sample: generated Python
        self._compile_source(sample)

    def _compile_program(self, sample: Row) -> None:
        """Each delta's key and arguments by a native program
        (:mod:`taxi_rsp.engine.native.program`) handed to the table. Rows with an unbound
        argument miss (the slow path counts their errors); once one is seen, the
        generated Python with its branches for them takes over (see _slow)."""
        schema = self._input_schema
        c = ProgramCompiler(self.dictionary, schema, type_codes(sample))
        outputs: list[tuple[str, int]] = [("input", i) for i in self._key_pos]
        kinds: list[Any] = []
        for name, arg, _ in self._aggs:
            if name not in FUSABLE:
                raise NoFast(name)
            if name == "COUNT":
                if arg is None:
                    operand = c.const(1, "I")
                elif isinstance(arg, ast.Var) and arg.name in schema:
                    operand = c.expr(ast.Call("BOUND", (arg,)))  # COUNT(?v) counts the rows binding ?v
                else:
                    raise NoFast(arg)
                kind: Any = "C"
            else:
                if isinstance(arg, ast.Var) and arg.name in schema and sample[schema.index(arg.name)] is None:
                    raise NoFast(arg)  # its kind is not known yet
                operand = c.table_value(arg)
                kind = operand.kind
            outputs.append(("value", operand.reg))
            kinds.append(kind)
        program = c.program(outputs, None)
        program.bind_table(len(self._key_pos), self._table.push, self._slow, self._overflow)
        self._unknown = set()
        self._kinds = kinds
        self.program = program
        push_deltas, to_reference = program.push_deltas, self._reference.push

        def push(deltas: list[Delta]) -> None:
            stop = push_deltas(deltas)
            if stop >= 0:  # handed over: the rest is the reference's
                to_reference(deltas[stop:])

        self._push = push
        self._finish_compile(kinds)

    def _overflow(self, row: Row, mult: int) -> None:
        """A total beyond int64 (the program's push): the reference takes over."""
        self._hand_over()

    # the same table: the same result ids and flush once compiled
    _finish_compile = CompiledAggregate._finish_compile
    _table_flush = CompiledAggregate._table_flush
    table_state = CompiledAggregate.table_state
    hold_rows = CompiledAggregate.hold_rows
    release_rows = CompiledAggregate.release_rows
    _leave_ranker = CompiledAggregate._leave_ranker

    def _compile_source(self, sample: Row) -> None:
        codes = type_codes(sample)
        c = ChunkCompiler(self.dictionary, self._input_schema, codes)
        arg_codes, kinds = [], []
        self._unknown = set()
        for j, (name, arg, _) in enumerate(self._aggs):
            if (name != "COUNT" and isinstance(arg, ast.Var) and arg.name in self._input_schema
                    and sample[self._input_schema.index(arg.name)] is None):
                # unbound in the sample (OPTIONAL): its kind is not known yet; rows with it
                # unbound are errors (counted on the slow path), the first bound one
                # recompiles the operator with its kind (the state carries over: no value
                # of this aggregate was stored yet)
                self._unknown.add(j)
                arg_codes.append("_unknown()")
                kinds.append("I")
                continue
            code, kind = self._argument(c, name, arg)
            arg_codes.append(code)
            kinds.append(kind)
        self._kinds = kinds
        w = c.w
        args = [f"a{j}" for j in range(len(self._aggs))]
        key = "(" + "".join(f"x{i}, " for i in self._key_pos) + ")"
        unpack = ", ".join(f"x{i}" for i in range(len(self._input_schema)))
        guard = c.guard_test()
        unbound = self._unbound_branch(c, codes, args, arg_codes)
        src = ["def push(deltas):", "    for n, (row, mult) in enumerate(deltas):", "        try:"]
        if unpack:
            src.append(f"            {unpack}, = row")
        pad = "            "
        if unbound:
            src += unbound
            pad = "                "
        if guard:
            src.append(f"{pad}if {guard}: raise Miss")
        src += [f"{pad}{line}" for line in w.lines]
        src += [f"{pad}{a} = {code}" for a, code in zip(args, arg_codes)]
        src += ["        except Exception:",
                "            if _slow(row, mult):  # handed over: the reference takes the rest",
                "                _reference_push(deltas[n + 1:])",
                "                return",
                "            continue",
                f"        key = {key}"]
        if unbound:
            src += ["        if unbound:",
                    f"            if _push_errors(key, mult{''.join(', ' + a for a in args)}):",
                    "                _reference_push(deltas[n:])  # handed over before this delta",
                    "                return",
                    "            continue"]
        src += ["        try:",
                f"            _table_push(key, ({''.join(a + ', ' for a in args)}), mult)",
                "        except OverflowError:",  # a total beyond int64: the reference is exact
                "            _hand_over()",
                "            _reference_push(deltas[n:])",
                "            return"]
        self.source = "\n".join(src)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace.update(Miss=Miss, _ERROR=_ERROR, _unknown=_unknown, _slow=self._slow,
                         _reference_push=self._reference.push, _hand_over=self._hand_over,
                         _push_errors=self._push_values, _table_push=self._table.push)
        functions = define(self.source, "<taxi_rsp compiled group>", namespace)
        self._push = functions["push"]
        self._finish_compile(kinds)

    _push = InCell(0)
    _flush = InCell(1)

    def _unbound_branch(self, c: ChunkCompiler, codes: dict[int, int], args: list[str],
                        arg_codes: list[str]) -> list[str]:
        """Source taking, in the generated push, a row in which one variable that
        aggregates read bare is unbound (``MEDIAN(?tip)`` over an OPTIONAL with no match
        yet: an error, counted; ``COUNT(?tip)``: 0): one branch per such variable that is
        no group key, each setting ``unbound`` and the arguments (``_ERROR`` for those)
        for ``_push_errors`` (the table push with errors as None); ``unbound = False`` and
        the usual code under the final else.
        Without it every such row took the slow path. Generated once errors have been
        seen (until then such rows take the slow path, which is rare)."""
        schema = self._input_schema
        bare = {j: schema.index(arg.name) for j, (name, arg, _) in enumerate(self._aggs)
                if name != "COUNT" and isinstance(arg, ast.Var) and arg.name in schema and j not in self._unknown}
        positions = sorted(set(bare.values()) - set(self._key_pos))
        if not self._errors_seen or not positions or len(positions) > _UNBOUND_BRANCHES:
            return []
        src = []
        for position in positions:
            # the other arguments compiled without this position (reading it fails here)
            other = ChunkCompiler(self.dictionary, schema, {i: k for i, k in codes.items() if i != position})
            other.w.consts = c.w.consts  # one namespace: constant names must not collide
            try:
                unbound_codes = [code if j in self._unknown else "_ERROR" if bare.get(j) == position
                                 else self._argument(other, name, arg)[0]
                                 for j, ((name, arg, _), code) in enumerate(zip(self._aggs, arg_codes))]
            except NoFast:
                continue
            guard = other.guard_test()
            src += ([f"            {'elif' if src else 'if'} x{position} is None:  # counted as the slow path would",
                     "                unbound = True"]
                    + ([f"                if {guard}: raise Miss"] if guard else [])
                    + [f"                {line}" for line in other.w.lines]
                    + [f"                {a} = {code}" for a, code in zip(args, unbound_codes)])
        return src + ["            else:", "                unbound = False"] if src else []

    def _argument(self, c: ChunkCompiler, name: str, arg: Any) -> tuple[str, Any]:
        if name not in FUSABLE:
            raise NoFast(name)
        if name == "COUNT":
            if arg is None:
                return "1", "C"
            if isinstance(arg, ast.Var) and arg.name in self._input_schema:
                # COUNT(?v) counts the rows where ?v is bound (an unbound value is an error)
                return f"(0 if x{self._input_schema.index(arg.name)} is None else 1)", "C"
            raise NoFast(arg)
        code, kind = c.expr(arg)
        if kind == "I" or (isinstance(kind, tuple) and kind[1] <= 9):
            return code, kind
        raise NoFast(arg)

    # -- slow path and hand-over -----------------------------------------------------------
    def _slow(self, row: Row, mult: int) -> bool:
        """A delta the generated code could not take; True when it made the operator
        hand over (the rest of the batch then goes to the reference too)."""
        try:
            values = [self._slow_value(j, closure, kind, row)
                      for j, ((_, _, closure), kind) in enumerate(zip(self._aggs, self._kinds))]
        except Deopt:
            self._hand_over()
            self._reference.push([(row, mult)])
            return True
        except _KindKnown:  # the first bound value of an argument unbound so far
            try:
                self._compile(row)
            except NoFast:
                self._hand_over()
                self._reference.push([(row, mult)])
                return True
            return self._slow(row, mult)
        if not self._errors_seen and _ERROR in values:
            self._errors_seen = True
            self._compile(self._sample)  # with the branches for unbound arguments from now on
        if self._push_values(tuple(row[i] for i in self._key_pos), mult, *values):
            self._reference.push([(row, mult)])
            return True
        return False

    def _push_values(self, key: tuple, mult: int, *values: Any) -> bool:
        """One delta's compiled values (``_ERROR`` for an argument that is an error) into
        the table; True when a total beyond int64 made the operator hand over (the delta
        is then the reference's to take)."""
        try:
            self._table.push(key, tuple(None if value is _ERROR else value for value in values), mult)
        except OverflowError:
            self._hand_over()
            return True
        return False

    def _slow_value(self, j: int, closure: Compiled | None, kind: Any, row: Row) -> Any:
        """Argument ``j``'s compiled form, or ``_ERROR`` when the reference closure raises
        an expression error (raises Deopt for a value of another kind, _KindKnown for
        the first value of an argument whose kind is not known yet)."""
        if kind != "C" and closure is not None:
            try:
                value = closure(row)
            except ExprError:
                return _ERROR
            if j in self._unknown:
                raise _KindKnown
            return compiled_form(value, kind)
        return self._fast_value(closure, kind, row)

    def _hand_over(self) -> None:
        """The compiled state becomes the reference GroupOp's state."""
        self._leave_ranker()
        reference, table = self._reference, self._table
        for key, rows, output, values, errors, held in table.states():
            target = reference.group(key)
            target.rows, target.output = rows, output
            for (name, _, _), kind, acc, value, error_rows, ever in zip(
                    self._aggs, self._kinds, target.accumulators, values, errors, held):
                self._restore(name, kind, acc, value, rows - error_rows, kind == "I" or ever or name == "AVG")
                acc.errors = 0 if isinstance(acc, Count) else error_rows
        self._carry_outputs(reference, table)
        self._table = type(table)(0, (), True, False)  # the state is the reference's now
        self.mode = "reference"
        self._push = reference.push
        self._flush = reference.flush

    def _carry_outputs(self, reference: GroupOp, table: Any) -> None:
        """The groups whose changes the reference reports at its next flush (their
        outputs were set with the states)."""
        reference.expect_flush(dict(table.pending()))

    def _restore(self, name: str, kind: Any, acc: Any, slot: Any, rows: int, ever: Any) -> None:
        """Load one compiled aggregate state into a reference accumulator."""
        if isinstance(acc, Count):
            acc.n = slot
        elif isinstance(acc, Sum):  # SUM and AVG: the total of ``rows`` values
            acc.total, acc.n = (reference_value(slot, kind) if ever else 0), rows
        elif isinstance(acc, (Min, Max, Median)):
            values = [reference_value(v, kind) for v in slot]
            acc.values.clear()
            acc.values.update(values)
        else:  # pragma: no cover - only FUSABLE aggregates are compiled
            raise TypeError(f"cannot restore {type(acc).__name__}")

