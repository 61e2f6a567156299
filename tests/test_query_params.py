"""CQELS syntax of issue 51: ``${param}`` wherever a term, an IRI or a count may stand,
durations of several units, the 1 ms time resolution, relative IRIs without BASE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.errors import QuerySyntaxError
from taxi_rsp.lang import ast
from taxi_rsp.lang.parser import parse_duration, parse_query
from taxi_rsp.rdf.terms import IRI, Literal
from taxi_rsp.session import Session

XSD = "http://www.w3.org/2001/XMLSchema#"
FILTERED = ("PREFIX ex: <http://ex/> SELECT ?s ?v WHERE { STREAM <http://s> [RANGE 1m] { ?s ex:v ?v } "
            "FILTER(?v > ${min=10}) }")


@pytest.mark.parametrize("text, ms", [
    ("1m 30s", 90_000), ("1m30s", 90_000), ("1 h 30 minutes", 5_400_000), ("2d 1ms", 172_800_001),
    ("2000000ns", 2), ("1500000 ns", None), ("3000us", 3), ("500ms", 500),
])
def test_durations_of_several_units(text: str, ms: int | None) -> None:
    if ms is None:
        with pytest.raises(ValueError, match="not a whole number of milliseconds"):
            parse_duration(text)
    else:
        assert parse_duration(text) == ms


def test_range_and_slide_take_several_units() -> None:
    window = parse_query("SELECT * WHERE { STREAM <http://s> [RANGE 1m 30s SLIDE 1m 5s] { ?a ?b ?c } }") \
        .where.elements[0].window
    assert (window.range_ms, window.slide_ms) == (90_000, 65_000)


@pytest.mark.parametrize("duration", ["500ns", "999us", "999999 nanoseconds"])
def test_sub_millisecond_ranges_are_refused_with_the_resolution(duration: str) -> None:
    with pytest.raises(QuerySyntaxError, match="shorter than the engine's time resolution of 1 ms") as info:
        parse_query(f"SELECT * WHERE {{ STREAM <http://s> [RANGE {duration}] {{ ?a ?b ?c }} }}")
    assert (info.value.line, info.value.column) == (1, 43)  # the duration itself


def test_parameters_in_a_filter_take_their_binding_or_default() -> None:
    def bound(params: dict[str, str] | None) -> object:
        return parse_query(FILTERED, params).where.elements[1].expr.args[1]

    assert bound(None) == ast.Const(Literal("10", XSD + "integer"))
    assert bound({"min": "2.5"}) == ast.Const(Literal("2.5", XSD + "decimal"))
    assert bound({"min": '"x"@en'}) == ast.Const(Literal("x", XSD + "string", "en"))
    assert bound({"min": "ex:a"}) == IRI("http://ex/a")  # the query's prefixes


def test_a_filter_parameter_changes_the_answer() -> None:
    answers = {}
    for threshold in ("10", "20"):
        session = Session()
        handle = session.register(FILTERED, "q", params={"min": threshold})
        for n, value in enumerate([5, 15, 25]):
            session.push([("<http://ex/a%d>" % n, "<http://ex/v>", value)], f"2015-01-01T09:00:0{n}")
        answers[threshold] = sorted(row["v"] for result in handle.results() for row in result.dicts())
    assert answers == {"10": [15, 25], "20": [25]}


def test_parameters_for_stream_predicate_triples_count_values_and_limit() -> None:
    query = parse_query(
        "SELECT ?s WHERE { STREAM ${s} [TRIPLES ${n}] { ?s ${p} ${o} } VALUES ?s { ${who} } } "
        "ORDER BY ?s LIMIT ${l} OFFSET ${off=1}",
        {"s": "<http://s>", "n": "7", "p": "<http://p>", "o": "true", "who": "<http://a>", "l": "0"})
    stream = query.where.elements[0]
    assert stream.stream == IRI("http://s") and stream.window.count == 7
    assert stream.pattern.elements[0].triples[0] == ast.TriplePattern(ast.Var("s"), IRI("http://p"),
                                                                      Literal("true", XSD + "boolean"))
    assert query.where.elements[1].rows == ((IRI("http://a"),),)
    assert (query.limit, query.offset) == (0, 1)


@pytest.mark.parametrize("text, params, words", [
    (FILTERED.replace("${min=10}", "${min}"), {}, "query parameter 'min' has no value and no default"),
    (FILTERED, {"min": "ten"}, "query parameter 'min' = 'ten' is not an RDF term"),
    (FILTERED, {"min": "nope:x"}, "query parameter 'min' = 'nope:x': undeclared prefix 'nope:'"),
    ("SELECT * WHERE { STREAM ${s} [NOW] { ?a ?b ?c } }", {"s": "42"}, "stands where an IRI is needed"),
    ("SELECT * WHERE { ?a ?b ?c } ORDER BY ?a LIMIT ${n}", {"n": "-1"}, "LIMIT needs a whole number"),
    ("SELECT * WHERE { STREAM <http://s> [TRIPLES ${n}] { ?a ?b ?c } }", {"n": "0"}, "at least 1"),
    (FILTERED, {"min": "${other}"}, "a value cannot hold another parameter"),
])
def test_parameter_errors_name_the_parameter(text: str, params: dict[str, str], words: str) -> None:
    with pytest.raises(QuerySyntaxError, match=words.replace("(", r"\(").replace("$", r"\$")) as info:
        parse_query(text, params)
    assert info.value.column > 1 and info.value.excerpt


def test_relative_iri_without_base_is_warned_with_its_position() -> None:
    query = parse_query("SELECT * WHERE {\n  STREAM <culturalevents> [NOW] { ?a ?b ?c } }", source="q.cqels")
    assert len(query.warnings) == 1
    assert query.warnings[0].startswith("q.cqels:2:10: relative IRI <culturalevents> and no BASE")
    assert parse_query("BASE <http://x/> SELECT * WHERE { STREAM <s> [NOW] { ?a ?b ?c } }").warnings == ()
    assert parse_query("SELECT * WHERE { STREAM <http://s> [NOW] { ?a ?b ?c } }").warnings == ()


def test_placeholder_inside_a_string_is_warned() -> None:
    query = parse_query('SELECT * WHERE { ?a ?b "${id}" }')
    assert len(query.warnings) == 1 and "not replaced inside strings" in query.warnings[0]


def test_run_and_query_print_the_relative_iri_warning(tmp_path: Path, capsys) -> None:
    stream = tmp_path / "s.tnt"
    stream.write_text('<http://ex/a> <http://ex/p> "1" .\t2011-10-24T09:00:00\n')
    query = tmp_path / "q.cqels"
    query.write_text("SELECT ?a WHERE { STREAM <http://s> [NOW] { ?a <p> ?c } }")
    assert main(["run", "--stream", f"http://s={stream}", "--query", str(query), "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {query}:1:48: relative IRI <p> and no BASE" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any("relative IRI <p>" in w for w in summary["warnings"])
    static = tmp_path / "static.rq"
    static.write_text("SELECT ?a WHERE { ?a <p> ?c }")
    assert main(["query", str(static)]) == 0
    assert f"taxi-rsp query: warning: {static}:1:22: relative IRI <p>" in capsys.readouterr().err
