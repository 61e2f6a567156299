"""RDF terms and the mapping between literals and Python values.

Literal values used by expressions:

=================  ==========================================
datatype           Python value
=================  ==========================================
xsd:integer (+)    ``int``
xsd:decimal        ``fractions.Fraction`` (exact, never float)
xsd:double         ``float``
xsd:float          :class:`Float` (a ``float`` rounded to single precision)
xsd:boolean        ``bool``
xsd:dateTime       :class:`DateTime` (int milliseconds, UTC; ``offset`` keeps a zone)
xsd:string         ``str`` (the lexical form)
rdf:langString     :class:`LangString` (a ``str`` with ``lang``)
anything else      the :class:`Literal` itself (unknown or ill-typed: compared as a term)
=================  ==========================================

>>> Literal("-73.956528", XSD_DECIMAL).value()
Fraction(-4622283, 62500)
>>> value_to_literal(Fraction(975, 100)).lexical
'9.75'
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction

from taxi_rsp.rdf.namespaces import (
    INTEGER_TYPES,
    XSD,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    XSD_STRING,
)

DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
INTEGER_RE = re.compile(r"[+-]?[0-9]+\Z")
DATETIME_RE = re.compile(
    r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?\Z"
)
_EPOCH = datetime(1970, 1, 1)
XSD_FLOAT = XSD + "float"


def single_precision(value: float) -> float:
    """``value`` rounded to the nearest IEEE single-precision number (xsd:float)."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


class Float(float):
    """An xsd:float value: single precision, and kept apart from doubles so that
    DATATYPE and results say xsd:float.

    >>> Float(33.33) == 33.33, str(value_to_literal(Float(33.33)).lexical)
    (False, '33.33')
    """

    __slots__ = ()

    def __new__(cls, value: float) -> Float:
        return super().__new__(cls, single_precision(float(value)))

    def shortest(self) -> str:
        """The shortest decimal text that reads back as this single-precision value."""
        if math.isnan(self) or math.isinf(self):
            return repr(float(self))
        for digits in range(1, 10):
            text = f"{float(self):.{digits}g}"
            if single_precision(float(text)) == self:
                return text
        return repr(float(self))


@dataclass(frozen=True, slots=True)
class IRI:
    value: str

    def n3(self) -> str:
        return f"<{self.value}>"


@dataclass(frozen=True, slots=True)
class BNode:
    label: str

    def n3(self) -> str:
        return f"_:{self.label}"


@dataclass(frozen=True, slots=True)
class Literal:
    lexical: str
    datatype: str = XSD_STRING
    lang: str | None = None

    def value(self) -> object:
        """The Python value of this literal (see the module table)."""
        if self.lang:
            return LangString(self.lexical, self.lang)
        if self.datatype == XSD_STRING:
            return self.lexical
        value = literal_value(self.lexical, self.datatype)
        if isinstance(value, str):  # unknown datatype or ill-typed lexical form: a plain term
            return self
        return value

    def n3(self) -> str:
        escaped = (
            self.lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        )
        if self.lang:
            return f'"{escaped}"@{self.lang}'
        if self.datatype == XSD_STRING:
            return f'"{escaped}"'
        return f'"{escaped}"^^<{self.datatype}>'


Term = IRI | BNode | Literal


class LangString(str):
    """A language-tagged string value: string functions see the text, ``lang`` rides along.

    >>> LangString("chat", "fr") == LangString("chat", "en")
    False
    """

    __slots__ = ("lang",)

    def __new__(cls, text: str, lang: str) -> LangString:
        self = super().__new__(cls, text)
        self.lang = lang.lower()
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LangString):
            return str.__eq__(self, other) and self.lang == other.lang
        return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((str(self), self.lang))

    def __repr__(self) -> str:
        return f"LangString({str(self)!r}, {self.lang!r})"


class DateTime(int):
    """An xsd:dateTime as integer milliseconds since 1970-01-01T00:00:00 (naive).

    >>> DateTime.parse("2013-01-01 00:02:00").isoformat()
    '2013-01-01T00:02:00'
    """

    __slots__ = ()
    offset: int | None = None  # the zone in minutes east of UTC, see ZonedDateTime

    @classmethod
    def parse(cls, text: str) -> DateTime:
        match = DATETIME_RE.match(text)
        if match is None:
            raise ValueError(f"not an xsd:dateTime: {text!r}")
        year, month, day, hour, minute, second, frac, zone = match.groups()
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
        millis = round(float(frac) * 1000) if frac else 0
        if zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        delta = moment - _EPOCH
        utc = (delta.days * 86_400 + delta.seconds) * 1000 + millis
        if zone:
            return ZonedDateTime.at(utc, 0 if zone == "Z" else sign * (int(zone[1:3]) * 60 + int(zone[4:6])))
        return cls(utc)

    def to_datetime(self) -> datetime:
        """The wall-clock time (local to the zone for a zoned value)."""
        return _EPOCH + timedelta(milliseconds=int(self) + (self.offset or 0) * 60_000)

    def isoformat(self) -> str:
        moment = self.to_datetime()
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        if moment.microsecond:
            text += f".{moment.microsecond // 1000:03d}"
        return text

    def __repr__(self) -> str:
        return f"DateTime({self.isoformat()!r})"


class ZonedDateTime(DateTime):
    """An xsd:dateTime with a time zone: the int is the UTC instant (so comparisons are
    right), ``offset`` the zone for HOURS(), TZ(), TIMEZONE() and printing."""

    @classmethod
    def at(cls, utc_millis: int, offset: int) -> ZonedDateTime:
        value = cls(utc_millis)
        value.offset = offset
        return value

    def isoformat(self) -> str:
        text = super().isoformat()
        if self.offset == 0:
            return text + "Z"
        sign = "+" if self.offset > 0 else "-"
        hours, minutes = divmod(abs(self.offset), 60)
        return f"{text}{sign}{hours:02d}:{minutes:02d}"


def parse_decimal(text: str) -> Fraction:
    """Parse xsd:decimal syntax exactly (ASCII digits only, no exponent)."""
    if DECIMAL_RE.match(text) is None:
        raise ValueError(f"not an xsd:decimal: {text!r}")
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    whole, _, frac = body.partition(".")
    places = len(frac)
    numerator = int(whole or "0") * 10**places + int(frac or "0")
    return Fraction(sign * numerator, 10**places)


def literal_value(lexical: str, datatype: str) -> object:
    """Convert a typed literal to its Python value; ill-typed literals stay strings."""
    try:
        if datatype in INTEGER_TYPES:
            if INTEGER_RE.match(lexical):
                return int(lexical)
        elif datatype == XSD_DECIMAL:
            return parse_decimal(lexical)
        elif datatype == XSD_DOUBLE:
            return float(lexical)
        elif datatype == XSD_FLOAT:
            return Float(float(lexical))
        elif datatype == XSD_BOOLEAN:
            if lexical in ("true", "1"):
                return True
            if lexical in ("false", "0"):
                return False
        elif datatype == XSD_DATETIME:
            return DateTime.parse(lexical)
    except ValueError:
        pass
    return lexical


DECIMAL_DIGITS = 18
"""Significant digits of a non-terminating decimal's lexical form: the precision every
minimally conforming XSD 1.0 processor must hold (``totalDigits`` 18, XSD 1.0 Part 2
§3.2.3), so any consumer reads the printed value back exactly."""


def _terminating_scale(denominator: int) -> int | None:
    """The number of decimal places of p/denominator when it terminates (the denominator
    is 2^a·5^b, a fraction in lowest terms), else None."""
    twos = (denominator & -denominator).bit_length() - 1
    rest, fives = denominator >> twos, 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    return max(twos, fives) if rest == 1 else None


def _floor_log10(numerator: int, denominator: int) -> int:
    """floor(log10(numerator / denominator)) of a positive fraction, exactly."""
    exponent = len(str(numerator)) - len(str(denominator))  # the answer or one more
    if exponent >= 0:
        return exponent if numerator >= denominator * 10**exponent else exponent - 1
    return exponent if numerator * 10**-exponent >= denominator else exponent - 1


def format_decimal(value: Fraction | int, digits: int = DECIMAL_DIGITS) -> str:
    """Canonical xsd:decimal lexical form (XSD 1.0 §3.2.3.2): a point with at least one
    digit on each side, no leading or trailing zeros beyond those, no ``+``, no ``-0.0``.

    A value whose decimal expansion terminates prints exactly, however many digits it
    has. A non-terminating one (1/3, most averages) is rounded to ``digits`` significant
    digits, half to even (a non-terminating value is never exactly halfway), keeping at
    least every digit of its integer part; trailing zeros of the rounded value are
    dropped. docs/semantics.md ("Decimal results") records the decision.

    >>> format_decimal(Fraction(-1, 8)), format_decimal(Fraction(3)), format_decimal(Fraction(0))
    ('-0.125', '3.0', '0.0')
    >>> format_decimal(Fraction(2, 3)), format_decimal(Fraction(-1, 30_000))
    ('0.666666666666666667', '-0.0000333333333333333333')
    >>> format_decimal(Fraction(10**20, 3))
    '33333333333333333333.0'
    """
    if type(value) is int:
        numerator, denominator = value, 1
    else:  # a Fraction is in lowest terms with a positive denominator: integers from here on
        value = value if type(value) is Fraction else Fraction(value)
        numerator, denominator = value.numerator, value.denominator
    if numerator == 0:
        return "0.0"
    sign = "-" if numerator < 0 else ""
    numerator = abs(numerator)
    places = _terminating_scale(denominator)
    if places is not None:
        scaled = numerator * 10**places // denominator
    else:
        places = max(digits - 1 - _floor_log10(numerator, denominator), 0)
        scaled, rest = divmod(numerator * 10**places, denominator)
        if 2 * rest > denominator or (2 * rest == denominator and scaled & 1):  # half to even
            scaled += 1
    whole, fraction = divmod(scaled, 10**places)
    fraction_text = f"{fraction:0{places}d}".rstrip("0") if places else ""
    return f"{sign}{whole}.{fraction_text or '0'}"


def value_to_literal(value: object) -> Literal:
    """The canonical literal of a Python value produced by an expression."""
    if isinstance(value, bool):
        return Literal("true" if value else "false", XSD_BOOLEAN)
    if isinstance(value, DateTime):
        return Literal(value.isoformat(), XSD_DATETIME)
    if isinstance(value, int):
        return Literal(str(value), XSD_INTEGER)
    if isinstance(value, Fraction):
        return Literal(format_decimal(value), XSD_DECIMAL)
    if isinstance(value, Float):
        return Literal(value.shortest(), XSD_FLOAT)
    if isinstance(value, float):
        return Literal(repr(value), XSD_DOUBLE)
    if isinstance(value, Literal):
        return value
    if isinstance(value, LangString):
        return Literal(str(value), XSD_STRING, value.lang)
    return Literal(str(value))
