"""Dictionary encoding of RDF terms as 63-bit integer ids (CQELS ISWC 2011, §4.2).

Hot paths (matching, joining, grouping) compare ids, never strings. Small values are
*inlined* in the id itself, so they need no table lookup and equal values always get
equal ids:

* bit 62 set: inline value; bits 58..61 a type code; bits 0..57 the payload as a
  58-bit two's-complement integer (integers, decimals scaled by 10^9 when exact,
  dateTimes in milliseconds, booleans);
  IRIs of the form ``<prefix><number>`` (``http://debs2015.org/trip/17``) are inlined
  too, as a prefix number and the number, so per-event IRIs do not grow the table;
* bit 62 clear: index + 1 into the term table (IRIs, blank nodes, strings, other
  literals and values too large to inline).

Computed values that cannot be inlined (an exact non-terminating decimal such as a
profitability of 1/3) are not added to the table either: ``encode_value`` returns a
:class:`Computed` cell holding the exact value, so a long run does not grow the
dictionary with every intermediate number.

>>> d = Dictionary()
>>> i = d.encode(Literal("42", "http://www.w3.org/2001/XMLSchema#integer"))
>>> d.is_inline(i), d.value(i)
(True, 42)
>>> d.decode(d.encode(IRI("http://example.org/a")))
IRI(value='http://example.org/a')
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import gcd

from taxi_rsp.rdf.namespaces import (
    INTEGER_TYPES,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
)
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
T_NUMBERED_IRI = 5
PREFIX_BITS = 8
NUMBER_BITS = PAYLOAD_BITS - PREFIX_BITS
_NUMBERED_IRI = re.compile(r"(.*[/#:])([1-9][0-9]{0,14}|0)\Z")


class Computed:
    """An expression result kept by value instead of by id (see the module docstring)."""

    __slots__ = ("_hash", "_key", "value")

    def __init__(self, value: object) -> None:
        self.value = value
        self._key = (type(value).__name__, value)
        self._hash: int | None = None  # a Fraction's hash is costly: computed once

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Computed) and self._key == other._key)

    def __hash__(self) -> int:
        found = self._hash
        if found is None:
            found = self._hash = hash(self._key)
        return found

    def __repr__(self) -> str:
        return f"Computed({self.value!r})"

    def __lt__(self, other: object) -> bool:  # total order for tie-breaking only
        return repr(self) < repr(other)


def ordered_number_ids(type_code: int) -> tuple[int, int]:
    """``(low, high)``: the ids of the non-negative inline numbers of ``type_code``
    (T_INTEGER or T_DECIMAL) are ``low <= id < high`` and order like the numbers, so two
    such ids of one type compare without decoding (a negative number's id is ``high`` or
    above).

    >>> low, high = ordered_number_ids(T_INTEGER)
    >>> low <= Dictionary.integer_id(0) < Dictionary.integer_id(7) < high <= Dictionary.integer_id(-1)
    True
    """
    low = INLINE_FLAG | (type_code << TYPE_SHIFT)
    return low, low + (1 << (PAYLOAD_BITS - 1))


def _inline(type_code: int, payload: int) -> int:
    return INLINE_FLAG | (type_code << TYPE_SHIFT) | (payload & PAYLOAD_MASK)


def exact_ratio(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)``, built without Fraction's constructor when
    both are ints: its checks run as interpreted code (≈ 2 µs a call), and generated code
    divides with this (Q2's profitability of every reported row). The ratio is reduced
    with ``math.gcd`` and stored as Fraction stores it (tests/test_exact_ratio.py).

    >>> exact_ratio(6, -4), exact_ratio(0, 5), exact_ratio(7, 1) == 7
    (Fraction(-3, 2), Fraction(0, 1), True)
    """
    if not _FRACTION_SLOTS or type(numerator) is not int or type(denominator) is not int:
        return Fraction(numerator, denominator)
    if denominator == 0:
        raise ZeroDivisionError(f"Fraction({numerator}, 0)")
    common = gcd(numerator, denominator)
    if denominator < 0:
        common = -common  # the sign goes to the numerator, as Fraction puts it
    value = _new_object(Fraction)
    value._numerator = numerator // common
    value._denominator = denominator // common
    return value


def _fraction_slots_usable() -> bool:
    """Whether a Fraction is two slots ``_numerator`` / ``_denominator`` (CPython 3.8 to
    3.13): then :func:`exact_ratio` may fill them; otherwise it calls the constructor."""
    try:
        probe = _new_object(Fraction)
        probe._numerator, probe._denominator = -3, 2
    except (AttributeError, TypeError):
        return False
    return probe == Fraction(-3, 2) and hash(probe) == hash(Fraction(-3, 2)) and str(probe) == "-3/2"


_new_object = object.__new__
_FRACTION_SLOTS = _fraction_slots_usable()


def encode_fraction(value: Fraction) -> int | Computed:
    """:meth:`Dictionary.encode_value` of a Fraction without its type dispatch and
    Fraction arithmetic: an inline decimal when the value has at most 9 decimals and
    fits, else a :class:`Computed` cell.

    >>> encode_fraction(Fraction(1, 4)) == Dictionary().encode_value(Fraction(1, 4))
    True
    >>> encode_fraction(Fraction(1, 3))
    Computed(Fraction(1, 3))
    """
    scaled = _decimal_payload(value)
    return Computed(value) if scaled is None else _inline(T_DECIMAL, scaled)


def fraction_parts(value: Fraction) -> tuple[int, int]:
    """``value.as_integer_ratio()`` of a Fraction, read from its slots when
    :func:`exact_ratio` may fill them: ``numerator``, ``denominator`` and
    ``as_integer_ratio`` are Python code in :mod:`fractions` (an interpreted frame each,
    once per exact ratio a report encodes and per value a listener formats).

    >>> fraction_parts(Fraction(6, -4)), fraction_parts(exact_ratio(10, 4))
    ((-3, 2), (5, 2))
    """
    if _FRACTION_SLOTS and type(value) is Fraction:
        return value._numerator, value._denominator
    return value.as_integer_ratio()


def _decimal_payload(value: Fraction) -> int | None:
    """The inline payload of a decimal (the value in units of 10^-9), or None when it has
    more than 9 decimals or does not fit; integer arithmetic, no Fraction product."""
    numerator, denominator = fraction_parts(value)
    unit, rest = divmod(DECIMAL_SCALE, denominator)
    if rest:
        return None
    scaled = numerator * unit
    return scaled if PAYLOAD_MIN <= scaled <= PAYLOAD_MAX else None


def inline_payload(term_id: int) -> int:
    """The signed payload of an inline id (its value, or its value scaled for decimals)."""
    raw = term_id & PAYLOAD_MASK
    return raw - (1 << PAYLOAD_BITS) if raw >> (PAYLOAD_BITS - 1) else raw


class Dictionary:
    """A two-way map between terms and ids; see the module docstring for the layout."""

    __slots__ = ("_decimals", "_ids", "_prefix_list", "_prefixes", "_terms", "_values")

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._terms: list[Term] = []
        self._values: list[object] = []
        self._prefixes: dict[str, int] = {}
        self._prefix_list: list[str] = []
        # Decoded inline decimals, cached: coordinates repeat a lot and Fraction()
        # construction dominates expression cost. Cleared when large (bounded memory).
        self._decimals: dict[int, Fraction] = {}

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
        elif isinstance(term, IRI):
            inline = self._numbered_iri(term.value)
            if inline is not None:
                return inline
        return self._add(term)

    def _numbered_iri(self, iri: str) -> int | None:
        match = _NUMBERED_IRI.match(iri)
        if match is None:
            return None
        number = int(match.group(2))
        if number >> NUMBER_BITS:
            return None
        prefix = match.group(1)
        code = self._prefixes.get(prefix)
        if code is None:
            if len(self._prefix_list) >= 1 << PREFIX_BITS:
                return None
            code = self._prefixes[prefix] = len(self._prefix_list)
            self._prefix_list.append(prefix)
        return _inline(T_NUMBERED_IRI, (code << NUMBER_BITS) | number)

    def encode_value(self, value: object) -> int:
        """The id of an expression result (a Python value, see :mod:`.terms`)."""
        if isinstance(value, (IRI, BNode, Literal)):
            return self.encode(value)
        inline = self._try_inline(value, None)
        if inline is not None:
            return inline
        if isinstance(value, (Fraction, float)):
            return Computed(value)  # type: ignore[return-value]
        return self.encode(value_to_literal(value))

    def _try_inline(self, value: object, datatype: str | None) -> int | None:
        if isinstance(value, bool):
            if datatype in (None, XSD_BOOLEAN):
                return _inline(T_BOOLEAN, int(value))
            return None
        if isinstance(value, DateTime):
            if value.offset is not None:
                return None  # the zone is part of the value (TZ(), HOURS()): kept in the table
            if datatype in (None, XSD_DATETIME) and PAYLOAD_MIN <= value <= PAYLOAD_MAX:
                return _inline(T_DATETIME, int(value))
            return None
        if isinstance(value, int):
            if (datatype is None or datatype in INTEGER_TYPES) and PAYLOAD_MIN <= value <= PAYLOAD_MAX:
                return _inline(T_INTEGER, value)
            return None
        if isinstance(value, Fraction) and datatype in (None, XSD_DECIMAL):
            scaled = _decimal_payload(value)
            if scaled is not None:
                return _inline(T_DECIMAL, scaled)
        return None

    def _add(self, term: Term) -> int:
        self._terms.append(term)
        self._values.append(term.value() if isinstance(term, Literal) else term)
        term_id = len(self._terms)
        self._ids[term] = term_id
        return term_id

    # -- fast paths for producers that already hold exact values ---------------
    @staticmethod
    def integer_id(value: int) -> int:
        """The id of an xsd:integer that fits the inline payload."""
        if not PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            raise OverflowError(value)
        return _inline(T_INTEGER, value)

    @staticmethod
    def decimal_id(scaled: int, places: int) -> int:
        """The id of the xsd:decimal ``scaled / 10**places`` (places <= 9)."""
        value = scaled * 10 ** (9 - places)
        if not PAYLOAD_MIN <= value <= PAYLOAD_MAX:
            raise OverflowError(scaled)
        return _inline(T_DECIMAL, value)

    @staticmethod
    def datetime_id(millis: int) -> int:
        return _inline(T_DATETIME, millis)

    def numbered_iri_id(self, prefix: str, number: int) -> int:
        """The id of IRI ``prefix + str(number)`` (same as ``encode`` would give)."""
        code = self._prefixes.get(prefix)
        if code is None or number >> NUMBER_BITS or number < 0:
            return self.encode(IRI(f"{prefix}{number}"))
        return _inline(T_NUMBERED_IRI, (code << NUMBER_BITS) | number)

    # -- decoding ---------------------------------------------------------------
    def value(self, term_id: int) -> object:
        """The Python value of an id: numbers, dateTimes, booleans, strings, or the
        IRI/BNode term itself."""
        if type(term_id) is not int:
            return term_id.value  # type: ignore[attr-defined]
        cached = self._decimals.get(term_id)
        if cached is not None:
            return cached
        if term_id & INLINE_FLAG:
            type_code = (term_id >> TYPE_SHIFT) & 0xF
            payload = inline_payload(term_id)
            if type_code == T_INTEGER:
                return payload
            if type_code == T_DECIMAL:
                value = exact_ratio(payload, DECIMAL_SCALE)  # not Fraction's interpreted constructor
                if len(self._decimals) >= 1 << 16:  # ~10 MB at most
                    self._decimals.clear()
                self._decimals[term_id] = value
                return value
            if type_code == T_DATETIME:
                return DateTime(payload)
            if type_code == T_NUMBERED_IRI:
                return IRI(self._prefix_list[payload >> NUMBER_BITS] + str(payload & ((1 << NUMBER_BITS) - 1)))
            return bool(payload)
        return self._values[term_id - 1]

    def decode(self, term_id: int) -> Term:
        """The RDF term of an id (inline values in canonical lexical form)."""
        if type(term_id) is not int:
            return value_to_literal(term_id.value)  # type: ignore[attr-defined]
        if term_id & INLINE_FLAG:
            value = self.value(term_id)
            return value if isinstance(value, IRI) else value_to_literal(value)
        return self._terms[term_id - 1]

    def lookup(self, term: Term) -> int | None:
        """The id of a term if it is known (or inlinable), else None; never adds."""
        found = self._ids.get(term)
        if found is None and isinstance(term, Literal) and term.lang is None:
            found = self._try_inline(literal_value(term.lexical, term.datatype), term.datatype)
        elif found is None and isinstance(term, IRI) and _NUMBERED_IRI.match(term.value):
            found = self._numbered_iri(term.value)
        return found
