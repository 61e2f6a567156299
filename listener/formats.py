"""Value formatting of the challenge output (SPEC §5).

>>> money(Fraction(975, 100)), money(Fraction(10125, 1000)), money(Fraction(7))
('9.75', '10.125', '7.00')
>>> fixed4(Fraction(1, 3)), fixed4(Fraction(5, 100000)), fixed4(Fraction(15, 100000))
('0.3333', '0.0000', '0.0002')
>>> timestamp(DateTime.parse("2013-01-01 00:32:00"))
'2013-01-01 00:32:00'
"""

from __future__ import annotations

from fractions import Fraction

from taxi_rsp.rdf.dictionary import fraction_parts
from taxi_rsp.rdf.terms import DateTime


def _ratio(value: object) -> tuple[int, int]:
    """``value`` (an int, Fraction, Decimal or a number's text) as numerator and a
    positive denominator: the formatting below is integer arithmetic (Fraction's is
    Python code, many times slower, and a new value is formatted for most lines)."""
    if type(value) is Fraction:
        return fraction_parts(value)  # type: ignore[arg-type]
    as_ratio = getattr(value, "as_integer_ratio", None)
    return as_ratio() if as_ratio is not None else Fraction(value).as_integer_ratio()  # type: ignore[arg-type]


_POWERS = tuple(10**k for k in range(10))


def _fixed(numerator: int, denominator: int, places: int) -> str:
    """numerator / denominator rounded half to even to ``places`` decimals."""
    unit = _POWERS[places] if places < len(_POWERS) else 10**places  # a tuple read, not a pow per value
    scaled, rest = divmod(numerator * unit, denominator)  # floor, 0 <= rest < denominator
    if 2 * rest > denominator or (2 * rest == denominator and scaled & 1):
        scaled += 1
    sign = "-" if scaled < 0 else ""
    whole, frac = divmod(abs(scaled), unit)
    return f"{sign}{whole}.{frac:0{places}d}"


def money(value: object) -> str:
    """Dollars with 2 decimals, or 3 when the exact value ends in half a cent."""
    n, d = _ratio(value)
    return _fixed(n, d, 2 if n * 100 % d == 0 else 3)


def fixed4(value: object) -> str:
    """The exact value rounded half to even to 4 decimals."""
    n, d = _ratio(value)
    return _fixed(n, d, 4)


def integer(value: object) -> str:
    return str(int(value))  # type: ignore[call-overload]


def text(value: object) -> str:
    return str(value)


_last_second: list = [None, ""]  # the second timestamp() formatted last, and its text


def timestamp(value: int) -> str:
    """An event time (ms) in the CSV's ``YYYY-MM-DD HH:MM:SS`` form (milliseconds
    dropped).

    Output lines come in time order and the taxi data's drop-offs are whole minutes, so
    consecutive lines mostly share their second: its text is kept and reused (building a
    ``datetime`` per line cost a sixth of a query that writes a line per event).

    >>> timestamp(1356998400999), timestamp(1356998400000), timestamp(-1)
    ('2013-01-01 00:00:00', '2013-01-01 00:00:00', '1969-12-31 23:59:59')
    """
    second = value // 1000
    if second != _last_second[0]:
        _last_second[1] = DateTime(second * 1000).to_datetime().strftime("%Y-%m-%d %H:%M:%S")
        _last_second[0] = second
    return _last_second[1]


FORMATTERS = {"money": money, "fixed4": fixed4, "integer": integer, "text": text}
