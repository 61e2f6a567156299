"""The result-id sources the compiled aggregates put in their generated ``flush``
(the common cases in place, no call) give the ids of the methods they stand for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.compiled.codegen import SMALL_INT_IDS
from taxi_rsp.engine.compiled.aggregate import (CompiledAggregate, dec_id_source, int_id_source,
                                               median_id_source)
from taxi_rsp.rdf.dictionary import PAYLOAD_MAX, Dictionary

# around the inline range's edges as well as ordinary amounts
VALUES = st.one_of(st.integers(-10, 1100), st.integers(-10**6, 10**6), st.integers(-(PAYLOAD_MAX + 10), PAYLOAD_MAX + 10),
                   st.integers(-10**30, 10**30))


class _Ids:
    """The methods the generated code falls back on, with their dictionary."""

    _int_id = CompiledAggregate._int_id
    _dec_id = CompiledAggregate._dec_id
    _median_id = CompiledAggregate._median_id
    _mean_id = CompiledAggregate._mean_id

    def __init__(self) -> None:
        self.dictionary = Dictionary()

    def namespace(self, **values: object) -> dict[str, object]:
        return dict(values, _int_id=self._int_id, _dec_id=self._dec_id, _median_id=self._median_id,
                    _small_int_ids=SMALL_INT_IDS)  # as the chunk compiler's runtime provides


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, max_size=9), st.integers(0, 9), st.booleans())
def test_median_in_place_is_the_method(values: list[int], scale: int, integers: bool) -> None:
    ids = _Ids()
    values.sort()
    scale = 0 if integers else scale
    in_place = eval(median_id_source("values", scale, integers), ids.namespace(values=values))
    assert in_place == ids._median_id(values, scale, integers)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(0, 9))
def test_decimal_and_integer_ids_in_place_are_the_methods(value: int, scale: int) -> None:
    ids = _Ids()
    assert eval(dec_id_source("v", scale), ids.namespace(v=value)) == ids._dec_id(value, scale)
    assert eval(int_id_source("v"), ids.namespace(v=value)) == ids._int_id(value)


def test_an_even_count_whose_mean_needs_a_tenth_decimal_calls_the_method() -> None:
    ids = _Ids()
    values = [1, 2]  # at 9 decimals: the mean 1.5e-9 needs a tenth
    source = median_id_source("values", 9, False)
    assert ids.dictionary.value(eval(source, ids.namespace(values=values))) == ids.dictionary.value(
        ids._median_id(values, 9, False))


def test_a_sum_beyond_the_inline_range_is_exact_end_to_end() -> None:
    """Found by the property test above: a positive result beyond the inline range took
    the negative-payload branch, an id of another type (a SUM of 3·10^17 read back as a
    date)."""
    from taxi_rsp import IRI, Session

    ex = "http://example.org/"
    for group in ("", "?x"):
        session = Session()
        handle = session.register(f"PREFIX ex: <{ex}> SELECT {group} (SUM(?v) AS ?s) (MAX(?v) AS ?m) WHERE "
                                  f"{{ STREAM ex:s [RANGE 1m] {{ ?x ex:v ?v }} }}"
                                  + (f" GROUP BY {group}" if group else ""), "big")
        for second in range(3):
            session.push([(IRI(ex + "a"), IRI(ex + "v"), 10**17)], 1_000 * second)
        assert [r.rows for r in handle.results()][-1][0][-2:] == (3 * 10**17, 10**17)
