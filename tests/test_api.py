"""The public Python API: registering text, pushing events in every accepted term form,
reading decoded results, and one-line errors for what a user gets wrong."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import importlib.resources
from decimal import Decimal
from fractions import Fraction

import pyoxigraph as ox
import pytest
import rdflib

import taxi_rsp
from taxi_rsp import IRI, Literal, Session, UserError

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
VALUES = f"PREFIX ex: <{EX}> SELECT ?s ?v WHERE {{ STREAM ex:s [RANGE 1m] {{ ?s ex:v ?v }} }}"


def _pushed(*graphs) -> list:
    session = Session()
    handle = session.register(VALUES, "values")
    for second, graph in enumerate(graphs):
        session.push(graph, 1_000 * second)
    return [row for result in handle.results() for row in result.rows]


def test_every_term_form_gives_the_same_event() -> None:
    forms = [
        f"<{EX}a> <{EX}v> \"5\"^^<{XSD}integer> .",
        [(f"<{EX}a>", f"<{EX}v>", f"\"5\"^^<{XSD}integer>")],
        [(ox.NamedNode(EX + "a"), ox.NamedNode(EX + "v"), ox.Literal("5", datatype=ox.NamedNode(XSD + "integer")))],
        [(rdflib.URIRef(EX + "a"), rdflib.URIRef(EX + "v"), rdflib.Literal(5))],
        [(IRI(EX + "a"), IRI(EX + "v"), Literal("5", XSD + "integer"))],
        [(IRI(EX + "a"), IRI(EX + "v"), 5)],
    ]
    for form in forms:
        assert _pushed(form) == [(IRI(EX + "a"), 5)], form


def test_python_values_become_typed_literals() -> None:
    rows = _pushed([(f"<{EX}a>", f"<{EX}v>", Decimal("2.50"))], [(f"<{EX}b>", f"<{EX}v>", True)],
                   [(f"<{EX}c>", f"<{EX}v>", dt.datetime(2015, 1, 1, 9))])
    assert rows == [(IRI(EX + "a"), Fraction(5, 2)), (IRI(EX + "b"), True),
                    (IRI(EX + "c"), taxi_rsp.DateTime.parse("2015-01-01T09:00:00"))]


def test_times_as_ms_datetime_or_text_agree_and_expiries_are_reported() -> None:
    results = {}
    for label, times in {"ms": [0, 30_000, 90_000],
                         "text": ["1970-01-01T00:00:00", "1970-01-01 00:00:30", "1970-01-01T00:01:30"],
                         "datetime": [dt.datetime(1970, 1, 1, 0, 0, s) if s < 60 else dt.datetime(1970, 1, 1, 0, 1, 30)
                                      for s in (0, 30, 90)]}.items():
        session = Session()
        handle = session.register(VALUES, "values", decode="terms")
        for n, at in enumerate(times):
            session.push([(f"<{EX}e{n}>", f"<{EX}v>", n)], at)
        results[label] = [(r.time, r.trigger, r.seq, r.rows, r.deleted) for r in handle.results()]
    assert results["ms"] == results["text"] == results["datetime"]
    # e0 leaves at 60 s, between the second and third event: an expiry report of its own
    assert [(time, trigger) for time, trigger, *_ in results["ms"]] == [
        (0, "event"), (30_000, "event"), (60_000, "expiry"), (90_000, "event")]
    assert results["ms"][2][4] == [(IRI(EX + "e0"), Literal("0", XSD + "integer"))]


def test_callbacks_and_iterators_and_keep_false() -> None:
    session = Session()
    kept = session.register(VALUES, "kept")
    streamed = session.register(VALUES, "streamed", keep=False)
    seen = []
    streamed.subscribe(seen.append)
    session.push(f"<{EX}a> <{EX}v> 1 .", 0)
    session.push(f"<{EX}b> <{EX}v> 2 .", 1_000)
    assert [r.dicts() for r in seen] == [[{"s": IRI(EX + "a"), "v": 1}], [{"s": IRI(EX + "b"), "v": 2}]]
    assert [r.query for r in kept] == ["kept", "kept"]
    assert list(kept.results()) == []  # each report is handed out once
    with pytest.raises(UserError, match="keep=False"):
        list(streamed.results())


def test_construct_results_are_triples() -> None:
    session = Session()
    handle = session.register(f"PREFIX ex: <{EX}> CONSTRUCT {{ ?s ex:seen true }} "
                              f"WHERE {{ STREAM ex:s [RANGE 1m] {{ ?s ex:v ?v }} }}", "seen")
    session.push(f"<{EX}a> <{EX}v> 1 .", 0)
    (result,) = handle.results()
    assert handle.info.report_policy.startswith("CONSTRUCT stream")
    assert result.triples == [(IRI(EX + "a"), IRI(EX + "seen"), Literal("true", XSD + "boolean"))]


@pytest.mark.parametrize(("setup", "push", "message"), [
    (VALUES, (f"<{EX}a> <{EX}v> oops .", 0), r"pushed graph, line 1: .*oops"),
    (VALUES, ([(f"<{EX}a>", f"<{EX}v>")], 0), "a triple has 3 terms"),
    (VALUES, ([(f"<{EX}a>", f"<{EX}v>", object())], 0), "cannot use"),
    (VALUES, (f"<{EX}a> <{EX}v> 1 .", "yesterday"), "not an xsd:dateTime"),
])
def test_bad_pushes_are_one_line_user_errors(setup: str, push: tuple, message: str) -> None:
    session = Session()
    session.register(setup, "q")
    with pytest.raises(UserError, match=message) as caught:
        session.push(*push)
    assert "\n" not in str(caught.value)


def test_order_stream_and_registration_errors() -> None:
    session = Session()
    session.register(VALUES, "one")
    session.register(VALUES.replace("ex:s ", "ex:other "), "two")
    with pytest.raises(UserError, match="name the stream"):
        session.push(f"<{EX}a> <{EX}v> 1 .", 5_000)
    session.push(f"<{EX}a> <{EX}v> 1 .", 5_000, stream=EX + "s")
    with pytest.raises(UserError, match="earlier than the previous one"):
        session.push(f"<{EX}a> <{EX}v> 1 .", 4_000, stream=EX + "s")
    with pytest.raises(UserError, match="before the first event"):
        session.register(VALUES, "late")
    fresh = Session()
    fresh.register(VALUES, "same")
    with pytest.raises(UserError, match="given twice"):
        fresh.register(VALUES, "same")
    with pytest.raises(UserError, match="reads no STREAM"):
        fresh.register("SELECT ?s WHERE { ?s ?p ?o }", "static")


def test_the_public_names_and_py_typed() -> None:
    assert set(taxi_rsp.__all__) >= {"Session", "QueryInfo", "Result", "run_debs", "EngineConfig"}
    for name in taxi_rsp.__all__:
        assert getattr(taxi_rsp, name) is not None
    assert (importlib.resources.files("taxi_rsp") / "py.typed").is_file()


@pytest.mark.parametrize("module", ["taxi_rsp", "taxi_rsp.api", "taxi_rsp.session.session",
                                    "taxi_rsp.session.config", "taxi_rsp.session.push", "taxi_rsp.engine.info",
                                    "taxi_rsp.engine.config", "taxi_rsp.outputs.delays", "taxi_rsp.outputs.lines",
                                    "taxi_rsp.outputs.summary"])
def test_docstring_examples_of_the_public_modules(module: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_blank_nodes_are_scoped_to_the_session() -> None:
    session = Session()
    handle = session.register(VALUES, "values")
    session.push("_:b <http://example.org/v> 1 .", 0)
    session.push([("_:b", f"<{EX}v>", 2)], 1_000)
    first, second = (result.rows[0][0] for result in handle.results())
    assert first == second and isinstance(first, taxi_rsp.BNode)
