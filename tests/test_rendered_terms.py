"""The generic writers render each term id once (``listener.generic.RenderedTerms``):
the memo must give what decoding every value gives, across its limit, across
dictionaries and for values that are not ids."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.listener.generic import RenderedTerms, _lexical
from taxi_rsp.listener.sparql_json import binding_json
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import XSD
from taxi_rsp.rdf.terms import IRI, Literal

TERMS = st.one_of(
    st.integers(-10**20, 10**20).map(lambda n: Literal(str(n), XSD + "integer")),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: Literal(str(d), XSD + "decimal")),
    st.text(max_size=5).map(Literal),
    st.sampled_from(["http://a", "http://b/c"]).map(IRI),
)


def _plain(dictionary: Dictionary, row: tuple, render, unbound) -> list:
    return [unbound if v is None else render(dictionary.decode(v)) for v in row]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), TERMS), min_size=1, max_size=4), min_size=1, max_size=30),
       st.integers(1, 4))
def test_rendered_rows_are_the_decoded_rows(rows, limit) -> None:
    """Two dictionaries in turn (ids mean other terms in each), a memo of a few ids."""
    dictionaries = [Dictionary(), Dictionary()]
    for render, unbound in ((_lexical, ""), (binding_json, None)):
        rendered = RenderedTerms(render, unbound, limit)
        for n, terms in enumerate(rows):
            dictionary = dictionaries[n % 2]
            row = tuple(None if t is None else dictionary.encode(t) for t in terms)
            assert rendered.row(dictionary, row) == _plain(dictionary, row, render, unbound)


def test_a_value_that_is_not_an_id_is_decoded_every_time() -> None:
    class Computed:  # a computed number in a row, as the engine's exact values are
        def __init__(self, value: Fraction) -> None:
            self.value = value

    rendered, dictionary = RenderedTerms(_lexical, ""), Dictionary()
    assert rendered.row(dictionary, (Computed(Fraction(1, 2)), Computed(Fraction(1, 4)))) == ["0.5", "0.25"]
