"""`taxi-rsp run --stream IRI=FILE --stream IRI=FILE`: several streams in one run,
their events merged by time (issue 51, item 3)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.errors import UserError
from taxi_rsp.rdfstream.inputs import StreamSpec, assign_iris, parse_stream_arg

INT = "<http://www.w3.org/2001/XMLSchema#integer>"
JOIN = """SELECT ?s ?t ?h WHERE {
  STREAM <http://ex/temp> [RANGE 10s] { ?s <http://ex/temp> ?t }
  STREAM <http://ex/hum> [RANGE 10s] { ?s <http://ex/hum> ?h }
}
"""


def tnt(path: Path, predicate: str, items: list[tuple[int, str]]) -> Path:
    """A timestamped N-Triples file: (value, time) per line, subject ex:s1."""
    path.write_text("".join(f'<http://ex/s1> <http://ex/{predicate}> "{value}"^^{INT} .\t2011-10-24T{at}\n'
                            for value, at in items))
    return path


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    tnt(tmp_path / "temp.tnt", "temp", [(21, "09:00:00"), (22, "09:00:20")])
    tnt(tmp_path / "hum.tnt", "hum", [(50, "09:00:05"), (60, "09:00:21")])
    (tmp_path / "join.cqels").write_text(JOIN)
    return tmp_path


def rows(path: Path) -> list[tuple[str, ...]]:
    return [(r["time"], r["trigger"], r["change"], r["t"], r["h"]) for r in csv.DictReader(path.open())]


def test_two_streams_are_joined_in_one_run_merged_by_time(files: Path) -> None:
    out = files / "out"
    assert main(["run", "--stream", f"http://ex/temp={files / 'temp.tnt'}", "--stream",
                 f"<http://ex/hum>={files / 'hum.tnt'}", "--query", str(files / "join.cqels"),
                 "--out", str(out)]) == 0
    # merged order: temp 21 (0 s), hum 50 (5 s), temp 22 (20 s), hum 60 (21 s); seq renumbered
    assert rows(out / "join.csv") == [
        ("2011-10-24 09:00:05", "event:2", "+", "21", "50"),
        ("2011-10-24 09:00:10", "expiry", "-", "21", "50"),
        ("2011-10-24 09:00:21", "event:4", "+", "22", "60"),
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["events"] == 4 and summary["triples"] == 4 and summary["lines_read"] == 4
    assert [(s["stream_iri"], s["events"]) for s in summary["streams"]] == [("http://ex/temp", 2), ("http://ex/hum", 2)]
    assert summary["stream_iri"] == "http://ex/temp, http://ex/hum"
    assert summary["warnings"] == []  # both streams are fed


def test_a_bare_file_feeds_the_one_stream_no_other_option_names(files: Path) -> None:
    out = files / "out"
    assert main(["run", "--stream", f"http://ex/temp={files / 'temp.tnt'}", "--stream", str(files / "hum.tnt"),
                 "--query", str(files / "join.cqels"), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [s["stream_iri"] for s in summary["streams"]] == ["http://ex/temp", "http://ex/hum"]
    assert len(rows(out / "join.csv")) == 3


def test_events_of_equal_time_keep_the_order_of_the_options(tmp_path: Path) -> None:
    tnt(tmp_path / "a.tnt", "temp", [(1, "09:00:00")])
    tnt(tmp_path / "b.tnt", "hum", [(2, "09:00:00")])
    (tmp_path / "q.cqels").write_text(
        "SELECT ?v WHERE { { STREAM <http://ex/a> [NOW] { ?s <http://ex/temp> ?v } } UNION "
        "{ STREAM <http://ex/b> [NOW] { ?s <http://ex/hum> ?v } } }")
    for first, second, expected in (("a", "b", ["1", "2"]), ("b", "a", ["2", "1"])):
        out = tmp_path / f"out-{first}"
        assert main(["run", "--stream", f"http://ex/{first}={tmp_path / (first + '.tnt')}",
                     "--stream", f"http://ex/{second}={tmp_path / (second + '.tnt')}",
                     "--query", str(tmp_path / "q.cqels"), "--out", str(out)]) == 0
        inserted = [r for r in csv.DictReader((out / "q.csv").open()) if r["change"] == "+"]
        # the first event (seq 1) is the first option's; the second event reports its own row
        assert [r["trigger"] for r in inserted] == ["event:1", "event:2"]
        assert [r["v"] for r in inserted] == expected


@pytest.mark.parametrize("args, message", [
    (["--stream", "{d}/temp.tnt", "--stream", "{d}/hum.tnt"], "temp.tnt: the queries read <http://ex/hum>, "
                                                              "<http://ex/temp>: name the stream of each file"),
    (["--stream", "http://ex/temp={d}/temp.tnt", "--stream", "http://ex/hum={d}/none.tnt"],
     "stream file {d}/none.tnt does not exist"),
    (["--stream", "http://ex/temp={d}/temp.tnt", "--stream", "http://ex/hum={d}/temp.tnt"],
     "temp.tnt: the same stream file is given twice"),
    (["--stream", "{d}/temp.tnt", "--stream", "{d}/hum.tnt", "--stream-iri", "http://ex/temp"],
     "--stream-iri names the stream of one --stream FILE"),
    (["--stream", "http://ex/temp={d}/temp.tnt", "--stream", "http://ex/hum={d}/late.tnt"],
     "late.tnt:2:"),
    (["--stream", "<http://ex/temp={d}/temp.tnt"], "write <IRI>=FILE"),
])
def test_errors_name_the_file_and_leave_no_result(files: Path, capsys, args: list[str], message: str) -> None:
    tnt(files / "late.tnt", "hum", [(50, "09:00:05"), (60, "09:00:01")])
    argv = ["run", *[a.format(d=files) for a in args], "--query", str(files / "join.cqels"), "--out",
            str(files / "o")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message.format(d=files) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (files / "o" / "summary.json").exists() and not list((files / "o").glob(".*.partial"))


def test_an_out_of_order_line_in_the_second_file_names_its_line_and_reason(files: Path, capsys) -> None:
    tnt(files / "late.tnt", "hum", [(50, "09:00:05"), (60, "09:00:01")])
    assert main(["run", "--stream", f"http://ex/temp={files / 'temp.tnt'}", "--stream",
                 f"http://ex/hum={files / 'late.tnt'}", "--query", str(files / "join.cqels"),
                 "--out", str(files / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{files / 'late.tnt'}:2:" in err and "out of order" in err


@pytest.mark.parametrize("text, expected", [
    ("events.nq", StreamSpec(Path("events.nq"))),
    ("http://ex/s=events.nq", StreamSpec(Path("events.nq"), "http://ex/s")),
    ("http://ex/s?a=b=x.tnt", StreamSpec(Path("x.tnt"), "http://ex/s?a=b")),  # split at the last '='
    ("<http://ex/s>=dir/a=b.tnt", StreamSpec(Path("dir/a=b.tnt"), "http://ex/s")),  # brackets: '=' in the file
    ("dir/a=b.tnt", StreamSpec(Path("dir/a=b.tnt"))),  # no IRI before the '=': a file name
    ("C:\\data\\x=1.tnt", StreamSpec(Path("C:\\data\\x=1.tnt"))),
])
def test_stream_values(text: str, expected: StreamSpec) -> None:
    assert parse_stream_arg(text) == expected


def test_iri_assignment_rules() -> None:
    a, b = StreamSpec(Path("a.tnt")), StreamSpec(Path("b.tnt"))
    assert [s.iri for s in assign_iris([a], "http://x", ["http://s"])] == ["http://x"]
    assert [s.iri for s in assign_iris([a], None, ["http://s"])] == ["http://s"]
    named = StreamSpec(Path("b.tnt"), "http://t")
    assert [s.iri for s in assign_iris([named, a], None, ["http://s", "http://t"])] == ["http://t", "http://s"]
    with pytest.raises(UserError, match="a.tnt: the queries read <http://s>, <http://t>"):
        assign_iris([a, b], None, ["http://s", "http://t"])
    with pytest.raises(UserError, match="--stream-iri names"):
        assign_iris([named], "http://x", ["http://t"])
