"""A window, its fused stateless steps and the GROUP BY above it, as one generated operator.

In the reference plan an arriving mapping travels: BGP match → a row tuple → the fused
steps (one generated chunk) → a delta list → :class:`~taxi_rsp.engine.ops.group.GroupOp`,
which decodes every argument id to a Python value (``Fraction`` for decimals) and updates
generic accumulator objects. Here the whole path is one generated function per event
path (Neumann, VLDB 2011: the group-by is the pipeline breaker, everything below it is
fused):

* **arrival** ``insert(row, expiry)``: decode the input ids into locals, run the
  FILTER/BIND code of :class:`~taxi_rsp.engine.compiled.codegen.ChunkCompiler`, compute the group
  key ids and the aggregate arguments as plain ``int`` s (decimals as integers scaled by
  a compile-time power of ten), update the group's state in place;
* **expiry** ``expire(until)``: pop the window's oldest entries and revert them with the
  values stored in the entry — no expression is evaluated again (tree-based mappings of
  CQELS DEBS 2015 §3.1, here flattened to one fixed-width record per mapping).

With the native interpreter built, the per-row part is not generated Python but a typed
program (:mod:`taxi_rsp.engine.native.program`): the same steps, key ids and arguments as
int64 instructions run in C, each row's key and arguments handed to the table in one call
(``Program.feed``, through the table's C entry as int64); what has no typed form keeps the
generated code described here. When the window's patterns are a star over the events'
layout (the Feeder's trips), the program reads each star graph's objects itself
(``Program.feed_star``): no match list, row tuple or matcher call per event.

The window's entries and the groups' state live in a
:class:`~taxi_rsp.engine.native.GroupTable` (the native tier: a ring buffer of int64
records and an open-addressing group table in C memory, or its pure-Python twin without
a C compiler): COUNT/SUM/AVG as int64 totals, MIN/MAX as monotonic queues, MEDIAN as
sorted values. The generated code computes each row's key ids and arguments and hands
them over in one call; expiry runs in the table; the generated ``flush`` turns the
changed groups' totals into term ids (the two middle values' mean without ``Fraction``
unless it needs one).

With a **latest stage** (``latest``, a :class:`~taxi_rsp.engine.compiled.latest.LatestStage`:
the planner's fusion of :class:`~taxi_rsp.engine.compiled.latest.LatestPerKey` between the
window and the GROUP BY) each row also hands the table its latest key's ids and its
ordering value, and the table counts only each key's newest entry (superseding and expiry
in C: no row list between three operators). Each entry also keeps its matched row's ids
as the table's payload, for the hand-over only: a value that does not grow replays the
window's rows into the anti-join the stage stands for, which feeds the reference GROUP BY
from then on.

The generated function is specialised on the type codes of the first row (like the
fused chunks). A row that misses a guard or raises takes the *slow path*: the reference
step closures and aggregate arguments decide it, and its values enter the same state
when they have the compiled kinds. When they do not (a string where a number was seen,
an aggregate argument that errors, a total beyond 64 bits), the operator *deoptimises* once: the window's
content is replayed into a reference :class:`GroupOp`, which takes over with the same
last outputs, so what downstream has seen stays consistent.

>>> from taxi_rsp.engine.engine import Engine
>>> from taxi_rsp.planner import register
>>> q = register(Engine(), 
...     'SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <http://s> [RANGE 1m] { ?x <http://p> ?k } } GROUP BY ?k', "demo")
>>> type(q.physical.windows[0]).__name__
'CompiledAggregate'
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction
from functools import partial
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.base import Operator, Row
from taxi_rsp.engine.ops.aggregates import Sum
from taxi_rsp.engine.ops.group import ERROR, GroupOp
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.engine.compiled.latest import LatestStage
from taxi_rsp.engine.compiled.match import CompiledMatcher
from taxi_rsp.engine.native import group_table_class
from taxi_rsp.engine.native.encoders import TermEncoders
from taxi_rsp.engine.native.program import ProgramCompiler, programs_available
from taxi_rsp.engine.reclaim import retired
from taxi_rsp.engine.rows import tuple_getter
from taxi_rsp.lang import ast
from taxi_rsp.lang.ast import WindowSpec
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import StarLayout

FUSABLE = ("COUNT", "SUM", "AVG", "MIN", "MAX", "MEDIAN")
_NO_LAYOUT = object()  # no event's layout: no star graph is read by the program


class Deopt(Exception):
    """A value the compiled state cannot hold exactly: hand over to the reference."""


class CompiledAggregate(Operator):
    """Window + fused steps + GROUP BY; a drop-in for the WindowScan/GroupOp pair
    (window API: ``stream``, ``spec``, ``next_expiry``, ``expire``, ``insert``)."""

    compiled = True

    def __init__(self, window: WindowScan, keys: tuple[str, ...],
                 aggregates: list[tuple[str, str, bool, Any, Compiled | None]],
                 dictionary: Dictionary, latest: LatestStage | None = None) -> None:
        """``aggregates``: (output variable, name, distinct, argument expression, its
        reference closure over the window's output schema); ``latest``: count only the
        latest row of each key (see the module docstring)."""
        super().__init__(keys + tuple(a[0] for a in aggregates))
        self.stream = window.stream
        self.spec: WindowSpec = window.spec
        self.range_ms: int = window.range_ms  # type: ignore[assignment]
        self.matcher: BGPMatcher = window.matcher
        self.dictionary = dictionary
        self._window_schema = window.schema
        self._descriptions = [s.description for s in window.fused_steps or ()]
        self._derive = window.derive  # the reference steps: rows -> derived rows
        self._key_pos = tuple(window.schema.index(k) for k in keys)
        self._keys = keys
        self._aggs = [(name, arg_expr, closure) for _, name, _, arg_expr, closure in aggregates]
        self._reference = GroupOp(window.schema, keys, [(v, n, d, c) for v, n, d, _, c in aggregates], dictionary)
        self._reference.emit_for(self)  # its deltas go to this operator's consumers
        self._implicit = not keys
        self._latest = latest
        self._latest_kind: Any = None  # the compiled kind of the latest stage's value
        if latest is not None:
            latest.reference.connect(self._reference.push)
            self._latest_pos = tuple(window.schema.index(k) for k in latest.keys)
            self._right_of = tuple_getter(latest.right_from_left)  # an outer row's inner row
        table_class = group_table_class()
        self.state_kind = "native" if table_class.__module__.endswith("._group_table") else "python"
        # with a latest stage each entry keeps its matched row's ids (the table's payload)
        self._table = table_class(len(keys), tuple(name for name, _, _ in self._aggs), self._implicit,
                                  latest=len(latest.keys) if latest is not None else 0,
                                  payload=len(self.matcher.schema) if latest is not None else 0)
        # once handed over to the reference: (expiry, key, values), or (expiry, row) with a latest stage
        self._entries: deque = deque()
        # _insert, _expire, _flush, _next_expiry (see InCell)
        self._cells: list[Any] = [self._first_insert, self._table.expire,
                                  partial(report_before_first_row, self._table, self._reference),
                                  self._table.next_expiry]
        self._kinds: list[Any] = []
        self._ranker: Any = None  # a RankedJoin reading the table's changes (see hold_rows)
        self.mode = "specialised on the first row"  # then "compiled" or "reference"
        self.source = ""  # the generated per-row code, when that is what runs
        self.program: Any = None  # else the native program
        # [layout, feed, wanted]: a star graph of ``layout`` goes to ``feed(objects, subject,
        # expiry)``, the native program reading it (see _read_stars); ``wanted`` while a
        # program could read the next star layout seen
        self._star: list[Any] = [_NO_LAYOUT, None, False]
        self._bind_calls()

    # -- window API ------------------------------------------------------------------
    def _bind_calls(self) -> None:
        """The window API (``next_expiry``, ``expire``, ``insert``) and ``flush`` as
        closures over the matcher: the query calls them for every event and instant.
        They call the state's functions (``_insert``, ``_expire``, ``_flush``,
        ``_next_expiry``) through ``_cells``: those are swapped when compiled or handed
        over."""
        match, range_ms = self.matcher.match_view, self.range_ms
        cells = cython.declare(list, self._cells)
        last = cython.declare(list, [None, None])  # the last arrival's time and expiry (shared)
        star = cython.declare(list, self._star)

        def next_expiry() -> int | None:
            return cells[3]()

        def expire(until: int) -> None:
            cells[1](until)

        def insert(time: int, view: EventView) -> None:
            if time != last[0]:
                last[0], last[1] = time, time + range_ms
            if view.layout is star[0]:  # the program reads the star graph itself
                star[1](view.objects, view.subject, last[1])
                return
            rows = match(view)
            if rows:
                expiry = last[1]
                for row in rows:
                    cells[0](row, expiry)  # read for each row: a row may make it hand over
                if star[2] and view.layout is not None:
                    self._read_stars(view.layout)

        def flush() -> None:
            cells[2]()

        self.next_expiry, self.expire, self.insert, self.flush = next_expiry, expire, insert, flush

    def state_size(self) -> int:
        return len(self._entries) if self.mode == "reference" else len(self._table)

    def describe(self) -> str:
        steps = len(self._descriptions)
        state = "" if self.mode == "reference" else f", {self.state_kind} state"
        if self.program is not None and self.mode != "reference":
            reads = " that reads star graphs" if self._star[1] is not None else ""
            state = f", native program{reads}" + state
        latest = ""
        if self._latest is not None:
            latest = f"latest row per {', '.join('?' + k for k in self._latest.keys)} + "
        return (f"{type(self).__name__}[{self.spec.kind}] window + {steps} steps + {latest}group by "
                f"{', '.join('?' + k for k in self._keys) or '()'} ({self.mode}{state})")

    # -- compilation -------------------------------------------------------------------
    def _first_insert(self, row: Row, expiry: int) -> None:
        try:
            self._compile(row)
            self.mode = "compiled"
        except NoFast:
            self._go_reference()
        self._insert(row, expiry)

    def _compile(self, sample: Row) -> None:
        if programs_available():
            try:
                self._compile_program(sample)
                return
            except NoFast:
                pass  # some step or argument has no typed form: generated Python
        self._compile_source(sample)

    def _compile_program(self, sample: Row) -> None:
        """The per-row work as a native program (:mod:`taxi_rsp.engine.native.program`)
        that hands each row's key ids and argument values to the table."""
        c = ProgramCompiler(self.dictionary, self.matcher.schema, type_codes(sample))
        for step in self._descriptions:
            c.add_step(step)
        outputs = []
        for name in self._keys:
            kind, source = c.output(name)
            if kind == "none":
                raise NoFast(name)  # an unbound key: the reference decides
            outputs.append((kind, source))
        kinds: list[Any] = []
        for name, arg, _ in self._aggs:
            if name not in FUSABLE:
                raise NoFast(name)
            if name == "COUNT":
                if arg is not None and not (isinstance(arg, ast.Var) and c.binds(arg.name)):
                    raise NoFast(arg)  # COUNT(expression): the reference counts its non-errors
                operand, kind = c.const(1, "I"), "C"
            else:
                operand = c.table_value(arg)
                kind = operand.kind
            outputs.append(("value", operand.reg))
            kinds.append(kind)
        if self._latest is not None:  # then the latest key's ids and the ordering value
            for name in self._latest.keys:
                kind, source = c.output(name)
                if kind == "none":
                    raise NoFast(name)
                outputs.append((kind, source))
            operand = c.table_value(ast.Var(self._latest.value))
            outputs.append(("value", operand.reg))
            self._latest_kind = operand.kind
            outputs += [("input", i) for i in range(len(self.matcher.schema))]  # the payload: the row
        program = c.program(outputs, None)
        program.bind_table(len(self._keys), self._table.insert, self._slow_insert, self._deopt_insert, self._table)
        self.program = program
        self._insert = program.feed
        self._star[2] = True  # a star graph's row can go straight into the program
        self._finish_compile(kinds)

    def _read_stars(self, layout: StarLayout) -> None:
        """From now on the program reads star graphs of ``layout`` itself, when the
        matcher's patterns are a star over it (asked once, for the first layout seen)."""
        self._star[2] = False
        if not isinstance(self.matcher, CompiledMatcher) or self.mode != "compiled":
            return
        plan = self.matcher.star_plan(layout)
        if plan is None or plan.never:
            return
        self.program.read_star(plan, len(self.matcher.schema), len(layout.predicates))
        self._star[0], self._star[1] = layout, self.program.feed_star

    def _finish_compile(self, kinds: list[Any]) -> None:
        self._kinds = kinds
        self._table.set_results([None if kind in ("I", "C") else kind[1] for kind in kinds],
                                TermEncoders(self.dictionary))
        self._flush = self._table_flush()

    def _table_flush(self) -> Any:
        """The flush once compiled: the changed groups' rows to the consumers (none while
        a ranker reads the table's changes itself, see :meth:`hold_rows`)."""
        if self._ranker is not None:
            return idle_flush
        return partial(self._table.flush, self._sinks, retired.append)

    # -- a ranker reading the table (compiled/ranked_join.py) ----------------------------
    def table_state(self) -> Any:
        """The table holding the groups."""
        return self._table

    def hold_rows(self, ranker: Any) -> None:
        """Emit no rows: ``ranker`` reads the table's changes at each instant, and its
        ``hand_over()`` runs before this operator hands its table to the reference.
        (Called when the plan is built, before any row.)"""
        self._ranker = ranker

    def release_rows(self) -> None:
        """Emit rows from now on, at once every group's current row."""
        self._ranker = None
        if self._flush is idle_flush:  # compiled while held: the table's flush from now on
            self._flush = self._table_flush()
            self._table.touch_all()
            self._flush()

    def _leave_ranker(self) -> None:
        """Before a hand-over: the ranker hands over first (the table still holds the groups)."""
        if self._ranker is not None:
            self._ranker.hand_over()

    def _compile_source(self, sample: Row) -> None:
        codes = type_codes(sample)
        c = ChunkCompiler(self.dictionary, self.matcher.schema, codes)
        for step in self._descriptions:
            c.add_step(step)
        key_ids = [self._key_id(c, k) for k in self._keys]
        arg_codes: list[str] = []
        kinds: list[Any] = []
        for name, arg, _ in self._aggs:
            code, kind = self._argument(c, name, arg)
            arg_codes.append(code)
            kinds.append(kind)
        if self._latest is not None:  # then the latest key's ids and the ordering value
            arg_codes += [self._key_id(c, name) for name in self._latest.keys]
            code, self._latest_kind = c.expr(ast.Var(self._latest.value))
            if not (self._latest_kind == "I" or (isinstance(self._latest_kind, tuple) and self._latest_kind[1] <= 9)):
                raise NoFast(self._latest.value)
            arg_codes.append(code)
            arg_codes += [f"x{i}" for i in range(len(self.matcher.schema))]  # the payload: the row
        w = c.w
        args = [f"a{j}" for j in range(len(arg_codes))]
        key = "(" + ", ".join(key_ids) + ("," if len(key_ids) == 1 else "") + ")"
        unpack = ", ".join(f"x{i}" for i in range(len(self.matcher.schema)))
        guard = c.guard_test()
        body = [f"        {line}" for line in w.lines]
        src = ["def insert(row, expiry):", "    try:"]
        if unpack:
            src.append(f"        {unpack}, = row")
        if guard:
            src.append(f"        if {guard}: raise Miss")
        src += [line.replace("return None", "return") for line in body]
        src.append(f"        key = {key}")
        src += [f"        {a} = {code}" for a, code in zip(args, arg_codes)]
        src += ["    except Exception:", "        return _slow(row, expiry)",
                "    try:",
                f"        _table_insert(expiry, key, ({''.join(a + ', ' for a in args)}))",
                "    except OverflowError:",  # a total beyond int64: the reference is exact
                "        _deopt(row, expiry)"]
        self.source = "\n".join(src)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace.update(Miss=Miss, _slow=self._slow_insert, _deopt=self._deopt_insert,
                         _table_insert=self._table.insert)
        functions = define(self.source, "<taxi_rsp compiled aggregate>", namespace)
        self._insert = functions["insert"]
        self._finish_compile(kinds)

    _insert = InCell(0)
    _expire = InCell(1)
    _flush = InCell(2)
    _next_expiry = InCell(3)

    @staticmethod
    def _key_id(c: ChunkCompiler, name: str) -> str:
        if name not in c.names:
            raise NoFast(name)  # an unbound key: the reference decides
        ident, value, kind = c.slots[c.names.index(name)]
        if ident is not None and ident.startswith("x"):
            return ident
        if ident is not None or value is None:
            raise NoFast(name)
        return c.encode(value, kind)

    @staticmethod
    def _argument(c: ChunkCompiler, name: str, arg: Any) -> tuple[str, Any]:
        """Source of an aggregate's per-row value and its kind ("I", ("D", s) or "C"
        for a COUNT contribution)."""
        if name not in FUSABLE:
            raise NoFast(name)
        if name == "COUNT":
            if arg is None:
                return "1", "C"
            if isinstance(arg, ast.Var) and arg.name in c.names:
                ident, value, _ = c.slots[c.names.index(arg.name)]
                if (ident is not None and ident.startswith("x")) or (ident is None and value is not None):
                    return "1", "C"  # bound on this path (an extend error goes slow)
            raise NoFast(arg)  # COUNT(expression): the reference counts its non-errors
        code, kind = c.expr(arg)
        if kind == "I" or (isinstance(kind, tuple) and kind[1] <= 9):
            return code, kind
        raise NoFast(arg)

    # -- the slow path and the hand-over to the reference ---------------------------------
    def _slow_insert(self, row: Row, expiry: int) -> None:
        """A row the generated code could not take: the reference decides its values."""
        derived = self._derive([row])  # stateless steps: at most one row
        if not derived:
            return
        out = derived[0]
        try:
            values = tuple(self._fast_value(closure, kind, out)
                           for (_, _, closure), kind in zip(self._aggs, self._kinds))
            if self._latest is not None:
                values += tuple(out[i] for i in self._latest_pos)
                values += (self._fast_value(self._latest.value_of, self._latest_kind, out),) + row
            self._table.insert(expiry, tuple(out[i] for i in self._key_pos), values)
        except (Deopt, OverflowError):
            self._deopt_insert(row, expiry)

    def _deopt_insert(self, row: Row, expiry: int) -> None:
        """Hand over to the reference, which then takes ``row``."""
        self._go_reference()
        self._insert(row, expiry)

    @staticmethod
    def _fast_value(closure: Compiled | None, kind: Any, row: Row) -> int:
        """The compiled state's form of one aggregate argument (raises Deopt)."""
        if kind == "C":  # a COUNT contribution: 0 when the argument is an error
            if closure is None:
                return 1
            try:
                closure(row)
            except ExprError:
                return 0
            return 1
        try:
            value = closure(row)  # type: ignore[misc]
        except ExprError:
            raise Deopt from None
        return compiled_form(value, kind)

    def _go_reference(self) -> None:
        """Replay the window into the reference GroupOp, which carries on from the
        outputs already emitted. An entry holds its group's key and the compiled forms of
        the aggregate arguments, which convert back to the reference's values exactly
        (each compiled kind is one Python type); the entries become (expiry, key, values).
        With a latest stage the window's rows are replayed into the anti-join instead."""
        self._leave_ranker()
        self._star[:] = [_NO_LAYOUT, None, False]  # every row through the matcher again
        if self._latest is not None:
            self._go_latest_reference()
            return
        reference, table, entries = self._reference, self._table, self._entries
        for expiry, key, forms in table.entries():
            values = [reference_value(form, kind) for form, kind in zip(forms, self._kinds)]
            reference.push_values(key, values, 1)
            entries.append((expiry, key, values))
        self._carry_outputs(reference, table)
        self.mode = "reference"
        self._insert = self._reference_insert
        self._expire = self._reference_expire
        self._flush = reference.flush
        self._next_expiry = self._reference_next_expiry
        self._table = type(table)(0, (), True)  # the window's state is the reference's now

    def _go_latest_reference(self) -> None:
        """Replay the window's rows (the table's payloads) into the latest stage's anti-join
        (inner rows first, without output: what it would emit reaches the reference GROUP
        BY only), which answers from then on, feeding the reference GROUP BY."""
        anti, right_of = self._latest.reference, self._right_of  # type: ignore[union-attr]
        derived = [(expiry, out) for expiry, row in self._table.records() for out in self._derive([row])]
        anti.push_right([(right_of(out), 1) for _, out in derived])
        anti.push_left([(out, 1) for _, out in derived])
        self._entries.extend(derived)
        self._carry_outputs(self._reference, self._table)
        self.mode = "reference"
        self._insert = self._latest_reference_insert
        self._expire = self._latest_reference_expire
        self._flush = self._reference.flush
        self._next_expiry = self._reference_next_expiry
        self._table = type(self._table)(0, (), True)

    def _latest_reference_insert(self, row: Row, expiry: int) -> None:
        """An arrival into the anti-join: the outer row, then the same row as an inner
        one (a window's twins: outer consumers first)."""
        anti, right_of = self._latest.reference, self._right_of  # type: ignore[union-attr]
        for out in self._derive([row]):
            self._entries.append((expiry, out))
            anti.push_left([(out, 1)])
            anti.push_right([(right_of(out), 1)])

    def _latest_reference_expire(self, until: int) -> None:
        anti, right_of = self._latest.reference, self._right_of  # type: ignore[union-attr]
        entries = self._entries
        while entries and entries[0][0] <= until:
            _, out = entries.popleft()
            anti.push_left([(out, -1)])
            anti.push_right([(right_of(out), -1)])

    def _carry_outputs(self, reference: GroupOp, table: Any) -> None:
        """Give the reference, replayed, the rows the consumers hold and the groups whose
        changes are due at the next flush."""
        outputs = table.outputs()
        for key, state in reference.groups().items():
            state.output = outputs.get(key)
        if self._implicit and table.ever:
            self._decimal_zeros(reference.group(()), None)
        held = {state[0]: state[5] for state in table.states()}
        pending: dict[tuple, Row | None] = {}
        for key, old in table.pending():
            group = reference.group(key)
            group.output = old  # an emptied group: flush retracts it
            pending[key] = old
            self._decimal_zeros(group, held.get(key))
        reference.expect_flush(pending)

    def _decimal_zeros(self, group: Any, held: list[bool] | None) -> None:
        """A reference group, replayed, whose decimals all left (the implicit group, or one
        emptied in this instant, ``held`` its table's flags): its SUM and AVG totals are
        the decimal 0 its accumulators hold in the reference (whose type outlives the
        values until the group is dropped at a flush)."""
        for j, (acc, kind) in enumerate(zip(group.accumulators, self._kinds)):
            if isinstance(acc, Sum) and acc.n == 0 and kind not in ("I", "C") and (held is None or held[j]):
                acc.total = Fraction(0)

    def _reference_next_expiry(self) -> int | None:
        return self._entries[0][0] if self._entries else None

    def _reference_insert(self, row: Row, expiry: int) -> None:
        for out in self._derive([row]):
            key, values = self._reference.values(out)
            self._entries.append((expiry, key, values))
            self._reference.push_values(key, values, 1)

    def _reference_expire(self, until: int) -> None:
        entries, reference = self._entries, self._reference
        while entries and entries[0][0] <= until:
            _, key, values = entries.popleft()
            reference.push_values(key, values, -1)


def idle_flush() -> None:
    """The flush of a group operator whose table a ranker reads (no rows to emit)."""


def report_before_first_row(table: Any, reference: GroupOp) -> None:
    """A compiled group operator's flush before its first row: only the implicit group
    (no GROUP BY) can be due, and ``reference``, in the same empty state, reports it; the
    ``table`` records what it emitted."""
    if not table.has_changes():
        return
    reference.flush()
    for change in table.take_changes():
        table.set_output(change[0], reference.group(change[1]).output)


def reference_value(form: int, kind: Any) -> Any:
    """The reference's value of an aggregate argument held in compiled form (the inverse
    of :func:`compiled_form`); a COUNT contribution of 0 was an expression error.

    >>> reference_value(2500000000, ("D", 9)), reference_value(7, "I"), reference_value(0, "C") is ERROR
    (Fraction(5, 2), 7, True)
    """
    if kind == "C":
        return True if form else ERROR
    return form if kind == "I" else Fraction(form, 10 ** kind[1])


def compiled_form(value: Any, kind: Any) -> int:
    """An aggregate argument's value as the compiled state holds it: the integer itself
    ("I"), or a decimal scaled to an integer (("D", scale)); anything else raises Deopt.
    Integer arithmetic only (a Fraction product would reduce by a gcd it does not need).

    >>> compiled_form(Fraction(5, 2), ("D", 9)), compiled_form(7, "I")
    (2500000000, 7)
    """
    if kind == "I":
        if type(value) is int:
            return value
    elif type(value) is Fraction:
        scaled, remainder = divmod(value.numerator * 10 ** kind[1], value.denominator)
        if not remainder:
            return scaled
    raise Deopt
