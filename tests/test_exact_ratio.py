"""``exact_ratio`` (the generated code's exact division) is ``Fraction(n, d)``: the same
value, type, hash, text and arithmetic, for every sign and size, and the same error on a
zero divisor; ``encode_fraction`` is the dictionary's encoding of a Fraction."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taxi_rsp.rdf.dictionary import Dictionary, encode_fraction, exact_ratio

INTS = st.one_of(st.integers(-10**6, 10**6), st.integers(-(1 << 130), 1 << 130))


@given(INTS, INTS.filter(lambda d: d != 0))
def test_the_same_fraction_as_the_constructor(numerator: int, denominator: int) -> None:
    fast, slow = exact_ratio(numerator, denominator), Fraction(numerator, denominator)
    assert type(fast) is Fraction
    assert (fast.numerator, fast.denominator) == (slow.numerator, slow.denominator)
    assert fast == slow and hash(fast) == hash(slow) and str(fast) == str(slow) and repr(fast) == repr(slow)
    assert fast + Fraction(1, 3) == slow + Fraction(1, 3) and (fast < 1) == (slow < 1)


def test_a_zero_divisor_raises_as_the_constructor_does() -> None:
    with pytest.raises(ZeroDivisionError):
        exact_ratio(5, 0)
    with pytest.raises(ZeroDivisionError):
        exact_ratio(0, 0)


def test_other_numbers_go_to_the_constructor() -> None:
    assert exact_ratio(Fraction(1, 2), 3) == Fraction(1, 6)
    assert exact_ratio(True, 2) == Fraction(1, 2)


@given(INTS, INTS.filter(lambda d: d != 0))
def test_encode_fraction_is_the_dictionary_s_encoding(numerator: int, denominator: int) -> None:
    value = Fraction(numerator, denominator)
    assert encode_fraction(value) == Dictionary().encode_value(value)
