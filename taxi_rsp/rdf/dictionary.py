"""Dictionary encoding of RDF terms as 63-bit integer ids (CQELS ISWC 2011, §4.2).

Hot paths (matching, joining, grouping) compare ids, never strings. Small values are
*inlined* in the id itself, so they need no table lookup and equal values always get
equal ids:

* bit 62 set: inline value; bits 58..61 a type code; bits 0..57 the payload as a
  58-bit two's-complement integer (integers, decimals scaled by 10^9 when exact,
  dateTimes in milliseconds, booleans);
* bit 62 clear: index + 1 into the term table (IRIs, blank nodes, strings, other
  literals and values too large to inline).

>>> d = Dictionary()
>>> i = d.encode(Literal("42", "http://www.w3.org/2001/XMLSchema#integer"))
>>> d.is_inline(i), d.value(i)
(True, 42)
>>> d.decode(d.encode(IRI("http://example.org/a")))
IRI(value='http://example.org/a')
"""

from __future__ import annotations

from fractions import Fraction

from taxi_rsp.rdf.namespaces import INTEGER_TYPES, XSD_BOOLEAN, XSD_DATETIME, XSD_DECIMAL
from taxi_rsp.rdf.terms import (
    IRI,
    BNode,
    DateTime,
    Literal,
    Term,
    literal_value,
    value_to_literal,
)

INLINE_FLAG = 1 << 62
TYPE_SHIFT = 58
PAYLOAD_BITS = 58
PAYLOAD_MASK = (1 << PAYLOAD_BITS) - 1
PAYLOAD_MIN = -(1 << (PAYLOAD_BITS - 1))
PAYLOAD_MAX = (1 << (PAYLOAD_BITS - 1)) - 1
DECIMAL_SCALE = 10**9

T_INTEGER = 1
T_DECIMAL = 2
T_DATETIME = 3
T_BOOLEAN = 4


def _inline(type_code: int, payload: int) -> int:
    return INLINE_FLAG | (type_code << TYPE_SHIFT) | (payload & PAYLOAD_MASK)


def _payload(term_id: int) -> int:
    raw = term_id & PAYLOAD_MASK
    return raw - (1 << PAYLOAD_BITS) if raw >> (PAYLOAD_BITS - 1) else raw


class Dictionary:
    """A two-way map between terms and ids; see the module docstring for the layout."""

    __slots__ = ("_ids", "_terms", "_values")

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term] = []
        self._values: list[object] = []

    def __len__(self) -> int:
        return len(self._terms)

    @staticmethod
    def is_inline(term_id: int) -> bool:
        return bool(term_id & INLINE_FLAG)

    # -- encoding ---------------------------------------------------------------
    def encode(self, term: Term) -> int:
        """The id of a term, adding it to the table when it is not inlinable."""
        found = self._ids.get(term)
        if found is not None:
            return found
        if isinstance(term, Literal) and term.lang is None:
            inline = self._try_inline(literal_value(term.lexical, term.datatype), term.datatype)
            if inline is not None:
                return inline
        return self._add(term)

    def encode_value(self, value: object) -> int:
        """The id of an expression result (a Python value, see :mod:`.terms`)."""
        if isinstance(value, (IRI, BNode, Literal)):
            return self.encode(value)
        inline = self._try_inline(value, None)
        if inline is not None:
            return inline
        return self.encode(value_to_literal(value))

    def _try_inline(self, value: object, datatype: str | None) -> int | None:
        if isinstance(value, bool):
            if datatype in (None, XSD_BOOLEAN):
                return _inline(T_BOOLEAN, int(value))
            return None
        if isinstance(value, DateTime):
            if datatype in (None, XSD_DATETIME) and PAYLOAD_MIN <= value <= PAYLOAD_MAX:
                return _inline(T_DATETIME, int(value))
            return None
        if isinstance(value, int):
            if (datatype is None or datatype in INTEGER_TYPES) and PAYLOAD_MIN <= value <= PAYLOAD_MAX:
                return _inline(T_INTEGER, value)
            return None
        if isinstance(value, Fraction) and datatype in (None, XSD_DECIMAL):
            scaled = value * DECIMAL_SCALE
            if scaled.denominator == 1 and PAYLOAD_MIN <= scaled.numerator <= PAYLOAD_MAX:
                return _inline(T_DECIMAL, scaled.numerator)
        return None

    def _add(self, term: Term) -> int:
        self._terms.append(term)
        self._values.append(term.value() if isinstance(term, Literal) else term)
        term_id = len(self._terms)
        self._ids[term] = term_id
        return term_id

    # -- decoding ---------------------------------------------------------------
    def value(self, term_id: int) -> object:
        """The Python value of an id: numbers, dateTimes, booleans, strings, or the
        IRI/BNode term itself."""
        if term_id & INLINE_FLAG:
            type_code = (term_id >> TYPE_SHIFT) & 0xF
            payload = _payload(term_id)
            if type_code == T_INTEGER:
                return payload
            if type_code == T_DECIMAL:
                return Fraction(payload, DECIMAL_SCALE)
            if type_code == T_DATETIME:
                return DateTime(payload)
            return bool(payload)
        return self._values[term_id - 1]

    def decode(self, term_id: int) -> Term:
        """The RDF term of an id (inline values in canonical lexical form)."""
        if term_id & INLINE_FLAG:
            return value_to_literal(self.value(term_id))
        return self._terms[term_id - 1]

    def lookup(self, term: Term) -> int | None:
        """The id of a term if it is known (or inlinable), else None; never adds."""
        found = self._ids.get(term)
        if found is None and isinstance(term, Literal) and term.lang is None:
            found = self._try_inline(literal_value(term.lexical, term.datatype), term.datatype)
        return found
