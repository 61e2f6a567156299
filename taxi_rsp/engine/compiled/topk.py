"""ORDER BY … LIMIT with generated sort keys over plain integers.

The reference :class:`~taxi_rsp.engine.ops.topk.TopKOp` builds, per row, a nested key
(``((rank, ±value), …), row-id tie-break, row)`` through generic expression closures
that decode every id, and keeps it in a ``SortedList``. When the ORDER BY values have
one kind per key — integers, decimals (as integers scaled by a compile-time power of ten),
exact numbers of any representation (as ``float, exact value``: the correctly rounded
float is monotone in the value, so floats that differ already order the values; the
exact value, decoded only when it is compared, breaks float ties), strings ascending — every rank is the same, so the key
``(±v1, …, ±vn, tie-break, row)`` orders rows exactly as the reference does (its
tie-break is the row of ids itself when all of them are integers). Those flat tuples compare in C,
are computed by one generated function (:class:`~taxi_rsp.engine.codegen.ChunkCompiler`),
and live in a plain ``list`` kept sorted with :mod:`bisect`.

A row outside those assumptions (another kind, an unbound value, a computed-value id)
makes the operator hand over to the reference: the current relation is pushed into a
:class:`TopKOp`, which answers from then on.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from taxi_rsp.engine.codegen import ChunkCompiler, NoFast, _Miss
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.topk import TopKOp, _row_key
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import (
    DECIMAL_SCALE,
    INLINE_FLAG,
    PAYLOAD_BITS,
    PAYLOAD_MASK,
    T_DECIMAL,
    T_INTEGER,
    TYPE_SHIFT,
    Dictionary,
)

_SIGN = 1 << (PAYLOAD_BITS - 1)


class CompiledTopK(Operator):
    """Same results as :class:`TopKOp` (as the ordered root, or emitting deltas)."""

    compiled = True

    def __init__(self, schema: tuple[str, ...], order: list[tuple[Any, bool]], limit: int | None,
                 offset: int, emits_deltas: bool, reference: TopKOp, dictionary: Dictionary) -> None:
        """``order``: (expression, descending) pairs; ``reference``: the TopKOp taking
        over if a row falls outside the compiled key's assumptions."""
        super().__init__(schema)
        self._order = order
        self.limit = limit
        self.offset = offset
        self._wanted = None if limit is None else offset + limit
        self._emits_deltas = emits_deltas
        self._reference = reference
        reference._sinks = self._sinks
        self._dictionary = dictionary
        self._sorted: list[tuple] = []
        self._held: dict[Row, list] = {}  # row -> [key, multiplicity]
        self._last: list[Row] = []
        self._key = None
        self._changed = True
        self.mode = "specialised on the first row"  # then "compiled" or "reference"
        self.source = ""

    # -- the R2S interface (changed / snapshot) -----------------------------------------
    @property
    def changed(self) -> bool:
        return self._reference.changed if self.mode == "reference" else self._changed

    def describe(self) -> str:
        return f"CompiledTopK offset {self.offset} limit {self.limit} ({self.mode})"

    def state_size(self) -> int:
        return self._reference.state_size() if self.mode == "reference" else len(self._held)

    # -- keys ------------------------------------------------------------------------
    def _compile(self, sample: Row) -> None:
        codes = {i: (v >> TYPE_SHIFT) & 0xF for i, v in enumerate(sample)
                 if type(v) is int and v & INLINE_FLAG}
        c = ChunkCompiler(self._dictionary, self.schema, codes)
        parts = []
        for expr, descending in self._order:
            if isinstance(expr, ast.Var) and expr.name in self.schema and codes.get(
                    self.schema.index(expr.name)) != T_INTEGER:
                # a number whose id may be an inline decimal or a computed exact value:
                # the float first (compared in C), the exact value breaks float ties
                index = self.schema.index(expr.name)
                if descending:
                    parts.append(f"-_float(x{index}), _Descending(x{index})")
                else:
                    parts.append(f"_float(x{index}), _Ascending(x{index})")
                continue
            code, kind = c.expr(expr)
            numeric = kind in ("I", "F") or isinstance(kind, tuple)
            if not numeric and (descending or kind != "S"):
                raise NoFast(expr)  # a descending string has no negation
            parts.append(f"-({code})" if descending else code)
        w = c.w
        guard = " or ".join(f"(x{i} >> {TYPE_SHIFT}) != {h}" for i, h in sorted(w.guards.items()))
        unpack = ", ".join(f"x{i}" for i in range(len(self.schema)))
        src = ["def key(row):", "    try:"]
        if unpack:
            src.append(f"        {unpack}, = row")
        if guard:
            src.append(f"        if {guard}: raise _Miss")
        src += [f"        {line}" for line in w.lines]
        # the reference's tie-break: the row itself when all its ids are ints
        ints = " and ".join(f"type(x{i}) is int" for i in range(len(self.schema))) or "True"
        src.append(f"        tie = row if {ints} else _row_key(row)")
        src.append(f"        return ({''.join(p + ', ' for p in parts)}tie, row)")
        src += ["    except Exception:", "        return None"]
        self.source = "\n".join(src)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace["_Miss"] = _Miss
        namespace["_float"] = self._float
        value = self._dictionary.value
        namespace["_Ascending"] = lambda term_id: _Exact(value, term_id)
        namespace["_Descending"] = lambda term_id: _ReversedExact(value, term_id)
        namespace["_row_key"] = _row_key
        exec(compile(self.source, "<taxi_rsp compiled top-k>", "exec"), namespace)  # noqa: S102 - our own source
        self._key = namespace["key"]

    def _float(self, term_id: Any) -> float:
        """The correctly rounded float of a numeric id (inline integer or decimal, or a
        computed exact value); anything else is outside the compiled key (raises _Miss)."""
        if type(term_id) is int and term_id & INLINE_FLAG:
            code = (term_id >> TYPE_SHIFT) & 0xF
            if code == T_INTEGER or code == T_DECIMAL:
                payload = ((term_id & PAYLOAD_MASK) ^ _SIGN) - _SIGN
                # every representation rounded the same way (int / int is correctly
                # rounded in Python, like float(Fraction)), so the floats stay monotone
                return float(payload) if code == T_INTEGER else payload / DECIMAL_SCALE
        value = self._dictionary.value(term_id) if term_id is not None else None
        if type(value) is int or type(value) is Fraction:
            return float(value)
        raise _Miss

    # -- updates -----------------------------------------------------------------------
    def push(self, deltas: list[Delta]) -> None:
        if self.mode == "reference":
            self._reference.push(deltas)
            return
        if self._key is None:
            try:
                self._compile(deltas[0][0])
                self.mode = "compiled"
            except NoFast:
                self._hand_over(deltas)
                return
        key_of, held, ordered, wanted = self._key, self._held, self._sorted, self._wanted
        for n, (row, mult) in enumerate(deltas):
            found = held.get(row)
            if found is None:
                if mult < 0:
                    raise ValueError(f"retraction of a row not in the top-k input: {row!r}")
                key = key_of(row)
                if key is None:
                    self._hand_over(deltas[n:])
                    return
                if not self._changed and (wanted is None or bisect_left(ordered, key) < wanted):
                    self._changed = True
                insort(ordered, key)
                held[row] = [key, mult]
                continue
            key = found[0]
            if not self._changed and (wanted is None or bisect_left(ordered, key) < wanted):
                self._changed = True
            found[1] += mult
            if found[1] < 0:
                raise ValueError(f"retraction below zero in top-k: {row!r}")
            if found[1] == 0:
                del ordered[bisect_left(ordered, key)]
                del held[row]

    def _hand_over(self, remaining: list[Delta]) -> None:
        """Give the relation to the reference operator, which answers from now on."""
        reference = self._reference
        reference.push([(row, found[1]) for row, found in self._held.items()])
        reference.push(remaining)
        reference._last = self._last
        reference.changed = True
        self._held.clear()
        self._sorted.clear()
        self.mode = "reference"

    def snapshot(self) -> list[Row]:
        """The current ordered result rows (OFFSET/LIMIT applied, duplicates kept)."""
        if self.mode == "reference":
            return self._reference.snapshot()
        self._changed = False
        wanted = self._wanted
        rows: list[Row] = []
        held = self._held
        for key in self._sorted:
            row = key[-1]
            rows.extend([row] * held[row][1])
            if wanted is not None and len(rows) >= wanted:
                break
        return rows[self.offset:wanted]

    def flush(self) -> None:
        if self.mode == "reference":
            self._reference.flush()
            return
        if not self._emits_deltas:
            return
        current = self.snapshot()
        if current == self._last:
            return
        old, new = Counter(self._last), Counter(current)
        out: list[Delta] = [(row, -n) for row, n in (old - new).items()]
        out += [(row, n) for row, n in (new - old).items()]
        self._last = current
        self.emit(out)


class _Exact:
    """A numeric id compared by its exact value, decoded only when a comparison needs
    it (a float tie): building a key costs no ``Fraction``."""

    __slots__ = ("term_id", "value_of")

    def __init__(self, value_of: Callable[[Any], Any], term_id: Any) -> None:
        self.value_of = value_of
        self.term_id = term_id

    def _value(self) -> Any:
        return self.value_of(self.term_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Exact) and self._value() == other._value()

    def __lt__(self, other: _Exact) -> bool:
        return self._value() < other._value()

    def __hash__(self) -> int:
        return hash(self._value())


class _ReversedExact(_Exact):
    """The descending order of :class:`_Exact`."""

    __slots__ = ()

    def __lt__(self, other: _Exact) -> bool:
        return other._value() < self._value()
