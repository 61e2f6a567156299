"""The compiled NOT EXISTS / EXISTS / MINUS / OPTIONAL, when they keep their state in
Python (OPTIONAL always; the others without the native table, which
``tests/test_native_correlation.py`` covers), keep the rows under a key in a
list while they are few and in a dict beyond ``_LIST_LIMIT``: both forms, the change
from one to the other, and rows retracted as equal copies rather than the very object
inserted (a join's output) all give the reference operator's results after every event.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.compiled import correlated
from tests.engine_helpers import EX
from tests.test_compiled_differential import EVENT, JOIN_QUERIES, PREFIX, _outputs

CORRELATED = [q for q in JOIN_QUERIES if any(word in q for word in ("EXISTS", "MINUS", "OPTIONAL"))] + [
    # the left rows come from a join: each retraction is a new tuple equal to the one inserted
    """SELECT ?e ?k ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 1m] { ?g ex:v ?w } }
       }""",
    """SELECT ?e ?k ?w ?v WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w }
         OPTIONAL { STREAM <%sstream> [RANGE 1m] { ?g ex:v ?v ; ex:k ?k } }
       }""",
]


def _with_limit(limit: int, query: str, events) -> list:
    """The outputs of the operator's own dict-based loops (the native table, which has
    no list limit, off) with lists of at most ``limit`` rows per key."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(correlated, "_LIST_LIMIT", limit)
        patch.setattr(correlated, "correlation_table_class", lambda: None)
        return _outputs(query, events, compiled=True)


@pytest.mark.parametrize("template", CORRELATED)
@pytest.mark.parametrize("limit", [0, 2, 8])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
def test_rows_under_a_key_in_a_list_or_a_dict_give_the_reference_results(limit: int, template: str,
                                                                          events) -> None:
    query = PREFIX + template.replace("%s", EX)
    assert _with_limit(limit, query, events) == _outputs(query, events, compiled=False)


@pytest.mark.parametrize("template", CORRELATED[:3])
def test_many_rows_under_one_key_grow_past_the_list_and_expire(template: str) -> None:
    """Sixty events of one key (past the default limit), then a gap that expires them all."""
    events = [(0.1, "a", n % 5, (n * 3) % 7) for n in range(60)] + [(20, "a", 1, 2), (0.5, "b", 2, 1)]
    query = PREFIX + template.replace("%s", EX)
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


def test_rows_held_under_a_one_variable_key_are_found_after_the_hand_over() -> None:
    """A one-variable key is held as its bare value; the rows handed to the reference
    operator (a right row with ?w unbound arrives) must be found under its keys: e1's
    ?w = 1 is held before the hand-over, and e3's ?w = 1 on the right must cancel it."""
    query = PREFIX + """SELECT ?e ?w WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:v ?x }
                             OPTIONAL { STREAM <%sstream> [RANGE 5m] { ?f ex:w ?w } } }
       }""".replace("%s", EX)
    events = [(0, "a", None, 1), (0.5, "b", 2, None), (0.5, "c", 3, 1), (0.5, "d", None, 2)]
    explain: list = []
    compiled = _outputs(query, events, compiled=True, explain=explain)
    assert compiled == _outputs(query, events, compiled=False)
    assert "CompiledNotExists on ?w (reference)" in explain[0]  # it did hand over
