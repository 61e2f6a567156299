"""RDF stream readers: graph events (N-Quads) and timestamped triples, good and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.feeder import Feeder
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.nquads import term_nquads, write_nquads
from taxi_rsp.rdf.terms import IRI, DateTime, Literal
from taxi_rsp.rdfstream import StreamInputError, read_graph_events, read_triple_stream
from taxi_rsp.rdfstream.lines import StreamStats
from taxi_rsp.rdfstream.triples import format_line

STAMP = "<http://www.w3.org/ns/prov#generatedAtTime>"
DT = "<http://www.w3.org/2001/XMLSchema#dateTime>"


def stamp(graph: str, when: str) -> str:
    return f'<http://x/{graph}> {STAMP} "{when}"^^{DT} .'


def quad(s: str, o: str, graph: str) -> str:
    return f"<http://x/{s}> <http://x/p> {o} <http://x/{graph}> ."


def read(path: Path, reader=read_graph_events):
    dictionary = Dictionary()
    stats = StreamStats()
    events = list(reader(path, dictionary, 7, stats))
    decode = dictionary.decode
    return [(e.seq, DateTime(e.time).isoformat(), [tuple(decode(x) for x in t) for t in e.triples]) for e in events], stats


def write(tmp_path: Path, lines: list[str], name: str = "s.nq", end: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(end.join(lines).encode() + end.encode())
    return path


def test_graph_events_in_file_order_with_stamps_anywhere(tmp_path: Path) -> None:
    path = write(tmp_path, [
        "# a comment", "",
        quad("a", '"1"', "g1"), quad("b", '"x"@EN', "g1"), stamp("g1", "2011-10-24T09:00:00"),
        stamp("g2", "2011-10-24T09:00:00.250"), quad("c", "<http://x/d>", "g2"),
        stamp("g3", "2011-10-24T09:00:00.250"),  # an event without triples still is an instant
    ], end="\r\n")
    events, stats = read(path)
    assert [(seq, when, len(triples)) for seq, when, triples in events] == [
        (1, "2011-10-24T09:00:00", 2), (2, "2011-10-24T09:00:00.250", 1), (3, "2011-10-24T09:00:00.250", 0)]
    assert events[0][2][1] == (IRI("http://x/b"), IRI("http://x/p"), Literal("x", lang="en"))
    assert (stats.lines_read, stats.events, stats.triples) == (8, 3, 3)


@pytest.mark.parametrize("lines, where, reason", [
    ([quad("a", '"1"', "g1")], (1, 1), "has no prov:generatedAtTime"),
    ([quad("a", '"1', "g1")], (1, 27), "end of file"),
    ([quad("a", '"1"', "g1") + " " + quad("b", '"1"', "g1")], (1, 47), "single triple or quad"),
    ([stamp("g1", "2011-10-24T09:00:01"), stamp("g2", "2011-10-24T09:00:00")], (2, 1), "out of order"),
    ([stamp("g1", "2011-10-24T09:00:01"), stamp("g1", "2011-10-24T09:00:02")], (2, 1), "second prov:generatedAtTime"),
    ([f'<http://x/g1> {STAMP} "yesterday"^^{DT} .'], (1, 59), "not an xsd:dateTime"),
    ([f'<http://x/g1> {STAMP} "2011-10-24" .'], (1, 59), "needs an xsd:dateTime literal"),
    (["<http://x/a> <http://x/p> <http://x/b> ."], (1, 1), "prov:generatedAtTime stamp of an event graph"),
])
def test_bad_graph_streams_name_file_line_col(tmp_path: Path, lines, where, reason) -> None:
    path = write(tmp_path, ["# header", *lines])
    with pytest.raises(StreamInputError) as info:
        read(path)
    line, col = where
    assert (info.value.line, info.value.column) == (line + 1, col)
    assert reason in info.value.reason and str(info.value).startswith(f"{path}:{line + 1}:{col}: ")


def test_invalid_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_bytes(stamp("g1", "2011-10-24T09:00:00").encode() + b"\n<http://x/\xff> .\n")
    with pytest.raises(StreamInputError, match=r"s\.nq:2:11: not valid UTF-8"):
        read(path)


def test_triple_stream(tmp_path: Path) -> None:
    path = write(tmp_path, [
        '<http://x/a> <http://x/p> "tab\tinside" .\t2011-10-24T09:00:00',
        "# comment\tnot an element",
        "_:b <http://x/p> <http://x/c> .\t2011-10-24 09:00:00.5",
        '<http://x/a> <http://x/p> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .\t2011-10-24T10:00:01+01:00',
    ], name="s.tnt")
    events, stats = read(path, read_triple_stream)
    assert [(seq, when) for seq, when, _ in events] == [
        (1, "2011-10-24T09:00:00"), (2, "2011-10-24T09:00:00.500"), (3, "2011-10-24T09:00:01")]
    assert events[0][2] == [(IRI("http://x/a"), IRI("http://x/p"), Literal("tab\tinside"))]
    assert (stats.lines_read, stats.events, stats.triples) == (4, 3, 3)


@pytest.mark.parametrize("line, col, reason", [
    ("<http://x/a> <http://x/p> <http://x/b> .", 41, "expected a TAB"),
    ("<http://x/a> <http://x/p> <http://x/b> .\tnoon", 42, "not an xsd:dateTime"),
    ("<http://x/a> <http://x/p> <b> .\t2011-10-24T09:00:00", 27, "No scheme"),
    ("<http://x/a> <http://x/p> <http://x/b> <http://x/g> .\t2011-10-24T09:00:00", 40, "dot"),
    ("<http://x/a> <http://x/p> <http://x/b> .\t2011-10-24T08:59:59", 42, "out of order"),
])
def test_bad_triple_streams_name_file_line_col(tmp_path: Path, line, col, reason) -> None:
    path = write(tmp_path, ["<http://x/a> <http://x/p> <http://x/b> .\t2011-10-24T09:00:00", line], name="s.tnt")
    with pytest.raises(StreamInputError) as info:
        read(path, read_triple_stream)
    assert (info.value.line, info.value.column) == (2, col) and reason in info.value.reason


def test_graph_reader_gives_back_the_feeders_events(tmp_path: Path, sample_20d: Path) -> None:
    """Feeder -> N-Quads export -> reader: the same triples, times and graphs, event by event."""
    sample = tmp_path / "head.csv"
    sample.write_text("".join(sample_20d.open().readlines()[:300]))
    dictionary = Dictionary()
    fed = list(Feeder(sample, dictionary, None))
    path = tmp_path / "events.nq"
    with path.open("w", encoding="utf-8") as out:
        write_nquads(fed, dictionary, out)
    back = list(read_graph_events(path, dictionary, fed[0].stream))
    assert len(back) == len(fed) == 300
    for ours, theirs in zip(back, fed):
        assert (ours.time, ours.graph, ours.stream) == (theirs.time, theirs.graph, theirs.stream)
        assert sorted(ours.triples) == sorted(theirs.triples)


_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_terms = st.one_of(
    st.builds(lambda t: IRI("http://x/" + t), st.text("abc/-_.~0123456789", max_size=8)),  # valid IRIs only
    st.builds(Literal, _texts),
    st.builds(lambda t, lang: Literal(t, lang=lang), _texts, st.sampled_from(["en", "de-ch"])),
    st.builds(lambda n: Literal(str(n), "http://www.w3.org/2001/XMLSchema#integer"), st.integers(-10**20, 10**20)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(elements=st.lists(st.tuples(st.integers(0, 5000), _terms), min_size=1, max_size=15))
def test_triple_stream_round_trip(tmp_path: Path, elements) -> None:
    """Terms written with the N-Quads export's escaping come back equal, times in order."""
    dictionary = Dictionary()
    subject, predicate = IRI("http://x/s"), IRI("http://x/p")
    path = tmp_path / "s.tnt"
    time = int(DateTime.parse("2011-10-24T09:00:00"))
    written = []
    with path.open("w", encoding="utf-8") as out:
        for gap, obj in elements:
            time += gap
            statement = f"{term_nquads(subject)} {term_nquads(predicate)} {term_nquads(obj)} ."
            out.write(format_line(statement, time))
            written.append((time, dictionary.encode(obj)))
    back = [(e.time, e.triples[0][2]) for e in read_triple_stream(path, dictionary, 1)]
    assert back == written
