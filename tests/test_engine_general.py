"""The engine is general: CQELS-QL queries other than Q1/Q2 through the same path,
with results worked out by hand."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.rdf.terms import IRI, Literal
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream

PREFIX = "PREFIX ex: <http://example.org/>\n"


def make(query: str, static: str | None = None, tmp_path: Path | None = None,
         compiled: bool = True) -> tuple[Engine, Stream]:
    engine = Engine(compiled=compiled)
    if static is not None:
        assert tmp_path is not None
        path = tmp_path / "static.ttl"
        path.write_text(static, encoding="utf-8")
        engine.load_static(path)
    register(engine, PREFIX + query, "test")
    return engine, Stream(engine)


def test_iswc_style_stream_joined_with_static_data(tmp_path: Path) -> None:
    # Who is detected in a room together with a co-author of theirs (ISWC 2011 Q2-like).
    static = """@prefix ex: <http://example.org/> .
ex:alice ex:coauthor ex:bob . ex:bob ex:coauthor ex:alice . ex:carol ex:coauthor ex:dave .
ex:room1 ex:name "Room One" ."""
    _, stream = make(
        """SELECT ?p1 ?p2 ?name WHERE {
             STREAM ex:stream [RANGE 10m] { ?p1 ex:detectedAt ?room }
             STREAM ex:stream [RANGE 10m] { ?p2 ex:detectedAt ?room }
             ?p1 ex:coauthor ?p2 .
             OPTIONAL { ?room ex:name ?name }
           }""",
        static,
        tmp_path,
    )
    stream.send(0, ("ex:alice", "ex:detectedAt", "ex:room1"))
    stream.send(1, ("ex:carol", "ex:detectedAt", "ex:room2"))
    stream.send(2, ("ex:bob", "ex:detectedAt", "ex:room1"))
    stream.send(3, ("ex:dave", "ex:detectedAt", "ex:room3"))  # carol is in room2: no pair
    results = stream.values()
    assert len(results) == 1
    minute, expiry, rows = results[0]
    assert minute == 2 and not expiry
    assert sorted(rows, key=str) == [
        (IRI(EX + "alice"), IRI(EX + "bob"), "Room One"),
        (IRI(EX + "bob"), IRI(EX + "alice"), "Room One"),
    ]
    # At minute 10 alice's detection expires: both pairs are deleted (Dstream).
    stream.send(10, ("ex:erin", "ex:detectedAt", "ex:room9"))
    last = stream.outputs[-1]
    assert last.trigger.is_expiry is False and len(last.deleted) == 2 and not last.rows


def test_triples_window_counts_the_last_n_events() -> None:
    _, stream = make(
        "SELECT (SUM(?v) AS ?total) WHERE { STREAM ex:stream [TRIPLES 3] { ?s ex:v ?v } }"
    )
    for minute, value in enumerate([1, 2, 3, 4, 10]):
        stream.send(minute, (f"ex:s{minute}", "ex:v", value))
    inserted = [rows for _, _, rows in stream.values()]
    # 1 | 1+2 | 1+2+3 | 2+3+4 | 3+4+10; the registration state (SUM of nothing = 0) is
    # folded into the first instant, so it is never reported on its own.
    assert [r[0][0] for r in inserted] == [1, 3, 6, 9, 17]


def test_construct_produces_an_rdf_stream() -> None:
    _, stream = make(
        """CONSTRUCT { ?a ex:metAt ?room . ?a ex:seen true } WHERE {
             STREAM ex:stream [NOW] { ?a ex:detectedAt ?room } }"""
    )
    stream.send(0, ("ex:alice", "ex:detectedAt", "ex:room1"))
    stream.send(0, ("ex:bob", "ex:detectedAt", "ex:room2"))
    stream.send(5, ("ex:carol", "ex:other", "ex:room2"))
    triples = [t for o in stream.outputs for t in o.triples]
    assert (IRI(EX + "alice"), IRI(EX + "metAt"), IRI(EX + "room1")) in triples
    assert (IRI(EX + "bob"), IRI(EX + "seen"), Literal("true", "http://www.w3.org/2001/XMLSchema#boolean")) in triples
    assert len(triples) == 4  # expiry of the NOW window deletes rows; CONSTRUCT reports inserts only


def test_minus_exists_and_aggregates_under_expiry() -> None:
    _, stream = make(
        """SELECT ?g (COUNT(?s) AS ?n) (MEDIAN(?v) AS ?med) (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (AVG(?v) AS ?avg)
           WHERE {
             STREAM ex:stream [RANGE 10m] { ?s ex:group ?g ; ex:v ?v }
             MINUS { STREAM ex:stream [RANGE 10m] { ?s ex:hidden true } }
             FILTER EXISTS { STREAM ex:stream [RANGE 10m] { ?x ex:active ?g } }
           }
           GROUP BY ?g ORDER BY ?g"""
    )
    stream.send(0, ("ex:a", "ex:group", "g1"), ("ex:a", "ex:v", 4))
    stream.send(1, ("ex:b", "ex:group", "g1"), ("ex:b", "ex:v", 1))
    assert stream.outputs == []  # no active g1 yet
    stream.send(2, ("ex:m", "ex:active", "g1"))
    assert stream.values()[-1][2] == [("g1", 2, Fraction(5, 2), 1, 4, Fraction(5, 2))]
    stream.send(3, ("ex:c", "ex:group", "g1"), ("ex:c", "ex:v", 10), ("ex:c", "ex:hidden", True))
    assert len(stream.outputs) == 1  # ex:c is subtracted by MINUS: nothing changes
    stream.send(10, ("ex:z", "ex:noise", 0))  # ex:a expires at exactly 10, merged with this arrival
    assert stream.values()[-1] == (10, False, [("g1", 1, 1, 1, 1, 1)])
    stream.send(12.5, ("ex:z2", "ex:noise", 0))  # b expires at 11 (group gone), the marker at 12
    assert stream.values()[-1] == (11, True, [])  # the expiry at 12 changes nothing: no report
    stream.send(13.5, ("ex:m2", "ex:active", "g1"))  # ex:c left at 13 and was hidden anyway
    assert len(stream.outputs) == 3


def test_union_distinct_and_bind_with_strings() -> None:
    _, stream = make(
        """SELECT DISTINCT ?label WHERE {
             { STREAM ex:stream [RANGE 5m] { ?s ex:a ?x } BIND(CONCAT("a:", STR(?x)) AS ?label) }
             UNION
             { STREAM ex:stream [RANGE 5m] { ?s ex:b ?x } BIND(UCASE(CONCAT("b:", STR(?x))) AS ?label) }
           } ORDER BY DESC(?label)"""
    )
    stream.send(0, ("ex:s", "ex:a", "x"), ("ex:s", "ex:b", "y"))
    stream.send(1, ("ex:t", "ex:a", "x"))
    assert stream.values()[0][2] == [("a:x",), ("B:Y",)]
    assert len(stream.outputs) == 1  # DISTINCT: the second "a:x" changes nothing


def test_events_out_of_time_order_are_refused() -> None:
    _, stream = make("SELECT ?s WHERE { STREAM ex:stream [RANGE 5m] { ?s ex:a ?x } }")
    stream.send(5, ("ex:s", "ex:a", 1))
    with pytest.raises(ValueError, match="earlier than the previous event"):
        stream.send(4, ("ex:s", "ex:a", 1))


@pytest.mark.parametrize("compiled", [False, True])
def test_minus_against_static_data_and_tma_top_k_on_another_stream(tmp_path: Path, compiled: bool) -> None:
    # Sensor readings: skip sensors listed as faulty in a static dataset (MINUS), rank
    # rooms by total load per active sensor (a monotone score: the planner picks TMA).
    static = """@prefix ex: <http://example.org/> .
ex:s3 ex:status "faulty" ."""
    engine, stream = make(
        """SELECT ?room ?score WHERE {
             { SELECT ?room (SUM(?w) AS ?load) (COUNT(DISTINCT ?s) AS ?sensors) WHERE {
                 STREAM ex:stream [RANGE 5m] { ?r ex:sensor ?s ; ex:room ?room ; ex:watts ?w }
                 MINUS { ?s ex:status "faulty" }
               } GROUP BY ?room }
             BIND(?load / ?sensors AS ?score)
           } ORDER BY DESC(?score) ?room LIMIT 2""",
        static,
        tmp_path,
        compiled=compiled,
    )
    # the reference planner picks TMA; compiled plans rank with the compiled top-k
    assert ("CompiledTopK" if compiled else "TmaTopK") in engine.queries[0].explain()
    stream.send(0, ("ex:r1", "ex:sensor", "ex:s1"), ("ex:r1", "ex:room", "kitchen"), ("ex:r1", "ex:watts", 10))
    stream.send(1, ("ex:r2", "ex:sensor", "ex:s3"), ("ex:r2", "ex:room", "hall"), ("ex:r2", "ex:watts", 99))
    stream.send(2, ("ex:r3", "ex:sensor", "ex:s2"), ("ex:r3", "ex:room", "hall"), ("ex:r3", "ex:watts", 4))
    stream.send(3, ("ex:r4", "ex:sensor", "ex:s4"), ("ex:r4", "ex:room", "hall"), ("ex:r4", "ex:watts", 30))
    assert stream.values()[-1][2] == [("hall", 17), ("kitchen", 10)]  # (4 + 30) / 2 sensors
    stream.send(5.5, ("ex:r5", "ex:sensor", "ex:s1"), ("ex:r5", "ex:room", "cellar"), ("ex:r5", "ex:watts", 1))
    # kitchen left at 5 (its own expiry instant), the faulty s3 never counted
    assert [(m, e) for m, e, _ in stream.values()[-2:]] == [(5, True), (5.5, False)]
    assert stream.values()[-1][2] == [("hall", 17), ("cellar", 1)]


def test_an_empty_dictionary_given_to_the_engine_is_the_one_it_uses() -> None:
    # A Dictionary with no terms is falsy (it has a length): `dictionary or Dictionary()`
    # once made the engine encode queries into a dictionary of its own while the caller's
    # Feeder encoded events into the one given, so nothing ever matched.
    from taxi_rsp.rdf.dictionary import Dictionary

    given = Dictionary()
    assert len(given) == 0
    engine = Engine(given)
    query = register(engine, PREFIX + "SELECT ?o WHERE { STREAM ex:s [RANGE 1m] { ?x ex:p ?o } }", "test")
    assert engine.dictionary is given
    assert query.streams == {given.encode(IRI("http://example.org/s"))}
