"""The W3C SPARQL 1.1 query test suite against the engine (one-shot evaluation over
static data; harness in tests/w3c_harness.py, suite and licence in tests/data/w3c-sparql11).

Every test must pass except those in KNOWN, each with the reason (docs/cqels-ql.md has
the table); a KNOWN test that starts passing fails here too, so the list stays honest.
"""

from __future__ import annotations

import pytest
from w3c_harness import load_cases, run_case, table

KNOWN = {
    "aggregates/agg-empty-group-count-graph": "GRAPH ?g { P } binds ?g in each BGP of P instead of evaluating P "
                                              "per graph: an aggregate inside GRAPH sees all graphs at once",
    "bindings/graph": "same GRAPH ?g scoping difference (VALUES ?g inside GRAPH ?g)",
    "negation/graph-minus": "same GRAPH ?g scoping difference: MINUS inside GRAPH ?g shares ?g with its left side",
    "subquery/subquery02": "same GRAPH ?g scoping difference: a sub-SELECT inside GRAPH ?g sees ?g bound",
    "cast/cast-float": "xsd:float values are carried as doubles, so the result's datatype is xsd:double",
    "construct/constructlist": "RDF collections ( ... ) are not supported (refused with line:col)",
    "functions/bnode01": "BNODE(str) gives the same blank node for the same string across solutions, not "
                         "one per solution",
    "syntax-query/test_codepoint_invalid_escaped_bad_06": "\\u escapes are not checked for surrogate code points",
    "syntax-query/test_pp_coll": "RDF collections ( ... ) are not supported (refused with line:col)",
}

CASES = load_cases()


def test_every_directory_is_loaded() -> None:
    directories = {case.directory for case in CASES}
    assert len(directories) == 13 and len(CASES) > 300


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_w3c_case(case) -> None:
    outcome = run_case(case)
    if case.id in KNOWN:
        assert outcome.status != "pass", f"{case.id} passes now: remove it from KNOWN"
    else:
        assert outcome.status == "pass", f"{outcome.status}: {outcome.detail}"


def test_table_counts_every_case() -> None:
    outcomes = [run_case(case) for case in CASES if case.directory == "bind"]
    assert "| bind | 10 | 10 | 0 | 0 | 0 |" in table(outcomes)
