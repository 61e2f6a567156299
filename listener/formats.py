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

from taxi_rsp.rdf.terms import DateTime


def _fixed(value: Fraction, places: int) -> str:
    scaled = round(Fraction(value) * 10**places)  # round() on Fraction: half to even
    sign = "-" if scaled < 0 else ""
    whole, frac = divmod(abs(scaled), 10**places)
    return f"{sign}{whole}.{frac:0{places}d}"


def money(value: object) -> str:
    """Dollars with 2 decimals, or 3 when the exact value ends in half a cent."""
    exact = Fraction(value)  # type: ignore[arg-type]
    if (exact * 100).denominator == 1:
        return _fixed(exact, 2)
    return _fixed(exact, 3)


def fixed4(value: object) -> str:
    """The exact value rounded half to even to 4 decimals."""
    return _fixed(Fraction(value), 4)  # type: ignore[arg-type]


def integer(value: object) -> str:
    return str(int(value))  # type: ignore[call-overload]


def text(value: object) -> str:
    return str(value)


def timestamp(value: int) -> str:
    """An event time (ms) in the CSV's ``YYYY-MM-DD HH:MM:SS`` form."""
    return DateTime(value).to_datetime().strftime("%Y-%m-%d %H:%M:%S")


FORMATTERS = {"money": money, "fixed4": fixed4, "integer": integer, "text": text}
