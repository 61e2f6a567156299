"""The challenge's number formats (SPEC §5) against Fraction arithmetic, on any value."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from taxi_rsp.listener.formats import fixed4, money

VALUES = st.one_of(
    st.integers(-10**12, 10**12),
    st.fractions(max_denominator=10**7),
    st.decimals(allow_nan=False, allow_infinity=False, places=6, min_value=-10**9, max_value=10**9),
)


def _rounded(value: Fraction, places: int) -> str:
    scaled = round(value * 10**places)  # Fraction's round: half to even
    whole, frac = divmod(abs(scaled), 10**places)
    return f"{'-' if scaled < 0 else ''}{whole}.{frac:0{places}d}"


@settings(max_examples=2000, deadline=None)
@given(VALUES)
def test_formats_equal_exact_rounding(value: int | Fraction | Decimal) -> None:
    exact = Fraction(value)
    assert fixed4(value) == _rounded(exact, 4)
    assert money(value) == _rounded(exact, 2 if (exact * 100).denominator == 1 else 3)


def test_halves_round_to_even_and_half_cents_keep_three_places() -> None:
    assert [fixed4(Fraction(k, 20000)) for k in (1, 3, 5, -1, -3)] == ["0.0000", "0.0002", "0.0002", "0.0000", "-0.0002"]
    assert [money(v) for v in (Fraction(1951, 200), Fraction(975, 100), 7, "10.125")] == ["9.755", "9.75", "7.00", "10.125"]
