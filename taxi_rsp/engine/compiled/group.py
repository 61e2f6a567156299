"""GROUP BY over any input of deltas (a join, a NOT EXISTS, a union …) as generated code.

:class:`~taxi_rsp.engine.compiled.aggregate.CompiledAggregate` fuses a group with the
window below it and relies on the window's first-in-first-out retractions. Here the
input is any operator's delta stream, so a retraction may remove any value: MIN, MAX
and MEDIAN keep a sorted ``list`` per group (bisect), COUNT/SUM/AVG integer totals.
One generated ``push(deltas)`` decodes the key and argument ids of each delta and
updates the group's state in place; ``flush`` emits each touched group's old and new
row, exactly like the reference :class:`~taxi_rsp.engine.ops.group.GroupOp`.

A delta the generated code cannot take goes to the reference closures (slow path).
An argument that is an error there (an unbound ``?tip`` from OPTIONAL, a type error)
is counted per group and aggregate, as the reference accumulators count them: while a
group holds such a row, that aggregate is unbound (COUNT skips it). When values do not
fit the compiled kinds, the operator hands its whole state over to a reference
``GroupOp`` (the compiled totals, sorted lists and error counts become the reference's
accumulators), which answers from then on.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.compiled.aggregate import (DIRTY, FIRST_STATE, FUSABLE, CompiledAggregate,
                                                Deopt, compiled_form, flush_source, group_state_source,
                                                int_id_source, median_id_source, reference_value)
from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.aggregates import Count, Max, Median, Min, Sum
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.group import ERROR as _ERROR  # an argument that is an error (slow path, unbound branches)
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.reclaim import retired
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary

# [rows, last output, its key while touched since the last flush, else None (see
# group_state_source), its key, a slot per aggregate, an error count per aggregate, a flag per
# aggregate: a SUM of decimals has held a value (the reference's total is then a Fraction,
# else still the integer 0; the type of an emptied or restored SUM depends on it)]: the
# aggregate's layout, FIRST_STATE
_UNBOUND_BRANCHES = 3  # at most this many variables get an unbound branch in push


class _KindKnown(Exception):
    """An argument unbound in every row so far is bound: time to compile its kind."""


def _unknown() -> Any:
    """Generated code's value of an argument whose kind is not known yet: the slow path."""
    raise Miss


class CompiledGroup(Operator):
    """Same results as :class:`GroupOp` (``push`` / ``flush``)."""

    compiled = True
    # id computations shared with the fused window + group operator
    _int_id = CompiledAggregate._int_id
    _dec_id = CompiledAggregate._dec_id
    _median_id = CompiledAggregate._median_id
    _mean_id = CompiledAggregate._mean_id
    _avg_id = CompiledAggregate._avg_id
    _id_of = staticmethod(CompiledAggregate._id_of)
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
        # results test the error counts only once an error was seen (a flush per group
        # and instant pays for the test otherwise); the counts are kept from the start
        self._errors_seen = False
        self._sample: Row = ()
        self._reference = reference
        reference.emit_for(self)
        self._groups: dict[tuple, list] = {}
        self._dirty: list[list] = []  # the states of the groups touched since the last flush (keys in state[DIRTY])
        self._implicit = not keys
        self.mode = "specialised on the first row"  # then "compiled" or "reference"
        self.source = ""
        # _push, _flush (see InCell): the generated functions once compiled
        self._cells: list[Any] = [self._first_push, self._reference_flush_before_first_row]
        self._bind_calls()
        if self._implicit:
            # the last slot records whether the group ever held a row (see SUM's result)
            self._groups[()] = state = ([0, None, (), ()] + [self._empty(n) for n, _, _ in self._aggs]
                                        + [0] * (2 * len(self._aggs)) + [0])
            self._dirty.append(state)

    def describe(self) -> str:
        return f"CompiledGroup by {', '.join('?' + k for k in self._keys) or '()'} ({self.mode})"

    def state_size(self) -> int:
        return self._reference.state_size() if self.mode == "reference" else len(self._groups)

    @staticmethod
    def _empty(name: str) -> Any:
        return [] if name in ("MIN", "MAX", "MEDIAN") else 0

    # -- deltas --------------------------------------------------------------------------
    def _bind_calls(self) -> None:
        """``push(deltas)`` and ``flush()`` as closures calling the generated functions
        through ``_cells`` (swapped when compiled or handed over): a producer calls push
        for every batch of deltas, the query flush at every instant."""
        cells = cython.declare(list, self._cells)
        dirty, reference = self._dirty, self._reference

        def push(deltas: list[Delta]) -> None:
            cells[0](deltas)

        def flush() -> None:
            if dirty:  # empty once the reference answers: it keeps its own
                cells[1]()
            elif self.mode == "reference":
                reference.flush()

        self.push, self.flush = push, flush

    def _first_push(self, deltas: list[Delta]) -> None:
        try:
            self._compile(deltas[0][0])
            self.mode = "compiled"
        except NoFast:
            self._hand_over()
        self._push(deltas)

    def _reference_flush_before_first_row(self) -> None:
        self._reference.flush()  # only the implicit group can be due: same empty state
        for state in self._dirty:
            state[1], state[DIRTY] = self._reference.group(state[DIRTY]).output, None
        self._dirty.clear()

    def _compile(self, sample: Row) -> None:
        self._sample = sample
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
            src += ["        if unbound:", f"            apply_slow(key, mult{''.join(', ' + a for a in args)})",
                    "            continue"]
        # the update of the group state inline: no call per delta (apply_slow: the slow path)
        src += ["    " + line for line in self._apply_source("apply", args, errors=False)[2:]]
        src += self._apply_source("apply_slow", args, errors=True)
        src += flush_source([self._result(j) for j in range(len(args))], len(self._keys))
        self.source = "\n".join(src)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace.update(Miss=Miss, _ERROR=_ERROR, _unknown=_unknown, _slow=self._slow,
                         _reference_push=self._reference.push,
                         groups=self._groups, dirty=self._dirty, _retire=retired.append,
                         implicit=self._implicit, sinks=self._sinks, insort=insort, bisect_left=bisect_left,
                         _int_id=self._int_id, _dec_id=self._dec_id, _median_id=self._median_id,
                         _avg_id=self._avg_id)
        functions = define(self.source, "<taxi_rsp compiled group>", namespace)
        for attribute, name in self._GENERATED.items():
            setattr(self, attribute, functions[name])

    # attribute -> generated function (apply_slow: the slow path's; arguments may be errors)
    _GENERATED = {"_push": "push", "_flush": "flush", "_apply": "apply_slow"}
    _push = InCell(0)
    _flush = InCell(1)


    def _unbound_branch(self, c: ChunkCompiler, codes: dict[int, int], args: list[str],
                        arg_codes: list[str]) -> list[str]:
        """Source taking, in the generated push, a row in which one variable that
        aggregates read bare is unbound (``MEDIAN(?tip)`` over an OPTIONAL with no match
        yet: an error, counted; ``COUNT(?tip)``: 0): one branch per such variable that is
        no group key, each setting ``unbound`` and the arguments (``_ERROR`` for those)
        for ``apply_slow``; ``unbound = False`` and the usual code under the final else.
        Without it every such row took the slow path. Generated once errors have been
        seen (the results then read the error counts)."""
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

    def _apply_source(self, name: str, args: list[str], errors: bool) -> list[str]:
        """Source of ``name(key, mult, a0, …)``: one delta into its group's state; with
        ``errors``, an argument may be ``_ERROR`` and is then counted, not aggregated."""
        n = len(args)
        empty = "".join(", " + ("[]" if self._aggs[j][0] in ("MIN", "MAX", "MEDIAN") else "0") for j in range(n))
        src = ["", f"def {name}(key, mult{''.join(', ' + a for a in args)}):",
               *("    " + line for line in group_state_source(f"{empty}{', 0' * (2 * n)}", "mult"))]
        if self._implicit:
            src.append("    st[-1] = 1")
        for j, a in enumerate(args):
            slot = f"st[{FIRST_STATE + j}]"
            pad = "    "
            if errors and self._kinds[j] != "C":  # COUNT's argument is 0 or 1, never an error
                src += [f"    if {a} is _ERROR:", f"        st[{FIRST_STATE + n + j}] += mult", "    else:"]
                pad = "        "
            if self._aggs[j][0] in ("COUNT", "SUM", "AVG"):
                src.append(f"{pad}{slot} += {a} * mult")
                if self._aggs[j][0] == "SUM" and isinstance(self._kinds[j], tuple):
                    src.append(f"{pad}st[{FIRST_STATE + 2 * n + j}] = 1")
            else:  # a sorted list: any value may leave
                # a multiplicity of one first: compiled, a range() over an object is an
                # object per delta
                src += [f"{pad}if mult == 1:", f"{pad}    insort({slot}, {a})",
                        f"{pad}elif mult == -1:", f"{pad}    values = {slot}",
                        f"{pad}    del values[bisect_left(values, {a})]",
                        f"{pad}elif mult > 0:", f"{pad}    for _ in range(mult): insort({slot}, {a})", f"{pad}else:",
                        f"{pad}    values = {slot}",
                        f"{pad}    for _ in range(-mult): del values[bisect_left(values, {a})]"]
        return src

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

    def _result(self, j: int) -> str:
        name = self._aggs[j][0]
        if name == "COUNT":
            return int_id_source(f"st[{FIRST_STATE + j}]")
        if not self._errors_seen:
            return self._value_result(j)
        # while the group holds a row whose argument is an error, the aggregate is one
        return f"(None if st[{FIRST_STATE + len(self._aggs) + j}] else {self._value_result(j)})"

    def _value_result(self, j: int) -> str:
        name, kind, slot = self._aggs[j][0], self._kinds[j], f"st[{FIRST_STATE + j}]"
        scale = 0 if kind == "I" else kind[1]
        if name == "SUM":  # see CompiledAggregate._result
            if kind == "I":
                return int_id_source(slot)
            # the reference's total starts as the integer 0 and becomes a Fraction with
            # the first decimal added (an emptied SUM of decimals is a decimal 0)
            return f"({self._id_of(slot, kind)} if st[{FIRST_STATE + 2 * len(self._aggs) + j}] else _int_id({slot}))"
        if name == "AVG":
            return f"_avg_id({slot}, st[0], {scale})"
        if name in ("MIN", "MAX"):
            return f"({self._id_of(slot + ('[0]' if name == 'MIN' else '[-1]'), kind)} if {slot} else None)"
        return median_id_source(slot, scale, kind == "I")

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
            self._compile(self._sample)  # results that read the error counts from now on
        self._apply(tuple(row[i] for i in self._key_pos), mult, *values)
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
        reference = self._reference
        for key, state in self._groups.items():
            target = reference.group(key)
            target.rows, target.output = state[0], state[1]
            n = len(self._aggs)
            for (name, _, _), kind, acc, slot, errors, decimal in zip(
                    self._aggs, self._kinds, target.accumulators, state[FIRST_STATE:FIRST_STATE + n],
                    state[FIRST_STATE + n:FIRST_STATE + 2 * n], state[FIRST_STATE + 2 * n:FIRST_STATE + 3 * n]):
                self._restore(name, kind, acc, slot, state[0] - errors, kind == "I" or decimal or name == "AVG")
                acc.errors = 0 if isinstance(acc, Count) else errors
        reference.expect_flush({state[DIRTY]: state[1] for state in self._dirty})
        self._groups.clear()
        self._dirty.clear()
        self.mode = "reference"
        self._push = reference.push

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

