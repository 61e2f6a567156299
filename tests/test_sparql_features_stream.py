"""SPARQL 1.1 features added for issue 16, over windows (the W3C suite covers them over
static data): expiry must retract what they derived, with results worked out by hand."""

from __future__ import annotations

import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.rdf.terms import IRI, DateTime
from taxi_rsp.planner import register
from tests.engine_helpers import Stream

PREFIX = "PREFIX ex: <http://example.org/>\n"
A, B, C = (IRI(f"http://example.org/{x}") for x in "abc")


def _stream(query: str) -> Stream:
    engine = Engine()
    register(engine, PREFIX + query, "q")
    return Stream(engine)


def test_group_concat_follows_the_window() -> None:
    stream = _stream("SELECT (GROUP_CONCAT(?o; SEPARATOR='+') AS ?all) "
                     "WHERE { STREAM ex:stream [RANGE 2m] { ?e ex:v ?o } }")
    stream.send(0, ("ex:a", "ex:v", "x"))
    stream.send(1, ("ex:b", "ex:v", "y"))
    stream.send(3, ("ex:c", "ex:v", "z"))
    assert [(m, rows) for m, _, rows in stream.values()] == [
        (0, [("x",)]), (1, [("x+y",)]), (2, [("y",)]), (3, [("z",)])]


def test_exists_inside_bind_is_retracted_with_the_window() -> None:
    stream = _stream("SELECT ?e ?paid WHERE { STREAM ex:stream [RANGE 5m] { ?e ex:fare ?f } "
                     "BIND(EXISTS { STREAM ex:stream [RANGE 5m] { ?e ex:tip ?t } } AS ?paid) }")
    stream.send(0, ("ex:a", "ex:fare", 5))
    stream.send(1, ("ex:a", "ex:tip", 1))
    stream.send(10, ("ex:z", "ex:other", 1))  # time passes both expiries (5 and 6)
    outputs = [(m, sorted(o.values()), sorted(o.values(o.deleted)))
               for (m, _, _), o in zip(stream.values(), stream.outputs)]
    assert outputs[:2] == [(0, [(A, False)], []),
                           (1, [(A, True)], [(A, False)])]
    # the fare leaves at minute 5: its row goes; the tip alone leaves nothing to retract
    assert outputs[2:] == [(5, [], [(A, True)])]


def test_values_join_a_stream() -> None:
    stream = _stream("SELECT ?e ?label WHERE { STREAM ex:stream [NOW] { ?e ex:kind ?k } "
                     "VALUES (?k ?label) { ('c' 'cash') ('d' 'card') } }")
    stream.send(0, ("ex:a", "ex:kind", "c"))
    stream.send(1, ("ex:b", "ex:kind", "z"))
    stream.send(2, ("ex:c", "ex:kind", "d"))
    assert [rows for _, expiry, rows in stream.values() if not expiry and rows] == [
        [(A, "cash")], [(C, "card")]]


def test_now_is_the_event_time_of_the_instant() -> None:
    stream = _stream("SELECT ?e ?t WHERE { STREAM ex:stream [NOW] { ?e ex:v ?o } BIND(NOW() AS ?t) }")
    stream.send(0, ("ex:a", "ex:v", 1))
    stream.send(7.5, ("ex:b", "ex:v", 2))
    base = DateTime.parse("2013-01-01T00:00:00")
    inserted = [row for _, expiry, rows in stream.values() if not expiry for row in rows]
    assert [(e, t - base) for e, t in inserted] == [(A, 0), (B, 450_000)]


def test_rand_and_struuid_are_per_row_not_folded() -> None:
    stream = _stream("SELECT ?r ?u WHERE { STREAM ex:stream [ALL] { ?e ex:v ?o } BIND(RAND() AS ?r) "
                     "BIND(STRUUID() AS ?u) }")
    for minute in range(5):
        stream.send(minute, (f"ex:e{minute}", "ex:v", minute))
    rows = [row for _, _, rows in stream.values() for row in rows]
    assert len({r for r, _ in rows}) == 5 and len({u for _, u in rows}) == 5
    assert all(0 <= r < 1 and len(u) == 36 for r, u in rows)


def test_ask_is_a_boolean_stream() -> None:
    stream = _stream("ASK { STREAM ex:stream [RANGE 1m] { ?e ex:v 2 } }")
    stream.send(0, ("ex:a", "ex:v", 1))
    stream.send(0.5, ("ex:b", "ex:v", 2))
    stream.send(3, ("ex:c", "ex:v", 1))  # time advances past 1.5, where ex:b leaves
    assert [(m, rows) for m, _, rows in stream.values()] == [(0, [(False,)]), (0.5, [(True,)]), (1.5, [(False,)])]


def test_now_inside_a_sub_select_next_to_a_query_without_it() -> None:
    """Only queries that call NOW() set the instant's time (a per-event cost): a
    sub-select's NOW() counts, and a query without it next to one with it changes nothing."""
    engine = Engine()
    plain = register(engine, PREFIX + "SELECT ?e WHERE { STREAM ex:stream [NOW] { ?e ex:v ?o } }", "plain")
    clocked = register(engine, PREFIX + "SELECT ?e ?t WHERE { { SELECT ?e (NOW() AS ?t) WHERE { "
                              "STREAM ex:stream [NOW] { ?e ex:v ?o } } } }", "clocked")
    assert (plain.reads_clock, clocked.reads_clock) == (False, True)
    stream = Stream(engine)
    stream.send(0, ("ex:a", "ex:v", 1))
    stream.send(7.5, ("ex:b", "ex:v", 2))
    base = DateTime.parse("2013-01-01T00:00:00")
    inserted = [(e, t - base) for o in stream.outputs if o.name == clocked.name and not o.trigger.is_expiry
                for e, t in o.values()]
    assert inserted == [(A, 0), (B, 450_000)]


VOLATILE_QUERIES = [
    # an aggregate of RAND(): the drawn value leaves with its row
    "SELECT (MEDIAN(RAND()) AS ?m) (COUNT(*) AS ?n) WHERE { STREAM ex:stream [RANGE 2m] { ?e ex:k ?k } }",
    "SELECT ?k (SUM(?r) AS ?s) (COUNT(*) AS ?n) WHERE { STREAM ex:stream [RANGE 2m] { ?e ex:k ?k } "
    "BIND(RAND() AS ?r) } GROUP BY ?k",
    # BIND and FILTER of RAND() over a group's changing rows
    "SELECT ?k ?n ?r WHERE { { SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM ex:stream [RANGE 2m] { ?e ex:k ?k } } "
    "GROUP BY ?k } FILTER(RAND() < 0.5) BIND(RAND() AS ?r) }",
]


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("query", VOLATILE_QUERIES)
def test_a_volatile_value_is_retracted_as_it_was_drawn(query: str, compiled: bool) -> None:
    """RAND() gives another value at every call: a row retracted later (expiry, a
    group's update) must take back the value it was inserted with, not a new draw (an
    error before: 'x is not in the aggregate', or a retraction of a row never held)."""
    engine = Engine(compiled=compiled)
    register(engine, PREFIX + query, "q")
    stream = Stream(engine)
    for i, k in enumerate("abcabcabca"):
        stream.send(i * 0.7, (f"ex:e{i}", "ex:k", k))
    held: dict = {}
    for output in stream.outputs:  # Istream/Dstream: what is deleted was inserted before
        for row in output.values(output.deleted):
            held[row] -= 1
            if not held[row]:
                del held[row]
        for row in output.values():
            held[row] = held.get(row, 0) + 1
    n = stream.outputs[0].columns.index("n")
    assert all(isinstance(row[n], int) for row in held)
    if "FILTER" not in query:  # every row counted: the three events of the window at 6.3 min
        assert sum(row[n] for row in held) == 3


def test_now_over_a_group_s_rows_is_the_instant_they_changed() -> None:
    query = PREFIX + ("SELECT ?k ?n ?t WHERE { { SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM ex:stream [RANGE 2m] "
                      "{ ?e ex:k ?k } } GROUP BY ?k } BIND(NOW() AS ?t) }")
    answers = []
    for compiled in (True, False):
        engine = Engine(compiled=compiled)
        register(engine, query, "q")
        stream = Stream(engine)
        for i, k in enumerate("abab"):
            stream.send(i * 1.5, (f"ex:e{i}", "ex:k", k))
        answers.append([(o.trigger.time, o.values(), o.values(o.deleted)) for o in stream.outputs])
    assert answers[0] == answers[1]
    base = DateTime.parse("2013-01-01T00:00:00")
    first = answers[0][0]
    assert [(k, n, t - base) for k, n, t in first[1]] == [("a", 1, 0)]


def test_the_volatile_functions_are_the_ones_the_evaluator_draws_anew() -> None:
    from taxi_rsp.engine.expr import _VOLATILE
    from taxi_rsp.lang.ast import VOLATILE_FUNCTIONS

    assert set(_VOLATILE) == VOLATILE_FUNCTIONS


def test_two_queries_with_the_same_random_bind_draw_their_own_values() -> None:
    """Identical window chains are computed once per event for every query; a volatile
    step is not shared: each query (and each STREAM block) draws its own RAND()."""
    engine = Engine()
    text = PREFIX + "SELECT ?e ?r WHERE { STREAM ex:stream [RANGE 1m] { ?e ex:v ?o } BIND(RAND() AS ?r) }"
    first, second = register(engine, text, "first"), register(engine, text + " ", "second")
    stream = Stream(engine)
    for i in range(5):
        stream.send(i * 2, (f"ex:e{i}", "ex:v", i))
    drawn = {query.name: [r for o in stream.outputs if o.name == query.name for _, r in o.values()]
             for query in (first, second)}
    assert len(drawn["first"]) == len(drawn["second"]) == 5
    assert all(a != b for a, b in zip(drawn["first"], drawn["second"]))
