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

The window's entries and the groups' state live in a
:class:`~taxi_rsp.engine.native.GroupTable` (the native tier: a ring buffer of int64
records and an open-addressing group table in C memory, or its pure-Python twin without
a C compiler): COUNT/SUM/AVG as int64 totals, MIN/MAX as monotonic queues, MEDIAN as
sorted values. The generated code computes each row's key ids and arguments and hands
them over in one call; expiry runs in the table; the generated ``flush`` turns the
changed groups' totals into term ids (the two middle values' mean without ``Fraction``
unless it needs one).

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
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import SMALL_INTS, ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.expr import Compiled, ExprError
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.base import Operator, Row
from taxi_rsp.engine.ops.aggregates import Sum
from taxi_rsp.engine.ops.group import ERROR, GroupOp
from taxi_rsp.engine.ops.match import BGPMatcher
from taxi_rsp.engine.view import EventView
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.engine.native import group_table_class
from taxi_rsp.engine.reclaim import retired
from taxi_rsp.lang import ast
from taxi_rsp.lang.ast import WindowSpec
from taxi_rsp.rdf.dictionary import (
    INLINE_FLAG,
    PAYLOAD_BITS,
    PAYLOAD_MASK,
    PAYLOAD_MAX,
    PAYLOAD_MIN,
    T_DECIMAL,
    T_INTEGER,
    TYPE_SHIFT,
    Dictionary,
)

FUSABLE = ("COUNT", "SUM", "AVG", "MIN", "MAX", "MEDIAN")
_INT_HEAD = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT)
_DEC_HEAD = INLINE_FLAG | (T_DECIMAL << TYPE_SHIFT)
# state[0] = rows, state[1] = last output row, state[2] = the group's key while touched
# since the last flush (the state is then in the dirty list; None otherwise: a key may be
# the empty tuple, so tests are `is None`), state[3] = the group's key, then one slot per
# aggregate. A window entry holds the state, not the key: the key tuple an arrival builds
# to find its group is freed with the event, not a window range later.
DIRTY = 2
_KEY = 3
FIRST_STATE = 4


class Deopt(Exception):
    """A value the compiled state cannot hold exactly: hand over to the reference."""


class CompiledAggregate(Operator):
    """Window + fused steps + GROUP BY; a drop-in for the WindowScan/GroupOp pair
    (window API: ``stream``, ``spec``, ``next_expiry``, ``expire``, ``insert``)."""

    compiled = True

    def __init__(self, window: WindowScan, keys: tuple[str, ...],
                 aggregates: list[tuple[str, str, bool, Any, Compiled | None]],
                 dictionary: Dictionary) -> None:
        """``aggregates``: (output variable, name, distinct, argument expression, its
        reference closure over the window's output schema)."""
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
        table_class = group_table_class()
        self.state_kind = "native" if table_class.__module__.endswith("._group_table") else "python"
        self._table = table_class(len(keys), tuple(name for name, _, _ in self._aggs), self._implicit)
        self._entries: deque = deque()  # (expiry, key, values) once handed over to the reference
        # _insert, _expire, _flush, _next_expiry (see InCell)
        self._cells: list[Any] = [self._first_insert, self._table.expire, self._flush_before_first_row,
                                  self._table.next_expiry]
        self._kinds: list[Any] = []
        self.mode = "specialised on the first row"  # then "compiled" or "reference"
        self.source = ""
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

        def next_expiry() -> int | None:
            return cells[3]()

        def expire(until: int) -> None:
            cells[1](until)

        def insert(time: int, view: EventView) -> None:
            rows = match(view)
            if rows:
                if time != last[0]:
                    last[0], last[1] = time, time + range_ms
                expiry = last[1]
                for row in rows:
                    cells[0](row, expiry)  # read for each row: a row may make it hand over

        def flush() -> None:
            cells[2]()

        self.next_expiry, self.expire, self.insert, self.flush = next_expiry, expire, insert, flush

    def state_size(self) -> int:
        return len(self._entries) if self.mode == "reference" else len(self._table)

    def describe(self) -> str:
        steps = len(self._descriptions)
        state = "" if self.mode == "reference" else f", {self.state_kind} state"
        return (f"CompiledAggregate[{self.spec.kind}] window + {steps} steps + group by "
                f"{', '.join('?' + k for k in self._keys) or '()'} ({self.mode}{state})")

    def _flush_before_first_row(self) -> None:
        """Only the implicit group (no GROUP BY) can be due before any row: the
        reference, in the same empty state, reports it."""
        if not self._table.has_changes():
            return
        self._reference.flush()
        for change in self._table.take_changes():
            self._table.set_output(change[0], self._reference.group(change[1]).output)

    # -- compilation -------------------------------------------------------------------
    def _first_insert(self, row: Row, expiry: int) -> None:
        try:
            self._compile(row)
            self.mode = "compiled"
        except NoFast:
            self._go_reference()
        self._insert(row, expiry)

    def _compile(self, sample: Row) -> None:
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
        self._kinds = kinds
        w = c.w
        args = [f"a{j}" for j in range(len(self._aggs))]
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
        self._table.set_results([None if kind in ("I", "C") else kind[1] for kind in kinds],
                                self._int_id, self._dec_id, self._mean_id, self._avg_id)
        self._flush = self._flush_table

    def _flush_table(self) -> None:
        """The table's changed groups, as rows of term ids, to this operator's consumers."""
        self._table.flush(self._sinks, retired.append)

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

    @staticmethod
    def _id_of(value: str, kind: Any) -> str:
        if kind == "I":
            return int_id_source(value)
        return dec_id_source(value, kind[1])

    # -- result ids (the same ids Dictionary.encode_value gives the reference's values) -
    def _int_id(self, value: int) -> int:
        if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            return _INT_HEAD | (value & PAYLOAD_MASK)
        return self.dictionary.encode_value(value)

    def _dec_id(self, scaled: int, scale: int) -> int:
        value = scaled * 10 ** (9 - scale)
        if PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            return _DEC_HEAD | (value & PAYLOAD_MASK)
        return self.dictionary.encode_value(Fraction(scaled, 10**scale))

    def _median_id(self, values: list[int], scale: int, integers: bool) -> int | None:
        n = len(values)
        if n == 0:
            return None  # the reference's MEDIAN of nothing is an error: unbound
        if n % 2:
            middle = values[n // 2]
            return self._int_id(middle) if integers else self._dec_id(middle, scale)
        return self._mean_id(values[n // 2 - 1], values[n // 2], scale)

    def _mean_id(self, low: int, high: int, scale: int) -> int:
        """The id of the mean of the two middle values ``low``, ``high`` (scaled by
        10**``scale``), as the reference's MEDIAN of an even count gives it: a decimal."""
        total = low + high
        doubled = total * 10 ** (9 - scale)
        if doubled % 2 == 0:
            return self._dec_id(doubled // 2, 9)
        return self.dictionary.encode_value(Fraction(total, 2 * 10**scale))

    def _avg_id(self, total: int, n: int, scale: int) -> int:
        if n == 0:
            return self._int_id(0)
        return self.dictionary.encode_value(Fraction(total, 10**scale * n))

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
        (each compiled kind is one Python type); the entries become (expiry, key, values)."""
        reference, table, entries = self._reference, self._table, self._entries
        for expiry, key, forms in table.entries():
            values = [reference_value(form, kind) for form, kind in zip(forms, self._kinds)]
            reference.push_values(key, values, 1)
            entries.append((expiry, key, values))
        outputs = table.outputs()
        for key, state in reference.groups().items():
            state.output = outputs.get(key)
        if self._implicit and table.ever:
            # the one group once held decimals that all left: its SUM is a decimal 0
            for acc, kind in zip(reference.group(()).accumulators, self._kinds):
                if isinstance(acc, Sum) and acc.n == 0 and kind not in ("I", "C"):
                    acc.total = Fraction(0)
        pending: dict[tuple, Row | None] = {}
        for key, old in table.pending():
            reference.group(key).output = old  # an emptied group: flush retracts it
            pending[key] = old
        reference.expect_flush(pending)
        self.mode = "reference"
        self._insert = self._reference_insert
        self._expire = self._reference_expire
        self._flush = reference.flush
        self._next_expiry = self._reference_next_expiry
        self._table = type(table)(0, (), True)  # the window's state is the reference's now

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


def reference_value(form: int, kind: Any) -> Any:
    """The reference's value of an aggregate argument held in compiled form (the inverse
    of :func:`compiled_form`); a COUNT contribution of 0 was an expression error.

    >>> reference_value(2500000000, ("D", 9)), reference_value(7, "I"), reference_value(0, "C") is ERROR
    (Fraction(5, 2), 7, True)
    """
    if kind == "C":
        return True if form else ERROR
    return form if kind == "I" else Fraction(form, 10 ** kind[1])


# A MIN/MAX queue whose dead prefix is longer than this (and than its live part) is
# compacted: a list's front cannot be popped in O(1), so pops only advance a head index.
_COMPACT_AFTER = 16


def monotonic_push_source(slot: str, value: str, beaten: str) -> list[str]:
    """Source that adds ``value`` to the monotonic queue in ``slot``: a list whose item 0
    is the index of its first live value; the live values follow in arrival order, the
    first the extreme (``beaten`` is ``<`` for MAX: a value less than a newer one can never
    be the maximum again, so it leaves from the back). A list, not a
    ``collections.deque``: a deque is 760 bytes (a 64-slot block from ``malloc``) for
    the one or two values a group's queue usually holds, and every group has one.

    >>> q = [1]
    >>> for v in (5, 3, 4):
    ...     exec("\\n".join(monotonic_push_source("q", str(v), "<")))
    >>> q  # MAX: 5 still leads; 3 was beaten by 4
    [1, 5, 4]
    """
    return [f"q = {slot}", f"while len(q) > q[0] and q[-1] {beaten} {value}:", "    q.pop()", f"q.append({value})"]


def monotonic_retract_source(slot: str, value: str) -> list[str]:
    """Source that retracts ``value``, the group's oldest value, from the queue in
    ``slot`` (see :func:`monotonic_push_source`): it heads the queue iff no later value
    beat it (equal values are all kept, so duplicates pair up in order). The head index
    advances; an emptied queue resets, a long dead prefix is cut (amortised O(1)).

    >>> q = [1, 5, 4]
    >>> exec("\\n".join(monotonic_retract_source("q", "5")))
    >>> q[q[0]:]  # the live values
    [4]
    """
    return [f"q = {slot}", "h = q[0]", f"if q[h] == {value}:", "    h += 1",
            "    if h == len(q):", "        del q[1:]", "        h = 1",
            f"    elif h > {_COMPACT_AFTER} and h + h > len(q):", "        del q[1:h]", "        h = 1",
            "    q[0] = h"]


def int_id_source(value: str) -> str:
    """Source of the id of integer ``value`` (an expression without side effects): a
    small one's from ``SMALL_INT_IDS`` (see codegen), else the inline id computed in
    place, :meth:`CompiledAggregate._int_id` only for an integer beyond the inline range
    (a call per result costs more than the bit test).

    >>> from taxi_rsp.engine.compiled.codegen import SMALL_INT_IDS
    >>> from taxi_rsp.rdf.dictionary import Dictionary
    >>> [eval(int_id_source("v"), {"v": v, "_small_int_ids": SMALL_INT_IDS}) == Dictionary().encode_value(v)
    ...  for v in (0, 5, SMALL_INTS, -3)]
    [True, True, True, True]
    """
    return (f"(_small_int_ids[_v] if 0 <= (_v := {value}) < {SMALL_INTS}"
            f" else {_INT_HEAD} + _v if 0 <= _v <= {PAYLOAD_MAX}"
            f" else {_INT_HEAD + (1 << PAYLOAD_BITS)} + _v if {PAYLOAD_MIN} <= _v < 0 else _int_id(_v))")


def dec_id_source(scaled: str, scale: int) -> str:
    """Source of the id of the decimal ``scaled`` / 10**``scale`` (scale <= 9): inline in
    place as :meth:`CompiledAggregate._dec_id` encodes it, the call only beyond the range.

    >>> from taxi_rsp.rdf.dictionary import Dictionary
    >>> eval(dec_id_source("v", 2), {"v": -1250}) == Dictionary().encode_value(Fraction(-1250, 100))
    True
    """
    nano = scaled if scale == 9 else f"({scaled}) * {10 ** (9 - scale)}"
    return _inline_id_source(nano, _DEC_HEAD, "_dec_id(_v, 9)")


def median_id_source(values: str, scale: int, integers: bool) -> str:
    """Source of :meth:`CompiledAggregate._median_id` of the sorted list ``values`` with
    the common cases in place: the middle value of an odd count, the mean of the two
    middle values when it has at most 9 decimals (always, for integers and cents); only
    an even count whose mean needs a tenth decimal calls the method."""
    middle = int_id_source("_m[_n // 2]") if integers else dec_id_source("_m[_n // 2]", scale)
    mean = _inline_id_source("_t // 2", _DEC_HEAD, "_dec_id(_v, 9)")
    total = "(_m[_n // 2 - 1] + _m[_n // 2])" + ("" if scale == 9 else f" * {10 ** (9 - scale)}")
    return (f"(None if not (_n := len(_m := {values})) else {middle} if _n % 2"
            f" else {mean} if not (_t := {total}) % 2"
            f" else _median_id(_m, {scale}, {integers}))")


def _inline_id_source(value: str, head: int, beyond: str) -> str:
    """``head`` plus ``value`` as a two's-complement payload when it fits, else ``beyond``
    (which reads ``_v``: the value)."""
    return (f"({head} + _v if 0 <= (_v := {value}) <= {PAYLOAD_MAX}"
            f" else {head + (1 << PAYLOAD_BITS)} + _v if {PAYLOAD_MIN} <= _v < 0 else {beyond})")


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


def group_state_source(initial: str, added: str) -> list[str]:
    """Source lines that find (or create with ``[0, None, 1{initial}]``) the state ``st``
    of group ``key``, note it in ``dirty`` (see :func:`_touch_source`; its last output
    ``st[1]`` changes only in flush, so flush still reads the output of the last instant
    there), and add ``added`` rows to its count: the start of every generated ``apply``.
    One hash of the key: tuples do not keep their hash, so every dict operation on a key
    hashes it anew."""
    return ["st = groups.get(key)",
            "if st is None:",
            f"    st = groups[key] = [0, None, key, key{initial}]",
            "    dirty.append(st)",
            *_touch_source("elif"),
            f"st[0] += {added}"]


def _touch_source(keyword: str = "if", key: str = "key") -> list[str]:
    """Source noting that group ``key`` (state ``st``) changed in this instant: a flag in
    its state and, the first time, an entry in the ``dirty`` list — no hash of the key
    (a ``dirty`` dict would hash it on every change)."""
    return [f"{keyword} st[{DIRTY}] is None:", f"    st[{DIRTY}] = {key}", "    dirty.append(st)"]


def flush_source(results: list[str], key_width: int) -> list[str]:
    """Source of a generated ``flush()``: for each group touched since the last one, its
    new row (the ``key_width`` parts of its key, then ``results``, the aggregate id
    expressions over state ``st``: one tuple, not key + a tuple of results) or None
    when it lost its last row, and the retraction/insertion pair when the row changed —
    the reference GroupOp's rule, in the same order, to the operator's ``sinks`` (its
    consumers' list, shared with its reference operator). An unchanged group keeps the
    row it emitted as its last output, not the equal one just built: its retraction
    will then name the very object its consumers hold (a join finds its merged row, a
    top-k its entry, by identity). (``out.append`` and not a bound
    ``append``: compiled, ``out`` is known to be a list and the call a C function; an
    instant that touched no group builds nothing.)"""
    return ["", "def flush():", "    if not dirty:", "        return", "    out = []",
            "    for st in dirty:",
            f"        key = st[{DIRTY}]",
            f"        st[{DIRTY}] = None",
            "        old = st[1]",
            "        if st[0] == 0 and not implicit:",
            "            new = None",
            "            del groups[key]",
            "        else:",
            f"            new = ({''.join(r + ', ' for r in [f'key[{i}]' for i in range(key_width)] + results)})",
            f"        if {_changed_test(key_width, len(results))}:",
            "            st[1] = new",
            "            if old is not None:",
            "                out.append((old, -1))",
            "            if new is not None:",
            "                out.append((new, 1))",
            "    dirty.clear()",
            "    if out:",
            "        for sink in sinks:",  # Operator.emit without its call and attribute look-up
            "            sink(out)",
            "        _retire(out)"]  # the old rows it may hold last: freed after the outputs


def _changed_test(key_width: int, width: int) -> str:
    """Source of ``old != new`` for a group's last and new rows, comparing only the
    aggregate parts: the key parts of both are the group's key (equal values), so a
    tuple comparison would spend a rich comparison on each of them first.

    >>> _changed_test(2, 2)
    'old is not new and (old is None or new is None or (old[2] is not new[2] and old[2] != new[2]) or (old[3] is not new[3] and old[3] != new[3]))'
    """
    parts = [f"(old[{i}] is not new[{i}] and old[{i}] != new[{i}])" for i in range(key_width, key_width + width)]
    return f"old is not new and (old is None or new is None{''.join(' or ' + p for p in parts)})"
