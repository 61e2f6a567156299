"""Regressions for the bugs an outside test campaign found in CQELS-QL (issue 16), each
on a three-event taxi-like stream or a tiny static dataset, with the answer by hand."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner.oneshot import evaluate_once
from taxi_rsp.errors import QuerySyntaxError, UnsupportedQueryError
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.rdf.terms import IRI, Literal
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream

TAXI = "http://debs2015.org/taxi#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIX = "PREFIX ex: <http://example.org/>\n"


def _trips(query: str) -> Stream:
    """Three trips (minutes 0, 1, 2), each one event with its seq and payment type."""
    engine = Engine()
    register(engine, PREFIX + query, "q")
    stream = Stream(engine)
    for minute, payment in ((0, "CSH"), (1, "CRD"), (2, "CSH")):
        stream.send(minute, (f"ex:trip{minute}", IRI(TAXI + "seq"), minute + 1),
                    (f"ex:trip{minute}", IRI(TAXI + "paymentType"), payment))
    return stream


def test_blank_node_in_a_pattern_is_a_hidden_variable() -> None:
    stream = _trips(f"SELECT ?s WHERE {{ STREAM ex:stream [NOW] {{ _:t <{TAXI}seq> ?s }} }}")
    inserted = [row for _, _, rows in stream.values() for row in rows]
    assert inserted == [(1,), (2,), (3,)]
    engine = Engine()
    engine.static.add(IRI(EX + "a"), IRI(EX + "p"), IRI(EX + "b"))
    result = evaluate_once(engine, PREFIX + "SELECT * WHERE { [] ex:p ?o . _:x ex:p ?o2 }")
    assert result.columns == ("o", "o2") and result.rows == [(IRI(EX + "b"), IRI(EX + "b"))]


def test_count_distinct_star_counts_distinct_solutions_of_a_growing_window() -> None:
    stream = _trips("SELECT (COUNT(DISTINCT *) AS ?n) WHERE { STREAM ex:stream [ALL] { ?t ?p ?o } }")
    assert [rows for _, _, rows in stream.values()] == [[(2,)], [(4,)], [(6,)]]


def test_relative_prefix_iri_is_resolved_against_base() -> None:
    query = parse_query("BASE <http://debs2015.org/> PREFIX t: <taxi#> SELECT ?x WHERE { ?x t:paymentType ?p }")
    assert query.where.elements[0].triples[0].p == IRI(TAXI + "paymentType")
    stream = _trips("BASE <http://debs2015.org/> PREFIX t: <taxi#> "
                    "SELECT ?p WHERE { STREAM ex:stream [NOW] { ?x t:paymentType ?p } }")
    assert [rows for _, expiry, rows in stream.values() if not expiry] == [[("CSH",)], [("CRD",)], [("CSH",)]]


def test_datatype_and_lang_are_evaluated() -> None:
    engine = Engine()
    engine.static.add(IRI(EX + "a"), IRI(EX + "name"), Literal("chat", XSD + "string", "fr"))
    engine.static.add(IRI(EX + "a"), IRI(EX + "n"), Literal("7", XSD + "int"))
    engine.static.add(IRI(EX + "a"), IRI(EX + "d"), Literal("P1D", XSD + "duration"))
    result = evaluate_once(engine, PREFIX + "SELECT (LANG(?l) AS ?lang) (DATATYPE(?l) AS ?dl) (DATATYPE(?n) AS ?dn) "
                                            "(DATATYPE(?d) AS ?dd) (LANG(?d) AS ?ld) "
                                            "WHERE { ex:a ex:name ?l ; ex:n ?n ; ex:d ?d }")
    # xsd:int is an integer by value (docs/semantics.md: value equality of inlined literals)
    assert result.rows == [(Literal("fr"), IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"),
                            IRI(XSD + "integer"), IRI(XSD + "duration"), Literal(""))]


def test_unsupported_or_misused_function_names_line_and_column() -> None:
    with pytest.raises(QuerySyntaxError) as error:
        parse_query("SELECT ?x WHERE {\n  ?x ?p ?o FILTER(STRLEN(?o, 2) > 1) }")
    assert (error.value.line, error.value.column) == (2, 19) and "STRLEN takes 1 argument" in str(error.value)


def test_deep_nesting_is_a_one_line_error_not_a_recursion_crash() -> None:
    text = "SELECT ?s WHERE { ?s ?p ?o FILTER(" + "(" * 125 + "?o > 1" + ")" * 125 + ") }"
    with pytest.raises(QuerySyntaxError, match="nested more than 64 deep") as error:
        register(Engine(), text, "deep")
    assert error.value.line == 1 and error.value.column > 1
    ok = "SELECT ?s WHERE { ?s ?p ?o FILTER(" + "(" * 60 + "?o > 1" + ")" * 60 + ") }"
    register(Engine(), ok, "fine")  # 60 levels still work end to end


def test_construct_result_graph_is_a_set() -> None:
    engine = Engine()
    register(engine, PREFIX + "CONSTRUCT { ex:fleet ex:has ex:payments } "
                             "WHERE { STREAM ex:stream [NOW] { ?t ?p ?o } }", "c")
    stream = Stream(engine)
    stream.send(0, ("ex:trip0", "ex:a", 1), ("ex:trip0", "ex:b", 2), ("ex:trip0", "ex:c", 3))
    assert [o.triples for o in stream.outputs] == [[(IRI(EX + "fleet"), IRI(EX + "has"), IRI(EX + "payments"))]]


@pytest.mark.parametrize("expr, expected", [
    ("xsd:string(27.0)", "27"), ("xsd:string(27.5)", "27.5"), ("xsd:string(1.0e7)", "1.0E7"),
    ("xsd:string(0.5e0)", "0.5"), ("xsd:string(true)", "true"), ("STR(27.0)", "27.0"),
])
def test_xsd_string_cast_follows_xpath(expr: str, expected: str) -> None:
    result = evaluate_once(Engine(), f"SELECT ({expr} AS ?s) {{}}")
    assert result.rows == [(Literal(expected),)]


def test_having_cannot_read_a_select_alias() -> None:
    text = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?t ?p ?o } GROUP BY ?p HAVING (?n > 20)"
    with pytest.raises(UnsupportedQueryError, match="HAVING reads \\?n"):
        register(Engine(), text, "h")
    register(Engine(), text.replace("HAVING (?n > 20)", "HAVING (COUNT(*) > 20)"), "ok")


def _fifo_run(tmp_path: Path, signum: int) -> tuple[int, str, list[str]]:
    """A run reading a FIFO that never ends, stopped by ``signum`` once its outputs exist."""
    fifo = tmp_path / "trips.csv"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "taxi_rsp.cli", "run", str(fifo), "--out", str(out),
                             "--query", "q1", "--no-progress"], stderr=subprocess.PIPE, text=True)
    with open(fifo, "w", encoding="utf-8") as writer:  # kept open: the run waits for more
        writer.write("07290D3599E7A0D62097A346EFCC1FB5,E7750A37CAB07D0DFF0AF7E3573AC141,"
                     "2013-01-01 00:00:00,2013-01-01 00:02:00,120,0.44,-73.956528,40.716976,"
                     "-73.962440,40.715008,CSH,3.50,0.50,0.50,0.00,0.00,4.50\n")
        writer.flush()
        deadline = time.monotonic() + 60
        while not list(out.glob(".*.partial")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    # the folder the run made goes with its partial files (issue 52): nothing is left
    return proc.returncode, stderr, sorted(p.name for p in out.iterdir()) if out.exists() else []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_remove_partial_files(tmp_path: Path, signum: int) -> None:
    code, stderr, left = _fifo_run(tmp_path, signum)
    assert code == 128 + signum
    assert f"terminated by {signal.Signals(signum).name}" in stderr
    assert left == []


def test_unfed_stream_and_cross_product_are_warned(tmp_path: Path) -> None:
    query = tmp_path / "cross.cqels"
    query.write_text(
        "PREFIX ex: <http://example.org/>\nSELECT * WHERE {\n"
        "  STREAM <http://debs2015.org/streams/trips> [RANGE 10m] { ?a ex:p ?b }\n"
        "  STREAM <http://debs2015.org/streams/trip> [RANGE 10m] { ?c ex:p ?d } }\n", encoding="utf-8")
    sample = Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015" / "full2013_first100.csv"
    proc = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", "run", str(sample), "--out", str(tmp_path / "o"),
                           "--query", str(query), "--no-progress", "--explain"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning:" in line]
    assert any("reads STREAM <http://debs2015.org/streams/trip>, which this input never feeds" in w
               for w in warnings)
    assert any("cross product" in w and "2 groups" in w for w in warnings)
    assert len(warnings) == len(set(warnings))  # said once, not again at the end
    assert "warning: cross product" in proc.stdout  # --explain shows it with the plan


def test_limit_in_a_stream_sub_select_is_not_silently_ignored() -> None:
    # Found while fixing the above: a sub-SELECT's LIMIT without ORDER BY was dropped.
    inner = "SELECT ?s WHERE {{ STREAM ex:stream [ALL] {{ ?t <{seq}> ?s }} }} {order} LIMIT 2"
    text = PREFIX + "SELECT ?s WHERE {{ {{ " + inner + " }} }}"
    with pytest.raises(UnsupportedQueryError, match="LIMIT/OFFSET without ORDER BY"):
        register(Engine(), text.format(seq=TAXI + "seq", order=""), "q")
    engine = Engine()
    register(engine, text.format(seq=TAXI + "seq", order="ORDER BY DESC(?s)"), "q")
    stream = Stream(engine)
    for minute in range(4):
        stream.send(minute, (f"ex:trip{minute}", IRI(TAXI + "seq"), minute + 1))
    state: dict = {}
    for output in stream.outputs:
        for row in output.values():
            state[row] = state.get(row, 0) + 1
        for row in output.values(output.deleted):
            state[row] -= 1
    assert sorted(row for row, n in state.items() if n) == [(3,), (4,)]
