"""CQELS-QL parsing: every construct the issue lists, and errors with line:col."""

from __future__ import annotations

import pytest

from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.errors import QuerySyntaxError, UnsupportedQueryError
from taxi_rsp.lang import ast
from taxi_rsp.lang.parser import parse_duration, parse_query
from taxi_rsp.rdf.terms import IRI

FULL = """
PREFIX ex: <http://example.org/>
SELECT DISTINCT ?a (COUNT(DISTINCT ?b) AS ?n) (SUM(?v) AS ?s) (AVG(?v) AS ?avg)
       (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (MEDIAN(?v) AS ?med)
FROM NAMED <http://example.org/static>
WHERE {
  STREAM ex:s [RANGE 15 minutes] { ?a ex:p ?b ; ex:v ?v . }
  STREAM ex:t [TRIPLES 5] { ?a ex:q ?c }
  STREAM ex:u [NOW] { ?a ex:r ?d }
  STREAM ex:w [ALL] { ?a ex:r2 ?e }
  GRAPH <http://example.org/static> { ?a ex:name ?name }
  OPTIONAL { ?a ex:opt ?o FILTER(?o > 1) }
  { ?a ex:x 1 } UNION { ?a ex:y 2.5 }
  MINUS { ?a ex:bad true }
  BIND(IF(BOUND(?o), ABS(FLOOR(?v * 2) - CEIL(?v) + ROUND(?v)), COALESCE(?o, 0)) AS ?k)
  FILTER(STR(?name) != "x" && ?v IN (1, 2, 3) || !(?v >= 2) && xsd:integer("4") = 4)
  FILTER NOT EXISTS { ?a ex:z ?zz FILTER(?zz > ?v) }
  FILTER EXISTS { ?a ex:zz ?y2 }
}
GROUP BY ?a (xsd:integer(?b) AS ?bb)
HAVING (COUNT(?b) > 1)
ORDER BY DESC(?n) ASC(?a) ?s
LIMIT 10 OFFSET 2
"""


def test_full_query_parses_and_translates() -> None:
    query = parse_query(FULL)
    assert query.distinct and query.limit == 10 and query.offset == 2
    windows = [e.window for e in query.where.elements if isinstance(e, ast.StreamPattern)]
    assert [w.kind for w in windows] == ["RANGE", "TRIPLES", "NOW", "ALL"]
    assert windows[0].range_ms == 15 * 60_000 and windows[1].count == 5
    assert query.order_by[0].descending and not query.order_by[1].descending
    plan = translate_query(query)
    assert plan.ordered and plan.projection == ("a", "n", "s", "avg", "lo", "hi", "med")


def test_construct_and_subselect() -> None:
    query = parse_query(
        "PREFIX ex: <http://example.org/> CONSTRUCT { ?a ex:near ?b } WHERE { "
        "{ SELECT ?a ?b WHERE { STREAM ex:s [RANGE 1h] { ?a ex:p ?b } } } }"
    )
    assert query.form == "CONSTRUCT" and query.template[0].p == IRI("http://example.org/near")
    assert isinstance(query.where.elements[0].elements[0], ast.SubSelect)


@pytest.mark.parametrize(
    "text, expected",
    [("30m", 1_800_000), ("30 m", 1_800_000), ("15 minutes", 900_000), ("1h", 3_600_000),
     ("10s", 10_000), ("500ms", 500), ("2d", 172_800_000), ("1 hour", 3_600_000)],
)
def test_durations(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("SELECT ?a WHERE { ?a ?b }", 1, 25, "expected"),
        ("SELECT ?a WHERE {\n  ?a ?b ?c .\n  FILTER(?a > ) }", 3, 15, "unexpected ')'"),
        ("SELECT ?a WHERE { STREAM <s> [RANGE 30x] { ?a ?b ?c } }", 1, 37, "duration"),
        ("SELECT ?a WHERE { ?a foo:b ?c }", 1, 22, "undeclared prefix 'foo:'"),
        ("SELECT ?a WHERE { ?a ?b ?c", 1, 27, "unexpected end of query"),
        ("SELECT ?a WHERE { ?a ?b ?c } LIMIT x", 1, 36, "unexpected character 'x'"),
        ("SELECT ?a WHERE { STREAM <s> [RANGE ${w}] { ?a ?b ?c } }", 1, 37, "parameter 'w'"),
        ("SELECT (SUM(*) AS ?x) WHERE { ?a ?b ?c }", 1, 9, "only COUNT(*)"),
    ],
)
def test_syntax_errors_name_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in str(info.value)
    assert str(info.value).startswith(f"<query>:{line}:{column}:")


def test_parameters_bind_windows() -> None:
    text = "SELECT ?a WHERE { STREAM <http://s> [RANGE ${w=15m}] { ?a ?b ?c } }"
    assert parse_query(text).where.elements[0].window.range_ms == 900_000
    assert parse_query(text, {"w": "1h"}).where.elements[0].window.range_ms == 3_600_000


@pytest.mark.parametrize(
    "text, words",
    [
        ("SELECT ?a WHERE { STREAM <http://s> [RANGE 1m] { ?a ?b ?c } } LIMIT 3", "LIMIT/OFFSET without ORDER BY"),
        ("SELECT ?a (COUNT(?b) AS ?n) WHERE { STREAM <http://s> [RANGE 1m] { ?a ?b ?c } }", "neither grouped"),
        ("SELECT ?a WHERE { STREAM ?s [RANGE 1m] { ?a ?b ?c } }", "needs an IRI"),
        ("SELECT ?a WHERE { STREAM <http://s> [RANGE 10m] { ?a <http://p>+ ?c } }", "static data only"),
        ("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p HAVING (?n > 2)", "HAVING reads"),
        ("SELECT (MAX(COUNT(?a)) AS ?m) WHERE { ?a ?b ?c }", "nested"),
    ],
)
def test_unsupported_constructs_are_refused(text: str, words: str) -> None:
    with pytest.raises(UnsupportedQueryError, match=words):
        translate_query(parse_query(text))


@pytest.mark.parametrize(("text", "expected"), [
    ("SELECT ?x WHERE { ?x ?p ?o }", False),
    ("SELECT ?x WHERE { ?x ?p ?o FILTER(?o < NOW()) }", True),
    ("SELECT ?x WHERE { ?x ?p ?o FILTER NOT EXISTS { ?x ?q ?t FILTER(?t > NOW()) } }", True),
    ("SELECT ?x WHERE { { SELECT ?x (NOW() AS ?n) WHERE { ?x ?p ?o } } }", True),
    ("SELECT ?x WHERE { ?x ?p ?o } ORDER BY (NOW() - ?o)", True),
    ("SELECT ?x (COUNT(?o) AS ?c) WHERE { ?x ?p ?o } GROUP BY ?x HAVING (MAX(?o) < NOW())", True),
    ("SELECT ?x WHERE { ?x <http://ex/now> ?o BIND('NOW()' AS ?s) }", False),
])
def test_calls_finds_a_function_anywhere_in_a_query(text: str, expected: bool) -> None:
    assert ast.calls(parse_query(text), "NOW") is expected
