"""The top-k's ratio keys on C integers (``inline_ratio``) equal the exact path's: the
correctly rounded float of the quotient and its reduced fraction, for inline integers
and decimals of either sign; anything it cannot decide exactly is left to that path."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from taxi_rsp.engine.compiled.topk import inline_ratio
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import Literal

XSD = "http://www.w3.org/2001/XMLSchema#"
DICTIONARY = Dictionary()

SMALL = st.integers(-(10**6), 10**6)
LARGE = st.integers(-(2**56), 2**56)  # inline still, some beyond what C can cross-multiply
INTEGERS = st.one_of(SMALL, LARGE).map(lambda n: (Fraction(n), Literal(str(n), XSD + "integer")))
DECIMALS = st.one_of(SMALL, LARGE).map(
    lambda n: (Fraction(n, 10**9), Literal(f"{Decimal(n).scaleb(-9):f}", XSD + "decimal")))
NUMBERS = st.one_of(INTEGERS, DECIMALS)


@given(NUMBERS, NUMBERS, st.booleans())
def test_inline_ratio_keys_equal_the_exact_quotient(top, bottom, descending: bool) -> None:
    (top_value, top_term), (bottom_value, bottom_term) = top, bottom
    parts = inline_ratio(DICTIONARY.encode(top_term), DICTIONARY.encode(bottom_term), descending)
    if bottom_value == 0:
        assert parts is None  # the exact path decides (an error for the reference)
        return
    quotient = top_value / bottom_value
    if parts is None:  # only when C integers cannot hold the cross-products or the result
        payloads = [abs(v * 10**9) if t.datatype.endswith("decimal") else abs(v)
                    for v, t in (top, bottom)]  # the ids' scaled payloads
        assert max(payloads) >= (1 << 62) // 10**9 or \
            abs(quotient.numerator) >= 2**53 or quotient.denominator >= 2**53
        return
    value, exact = parts
    sign = -1 if descending else 1
    assert value == sign * (quotient.numerator / quotient.denominator)
    assert (exact.n, exact.d) == (sign * quotient.numerator, quotient.denominator)


def test_other_ids_are_left_to_the_exact_path() -> None:
    text = DICTIONARY.encode(Literal("7", None))
    three = DICTIONARY.encode(Literal("3", XSD + "integer"))
    assert inline_ratio(text, three, False) is None
    assert inline_ratio(three, None, False) is None
    assert inline_ratio(three, 3.0, True) is None
