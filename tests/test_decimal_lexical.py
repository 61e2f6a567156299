"""Canonical xsd:decimal lexical forms of computed decimals (docs/semantics.md,
"Decimal results"): exact when the expansion terminates, else rounded half to even to
18 significant digits; XSD 1.0 canonical form in both cases."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taxi_rsp.engine.expr import lexical
from taxi_rsp.rdf.terms import DECIMAL_DIGITS, XSD_DECIMAL, format_decimal, parse_decimal, value_to_literal

# XSD 1.0 §3.2.3.2: no '+', no leading zeros but one before the point, no trailing zeros
# but one after it, and zero is unsigned.
CANONICAL = re.compile(r"-?(0|[1-9][0-9]*)\.(0|[0-9]*[1-9])\Z")

fractions = st.builds(Fraction, st.integers(-(10**30), 10**30), st.integers(1, 10**12))


def _terminates(value: Fraction) -> bool:
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return denominator == 1


def _significant(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").lstrip("0").rstrip("0")
    return len(digits)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(0), "0.0"),
        (Fraction(3), "3.0"),
        (Fraction(-3), "-3.0"),
        (Fraction(-1, 8), "-0.125"),
        (Fraction(975, 100), "9.75"),
        (Fraction(1, 3), "0.333333333333333333"),
        (Fraction(2, 3), "0.666666666666666667"),  # rounded, not truncated (was ...666)
        (Fraction(5, 3), "1.66666666666666667"),  # 18 significant digits
        (Fraction(-200, 3), "-66.6666666666666667"),
        (Fraction(1, 7), "0.142857142857142857"),
        (Fraction(1, 3 * 10**25), "0.0000000000000000000000000333333333333333333"),  # was 0.000…0 (20 zeros)
        (Fraction(10**20, 3), "33333333333333333333.0"),  # the integer part is never rounded away
        (Fraction(10**18 - 1, 10**18 + 1), "0.999999999999999998"),
        (Fraction(10**19 - 1, 10**19 + 1), "1.0"),  # rounds up to 1: trailing zeros dropped
        (Fraction(123456789, 1000), "123456.789"),
    ],
)
def test_known_forms(value: Fraction, text: str) -> None:
    assert format_decimal(value) == text
    assert CANONICAL.match(text)


def test_terminating_values_are_exact_however_long() -> None:
    value = Fraction(1, 2**70)  # 70 decimal places
    assert parse_decimal(format_decimal(value)) == value
    assert len(format_decimal(value).partition(".")[2]) == 70


@given(fractions)
def test_canonical_exact_or_18_significant_digits(value: Fraction) -> None:
    text = format_decimal(value)
    assert CANONICAL.match(text), text
    assert text != "-0.0"
    if _terminates(value):
        assert parse_decimal(text) == value
    elif abs(value) < 10 ** (DECIMAL_DIGITS - 1):  # the integer part fits in the 18 digits
        assert _significant(text) <= DECIMAL_DIGITS
        assert parse_decimal(text) != 0  # a non-zero value never prints as zero


@given(fractions)
def test_rounding_is_to_nearest_at_the_chosen_place(value: Fraction) -> None:
    """Against an independent rounding: Python's Decimal with a large context, quantized."""
    from decimal import ROUND_HALF_EVEN, Context, Decimal

    text = format_decimal(value)
    if _terminates(value) or value == 0:
        return
    context = Context(prec=200)
    exact = context.divide(Decimal(value.numerator), Decimal(value.denominator))
    exponent = exact.adjusted()  # floor(log10(|value|)), exact at 200 digits for these sizes
    places = max(DECIMAL_DIGITS - 1 - exponent, 0)
    expected = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN, context=context)
    assert parse_decimal(text) == Fraction(expected)


def test_str_and_result_literals_agree() -> None:
    value = Fraction(5, 3)
    assert lexical(value) == value_to_literal(value).lexical == "1.66666666666666667"
    assert value_to_literal(value).datatype == XSD_DECIMAL


@given(st.integers(-(10**40), 10**40))
def test_an_integer_prints_like_the_same_fraction(value: int) -> None:
    assert format_decimal(value) == format_decimal(Fraction(value)) == f"{value}.0"
