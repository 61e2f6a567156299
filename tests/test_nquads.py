"""N-Quads export, checked by parsing it back with rdflib; and `taxi-rsp feed`."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
import rdflib
from rdflib import Literal as RLiteral, URIRef

from taxi_rsp.feeder import Feeder, trip_stamps
from taxi_rsp.cli import main
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.namespaces import PROV_GENERATED_AT, TAXI, XSD_DATETIME, XSD_DECIMAL, XSD_INTEGER, XSD_STRING
from taxi_rsp.rdf.nquads import write_nquads
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal

PROV = URIRef(PROV_GENERATED_AT)


def parse(text: str) -> rdflib.Dataset:
    dataset = rdflib.Dataset()
    dataset.parse(data=text, format="nquads")
    return dataset


def head(path: Path, lines: int, tmp_path: Path) -> Path:
    out = tmp_path / f"head{lines}.csv"
    with path.open("rb") as src:
        out.write_bytes(b"".join(src.readline() for _ in range(lines)))
    return out


def test_sample_events_parse_back(sample_20d: Path, tmp_path: Path) -> None:
    dictionary = Dictionary()
    events = list(Feeder(head(sample_20d, 300, tmp_path), dictionary))
    out = io.StringIO()
    quads = write_nquads(iter(events), dictionary, out)
    text = out.getvalue()
    assert quads == sum(len(e.triples) + 1 for e in events) == text.count("\n")
    dataset = parse(text)
    assert len(list(dataset.quads())) == quads
    named = {g.identifier for g in dataset.graphs()} - {rdflib.graph.DATASET_DEFAULT_GRAPH_ID}
    assert named == {URIRef(f"http://debs2015.org/graph/{e.seq}") for e in events}
    default = dataset.graph(rdflib.graph.DATASET_DEFAULT_GRAPH_ID)
    for event in events:
        graph = URIRef(f"http://debs2015.org/graph/{event.seq}")
        assert len(dataset.graph(graph)) == len(event.triples)
        (stamp,) = default.objects(graph, PROV)
        assert stamp.datatype == URIRef(XSD_DATETIME)
        assert stamp.toPython() == datetime.strptime(trip_stamps(event).dropoff, "%Y-%m-%d %H:%M:%S")
    first = dataset.graph(URIRef("http://debs2015.org/graph/1"))
    trip = URIRef("http://debs2015.org/trip/1")

    def value(name: str) -> object:
        (obj,) = first.objects(trip, URIRef(TAXI + name))
        return obj

    assert value("medallion") == RLiteral("07290D3599E7A0D62097A346EFCC1FB5")  # simple literal = xsd:string
    assert value("pickupLongitude").datatype == URIRef(XSD_DECIMAL)
    assert value("pickupLongitude").toPython() == Decimal("-73.956528")
    assert value("fareAmount").toPython() == Decimal("3.50")
    assert value("seq").toPython() == 1 and value("seq").datatype == URIRef(XSD_INTEGER)
    assert value("dropoffDatetime").toPython() == datetime(2013, 1, 1, 0, 2)
    assert (trip, rdflib.RDF.type, URIRef(TAXI + "Trip")) in first


NASTY = [
    'quote " backslash \\ end',
    "line\nfeed\rcarriage\ttab\bback\fform",
    "nul\x00esc\x1bdel\x7fc1\x85",
    "seps\u2028\u2029 bom\ufeff replacement\ufffd",
    "astral \U0001F695 and <angle> {brace}",
    "",
]


def test_escaping_round_trips_every_character(tmp_path: Path) -> None:
    dictionary = Dictionary()
    subject = dictionary.encode(IRI("http://example.org/a b<c>\"{|}^`\\\x00é"))
    predicate = dictionary.encode(IRI("http://example.org/p"))
    triples = tuple((subject, predicate, dictionary.encode(Literal(text))) for text in NASTY)
    triples += (
        (subject, predicate, dictionary.encode(Literal("chat", lang="fr"))),
        (subject, predicate, dictionary.encode(BNode("b1"))),
        (subject, predicate, dictionary.encode(Literal("x y", "http://example.org/my type"))),
    )
    event = GraphEvent(seq=7, time=DateTime.parse("2013-01-01T00:00:00.250"), triples=triples,
                       stream=predicate, graph=dictionary.encode(IRI("http://example.org/g 1")))
    out = io.StringIO()
    assert write_nquads([event], dictionary, out) == len(triples) + 1
    text = out.getvalue()
    assert len(text.splitlines()) == len(triples) + 1  # no raw line break of any kind inside a quad
    dataset = parse(text)
    graph = dataset.graph(URIRef("http://example.org/g 1"))
    objects = set(graph.objects(URIRef("http://example.org/a b<c>\"{|}^`\\\x00é"), URIRef("http://example.org/p")))
    strings = {str(o) for o in objects if isinstance(o, RLiteral) and o.datatype is None and o.language is None}
    assert strings == set(NASTY)
    assert RLiteral("chat", lang="fr") in objects
    assert RLiteral("x y", datatype=URIRef("http://example.org/my type")) in objects
    assert any(isinstance(o, rdflib.BNode) for o in objects)
    (stamp,) = dataset.graph(rdflib.graph.DATASET_DEFAULT_GRAPH_ID).objects(URIRef("http://example.org/g 1"), PROV)
    assert stamp.toPython() == datetime(2013, 1, 1, 0, 0, 0, 250_000)


def test_an_event_without_a_graph_gets_a_blank_graph() -> None:
    dictionary = Dictionary()
    s, p = dictionary.encode(IRI("http://x/s")), dictionary.encode(IRI("http://x/p"))
    o = dictionary.encode(Literal("1.50", XSD_DECIMAL))
    events = [GraphEvent(seq=n, time=n * 1000, triples=((s, p, o),), stream=p) for n in (1, 2)]
    out = io.StringIO()
    write_nquads(events, dictionary, out)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith(" _:e1 .") and lines[2].endswith(" _:e2 .")
    assert lines[1].startswith("_:e1 <http://www.w3.org/ns/prov#generatedAtTime> \"1970-01-01T00:00:01\"")
    assert len(list(parse(out.getvalue()).quads())) == 4


def test_plain_strings_are_written_as_simple_literals() -> None:
    dictionary = Dictionary()
    s = dictionary.encode(IRI("http://x/s"))
    event = GraphEvent(seq=1, time=0, triples=((s, s, dictionary.encode(Literal("v", XSD_STRING))),), stream=s, graph=s)
    out = io.StringIO()
    write_nquads([event], dictionary, out)
    assert out.getvalue().startswith('<http://x/s> <http://x/s> "v" <http://x/s> .\n')


# -- taxi-rsp feed ---------------------------------------------------------------------------

def test_feed_command_writes_nquads_and_rejects(sample_full: Path, tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.csv"
    good = sample_full.read_bytes().splitlines(keepends=True)[:20]
    source.write_bytes(b"".join(good[:10]) + b"broken,line\r\n" + b"".join(good[10:]) + b"\x00")
    nq, rejects = tmp_path / "out.nq", tmp_path / "rejects.csv"
    assert main(["feed", str(source), "--nquads", str(nq), "--rejects", str(rejects)]) == 0
    summary = capsys.readouterr().out.strip()
    assert summary.startswith("22 lines: 20 accepted, 2 rejected (field_count 2); ")
    assert "quads" in summary and summary.count("\n") == 0
    with rejects.open(encoding="utf-8", newline="") as handle:
        assert list(csv.reader(handle)) == [["line_no", "reason", "raw_line"],
                                            ["11", "field_count", "broken,line"], ["22", "field_count", "\x00"]]
    dataset = parse(nq.read_text(encoding="utf-8"))
    graphs = {str(g.identifier) for g in dataset.graphs()}
    assert "http://debs2015.org/graph/11" not in graphs and "http://debs2015.org/graph/21" in graphs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.nq", "rejects.csv"]  # no partial files


def test_feed_without_outputs_only_counts(sample_full: Path, capsys) -> None:
    assert main(["feed", str(sample_full)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("100 lines: 100 accepted, 0 rejected; outliers q1 ") and "quads" not in out


@pytest.mark.parametrize("problem", ["missing input", "input is a folder", "output folder is a file"])
def test_feed_user_errors(problem: str, sample_full: Path, tmp_path: Path, capsys) -> None:
    argv = {
        "missing input": ["feed", str(tmp_path / "nope.csv")],
        "input is a folder": ["feed", str(tmp_path)],
        # A missing folder is created (issue 18); a file where the folder should be is an error.
        "output folder is a file": ["feed", str(sample_full), "--nquads", str(sample_full / "x.nq")],
    }[problem]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("taxi-rsp feed: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "no").exists()


def test_feed_console_entry_point(sample_full: Path, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", "feed", str(tmp_path / "none.csv")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "no such file" in result.stderr and result.stdout == ""
