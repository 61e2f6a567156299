"""Syntax errors name the likely mistake, with the offending line and a caret (issue 52):
an unclosed ``{`` (where it opened), a ``}`` too many, a missing ``.``, an undeclared
prefix (with a close match), a misplaced parameter."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.errors import QuerySyntaxError
from taxi_rsp.lang.parser import parse_query

UNCLOSED_STREAM = """PREFIX ex: <http://x/>
SELECT ?x (COUNT(*) AS ?n)
WHERE {
  STREAM ex:s [RANGE 1m] {
    ?x ex:p ?o .

}
GROUP BY ?x
"""

UNCLOSED_AT_END = """SELECT ?x WHERE {
  ?x <http://x/p> ?o .
  OPTIONAL { ?x <http://x/q> ?z
}
"""

MISSING_DOT = """SELECT ?x WHERE {
  ?x <http://x/p> ?o
  ?x <http://x/q> ?z
}
"""


def error(text: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text, source="q.cqels")
    return info.value


def test_unclosed_brace_names_the_block_that_lost_its_brace() -> None:
    found = error(UNCLOSED_STREAM)
    # the '}' on line 7 is indented like WHERE's line: it closes WHERE; STREAM's '{' lost its '}'
    assert str(found) == "q.cqels:8:1: unexpected 'GROUP': the '{' at 4:26 is never closed (a '}' is missing)"
    assert found.excerpt == "    GROUP BY ?x\n    ^"
    assert ", expected" not in str(found)  # no token list


def test_unclosed_brace_at_the_end_of_the_query() -> None:
    found = error(UNCLOSED_AT_END)
    assert "unexpected end of query: the '{' at 3:12 is never closed" in str(found)


def test_unclosed_brace_without_indentation_names_the_innermost() -> None:
    found = error("SELECT ?x WHERE { { ?x ?p ?o } UNION { ?x ?q ?o }")
    assert "the '{' at 1:17 is never closed" in str(found)


def test_one_brace_too_many() -> None:
    found = error("SELECT ?x WHERE { ?x ?p ?o } }")
    assert (found.line, found.column) == (1, 30) and "no '{' is open here" in str(found)


def test_missing_dot_between_triple_patterns() -> None:
    found = error(MISSING_DOT)
    assert str(found) == ("q.cqels:3:3: unexpected '?x': a '.' is missing between two triple patterns "
                          "(after '?o', which ends at 2:21)")
    assert found.excerpt == "      ?x <http://x/q> ?z\n      ^"


def test_balanced_braces_and_other_mistakes_keep_the_expected_list() -> None:
    found = error("SELECT ?a WHERE { ?a ?b }")
    assert "expected" in str(found) and "never closed" not in str(found)


@pytest.mark.parametrize("text, words", [
    ("PREFIX ex: <http://x/> SELECT ?x WHERE { ?x exs:p ?o }",
     "undeclared prefix 'exs:' (did you mean 'ex:'?); declare it: PREFIX exs: <…>"),
    ("SELECT ?x WHERE { ?x zzz:p ?o }", "undeclared prefix 'zzz:'; declare it: PREFIX zzz: <…>"),
])
def test_undeclared_prefix_suggests_a_declared_one(text: str, words: str) -> None:
    assert words in str(error(text))


@pytest.mark.parametrize("text, words", [
    ("SELECT ?x WHERE { ?x ?p ?o } ORDER BY ${x}", "a parameter cannot stand here (${x})"),
    ("SELECT ${v} WHERE { ?x ?p ?o }", "a parameter cannot stand here (${v})"),
    ("SELECT ?x WHERE { <http://x/${id}> ?p ?o }", "a parameter cannot stand inside an IRI"),
])
def test_misplaced_parameters_say_so(text: str, words: str) -> None:
    assert words in str(error(text))


def test_the_command_line_prints_the_caret_line(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.cqels"
    query.write_text(UNCLOSED_STREAM)
    assert main(["query", str(query)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"taxi-rsp query: error: {query}:8:1: unexpected 'GROUP': the '{{' at 4:26 is never closed "
                   "(a '}' is missing)", "    GROUP BY ?x", "    ^"]


@pytest.mark.parametrize("text, dialect, fix", [
    ("REGISTER QUERY q AS SELECT * WHERE { ?a ?b ?c }", "REGISTER (C-SPARQL, RSP-QL, YASPER)", "SELECT or CONSTRUCT"),
    ("SELECT * FROM STREAM <http://s> [RANGE 10s] WHERE { ?a ?b ?c }", "FROM STREAM (C-SPARQL", "STREAM <stream-iri> ["),
    ("SELECT * FROM NAMED WINDOW <http://w> ON <http://s> [RANGE PT10S] WHERE { WINDOW <http://w> { ?a ?b ?c } }",
     "named windows (RSP-QL", "STREAM <stream-iri> ["),
    ("SELECT * WHERE { WINDOW <http://w> { ?a ?b ?c } }", "named windows (RSP-QL", "STREAM <stream-iri> ["),
    ("SELECT * WHERE { STREAM <http://s> [RANGE PT10S] { ?a ?b ?c } }", "PT10S is an ISO 8601 duration", "10s"),
    ("SELECT * WHERE { STREAM <http://s> [RANGE 10s STEP 1s] { ?a ?b ?c } }", "STEP (C-SPARQL)", "SLIDE"),
    ("SELECT ISTREAM ?a WHERE { STREAM <http://s> [RANGE 10s] { ?a ?b ?c } }", "ISTREAM (stream output", "form"),
    ("SELECT ?a WHERE { STREAM <http://s> [RANGE 10s] { ?a ?b ?c } } EMIT SNAPSHOT", "EMIT (stream output", "form"),
])
def test_another_rsp_languages_construct_is_named_with_the_cqels_way(text: str, dialect: str, fix: str) -> None:
    message = str(error(text))
    assert dialect in message and fix in message and "expected" not in message, message


def test_a_cqels_stream_after_from_is_not_mistaken_for_a_named_graph() -> None:
    """``FROM <g>`` (a dataset clause) still parses; only ``FROM STREAM`` gets the hint."""
    assert parse_query("SELECT * FROM <http://g> WHERE { ?a ?b ?c }", source="q.cqels") is not None
