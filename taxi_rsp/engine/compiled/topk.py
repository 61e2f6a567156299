"""ORDER BY … LIMIT with generated sort keys over plain integers.

The reference :class:`~taxi_rsp.engine.ops.topk.TopKOp` builds, per row, a nested key
(``((rank, ±value), …), row-id tie-break, row)`` through generic expression closures
that decode every id, and keeps it in a ``SortedList``. When the ORDER BY values have
one kind per key — integers, decimals (as integers scaled by a compile-time power of ten),
exact numbers of any representation (as ``float, exact ratio``: the correctly rounded
float is monotone in the value, so floats that differ already order the values; the
exact ratio, compared by integer cross-multiplication, breaks float ties), strings
ascending — every rank is the same, so the key
``(±v1, …, ±vn, tie-break, row)`` orders rows exactly as the reference does (its
tie-break is the row of ids itself when all of them are integers). Those flat tuples compare in C,
are computed by one generated function (:class:`~taxi_rsp.engine.compiled.codegen.ChunkCompiler`).

Only the best keys are kept in order: with a LIMIT, a plain ``list`` kept sorted with
:mod:`bisect` holds the *head* (at most ``HEAD_SLACK`` × the rows to report, and every
key in it sorts before every other held key), the others wait unsorted in a ``dict``
(the *rest*; a ±1 change of a route far from the top is two dict updates, not two
bisects over thousands of keys). When removals leave the head with fewer keys than the
rows to report, it is refilled from the rest with the smallest keys
(:func:`heapq.nsmallest`: one pass, no sort of the rest) - the TMA idea of a top-k
buffer between k and k_max (Yi et al., ICDE 2003) on a sorted list. Whether a held row
waits in the rest is a flag in its entry, not a second ``dict``: a change looks its row up
once. The held rows are keyed by identity (the row object's address) while every
retraction names the very object inserted - the rule for group outputs (a group retracts
the row it emitted), window rows (an expiry emits the rows of the arrival) and joins of
lone rows (the join keeps their merged row): hashing a row of ids, most of what a change
far from the top cost, is then an integer's hash. Equal rows inserted as distinct objects
are held as distinct entries (reported alike: the keys are equal). The first retraction of
an equal but distinct object keys them by value from then on, merging such entries.

Most changes land in the rest, and a rest row's key is read only by a refill. When the
first ORDER BY part is a numeric variable or a ratio ``?a / ?b`` of inline numbers, a new
row whose first part alone (a C integer or double, no key tuple, no exact ratio) sorts
strictly after the head's last key joins the rest without a key; the rare refill computes
the keys it lacks (and hands over if one falls outside the compiled assumptions: the row's
first part already placed it after every reported row, so the reports before are exact).

A row outside those assumptions (another kind, an unbound value, a computed-value id)
makes the operator hand over to the reference: the current relation is pushed into a
:class:`TopKOp`, which answers from then on.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from heapq import nsmallest
from collections.abc import Callable
from fractions import Fraction
from math import gcd
from typing import Any

import cython

from taxi_rsp.engine.compiled.codegen import ChunkCompiler, NoFast, Miss, type_codes
from taxi_rsp.engine.cells import InCell
from taxi_rsp.engine.compiled.generated import define
from taxi_rsp.engine.ops.base import Delta, Operator, Row
from taxi_rsp.engine.ops.topk import TopKOp, row_key, emit_snapshot_change
from taxi_rsp.engine.reclaim import retired as _retired_list
from taxi_rsp.engine.rowcache import ByIdentity
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import (
    DECIMAL_SCALE,
    INLINE_FLAG,
    T_DECIMAL,
    T_INTEGER,
    TYPE_SHIFT,
    PAYLOAD_BITS,
    PAYLOAD_MASK,
    Dictionary,
    inline_payload,
)
from taxi_rsp.rdf.terms import IRI

retired = cython.declare(list, _retired_list)  # typed: appends and clear() are C calls (see reclaim)

HEAD_SLACK = 4  # the sorted head holds up to this many times the rows to report
HEAD_MIN = 64  # ... and at least this many keys (small limits refill less often)


class CompiledTopK(Operator):
    """Same results as :class:`TopKOp` (as the ordered root, or emitting deltas)."""

    compiled = True
    _key = InCell(0)

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
        reference.emit_for(self)
        self._dictionary = dictionary
        # Extends fused from below (see fuse_extends): rows arrive without them; keys
        # read their inputs, and only reported rows are extended.
        self._extends: list[tuple[str, Any]] = []
        self._input_schema = schema
        self._extend_row = None
        self._extensions: ByIdentity | None = None  # of the last snapshot's rows (see _extend_reported)
        self._sorted: list[tuple] = []  # the head: the best keys, in order
        # held row's identity (or the row, once _by_value) -> [key, multiplicity, in the
        # rest, row]: those outside the head (the rest) are flagged, and counted in
        # _rest_count[0]
        self._held: dict[Any, list] = {}
        self._by_value: list[bool] = []  # non-empty once rows are keyed by value (see _to_value)
        self._rest_count: list[int] = [0]
        # how many held rows have a multiplicity above one: while none has, a snapshot
        # reads the head's rows without looking each one up
        self._multiples: list[int] = [0]
        # the head's capacity (unbounded without a LIMIT: everything stays sorted)
        self._capacity = None if self._wanted is None else max(HEAD_MIN, HEAD_SLACK * self._wanted)
        self.last_snapshot: list[Row] = []  # the ordered result last emitted as deltas
        # _key (see InCell): row -> flat sort key, once compiled (None before the first row)
        self._cells: list[Any] = [None]
        # how a row's first key part is read without its key (see _first_after); kind
        # FIRST_NONE until _compile finds one
        self._first = _FirstPart()
        # whether the reported prefix may differ from the last snapshot: a plain attribute
        # (the report policy reads it every instant; a property call costs ~5x a read),
        # mirroring the reference's flag once it answers
        self.changed = True
        self._handed_over: list[bool] = []  # non-empty once the reference answers
        self.push = self._pusher()  # push(deltas): a closure, see _pusher
        self.flush = self._flusher()
        self.source = ""

    @property
    def mode(self) -> str:
        """"specialised on the first row" until its key is compiled, then "compiled", or
        "reference" once the reference operator answers."""
        if self._handed_over:
            return "reference"
        return "compiled" if self._key is not None else "specialised on the first row"

    # -- the R2S interface (changed / snapshot) -----------------------------------------
    def describe(self) -> str:
        return f"CompiledTopK offset {self.offset} limit {self.limit} ({self.mode})"

    def state_size(self) -> int:
        return self._reference.state_size() if self._handed_over else len(self._held)

    def fuse_extends(self, input_schema: tuple[str, ...], extends: list[tuple[str, Any]],
                     extend_row: Callable[[Row], Row | None]) -> None:
        """Take rows of ``input_schema`` from below a chain of BIND steps (``extends``:
        (variable, expression) pairs, ``extend_row`` their reference chain): sort keys
        read the inputs of the extended values, and a ratio ``?a / ?b`` used as a key
        is compared by cross-multiplication without ever being built; rows are extended
        only when reported. Ordering by the unextended row breaks ties exactly as the
        extended one does (it is its prefix)."""
        self._input_schema = input_schema
        self._extends = extends
        self._extend_row = extend_row

    def _extended(self, row: Row) -> Row:
        return row if self._extend_row is None else self._extend_row(row)  # type: ignore[return-value]

    def extend_row(self, row: Row) -> Row:
        """``row`` (of the input schema) with the fused BINDs' values: a reported row."""
        return self._extended(row)

    # -- keys ------------------------------------------------------------------------
    def _ratio_inputs(self, name: str, schema: tuple[str, ...]) -> tuple[int, int] | None:
        """Input positions of ``a`` and ``b`` when the fused extend of ``name`` is
        ``?a / ?b`` and nothing else reads ``name``."""
        defined = dict(self._extends)
        expr = defined.get(name)
        if not (isinstance(expr, ast.Call) and expr.op == "/" and len(expr.args) == 2
                and all(isinstance(a, ast.Var) and a.name in schema for a in expr.args)):
            return None
        others = [e for v, e in self._extends if v != name] + [e for e, _ in self._order]
        if sum(_mentions(e, name) for e in others) != 1:  # only as this ORDER BY key
            return None
        return schema.index(expr.args[0].name), schema.index(expr.args[1].name)

    def _compile(self, sample: Row) -> None:
        schema = self._input_schema
        codes = type_codes(sample)
        c = ChunkCompiler(self._dictionary, schema, codes)
        ratios = {e.name: r for e, _ in self._order if isinstance(e, ast.Var)
                  and (r := self._ratio_inputs(e.name, schema)) is not None}
        for var, expr in self._extends:
            if var not in ratios:
                c.add_extend(var, expr)
        self._first.set(*self._first_part(sample, schema, codes, ratios))
        parts = []
        pairs: list[str] = []  # lines binding a local to a (float, exact) pair of key parts
        for expr, descending in self._order:
            direction = "descending" if descending else "ascending"
            if isinstance(expr, ast.Var) and expr.name in ratios:
                a, b = ratios[expr.name]
                # the same (numerator, divisor) ids recur constantly: memoised
                pair = c.w.local("p")
                pairs.append(f"{pair} = (_inline_ratio(x{a}, x{b}, {descending}) or _ratio_{direction}_memo.get((x{a}, x{b}))"
                             f" or _ratio_{direction}(x{a}, x{b}))")
                parts += [f"{pair}[0]", f"{pair}[1]"]  # indexed: a star-unpack builds a list first
                continue
            textual = (self._textual(sample[schema.index(expr.name)])
                       if isinstance(expr, ast.Var) and expr.name in schema and not descending else None)
            if textual is not None:
                # a string (a medallion, a name) or an IRI (a trip, a subject): ordered by
                # its text, as the reference orders strings among themselves and IRIs
                # among themselves; another kind here hands over
                parts.append(f"{textual}(x{schema.index(expr.name)})")
                continue
            if isinstance(expr, ast.Var) and expr.name in schema and codes.get(
                    schema.index(expr.name)) != T_INTEGER:
                # a number whose id may be an inline decimal or a computed exact value:
                # the float first (compared in C), the exact value breaks float ties
                pair = c.w.local("p")
                pairs.append(f"{pair} = _{direction}(x{schema.index(expr.name)})")
                parts += [f"{pair}[0]", f"{pair}[1]"]
                continue
            code, kind = c.expr(expr)
            numeric = kind in ("I", "F") or isinstance(kind, tuple)
            if not numeric and (descending or kind != "S"):
                raise NoFast(expr)  # a descending string has no negation
            parts.append(f"-({code})" if descending else code)
        w = c.w
        guard = c.guard_test()
        unpack = ", ".join(f"x{i}" for i in range(len(schema)))
        src = ["def key(row):", "    try:"]
        if unpack:
            src.append(f"        {unpack}, = row")
        if guard:
            src.append(f"        if {guard}: raise Miss")
        src += [f"        {line}" for line in w.lines + pairs]
        # the reference's tie-break: the row itself when all its ids are ints (the
        # guarded positions are inline ids, ints already)
        ints = " and ".join(f"type(x{i}) is int" for i in range(len(schema)) if i not in w.guards) or "True"
        src.append(f"        tie = row if {ints} else row_key(row)")
        src.append(f"        return ({''.join(p + ', ' for p in parts)}tie, row)")
        src += ["    except Exception:", "        return None"]
        self.source = "\n".join(src)
        namespace = dict(w.consts)
        namespace.update(c.runtime())
        namespace["Miss"] = Miss
        namespace["_ascending"] = self._ascending
        namespace["_descending"] = self._descending
        for direction in ("ascending", "descending"):
            compute = getattr(self, f"_ratio_{direction}")
            memo: dict[tuple[int, int], tuple[float, _Rational]] = {}
            namespace[f"_ratio_{direction}"] = _memoised(compute, memo)
            namespace[f"_ratio_{direction}_memo"] = memo
        namespace["_inline_ratio"] = inline_ratio
        namespace["row_key"] = row_key
        namespace["_text"] = self._text
        namespace["_iri"] = self._iri
        functions = define(self.source, "<taxi_rsp compiled top-k>", namespace)
        self._key = functions["key"]

    def _first_part(self, sample: Row, schema: tuple[str, ...], codes: dict[int, int],
                    ratios: dict[str, tuple[int, int]]) -> tuple[int, int, int, bool]:
        """How :func:`_first_after` reads the first key part :meth:`_compile` builds, as
        its loop decides it: a ratio of two inputs (``ratios``), an input read as an
        inline integer (the sample's type code), a number read as its correctly rounded
        float (an input ordered neither by its text nor as an integer), or nothing
        readable alone (a computed expression, a text)."""
        if not self._order:
            return FIRST_NONE, 0, 0, False
        expr, descending = self._order[0]
        if not isinstance(expr, ast.Var):
            return FIRST_NONE, 0, 0, False
        if expr.name in ratios:
            a, b = ratios[expr.name]
            return FIRST_RATIO, a, b, descending
        if expr.name not in schema:
            return FIRST_NONE, 0, 0, False
        at = schema.index(expr.name)
        if not descending and self._textual(sample[at]) is not None:
            return FIRST_NONE, 0, 0, False
        return (FIRST_INTEGER if codes.get(at) == T_INTEGER else FIRST_NUMBER), at, 0, descending

    def _text_or_none(self, term_id: Any) -> Any:
        """The Python value of a dictionary id that is not inline (None otherwise)."""
        if type(term_id) is int and not term_id & INLINE_FLAG:
            return self._dictionary.value(term_id)
        return None

    def _text(self, term_id: Any) -> str:
        """Key part of a string id: its text (anything else is outside the compiled key)."""
        value = self._text_or_none(term_id)
        if type(value) is not str:
            raise Miss
        return value

    def _iri(self, term_id: Any) -> str:
        """Key part of an IRI id (a numbered IRI's inline id too): its text; anything
        else is outside the compiled key."""
        value = self._dictionary.value(term_id) if type(term_id) is int else None
        if type(value) is not IRI:
            raise Miss
        return value.value

    def _textual(self, term_id: Any) -> str | None:
        """The key part function for ``term_id``'s kind when it is ordered by its text:
        "_text" for a string, "_iri" for an IRI, None otherwise."""
        if type(self._text_or_none(term_id)) is str:
            return "_text"
        if type(term_id) is int and type(self._dictionary.value(term_id)) is IRI:
            return "_iri"
        return None

    def _exact(self, term_id: Any) -> tuple[int, int]:
        """A numeric id's exact value as a reduced ratio of integers (n, d), d > 0: an
        inline integer or decimal, or a computed exact value; anything else is outside
        the compiled key (raises Miss)."""
        inline = _inline_exact(term_id)
        if inline is not None:
            return inline
        value = self._dictionary.value(term_id) if term_id is not None else None
        if type(value) is int:
            return value, 1
        if type(value) is Fraction:
            return value.numerator, value.denominator
        raise Miss

    def _ascending(self, term_id: Any) -> tuple[float, _Rational]:
        """Key parts of a numeric id: its correctly rounded float, then its exact value
        (int / int is correctly rounded in Python, like float(Fraction))."""
        n, d = self._exact(term_id)
        return n / d, _Rational(n, d)

    def _descending(self, term_id: Any) -> tuple[float, _Rational]:
        n, d = self._exact(term_id)
        return -(n / d), _Rational(-n, d)

    def _ratio(self, top: Any, bottom: Any) -> tuple[int, int]:
        """The quotient of two numeric ids, reduced, with a positive divisor, from
        integers only (a zero divisor is an error for the reference: outside the key)."""
        a_n, a_d = _inline_exact(top) or self._exact(top)
        b_n, b_d = _inline_exact(bottom) or self._exact(bottom)
        n, d = a_n * b_d, a_d * b_n
        if d == 0:
            raise Miss
        if d < 0:
            n, d = -n, -d
        common = gcd(n, d)
        return n // common, d // common

    def _ratio_ascending(self, top: Any, bottom: Any) -> tuple[float, _Rational]:
        n, d = self._ratio(top, bottom)
        return n / d, _Rational(n, d)

    def _ratio_descending(self, top: Any, bottom: Any) -> tuple[float, _Rational]:
        n, d = self._ratio(top, bottom)
        return -(n / d), _Rational(-n, d)

    # -- updates -----------------------------------------------------------------------
    def _pusher(self) -> Callable[[list[Delta]], None]:
        """``push``: a closure over the head, the rest and the held rows, built once (a
        call reads two attributes, not ten: every batch of changes to the ranked rows ends here)."""
        # typed for the compiled module: dict and list methods called directly
        held = cython.declare(dict, self._held)
        ordered = cython.declare(list, self._sorted)
        rest_count = cython.declare(list, self._rest_count)
        multiples = cython.declare(list, self._multiples)
        wanted, capacity = self._wanted, self._capacity
        handed_over = self._handed_over
        by_value = cython.declare(list, self._by_value)
        first = cython.declare(_FirstPart, self._first)
        cells = cython.declare(list, self._cells)

        def push(deltas: list[Delta]) -> None:
            if handed_over:
                if self._extend_row is not None:
                    deltas = [(self._extended(row), mult) for row, mult in deltas]
                self._reference.push(deltas)
                self.changed = self._reference.changed
                return
            key_of = cells[0]
            if key_of is None:
                try:
                    self._compile(deltas[0][0])
                except NoFast:
                    self._hand_over(deltas)
                    return
                key_of = cells[0]
            changed = False  # whether this push changed the reported prefix (ORed into self.changed)
            n = cython.declare(cython.Py_ssize_t)  # compiled: a C counter, not an int object per delta
            # entries are lists: compiled, their slots are read and written in C
            found = cython.declare(list)
            fresh = cython.declare(list)
            for n, (row, mult) in enumerate(deltas):
                # one look-up of the row per change: a retraction takes its entry out at
                # once (put back in the rare case a multiplicity stays), an insertion offers
                # a fresh entry that the dict keeps only when the row is new
                held_as = row if by_value else _identity(row)
                if mult < 0:
                    found = held.pop(held_as, None)
                    if found is None and not by_value:  # an equal row, not the very object
                        self._to_value()
                        held_as = row
                        found = held.pop(held_as, None)
                    if found is None:
                        raise ValueError(f"retraction of a row not in the top-k input: {row!r}")
                    if not by_value and cython.cast(cython.Py_ssize_t, found[1]) + cython.cast(cython.Py_ssize_t, mult) < 0:
                        # more retracted from this object than it was added as: an equal
                        # row took its share (a join holding equal rows once, counted)
                        held[held_as] = found
                        self._to_value()
                        held_as = row
                        found = held.pop(held_as)
                else:
                    fresh = [None, mult, False, row]
                    found = held.setdefault(held_as, fresh)
                    if found is fresh:
                        if mult > 1:
                            multiples[0] += 1
                        if rest_count[0] and ordered and len(ordered) >= wanted and _first_after(row, first, ordered[-1][0]):
                            # after the whole head by its first part: waits in the rest, its
                            # key left for a refill (nor can it change the reported prefix)
                            fresh[2] = True
                            rest_count[0] += 1
                            continue
                        key = key_of(row)
                        if key is None:
                            del held[held_as]
                            self.changed = self.changed or changed
                            self._hand_over(deltas[n:])
                            return
                        fresh[0] = key
                        # a key reaches the reported prefix iff it sorts at or before its
                        # last key (one comparison; equal to bisect_left(ordered, key) < wanted)
                        # (LIMIT 0 with no OFFSET: wanted is 0, the prefix is empty and never changes)
                        if not changed and (wanted is None or (wanted and (len(ordered) < wanted
                                                                           or _key_le(key, ordered[wanted - 1])))):
                            changed = True
                        if rest_count[0]:
                            if not ordered and not self._refill():  # a rest row's key fell outside
                                self.changed = self.changed or changed
                                self._hand_over(deltas[n + 1:])  # this row is held already
                                return
                            if _key_gt(key, ordered[-1]):  # after the whole head: it waits in the rest
                                fresh[2] = True
                                rest_count[0] += 1
                                continue
                        insort(ordered, key)
                        if capacity is not None and len(ordered) > capacity:
                            held[_held_as(ordered.pop()[-1], by_value)][2] = True
                            rest_count[0] += 1
                        continue
                key = found[0]  # None for a rest row that never needed its key
                # a row of the rest sorts after every head key: in the reported prefix only
                # while the head is short
                if not changed and (wanted is None or (wanted and (len(ordered) < wanted or (
                        not found[2] and _key_le(key, ordered[wanted - 1]))))):
                    changed = True
                before = found[1]
                count = found[1] = before + mult
                if (before > 1) != (count > 1):
                    multiples[0] += 1 if count > 1 else -1
                if count <= 0:
                    if count < 0:
                        raise ValueError(f"retraction below zero in top-k: {row!r}")
                    retired.append(found)  # freed after the event's outputs (see reclaim)
                    if found[2]:
                        rest_count[0] -= 1
                    else:
                        del ordered[bisect_left(ordered, key)]
                elif mult < 0:
                    held[held_as] = found  # still held (a multiplicity above one)
            if changed:  # an attribute write per push otherwise (most change only the rest)
                self.changed = True

        return push

    def _refill(self) -> bool:
        """Move the smallest keys of the rest into the head, up to its capacity (every
        key left in the rest sorts after them, and the head's keys sort before all),
        computing the keys rest rows were given without (see _first_after). False, and
        the head untouched, when such a key falls outside the compiled assumptions: the
        caller hands over."""
        ordered, held, key_of, by_value = self._sorted, self._held, self._key, self._by_value
        waiting = []
        for entry in held.values():
            if entry[2]:
                if entry[0] is None:
                    entry[0] = key_of(entry[3])
                    if entry[0] is None:
                        return False
                waiting.append(entry[0])
        moved = nsmallest(self._capacity - len(ordered), waiting)
        for key in moved:
            held[_held_as(key[-1], by_value)][2] = False
        self._rest_count[0] -= len(moved)
        ordered.extend(moved)  # nsmallest returns them in order, all after the head's keys
        return True

    def _hand_over(self, remaining: list[Delta]) -> None:
        """Give the relation to the reference operator, which answers from now on."""
        reference = self._reference
        extended = self._extended
        reference.push([(extended(found[3]), found[1]) for found in self._held.values()])
        reference.push([(extended(row), mult) for row, mult in remaining])
        reference.last_snapshot = self.last_snapshot
        reference.changed = self.changed = True
        self._held.clear()
        self._sorted.clear()
        self._rest_count[0] = 0
        self._multiples[0] = 0
        self._handed_over.append(True)

    def _to_value(self) -> None:
        """Key the held rows by value from now on: a retraction named a row equal to a held
        one but not the very object. Equal rows held as distinct entries become one entry
        with their multiplicities added, kept in the head if either was there (their keys
        are equal, so the head keeps its order and the reported rows do not change)."""
        ordered, rest_count = self._sorted, self._rest_count
        merged: dict[Row, list] = {}
        for entry in self._held.values():
            kept = merged.setdefault(entry[3], entry)
            if kept is entry:
                continue
            if kept[2] and not entry[2]:  # keep the one in the head
                merged[entry[3]] = entry
                kept, entry = entry, kept
            kept[1] += entry[1]
            if entry[2]:
                rest_count[0] -= 1
            else:
                del ordered[bisect_left(ordered, entry[0])]  # one of two equal keys
        self._held.clear()  # in place: the push closure holds this dict
        self._held.update(merged)
        self._multiples[0] = sum(1 for entry in merged.values() if entry[1] > 1)
        self._by_value.append(True)

    def snapshot(self) -> list[Row]:
        """The current ordered result rows (OFFSET/LIMIT applied, duplicates kept)."""
        if self._handed_over:
            rows = self._reference.snapshot()
            self.changed = self._reference.changed
            return rows
        self.changed = False
        wanted = self._wanted
        if wanted is not None and len(self._sorted) < wanted and self._rest_count[0] and not self._refill():
            self._hand_over([])
            return self.snapshot()
        if not self._multiples[0]:  # every row held once: the head's first keys are the rows
            rows = [key[-1] for key in self._sorted[self.offset:wanted]]
        else:
            rows = []
            held, by_value = self._held, self._by_value
            for key in self._sorted:
                row = key[-1]
                rows.extend([row] * held[_held_as(row, by_value)][1])
                if wanted is not None and len(rows) >= wanted:
                    break
            rows = rows[self.offset:wanted]
        if self._extend_row is not None:
            rows = self._extend_reported(rows)
        return rows

    def _extend_reported(self, rows: list[Row]) -> list[Row]:
        """The fused BINDs on the reported rows; a row reported last time too (most
        are, as the very object the head holds) reuses its extension (fused BINDs are
        deterministic: see fuse_extends)."""
        if self._extensions is None:
            self._extensions = ByIdentity(self._extend_row)  # type: ignore[arg-type]
        return self._extensions.map(rows)

    def _flusher(self) -> Callable[[], None]:
        """``flush``: a closure (the query calls it every instant; as the ordered root,
        which emits no deltas, it does nothing until a hand-over)."""
        handed_over, reference, emits_deltas = self._handed_over, self._reference, self._emits_deltas

        def flush() -> None:
            if handed_over:
                reference.flush()
                self.changed = reference.changed
                return
            if emits_deltas:
                emit_snapshot_change(self)

        return flush



@cython.inline
@cython.cfunc
def _identity(row: object) -> cython.Py_ssize_t:
    """``id(row)``: compiled, the object's address without calling the builtin."""
    return cython.cast(cython.Py_ssize_t, cython.cast(cython.p_void, row)) if cython.compiled else id(row)


def _held_as(row: Row, by_value: list[bool]) -> Any:
    """The key of a held ``row`` in the top-k's held rows (its identity until they are
    keyed by value)."""
    return row if by_value else _identity(row)


_MEMO_LIMIT = 1 << 16

# the kinds of first key part _first_after reads
FIRST_NONE = cython.declare(cython.int, 0)
FIRST_RATIO = cython.declare(cython.int, 1)  # a: the numerator's position, b: the divisor's
FIRST_INTEGER = cython.declare(cython.int, 2)  # a: the position of an inline integer
FIRST_NUMBER = cython.declare(cython.int, 3)  # a: the position of a number (its float first)
_Quotient = cython.struct(n=cython.longlong, d=cython.longlong)  # an exact n / d (see _inline_quotient)
_ONE = INLINE_FLAG | (T_INTEGER << TYPE_SHIFT) | 1  # the inline id of the integer 1


@cython.cclass
class _FirstPart:
    """Where a row's first key part is read from (C fields: read per change)."""

    kind = cython.declare(cython.int, visibility="readonly")
    a = cython.declare(cython.Py_ssize_t, visibility="readonly")
    b = cython.declare(cython.Py_ssize_t, visibility="readonly")
    descending = cython.declare(cython.bint, visibility="readonly")

    def __init__(self) -> None:
        self.set(FIRST_NONE, 0, 0, False)

    def set(self, kind: int, a: int, b: int, descending: bool) -> None:
        self.kind, self.a, self.b, self.descending = kind, a, b, descending


# Sort keys are compared per change (is it in the reported prefix? after the head?). A
# tuple comparison first looks for the first unequal parts with rich comparisons; when
# the first parts are floats (a ratio's correctly rounded value) or ints (a count) that
# differ, they decide at once: floats as C doubles, ints with one comparison. Anything
# else (equal first parts, other types): the tuple comparison, so the order is unchanged.
@cython.cfunc
@cython.locals(a=tuple, b=tuple, fx=cython.double, fy=cython.double)
@cython.returns(cython.int)
def _first_parts_order(a: tuple, b: tuple) -> int:
    """1 when ``a`` sorts first, 2 when ``b`` does, decided by first parts that are floats,
    or ints, and differ; 0 when the tuple comparison has to decide. (Not -1: a C int
    result of -1 makes the caller ask whether an exception was raised.)"""
    x, y = a[0], b[0]
    if type(x) is float and type(y) is float:
        fx, fy = x, y
        if fx < fy:
            return 1
        if fx > fy:
            return 2
    elif type(x) is int and type(y) is int and x != y:
        return 1 if x < y else 2
    return 0


@cython.cfunc
@cython.cdivision(True)
@cython.locals(row=tuple, first=_FirstPart, q=_Quotient, t=cython.longlong, value=cython.double, bound=cython.double)
@cython.returns(cython.bint)
def _first_after(row: tuple, first: _FirstPart, last: Any) -> bool:
    """Whether ``row``'s first key part, read alone as ``first`` says, is exactly the one
    its key would start with and sorts strictly after ``last`` (the head's last key's
    first part): then the key sorts after the whole head. False when that part cannot be
    read alone (another kind of id, a zero divisor, a quotient of numbers beyond doubles'
    exact integers): the key decides. The double ``n / d`` of exact integers is correctly
    rounded: the float :func:`inline_ratio`, the exact path or ``_ascending`` /
    ``_descending`` put in the key (Python's int / int rounds correctly too)."""
    if first.kind == FIRST_RATIO or first.kind == FIRST_NUMBER:
        if type(last) is not float:
            return False
        # a number is its quotient by the integer 1
        q = _inline_quotient(row[first.a], row[first.b] if first.kind == FIRST_RATIO else _ONE)
        if q.d == 0 or not (-_EXACT_DOUBLE < q.n < _EXACT_DOUBLE and q.d < _EXACT_DOUBLE):
            return False
        value = cython.cast(cython.double, q.n) / cython.cast(cython.double, q.d)
        if first.descending:
            value = -value
        bound = last
        return value > bound
    if first.kind == FIRST_INTEGER:
        if type(last) is not int:
            return False
        x = row[first.a]
        if type(x) is not int:
            return False
        t = x
        if not t & _FLAG or ((t >> _SHIFT) & 0xF) != _INTEGER:
            return False
        t = _signed_payload(t)
        if first.descending:
            t = -t
        return t > last
    return False


@cython.cfunc
@cython.locals(a=tuple, b=tuple, order=cython.int)
@cython.returns(cython.bint)
def _key_le(a: tuple, b: tuple) -> bool:
    """``a <= b`` for two sort keys."""
    order = _first_parts_order(a, b)
    return order == 1 if order else a <= b


@cython.cfunc
@cython.locals(a=tuple, b=tuple, order=cython.int)
@cython.returns(cython.bint)
def _key_gt(a: tuple, b: tuple) -> bool:
    """``a > b`` for two sort keys."""
    order = _first_parts_order(a, b)
    return order == 2 if order else a > b


def _memoised(compute: Callable[[Any, Any], tuple], memo: dict) -> Callable[[Any, Any], tuple]:
    """``compute`` remembering its results in ``memo`` (bounded: emptied when full).
    Term ids never change meaning, so a pair of ids always has the same key parts;
    the generated key reads ``memo`` first and calls this only on a miss."""
    def miss(top: Any, bottom: Any) -> tuple:
        parts = compute(top, bottom)
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[top, bottom] = parts
        return parts
    return miss


@cython.cclass
class _Rational:
    """An exact number as a reduced ratio ``n / d`` (d > 0), ordered by integer
    cross-multiplication: no ``Fraction`` arithmetic in comparisons. Negating ``n``
    reverses the order (descending keys). Compiled, an extension type: two keys whose
    floats tie compare these (often: equal ratios of small counts), and a comparison
    is then a C slot call, not a Python method call."""

    n = cython.declare(object, visibility="readonly")
    d = cython.declare(object, visibility="readonly")

    def __init__(self, n: int, d: int) -> None:
        self.n = n
        self.d = d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Rational) and self.n == other.n and self.d == other.d

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    # every order, not only <: a tuple comparison applies its own operator to the
    # first pair of items that differ (key <= last key in the top-k's push)
    def __lt__(self, other: _Rational) -> bool:
        return self.n * other.d < other.n * self.d

    def __le__(self, other: _Rational) -> bool:
        return self.n * other.d <= other.n * self.d

    def __gt__(self, other: _Rational) -> bool:
        return self.n * other.d > other.n * self.d

    def __ge__(self, other: _Rational) -> bool:
        return self.n * other.d >= other.n * self.d

    def __hash__(self) -> int:
        return hash((self.n, self.d))


# C constants for inline_ratio (compiled, a module-level Python name is a look-up per use)
_EXACT_DOUBLE = cython.declare(cython.longlong, 1 << 53)  # below: doubles exactly, so their quotient is correctly rounded
_SCALABLE = cython.declare(cython.longlong, (1 << 62) // DECIMAL_SCALE)  # below: times the scale fits 63 bits
_SCALE = cython.declare(cython.longlong, DECIMAL_SCALE)
_FLAG = cython.declare(cython.longlong, INLINE_FLAG)
_SHIFT = cython.declare(cython.longlong, TYPE_SHIFT)
_MASK = cython.declare(cython.longlong, PAYLOAD_MASK)
_SIGN_BIT = cython.declare(cython.longlong, PAYLOAD_BITS - 1)
_WRAP = cython.declare(cython.longlong, 1 << PAYLOAD_BITS)
_INTEGER = cython.declare(cython.longlong, T_INTEGER)
_DECIMAL = cython.declare(cython.longlong, T_DECIMAL)


@cython.ccall
@cython.cdivision(True)  # every % and // below has non-negative operands (or an exact quotient)
@cython.locals(q=_Quotient, n=cython.longlong, d=cython.longlong, x=cython.longlong, y=cython.longlong,
               rest=cython.longlong, value=cython.double, exact=_Rational)
def inline_ratio(top: Any, bottom: Any, descending: bool) -> tuple[float, _Rational] | None:
    """The key parts of ``top / bottom`` (as ``_ratio_ascending`` / ``_ratio_descending``
    give them) computed on C integers when both are inline integers or decimals of
    moderate size, the usual case (a median of amounts over a count of taxis): no memo
    look-up, no Python arithmetic. None for anything else, which the memoised exact path
    decides (a zero divisor, a computed value, a quotient beyond doubles' exact integers).

    >>> from taxi_rsp.rdf.dictionary import Dictionary
    >>> from taxi_rsp.rdf.terms import Literal
    >>> d = Dictionary()
    >>> fare = d.encode(Literal("7.5", "http://www.w3.org/2001/XMLSchema#decimal"))
    >>> taxis = d.encode(Literal("3", "http://www.w3.org/2001/XMLSchema#integer"))
    >>> value, exact = inline_ratio(fare, taxis, False)
    >>> value, exact.n, exact.d
    (2.5, 5, 2)
    >>> inline_ratio(fare, d.encode(Literal("0", "http://www.w3.org/2001/XMLSchema#integer")), True) is None
    True
    """
    q = _inline_quotient(top, bottom)
    if q.d == 0:
        return None
    n, d = q.n, q.d
    x, y = (n if n >= 0 else -n), d
    while y:  # Euclid: x becomes gcd(|n|, d)
        rest = x % y
        x, y = y, rest
    n, d = n // x, d // x
    if not -_EXACT_DOUBLE < n < _EXACT_DOUBLE or d >= _EXACT_DOUBLE:
        return None
    value = cython.cast(cython.double, n) / cython.cast(cython.double, d)
    if descending:
        value, n = -value, -n
    exact = _Rational.__new__(_Rational)  # no __init__ call: the fields are set here
    exact.n = n
    exact.d = d
    return value, exact


@cython.cfunc
@cython.locals(t=cython.longlong, b=cython.longlong, top_scale=cython.longlong, bottom_scale=cython.longlong,
               q=_Quotient)
@cython.returns(_Quotient)
def _inline_quotient(top: Any, bottom: Any) -> Any:
    """``top / bottom`` as ``n / d`` on C integers (d > 0, not reduced) when both are
    inline integers or decimals of moderate size; ``d == 0`` for anything else (a zero
    divisor, another kind of id, a payload whose product with the other's scale could
    overflow). Read by :func:`inline_ratio` and :func:`_first_after`."""
    q = _Quotient(n=0, d=0)
    if type(top) is not int or type(bottom) is not int:
        return q
    t, b = top, bottom  # ids are below 2**63
    if not (t & _FLAG and b & _FLAG):
        return q
    top_scale = _inline_scale((t >> _SHIFT) & 0xF)
    bottom_scale = _inline_scale((b >> _SHIFT) & 0xF)
    if top_scale == 0 or bottom_scale == 0:
        return q
    t = _signed_payload(t)
    b = _signed_payload(b)
    if (bottom_scale != 1 and not -_SCALABLE < t < _SCALABLE) or (top_scale != 1 and not -_SCALABLE < b < _SCALABLE):
        return q
    q.n = t * bottom_scale  # top / bottom = (t / top_scale) / (b / bottom_scale)
    q.d = b * top_scale
    if q.d < 0:
        q.n, q.d = -q.n, -q.d
    return q


@cython.cfunc
@cython.locals(code=cython.longlong)
@cython.returns(cython.longlong)
def _inline_scale(code: int) -> int:
    """What an inline payload of type ``code`` is scaled by: 1 for an integer, the
    decimal scale for a decimal, 0 for any other type."""
    if code == _INTEGER:
        return 1
    if code == _DECIMAL:
        return _SCALE
    return 0


@cython.cfunc
@cython.locals(term_id=cython.longlong, raw=cython.longlong)
@cython.returns(cython.longlong)
def _signed_payload(term_id: int) -> int:
    """The signed payload of an inline id (as :func:`inline_payload`, on C integers)."""
    raw = term_id & _MASK
    return raw - _WRAP if raw >> _SIGN_BIT else raw


def _inline_exact(term_id: Any) -> tuple[int, int] | None:
    """The exact value (n, d) of an inline integer or decimal id, reduced; None for any
    other id (a module function: the memo misses of ratio keys call it twice each)."""
    if type(term_id) is int and term_id & INLINE_FLAG:
        code = (term_id >> TYPE_SHIFT) & 0xF
        if code == T_INTEGER:
            return inline_payload(term_id), 1
        if code == T_DECIMAL:
            payload = inline_payload(term_id)
            common = gcd(payload, DECIMAL_SCALE)
            return payload // common, DECIMAL_SCALE // common
    return None


def _mentions(expr: Any, name: str) -> int:
    """How often variable ``name`` occurs in ``expr``."""
    if isinstance(expr, ast.Var):
        return int(expr.name == name)
    if isinstance(expr, ast.Call):
        return sum(_mentions(a, name) for a in expr.args)
    return 0
