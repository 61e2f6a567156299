"""The --live / view server without a browser: what it serves, the SSE stream, the
latest-state-wins rule, and the command-line errors."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

from taxi_rsp.cli import main as cli_main
from taxi_rsp.live.history import RunHistory
from taxi_rsp.live.server import MapServer
from taxi_rsp.live.sink import LiveSink
from taxi_rsp.runner import RunConfig, run
from taxi_rsp.viz.answers import read_answers

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def test_the_server_sends_the_latest_state_only() -> None:
    server = MapServer(0, {"hello.json": lambda query: {"q": query.get("x", [""])[0]}}).start()
    try:
        for n in range(5):
            server.publish({"n": n})  # nobody listening: nothing queues up
        with urllib.request.urlopen(server.url + "events", timeout=30) as stream:
            assert server.connected.is_set()
            assert stream.readline() == b'data: {"n":4}\n'  # only the latest of the five
            assert stream.readline() == b"\n"
            threading.Timer(0.2, server.publish, [{"n": 5}]).start()
            assert stream.readline() == b'data: {"n":5}\n'
        assert json.loads(_get(server.url + "hello.json?x=7")) == {"q": "7"}
        page = _get(server.url).decode()
        assert "<canvas" in page and "app.js" in page and "http" not in page.replace("http-equiv", "")
        assert b"EventSource" in _get(server.url + "app.js")
        with pytest.raises(urllib.error.HTTPError):
            _get(server.url + "nothing")
    finally:
        server.close()


def test_the_live_sink_publishes_the_last_lines_written(tmp_path: Path) -> None:
    sink = LiveSink(SAMPLE, port=0, say=lambda line: None).start()
    try:
        summary = run(RunConfig(input=SAMPLE, out=tmp_path, live=sink))
        state = json.loads(_get(sink.server.url + "state"))
        background = json.loads(_get(sink.server.url + "background.json"))
    finally:
        sink.close()
    assert state["done"] and state["lines"] == summary["lines_read"] == 10_004
    assert state["time"] == "2013-01-01 00:56:00"
    q1, q2 = read_answers(tmp_path / "q1.csv", "q1"), read_answers(tmp_path / "q2.csv", "q2")
    shown = state["queries"]["q1"]
    assert shown["kind"] == "routes" and shown["line"] == len(q1) == summary["emitted"]["q1"]
    assert [(r["start"], r["end"]) for r in shown["rows"]] == [(r.start, r.end) for r in q1[-1].entries]
    assert [r["count"] for r in shown["rows"]] == sorted((r["count"] for r in shown["rows"]), reverse=True)
    cells = state["queries"]["q2"]
    assert [(c["cell"], c["empty"], c["profit"], c["profitability"]) for c in cells["rows"]] == [
        (a.cell, a.empty, a.profit, a.profitability) for a in q2[-1].entries]
    assert set(state["delay_ms"]) == {"q1", "q2"}
    assert background["density"]["lines"] == 10_004 and background["grids"]["q1"]["cells"] == 300


def test_a_custom_query_is_a_table(tmp_path: Path) -> None:
    query = tmp_path / "busy.cqels"
    query.write_text("""PREFIX taxi: <http://debs2015.org/taxi#>
SELECT ?taxi (COUNT(?trip) AS ?trips) WHERE {
  STREAM <http://debs2015.org/streams/trips> [RANGE 10m] { ?trip taxi:medallion ?taxi }
} GROUP BY ?taxi ORDER BY DESC(?trips) ?taxi LIMIT 3
""", encoding="utf-8")
    sink = LiveSink(SAMPLE, port=0, say=lambda line: None).start()
    try:
        run(RunConfig(input=SAMPLE, out=tmp_path / "out", queries=[str(query)], live=sink))
        state = json.loads(_get(sink.server.url + "state"))
    finally:
        sink.close()
    table = state["queries"]["busy"]
    assert table["kind"] == "table" and table["columns"] == ["taxi", "trips"]
    assert len(table["rows"]) == 3 and all(int(row[1]) >= 1 for row in table["rows"])


def test_view_indexes_the_instants(tmp_path: Path) -> None:
    assert cli_main(["run", str(SAMPLE), "--out", str(tmp_path), "--no-progress"]) == 0
    history = RunHistory(tmp_path)
    q1 = read_answers(tmp_path / "q1.csv", "q1")
    steps = history.steps()
    assert steps["files"] == ["q1.csv", "q2.csv"] and steps["times"] == sorted(set(steps["times"]))
    for step in range(0, steps["count"], 7):
        state = history.at(step)
        time = steps["times"][step]
        last = [a for a in q1 if a.time <= time]
        shown = state["queries"]["q1"]
        assert shown["line"] == (last[-1].line if last else 0)
        assert [(r["start"], r["end"]) for r in shown["rows"]] == ([(r.start, r.end) for r in last[-1].entries]
                                                                     if last else [])
    assert history.at(steps["count"]) is None and history.at(-1) is None


@pytest.mark.parametrize("args, message", [
    (["run", str(SAMPLE), "--out", "OUT", "--port", "9000"], "--port and --live-wait need --live"),
    (["run", "--stream", str(SAMPLE), "--out", "OUT", "--live"], "not available with --stream"),
    (["run", str(SAMPLE), "--out", "OUT", "--live", "--spark"], "not available with --spark"),
    (["view", str(ROOT / "docs")], "holds no summary.json"),
])
def test_bad_live_and_view_arguments_are_one_line_errors(args, message, tmp_path: Path, capsys) -> None:
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    assert cli_main(args) == 2
    assert message in capsys.readouterr().err
