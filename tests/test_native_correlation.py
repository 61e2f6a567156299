"""The native state of FILTER NOT EXISTS / MINUS / FILTER EXISTS (``native/_correlation.pyx``)
against its two oracles: the compiled operator's own dict-based loops (its twin, what runs
without a C compiler) and the reference operators, after every event of generated streams.

The conditions cover the id-order comparison decided in C (``?s2 > ?s`` and the other
five comparisons, on integers, decimals, negative numbers and strings, where it must give
way to the compiled condition), conditions it does not decide (a conjunction), none
(MINUS), keys of one and two variables, rows retracted as equal copies (from a join),
multiplicities above one (a projection) and the hand-over on an unbound key part.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.compiled import correlated
from taxi_rsp.engine.native import CCorrelationTable
from tests.engine_helpers import EX
from tests.native_mutants import build_mutant, failures
from tests.test_compiled_differential import EVENT, PREFIX, _outputs, decimal

pytestmark = pytest.mark.skipif(CCorrelationTable is None, reason="the native tier is not built")


@pytest.fixture(autouse=True, scope="module")
def _anti_joins_stay_anti_joins():
    """Q2's shape (a later row of the same key in the same window) is planned as the
    latest row per key (tests/test_latest_per_key.py); here it stays an anti-join, so
    the table meets it."""
    from taxi_rsp.planner import builder

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builder, "latest_per_key", lambda node: None)  # (EngineConfig(latest_per_key=False))
        yield

TEMPLATES = [
    # Q2's shape: the latest row of a key (a later one of the same key cancels it)
    """SELECT ?e ?k ?s WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 > ?s) }
       }""",
    # values of every kind compared (decimals, negatives, strings: the C test gives way)
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w } FILTER(?w <= ?v) }
       }""",
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:v ?v }
         FILTER EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } FILTER(?v >= ?w) }
       }""",
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w } FILTER(?w = ?v) }
       }""",
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         FILTER EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w } FILTER(?v != ?w) }
       }""",
    """SELECT ?e ?k ?s WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s < ?s2) }
       }""",
    # a condition the table does not decide itself, and none at all (MINUS)
    """SELECT ?e ?k ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w2 } FILTER(?w2 = ?w && ?f != ?e) }
       }""",
    """SELECT ?e ?k ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w }
         MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }
       }""",
    # a key of two variables
    """SELECT ?e ?k ?w WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w ; ex:seq ?s2 } FILTER(?s2 > 3) }
       }""",
    # right rows with multiplicities above one (the projection drops the event), which
    # leave one copy at a time
    """SELECT ?e ?k ?v WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:v ?v }
         MINUS { { SELECT ?k WHERE { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } } } }
       }""",
    # left rows from a join (each retraction an equal copy) and with multiplicities
    # above one (a projection drops the event), grouped above
    """SELECT ?k ?w (COUNT(*) AS ?n) WHERE {
         { SELECT ?k ?w WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k }
                                STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w } } }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 1m] { ?g ex:k ?k ; ex:v ?v } FILTER(?v > ?w) }
       } GROUP BY ?k ?w""",
]

# An unbound key part (OPTIONAL below the NOT EXISTS) hands the table's rows to the reference.
HAND_OVER = """SELECT ?e ?w WHERE {
     STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k }
     OPTIONAL { STREAM <%sstream> [RANGE 2m] { ?e ex:w ?w } }
     FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:v ?w ; ex:seq ?s } FILTER(?s > 2) }
   }"""


def _python_loops(query: str, events) -> list:
    """The outputs with the native table off: the operator's dict-based loops."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(correlated, "correlation_table_class", lambda: None)
        return _outputs(query, events, compiled=True)


def _native(query: str, events) -> tuple[list, str]:
    explain: list = []
    return _outputs(query, events, compiled=True, explain=explain), explain[0]


def _agree(template: str, events) -> None:
    query = PREFIX + template.replace("%s", EX)
    native, explain = _native(query, events)
    assert "native state" in explain or "(reference)" in explain, explain
    assert native == _python_loops(query, events)
    assert native == _outputs(query, events, compiled=False)


@pytest.mark.parametrize("template", TEMPLATES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
@example(events=[(0, "a", 1, 1), (0.5, "a", 2, 2), (0.5, "a", 3, 1), (3, "a", 1, 1)])
@example(events=[(0, "a", decimal("2.5"), decimal("2.5")), (0, "a", decimal("-1.75"), 3),
                 (0.5, "a", -4, decimal("-1.75")), (0.5, "b", "text", 1), (1, "a", 7, -4)])
@example(events=[(0, "a", None, 1), (0.5, "a", None, 2), (0.2, "a", 3, None), (0.5, "b", 1, None),
                 (3, "a", 1, None)])  # two right copies of key a, the first leaves, a left row stays out
def test_the_native_table_equals_the_python_loops_and_the_reference(template: str, events) -> None:
    _agree(template, events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
@example(events=[(0, "a", 1, 1), (0.5, "b", 1, None), (0.5, "c", 2, 1), (0.5, "d", 1, 2)])
def test_an_unbound_key_part_hands_the_table_over_to_the_reference(events) -> None:
    _agree(HAND_OVER, events)


def test_the_debs_q2_anti_join_keeps_its_state_in_the_native_table() -> None:
    """Q2's NOT EXISTS runs on the table (its condition decided in C) on the sample."""
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
    (anti,) = [op for op in query.physical.operators if isinstance(op, correlated.CompiledCorrelated)]
    assert anti.describe() == "CompiledNotExists on ?taxi~3 (compiled, native state)"
    assert 0 < anti.state_size() < 2 * 10_004  # rows of both sides in the last 30 minutes


def test_the_table_stops_at_an_unbound_key_part_and_lists_its_rows() -> None:
    """The table itself: a push stops at the first key it cannot hold (None, a non-int),
    rows are listed per key in arrival order, and a cleared table retires every row."""
    retired: list = []
    table = CCorrelationTable([0], [0], True, [None], None, retired)
    a, b, c = (1, 10), (1, 11), (2, 12)
    out, stop = table.push_left([(a, 1), (b, 2), ((None, 13), 1), (c, 1)])
    assert (out, stop) == ([(a, 1), (b, 2)], 2)
    out, stop = table.push_right([((1, 99), 1), (("x", 98), 1)])
    assert (out, stop) == ([(a, -1), (b, -2)], 1)  # both left rows of key 1 now have a match
    assert table.entries() == ([((1,), a, 1, 1), ((1,), b, 2, 1)], [((1,), (1, 99), 1)])
    with pytest.raises(ValueError, match="retraction below zero"):
        table.push_right([((1, 99), -2)])
    with pytest.raises(ValueError, match="unknown left row"):
        table.push_left([((3, 1), -1)])
    table.clear()
    assert len(table) == 0 and table.entries() == ([], [])
    assert retired.count(a) == 1 and retired.count((1, 99)) == 1


# Deliberate mistakes in the table, each of which the differential tests above must catch:
# (original, mutant) pairs of one line of _correlation.pyx.
MUTATIONS = [
    ("if (matches == 0) == self.anti:", "if (matches == 0) != self.anti:"),
    ("return a > b", "return a >= b"),
    ("matches += rows.data[i].mult", "matches += 1"),
    ("out.append((lrow, sign * held.mult))", "out.append((lrow, -sign * held.mult))"),
    ("if found == <PyObject *> row or PyObject_RichCompareBool(<object> found, row, Py_EQ):",
     "if found == <PyObject *> row:"),
    ("if self._left[slot].size or self._right[slot].size:", "if self._left[slot].size:"),
    ("or (DEC_LOW <= a < DEC_LOW + SPAN and DEC_LOW <= b < DEC_LOW + SPAN)",
     "or (DEC_LOW <= a and DEC_LOW <= b)"),
]


@pytest.mark.slow
@pytest.mark.parametrize("original, mutant", MUTATIONS)
def test_a_mutation_of_the_table_fails_the_differential_tests(tmp_path, original: str, mutant: str) -> None:
    """The differential tests are not vacuous: each mutant disagrees with an oracle (or
    fails) in at least one of them (about 20 s each: a C compile)."""
    module = build_mutant(tmp_path, "_correlation", original, mutant)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(correlated, "correlation_table_class", lambda: module.CorrelationTable)
        failed = failures(test_the_native_table_equals_the_python_loops_and_the_reference, TEMPLATES)
        assert failed, "no differential test noticed the mutant"
