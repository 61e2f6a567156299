"""The latest row of each key (``planner/latest.py``, ``engine/compiled/latest.py``): a NOT
EXISTS of a later row of the same key in the same window is planned as one operator over
the outer window, which must answer exactly as the reference anti-join over both
windows, after every event — on values that grow with arrival (``ex:seq``) and on values
that do not (``ex:v``: repeats, decreases, decimals, strings, absent), where it hands its
rows over. A GROUP BY right above it is fused with it and the window into one window
aggregate whose C table counts each key's newest row (``FUSED``), held to the same
oracle."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.engine_helpers import EX
from tests.native_mutants import failures
from tests.test_compiled_differential import EVENT, PREFIX, _outputs, decimal

LATEST = [
    # Q2's empty-taxi shape: a later trip of the same taxi
    """SELECT ?e ?k ?s WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 > ?s) }
       }""",
    # the comparison written the other way round, on a value that need not grow (hand-overs)
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:v ?v2 } FILTER(?v < ?v2) }
       }""",
    # binds and filters in both blocks, a BIND after them, a GROUP BY above (Q2's whole side)
    """SELECT ?c (COUNT(?k) AS ?n) (MAX(?s) AS ?m) WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s ; ex:w ?w }
         BIND(?w * 2 AS ?x)
         FILTER(?x >= 0)
         FILTER NOT EXISTS {
           STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:w ?w2 }
           BIND(?w2 * 2 AS ?x2)
           FILTER(?x2 >= 0 && ?s2 > ?s)
         }
         BIND(CONCAT("c", STR(?x)) AS ?c)
       } GROUP BY ?c""",
    # the inner star written in another order, a key of two variables (ex:w may be
    # absent: then the block does not match)
    """SELECT ?e ?k ?w ?s WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:seq ?s2 ; ex:w ?w ; ex:k ?k } FILTER(?s2 > ?s) }
       }""",
    # the value compared is a BIND of the block (decimals of one type)
    """SELECT ?e ?k ?t WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         BIND(?s / 4 AS ?t)
         FILTER(?t >= 0)
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } BIND(?s2 / 4 AS ?t2)
                             FILTER(?t2 >= 0) FILTER(?t2 > ?t) }
       }""",
]

# A GROUP BY right above the shape: one window aggregate over the latest row per key.
FUSED = [
    LATEST[2],
    # values that need not grow (hand-overs), every fused aggregate over them
    """SELECT ?k (COUNT(*) AS ?n) (SUM(?v) AS ?s) (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (MEDIAN(?v) AS ?m)
              (AVG(?v) AS ?a) WHERE {
         STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:v ?v2 } FILTER(?v < ?v2) }
       } GROUP BY ?k""",
    # no GROUP BY (the implicit group), a key of two variables
    """SELECT (COUNT(*) AS ?n) (MAX(?s) AS ?m) (SUM(?w) AS ?t) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:seq ?s2 ; ex:w ?w ; ex:k ?k } FILTER(?s2 > ?s) }
       }""",
    # the groups ranked in the table (ORDER BY aggregates LIMIT)
    """SELECT ?w (COUNT(?e) AS ?n) (MIN(?s) AS ?lo) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:w ?w2 } FILTER(?s2 > ?s) }
       } GROUP BY ?w ORDER BY DESC(?n) DESC(?lo) LIMIT 2""",
]

NOT_LATEST = [
    # MINUS, >= (matches the row itself), an earlier row, other ranges, another column, an
    # inner filter of its own, a filter after the outer block's BIND
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         MINUS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s } } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 >= ?s) } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 < ?s) } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 > ?s) } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:v ?v2 } FILTER(?v2 > ?s) } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:w ?w2 }
                             FILTER(?w2 > 1) FILTER(?s2 > ?s) } }""",
    """SELECT ?e ?k ?s WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:w ?w }
         BIND(?w + 1 AS ?x) FILTER(?x > 2)
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:w ?w2 }
                             FILTER(?s2 > ?s) } }""",
]


def _plans(template: str) -> tuple[list, str]:
    explain: list = []
    outputs = _outputs(PREFIX + template.replace("%s", EX), [(0, "a", 1, 1)], compiled=True, explain=explain)
    return outputs, explain[0]


@pytest.mark.parametrize("template", LATEST)
def test_the_shape_is_planned_as_the_latest_row_per_key(template: str) -> None:
    _, explain = _plans(template)
    plan = explain.split("physical plan:")[1].split("physical operators:")[0]
    assert "NotExists" not in plan, explain
    assert ("LatestPerKey [specialised]" in plan) != (template in FUSED), explain


@pytest.mark.parametrize("template", FUSED)
def test_a_group_by_above_it_is_one_window_aggregate_over_the_latest_rows(template: str) -> None:
    _, explain = _plans(template)
    plan = explain.split("physical plan:")[1].split("physical operators:")[0]
    assert "over the latest row per" in plan and "LatestPerKey" not in plan, explain
    assert "+ latest row per ?k" in explain.split("physical operators:")[1], explain


@pytest.mark.parametrize("template", NOT_LATEST)
def test_other_anti_joins_stay_anti_joins(template: str) -> None:
    _, explain = _plans(template)
    assert "LatestPerKey" not in explain, explain


@pytest.mark.parametrize("template", LATEST + FUSED[1:] + NOT_LATEST)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
@example(events=[(0, "a", 1, 1), (0.5, "a", 2, 2), (0.5, "a", 3, 1), (3, "a", 1, 1)])
@example(events=[(0, "a", 2, 1), (0.5, "a", 2, 1), (0.5, "a", 5, 1)])  # an equal value is not later
@example(events=[(0.05, "a", n, 1) for n in range(1, 61)] + [(0.75, "b", 1, 1)] * 4)  # one key's long run: a deque
@example(events=[(0, "a", 3, 1), (0, "a", 2, 2), (0.5, "b", 2, 1), (0.5, "a", 2, 1), (1, "a", 9, 1)])
@example(events=[(0, "a", decimal("2.5"), decimal("2.5")), (0, "a", decimal("-1.75"), 3),
                 (0.5, "a", -4, decimal("-1.75")), (0.5, "b", "text", 1), (1, "a", 7, -4)])
@example(events=[(0, "a", 5, None), (0, "a", None, 2), (0.2, "a", 6, None), (0.5, "b", 1, None), (3, "a", 1, None)])
@example(events=[(0, "a", decimal("2.5"), None), (1, "a", 1, None)])  # a decimal leaves as an integer comes
def test_the_latest_row_per_key_answers_as_the_anti_join(template: str, events) -> None:
    query = PREFIX + template.replace("%s", EX)
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


def test_a_value_that_does_not_grow_hands_the_rows_to_the_anti_join() -> None:
    """Key a's values 3, 2: the second is not later than the first, so the operator hands
    over; the reference anti-join answers the same from then on."""
    query = PREFIX + LATEST[1].replace("%s", EX)
    events = [(0, "a", 3, None), (0, "b", 1, None), (0.25, "a", 2, None), (0.25, "a", 8, None), (2, "b", 4, None)]
    explain: list = []
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert "LatestPerKey, in place of NotExists on ?k (reference)" in explain[0], explain[0]


@pytest.mark.parametrize("events, mode", [
    ([(0, "a", 3, None), (0, "b", 1, None), (0.25, "a", 2, None), (0.25, "a", 8, None), (2, "b", 4, None)],
     "reference"),  # a's 2 is not later than its 3: the rows go to the anti-join, the GROUP BY's reference
    ([(0, "a", 1, None), (0.5, "b", 4, None), (0.5, "a", 2, None), (3, "a", 7, None)], "compiled"),
])
def test_the_fused_aggregate_hands_over_when_a_value_does_not_grow(events, mode: str) -> None:
    query = PREFIX + FUSED[1].replace("%s", EX)
    explain: list = []
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert f"+ latest row per ?k + group by ?k ({mode}" in explain[0], explain[0]


@pytest.mark.parametrize("template", FUSED)
@pytest.mark.parametrize("tier", ["no C build", "generated code"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=30))
@example(events=[(0, "a", 3, 2), (0, "b", 1, 1), (0.25, "a", 2, 2), (0.25, "a", 8, 1), (2, "b", 4, 3)])
def test_the_fused_aggregate_without_the_c_build_answers_as_the_reference(template: str, tier: str, events) -> None:
    """The fused window aggregate on the pure-Python table without native programs (an
    install without a C compiler), and with generated code on the C table, equal the
    reference interpreter output for output."""
    import taxi_rsp.engine.compiled.aggregate as aggregate
    from taxi_rsp.engine.native import PyGroupTable

    query = PREFIX + template.replace("%s", EX)
    reference = _outputs(query, events, compiled=False)
    explain: list = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggregate, "programs_available", lambda: False)
        if tier == "no C build":
            patch.setattr(aggregate, "group_table_class", lambda: PyGroupTable)
        assert _outputs(query, events, compiled=True, explain=explain) == reference
    assert "native program" not in explain[0], explain[0]


def test_growing_values_keep_the_operator() -> None:
    query = PREFIX + LATEST[0].replace("%s", EX)
    events = [(0, "a", None, None), (0.5, "b", None, None), (0.5, "a", None, None), (3, "a", None, None)]
    explain: list = []
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert "LatestPerKey, in place of NotExists on ?k (compiled)" in explain[0], explain[0]


def test_the_debs_q2_empty_taxis_are_each_taxis_latest_trip() -> None:
    """Q2's NOT EXISTS is planned as the latest trip per taxi, fused with the window and
    the GROUP BY above, and stays so over the sample (the Feeder's ex:seq grows with every
    line); the groups count one trip per taxi of the last 30 minutes."""
    from pathlib import Path

    from taxi_rsp.engine.engine import Engine
    from taxi_rsp.feeder import Feeder
    from taxi_rsp.planner import register
    from taxi_rsp.runner import resolve_query

    sample = Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
    engine = Engine()
    query = register(engine, resolve_query("q2").text, "q2")
    for event in Feeder(sample, engine.dictionary):
        engine.process(event)
    (fused,) = [op for op in query.physical.operators if getattr(op, "_latest", None) is not None]
    assert fused.mode == "compiled"
    table = fused.table_state()
    counted = sum(state[1] for state in table.states())  # rows per group
    assert 0 < counted == len(table.entries()) < fused.state_size() < 10_004


MUTANTS = [
    ("elif v > rows[-1][value]:", "elif v >= rows[-1][value]:"),  # an equal value taken as later
    ("                        out.append((rows[-1], -1))\n", ""),  # the previous newest row stays out
    ("                    if not rows:\n", "                    if len(rows) > 5:\n"),  # an emptied key's row stays
    ("if not low <= v < low + _SPAN:", "if not low <= v:"),  # a negative number's id taken as greater
    ("                        rows.popleft()\n", "                        rows.pop()\n"),  # a long key's newest row leaves
    ("        reference.push_right([(right_of(row), 1) for row in rows])  # its sinks: none yet\n", ""),
]


@pytest.mark.slow
@pytest.mark.parametrize(("original", "mutant"), MUTANTS)
def test_a_mutation_of_the_operator_fails_the_differential_test(original: str, mutant: str) -> None:
    """The differential test is not vacuous: each mutant of the operator's source (run as
    Python) disagrees with the reference anti-join on at least one template."""
    import sys
    import types
    from pathlib import Path

    from taxi_rsp.engine.compiled import latest
    from taxi_rsp.planner import instantiate

    source = (Path(__file__).resolve().parents[1] / "taxi_rsp" / "engine" / "compiled" / "latest.py").read_text()
    assert original in source
    module = types.ModuleType("latest_mutant")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, module.__name__, module)  # (its dataclass looks itself up there)
        exec(compile(source.replace(original, mutant, 1), "latest_mutant.py", "exec"), module.__dict__)  # noqa: S102
        assert module.LatestPerKey is not latest.LatestPerKey
        patch.setattr(instantiate, "LatestPerKey", module.LatestPerKey)
        failed = failures(test_the_latest_row_per_key_answers_as_the_anti_join, LATEST)
    assert failed, "no differential test noticed the mutant"
