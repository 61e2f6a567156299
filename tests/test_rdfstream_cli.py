"""`taxi-rsp synth-iswc` and `taxi-rsp run --stream` end to end."""

from __future__ import annotations

import csv
import io
import json
from itertools import groupby
from pathlib import Path

import pytest
import rdflib
from rdflib.query import Result

from taxi_rsp.cli import main

ROOT = Path(__file__).resolve().parents[1]
ISWC = ROOT / "queries" / "iswc2011"


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("iswc")
    assert main(["synth-iswc", "--out", str(out), "--people", "40", "--static-triples", "400", "--events", "300",
                 "--attendees", "10", "--locations", "5", "--interval-ms", "800", "--seed", "5"]) == 0
    return out


def run_stream(workload: Path, out: Path, query: str, stream: str = "stream.tnt", *extra: str) -> int:
    return main(["run", "--stream", str(workload / stream), "--static", str(workload / "dblp.nt"),
                 "--static", str(workload / "floorplan.nq"), "--query", str(ISWC / f"{query}.cqels"),
                 "--out", str(out), *extra])


def test_generator_is_deterministic_and_exact(workload: Path, tmp_path: Path) -> None:
    assert main(["synth-iswc", "--out", str(tmp_path), "--people", "40", "--static-triples", "400", "--events",
                 "300", "--attendees", "10", "--locations", "5", "--interval-ms", "800", "--seed", "5"]) == 0
    for name in ("stream.tnt", "stream.nq", "dblp.nt", "floorplan.nq", "manifest.json"):
        assert (tmp_path / name).read_bytes() == (workload / name).read_bytes(), name
    assert len(rdflib.Graph().parse(workload / "dblp.nt", format="nt")) == 400
    dataset = rdflib.Dataset()
    dataset.parse(workload / "floorplan.nq", format="nquads")
    plan = dataset.graph(rdflib.URIRef("http://deri.org/floorplan/"))
    connected = rdflib.URIRef("http://deri.org/lv#connected")
    assert all((o, connected, s) in plan for s, _, o in plan.triples((None, connected, None)))  # symmetric
    assert main(["synth-iswc", "--out", str(tmp_path / "other"), "--people", "40", "--static-triples", "400",
                 "--events", "300", "--attendees", "10", "--locations", "5", "--seed", "6"]) == 0
    assert (tmp_path / "other" / "stream.tnt").read_bytes() != (workload / "stream.tnt").read_bytes()


def test_select_results_csv_and_json_agree_and_both_stream_forms_agree(workload: Path, tmp_path: Path) -> None:
    assert run_stream(workload, tmp_path / "tnt", "q5") == 0
    assert run_stream(workload, tmp_path / "nq", "q5", "stream.nq") == 0
    assert run_stream(workload, tmp_path / "json", "q5", "stream.tnt", "--format", "json") == 0
    rows = (tmp_path / "tnt" / "q5.csv").read_text()
    assert rows == (tmp_path / "nq" / "q5.csv").read_text()
    table = list(csv.DictReader(io.StringIO(rows)))
    assert table and table[0].keys() == {"time", "trigger", "change", "rank", "loc2", "locName", "noCoAuths"}
    summary = json.loads((tmp_path / "tnt" / "summary.json").read_text())
    assert summary["events"] == 300 and summary["static_triples"] == 400 + len((workload / "floorplan.nq").read_text().splitlines())
    assert summary["reports"]["q5"] == len({(r["time"], r["trigger"]) for r in table})
    assert summary["emitted"]["q5"] == len(table)  # output lines (rows), not reports
    from_json = []
    for line in (tmp_path / "json" / "q5.jsonl").read_text().splitlines():
        document = json.loads(line)
        result = Result.parse(io.StringIO(line), format="json")  # a SPARQL 1.1 JSON results document
        instant = document["instant"]
        for binding in result.bindings:
            values = {str(var): str(term) for var, term in binding.items()}
            from_json.append((instant["time"].replace("T", " "), instant["trigger"], instant["change"],
                              values["loc2"], values["locName"], values["noCoAuths"]))
    assert sorted(from_json) == sorted((r["time"], r["trigger"], r["change"], r["loc2"], r["locName"],
                                        r["noCoAuths"]) for r in table)
    assert not list((tmp_path / "tnt").glob(".*.partial"))


def test_construct_results_are_an_nquads_stream(workload: Path, tmp_path: Path) -> None:
    assert run_stream(workload, tmp_path, "q2") == 0
    dataset = rdflib.Dataset()
    dataset.parse(tmp_path / "q2.nq", format="nquads")
    stamp = rdflib.URIRef("http://www.w3.org/ns/prov#generatedAtTime")
    reachable = rdflib.URIRef("http://deri.org/lv#reachable")
    graphs = [g for g in dataset.graphs() if str(g.identifier).startswith("urn:taxi-rsp:result:")]
    assert graphs and all(set(g.predicates()) == {reachable} for g in graphs)
    assert len(list(dataset.default_graph.triples((None, stamp, None)))) == len(graphs)
    assert json.loads((tmp_path / "summary.json").read_text())["reports"]["q2"] == len(graphs)


def test_fed_nquads_give_the_csv_runs_top_lists(tmp_path: Path, sample_20d: Path) -> None:
    """taxi CSV -> `taxi-rsp feed --nquads` -> `run --stream`: Q1's ranked lists are the CSV run's."""
    sample = tmp_path / "head.csv"
    sample.write_text("".join(sample_20d.open().readlines()[:400]))
    assert main(["feed", str(sample), "--nquads", str(tmp_path / "events.nq")]) == 0
    assert main(["run", str(sample), "--query", "q1", "--out", str(tmp_path / "csv")]) == 0
    assert main(["run", "--stream", str(tmp_path / "events.nq"), "--query", "q1", "--out", str(tmp_path / "rdf")]) == 0
    debs = []
    for line in (tmp_path / "csv" / "q1.csv").read_text().splitlines():
        fields = line.split(",")
        routes = [tuple(fields[i:i + 2]) for i in range(2, 22, 2) if fields[i] != "NULL"]
        debs.append((fields[1], routes))
    generic, last = [], []
    rows = csv.DictReader((tmp_path / "rdf" / "q1.csv").open())
    for (when, _), report in groupby(rows, key=lambda r: (r["time"], r["trigger"])):
        routes = [(r["startCell"], r["endCell"]) for r in report if r["rank"]]
        if routes != last:  # the DEBS listener writes a line only when the id list changes
            generic.append((when, routes))
            last = routes
    assert len(debs) > 20 and generic == debs
    # The same ranked reports as SPARQL 1.1 JSON: one "=" document per report, ranks in order.
    assert main(["run", "--stream", str(tmp_path / "events.nq"), "--query", "q1", "--format", "json",
                 "--out", str(tmp_path / "json")]) == 0
    reports = [json.loads(line) for line in (tmp_path / "json" / "q1.jsonl").read_text().splitlines()]
    rows = list(csv.DictReader((tmp_path / "rdf" / "q1.csv").open()))
    assert {d["instant"]["change"] for d in reports} == {"="}
    assert [(b["startCell"]["value"], b["endCell"]["value"]) for d in reports for b in d["results"]["bindings"]] == \
        [(r["startCell"], r["endCell"]) for r in rows if r["rank"]]


@pytest.mark.parametrize("args, message", [
    (["run", "{sample}", "--stream", "{w}/stream.tnt", "--out", "{tmp}/o"], "exactly one of INPUT"),
    (["run", "--out", "{tmp}/o"], "exactly one of INPUT"),
    (["run", "--stream", "{w}/stream.tnt", "--out", "{tmp}/o"], "at least one --query"),
    (["run", "--stream", "{w}/dblp.nt", "--query", "{q}/q1.cqels", "--out", "{tmp}/o"], "cannot tell the stream format"),
    (["run", "--stream", "{w}/none.tnt", "--query", "{q}/q1.cqels", "--out", "{tmp}/o"], "does not exist"),
    (["run", "{sample}", "--stream-iri", "http://example.org/s", "--out", "{tmp}/o"], "applies to --stream runs only"),
    (["run", "--stream", "{tmp}/bad.tnt", "--query", "{q}/q3.cqels", "--out", "{tmp}/o"], "bad.tnt:3:104: out of order"),
    (["run", "--stream", "{w}/stream.tnt", "--static", "{tmp}/bad.nt", "--query", "{q}/q3.cqels", "--out", "{tmp}/o"],
     "bad.nt:1:"),
    (["run", "--stream", "{w}/stream.tnt", "--query", "{tmp}/two.cqels", "--out", "{tmp}/o"], "--stream IRI=FILE"),
])
def test_user_errors_are_one_line_and_leave_no_result(workload: Path, tmp_path: Path, capsys, sample_20d,
                                                      args, message) -> None:
    lines = (workload / "stream.tnt").read_text().splitlines()
    (tmp_path / "bad.tnt").write_text("\n".join([lines[0], lines[5], lines[1]]) + "\n")
    (tmp_path / "bad.nt").write_text("<http://x/a> <http://x/b> .\n")
    (tmp_path / "two.cqels").write_text("SELECT ?s WHERE { STREAM <http://a> [NOW] { ?s ?p ?o } "
                                        "STREAM <http://b> [NOW] { ?s ?p ?o } }")
    argv = [a.format(tmp=tmp_path, w=workload, q=ISWC, sample=sample_20d) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    out = tmp_path / "o"
    assert not (out / "summary.json").exists() and not list(out.glob(".*.partial"))
