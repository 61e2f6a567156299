"""docs/cqels-ql.md lists only what the engine accepts, and everything it evaluates.

Each feature example must register; the function, aggregate and cast lists must equal
what the engine evaluates; each "refused" example must be refused with line:col."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taxi_rsp.engine import expr
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.ops.aggregates import _KINDS
from taxi_rsp.errors import UserError
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.planner import register

DOC = (Path(__file__).resolve().parents[1] / "docs" / "cqels-ql.md").read_text(encoding="utf-8")
XSD = "http://www.w3.org/2001/XMLSchema#"


def _block(name: str) -> str:
    match = re.search(f"<!-- {name}: begin -->(.*?)<!-- {name}: end -->", DOC, re.S)
    assert match, f"docs/cqels-ql.md has no {name} block"
    return match.group(1)


def _examples(name: str) -> list[tuple[str, str]]:
    found = re.findall(r"^- \*\*(.+?)\*\* — `(.+)`$", _block(name), re.M)
    assert found, name
    return found


def _names(name: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", _block(name)))


FEATURES = _examples("features")
REFUSED = _examples("refused")


@pytest.mark.parametrize("feature, query", FEATURES, ids=[f for f, _ in FEATURES])
def test_every_listed_feature_is_accepted(feature: str, query: str) -> None:
    register(Engine(), query, "doc")


@pytest.mark.parametrize("feature, query", REFUSED, ids=[f for f, _ in REFUSED])
def test_every_refusal_names_line_and_column(feature: str, query: str) -> None:
    with pytest.raises(UserError) as error:
        register(Engine(), query, "doc", source="doc.rq")
    assert re.match(r"doc\.rq:\d+:\d+: ", str(error.value)), str(error.value)


def _call(name: str) -> str:
    for count in range(5):
        if expr.check_call(name, count) is None:
            args = ["?o"] if name == "BOUND" else ['"a"'] * count
            return f"{name}({', '.join(args)})"
    raise AssertionError(f"{name} accepts no argument count")


def test_function_list_is_exactly_what_the_engine_evaluates() -> None:
    listed = _names("functions")
    assert listed == set(expr.SUPPORTED_FUNCTIONS)
    for name in sorted(listed):
        register(Engine(), f"SELECT ({_call(name)} AS ?x) WHERE {{ ?s ?p ?o }}", name)


def test_aggregate_list_is_exactly_what_the_engine_evaluates() -> None:
    listed = _names("aggregates")
    assert listed == set(_KINDS)
    for name in sorted(listed):
        register(Engine(), f"SELECT ({name}(DISTINCT ?o) AS ?x) WHERE {{ ?s ?p ?o }}", name)


def test_cast_list_is_exactly_what_the_engine_evaluates() -> None:
    listed = {name.replace("xsd:", XSD) for name in _names("casts")}
    assert listed == set(expr._CASTS)
    for iri in sorted(listed):
        register(Engine(), f'SELECT (<{iri}>("1") AS ?x) WHERE {{ }}', iri)


def test_an_unlisted_sparql_builtin_would_be_refused_not_ignored() -> None:
    with pytest.raises(UserError, match="1:9"):
        parse_query("SELECT (SUBSTR('a') AS ?x) {}")
