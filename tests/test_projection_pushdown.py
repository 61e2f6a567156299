"""The right side of NOT EXISTS / EXISTS / MINUS keeps only the variables it is read for
(:func:`taxi_rsp.algebra.optimize.project_correlated_right`): outputs, and their order,
are the same as without the projection, also when distinct right rows become equal
(their multiplicities add up), for the compiled and the reference operators.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import taxi_rsp.engine.engine as engine_module
from taxi_rsp.algebra import optimize as O
from taxi_rsp.engine.engine import Engine
from tests.engine_helpers import EX, Stream

PREFIX = "PREFIX ex: <http://example.org/>\n"
WITHOUT_RULE = tuple(rule for rule in O.RULES if rule is not O.project_correlated_right)

# Right sides whose projected rows collide: ?f and ?v (or ?w) are dropped, ?k is kept.
QUERIES = [
    """SELECT ?e ?k WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 3m] { ?f ex:k ?k ; ex:v ?v ; ex:seq ?s2 } FILTER(?s2 > ?s) }
       }""",
    """SELECT ?e ?k WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:v ?v } }
       }""",
    """SELECT ?e ?k WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }
       }""",
    """SELECT ?k (COUNT(*) AS ?n) (MAX(?s) AS ?last) WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:v ?v } FILTER(?s2 > ?s && ?v > 1) }
       } GROUP BY ?k""",
]

EVENT = st.tuples(
    st.sampled_from([0, 0, 0.5, 1, 2, 4]),  # minutes after the previous event
    st.sampled_from(["a", "b"]),  # ex:k: few keys, so right rows share them
    st.one_of(st.none(), st.sampled_from([0, 1, 2, 3])),  # ex:v
    st.one_of(st.none(), st.sampled_from([1, 2])),  # ex:w
)


def _outputs(query: str, events, compiled: bool, rules: tuple, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setattr(engine_module, "optimize", lambda root: O.optimize(root, rules))
    engine = Engine(compiled=compiled)
    registered = engine.register(PREFIX + query.replace("%s", EX), "q")
    projections = registered.explain().split("physical operators")[0].count("Project ")
    stream = Stream(engine)
    minute = 0.0
    for n, (gap, key, v, w) in enumerate(events, 1):
        minute += gap
        triples = [(f"ex:e{n}", "ex:k", key), (f"ex:e{n}", "ex:seq", n)]
        if v is not None:
            triples.append((f"ex:e{n}", "ex:v", v))
        if w is not None:
            triples.append((f"ex:e{n}", "ex:w", w))
        stream.send(minute, *triples)
    return [projections] + [(o.trigger.time, o.trigger.is_expiry, o.terms(), o.terms(o.deleted)) for o in stream.outputs]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(events=st.lists(EVENT, min_size=1, max_size=25))
def test_projected_right_side_changes_no_output(query: str, compiled: bool, events, monkeypatch) -> None:
    with_rule = _outputs(query, events, compiled, O.RULES, monkeypatch)
    without = _outputs(query, events, compiled, WITHOUT_RULE, monkeypatch)
    assert with_rule[0] == without[0] + 1  # the rule applied in one plan only
    assert with_rule[1:] == without[1:]
