"""What a new user meets first (issue 18), end to end through real `taxi-rsp` processes:
the defaults (item 1), Spark without noise (3), custom queries in the summary (6),
help for every sub-command and option (7), and the one-line hint of a missing extra."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taxi_rsp.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
CLI = [sys.executable, "-m", "taxi_rsp"]


def taxi_rsp(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=cwd)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """400 real lines, about 12 minutes of drop-offs."""
    path = tmp_path_factory.mktemp("data") / "small.csv"
    with SAMPLE.open("rb") as source:
        path.write_bytes(b"".join(source.readline() for _ in range(400)))
    return path


# --- 1. Defaults -------------------------------------------------------------------------

def test_run_without_query_answers_q1_and_q2(small: Path, tmp_path: Path) -> None:
    result = taxi_rsp("run", small, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert set(summary["emitted"]) == {"q1", "q2"}
    assert (tmp_path / "out" / "q1.csv").stat().st_size and (tmp_path / "out" / "q2.csv").stat().st_size


def test_stale_output_of_an_earlier_run_is_removed(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert taxi_rsp("run", small, "--out", out).returncode == 0
    result = taxi_rsp("run", small, "--out", out, "--query", "q1")
    assert result.returncode == 0, result.stderr
    assert "removed q2.csv of an earlier run" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == ["q1.csv", "rejects.csv", "summary.json"]


def test_unknown_files_in_the_output_folder_refuse_the_run_unless_forced(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "q2.csv").write_text("not from any run\n")
    (out / "notes.txt").write_text("kept: does not look like an output\n")
    refused = taxi_rsp("run", small, "--out", out, "--query", "q1")
    assert refused.returncode == 2 and "--force" in refused.stderr and "q2.csv" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "q2.csv"]  # untouched
    forced = taxi_rsp("run", small, "--out", out, "--query", "q1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "q1.csv", "rejects.csv", "summary.json"]


def test_a_refused_run_keeps_the_earlier_summary(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert taxi_rsp("run", small, "--out", out, "--query", "q1").returncode == 0
    before = (out / "summary.json").read_bytes()
    (out / "extra.csv").write_text("x\n")
    assert taxi_rsp("run", small, "--out", out, "--query", "q1").returncode == 2
    assert (out / "summary.json").read_bytes() == before


def test_the_input_inside_the_output_folder_is_never_removed(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    data = out / "trips.csv"
    data.write_bytes(small.read_bytes())
    result = taxi_rsp("run", data, "--out", out, "--query", "q1")
    assert result.returncode == 0, result.stderr
    assert data.read_bytes() == small.read_bytes()


def test_synth_and_feed_create_missing_folders(small: Path, tmp_path: Path) -> None:
    synth = taxi_rsp("synth", "--days", "1", "--minutes", "3", "--out", tmp_path / "a" / "b" / "s.csv", cwd=tmp_path)
    assert synth.returncode == 0, synth.stderr
    assert (tmp_path / "a" / "b" / "s.csv").stat().st_size > 0
    feed = taxi_rsp("feed", small, "--nquads", tmp_path / "c" / "d" / "e.nq", "--rejects", tmp_path / "r" / "r.csv")
    assert feed.returncode == 0, feed.stderr
    assert (tmp_path / "c" / "d" / "e.nq").stat().st_size > 0 and (tmp_path / "r" / "r.csv").exists()


@pytest.mark.parametrize("before", [True, False])
def test_debug_before_or_after_the_sub_command(tmp_path: Path, before: bool) -> None:
    args = ["run", tmp_path / "missing.csv", "--out", tmp_path / "o"]
    result = taxi_rsp(*(["--debug", *args] if before else [*args, "--debug"]))
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "does not exist" in result.stderr.strip().splitlines()[-1]


def test_python_dash_m_taxi_rsp() -> None:
    result = subprocess.run([sys.executable, "-m", "taxi_rsp", "--version"], capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("taxi-rsp ")


# --- 3. Spark without noise ------------------------------------------------------------------

def _noise(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "WARN" in line or "log4j" in line or "incubator" in line]


@pytest.mark.spark
def test_baseline_prints_no_spark_warnings(small: Path, tmp_path: Path) -> None:
    result = taxi_rsp("baseline", small, "--out", tmp_path / "b")
    assert result.returncode == 0, result.stderr
    # The only stderr lines are the run's own data warnings (12 minutes of data, 30-minute windows).
    assert _noise(result.stderr) == [], result.stderr
    assert all(line.startswith("taxi-rsp baseline: warning: ") for line in result.stderr.splitlines()), result.stderr


@pytest.mark.spark
@pytest.mark.parametrize("command", [["baseline"], ["run", "--spark"]], ids=["baseline", "run-spark"])
def test_ctrl_c_during_spark_is_one_line_and_130(command: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    # A new session (process group), interrupted as a terminal's Ctrl-C does: every process in it.
    process = subprocess.Popen([*CLI, command[0], str(SAMPLE), "--out", str(out), *command[1:]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        first = process.stdout.readline()  # printed once Spark is up and working on the data
        assert first, process.stderr.read()
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines() == [f"taxi-rsp {command[0]}: interrupted"], err
    assert not (out / "summary.json").exists() and not list(out.glob(".*.partial"))


class _NetworkError(Exception):
    """Stands in for py4j's Py4JNetworkError (an Exception, not an OSError)."""


def _interrupted_then_failed() -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise _NetworkError("Answer from Java side is empty") from None


def _terminated_then_connection_lost() -> None:
    from taxi_rsp.cli import Terminated

    try:
        raise Terminated(signal.SIGTERM)
    except Terminated:
        raise ConnectionResetError("the JVM went away")  # noqa: B904 - chained implicitly, as py4j's is


@pytest.mark.parametrize(("failure", "code", "line"), [
    (_interrupted_then_failed, 130, "interrupted"),
    (_terminated_then_connection_lost, 128 + signal.SIGTERM, "terminated by SIGTERM"),
])
def test_an_error_raised_while_stopping_is_still_one_line(failure, code: int, line: str, monkeypatch, capsys) -> None:
    """Ctrl-C in the middle of a Spark call lands in py4j's socket read; py4j's clean-up
    then fails on the JVM the same signal stopped, and that error replaces the interrupt
    (the flaky case of the test above): still one line and 128 + the signal, no traceback.
    An error not caused by a stop still propagates."""
    from taxi_rsp import cli
    from taxi_rsp.commands import verify

    monkeypatch.setattr(verify, "main", lambda args: failure())  # the command the parser dispatches to
    assert cli.main(["verify", ".", "."]) == code
    assert capsys.readouterr().err.strip().splitlines() == [f"taxi-rsp verify: {line}"]

    def plain_failure() -> None:
        raise _NetworkError("a real bug")

    monkeypatch.setattr(verify, "main", lambda args: plain_failure())
    with pytest.raises(_NetworkError):
        cli.main(["verify", ".", "."])


# --- 6. Custom queries ----------------------------------------------------------------------

AVG_QUERY = """PREFIX taxi: <http://debs2015.org/taxi#>
SELECT ?m (COUNT(*) AS ?n)
WHERE { STREAM <http://debs2015.org/streams/trips> [RANGE 5m] { ?trip taxi:medallion ?m } }
GROUP BY ?m
"""


def test_custom_query_summary_counts_rows_and_has_delays(small: Path, tmp_path: Path) -> None:
    query = tmp_path / "per_taxi.cqels"
    query.write_text(AVG_QUERY)
    result = taxi_rsp("run", small, "--out", tmp_path / "out", "--query", query)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    rows = (tmp_path / "out" / "per_taxi.csv").read_text().splitlines()[1:]
    assert summary["emitted"]["per_taxi"] == len(rows)
    assert summary["reports"]["per_taxi"] == len({tuple(r.split(",")[:2]) for r in rows})
    assert summary["delay_ms"]["per_taxi"]["mean"] > 0 and summary["delay_ms"]["per_taxi"]["p99"] > 0
    assert "outliers" not in summary and "profit_excluded" not in summary
    assert f"per_taxi: {len(rows):,} output lines, {summary['reports']['per_taxi']:,} reports" in result.stdout
    assert "delay p50 " in result.stdout and ", mean " in result.stdout


def test_format_json_for_a_taxi_csv(small: Path, tmp_path: Path) -> None:
    query = tmp_path / "per_taxi.cqels"
    query.write_text(AVG_QUERY)
    result = taxi_rsp("run", small, "--out", tmp_path / "out", "--query", query, "--query", "q1", "--format", "json")
    assert result.returncode == 0, result.stderr
    documents = [json.loads(line) for line in (tmp_path / "out" / "per_taxi.jsonl").read_text().splitlines()]
    assert documents and documents[0]["head"]["vars"] == ["m", "n"]
    assert (tmp_path / "out" / "q1.csv").exists()  # the DEBS query keeps its challenge format
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "outliers" in summary  # next to a DEBS query the DEBS counters stay


AVERAGES_QUERY = """PREFIX taxi: <http://debs2015.org/taxi#>
SELECT (AVG(?fare) AS ?avg) (SUM(?fare) / 7 AS ?seventh) (STR(AVG(?fare)) AS ?text)
WHERE { STREAM <http://debs2015.org/streams/trips> [RANGE 1h] { ?trip taxi:fareAmount ?fare } }
"""
FARES_CSV = "".join(
    f"M{i},H{i},2013-01-01 00:00:00,2013-01-01 00:0{i}:00,60,1.0,-73.99,40.72,-73.98,40.73,CSH,{fare},0.50,0.50,0.00,0.00,3.00\n"
    for i, fare in ((1, "1.00"), (2, "2.00"), (3, "2.00"))
)


@pytest.mark.parametrize("output_format", ["csv", "json"])
def test_averages_print_canonical_decimals(tmp_path: Path, output_format: str) -> None:
    """AVG of 1, 2, 2 is 5/3: 18 significant digits, rounded (docs/semantics.md, "Decimal
    results"); terminating averages print exactly, without trailing zeros."""
    data, query = tmp_path / "fares.csv", tmp_path / "averages.cqels"
    data.write_text(FARES_CSV)
    query.write_text(AVERAGES_QUERY)
    result = taxi_rsp("run", data, "--out", tmp_path / "out", "--query", query, "--format", output_format)
    assert result.returncode == 0, result.stderr
    if output_format == "csv":
        rows = [line.split(",") for line in (tmp_path / "out" / "averages.csv").read_text().splitlines()]
        assert rows[0][-3:] == ["avg", "seventh", "text"]
        inserted = [row[-3:] for row in rows[1:] if row[2] == "+"]
    else:
        documents = [json.loads(line) for line in (tmp_path / "out" / "averages.jsonl").read_text().splitlines()]
        inserted = [[binding[v]["value"] for v in ("avg", "seventh", "text")]
                    for doc in documents if doc["instant"]["change"] == "+" for binding in doc["results"]["bindings"]]
        assert all(doc["results"]["bindings"][0]["avg"]["datatype"].endswith("#decimal") for doc in documents)
    assert inserted == [
        ["1.0", "0.142857142857142857", "1.0"],
        ["1.5", "0.428571428571428571", "1.5"],
        ["1.66666666666666667", "0.714285714285714286", "1.66666666666666667"],
    ]


def test_query_without_stream_is_refused_with_a_reason(small: Path, tmp_path: Path) -> None:
    query = tmp_path / "static.cqels"
    query.write_text("SELECT ?s WHERE { ?s ?p ?o }\n")
    result = taxi_rsp("run", small, "--out", tmp_path / "out", "--query", query)
    assert result.returncode == 2
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "no STREAM" in err and "one-shot" in err, err


def test_every_line_rejected_exits_non_zero_naming_reasons(tmp_path: Path) -> None:
    data = tmp_path / "bad.csv"
    data.write_text("a,b\nc,d,e\n")
    result = taxi_rsp("run", data, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "no line of" in result.stderr and "line 1: field_count" in result.stderr, result.stderr


# --- 7. Help ----------------------------------------------------------------------------------

def _walk(parser: argparse.ArgumentParser, path: list[str]):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield [*path, name], "(sub-command)", helps.get(name)
                yield from _walk(sub, [*path, name])
        elif not isinstance(action, argparse._HelpAction):
            yield path, "/".join(action.option_strings) or action.dest, action.help


def test_every_sub_command_and_option_has_help() -> None:
    missing = [(path, name) for path, name, text in _walk(build_parser(), []) if not text]
    assert missing == []


def test_help_of_every_sub_command_runs_and_lists_the_environment() -> None:
    top = taxi_rsp("--help")
    assert top.returncode == 0
    for variable in ("JAVA_HOME", "TAXI_RSP_SPARK_MEMORY", "TAXI_RSP_VM_ACCEL"):
        assert variable in top.stdout
    assert "TAXI_RSP_JOIN_ROUTING" not in top.stdout  # an engine option now: run --join-routing
    commands = [name for path, name, _ in _walk(build_parser(), []) if name == "(sub-command)"]
    assert commands
    for path, name, _ in _walk(build_parser(), []):
        if name == "(sub-command)":
            result = taxi_rsp(*path, "--help")
            assert result.returncode == 0 and "usage: taxi-rsp" in result.stdout, (path, result.stderr)


# --- Install weight: the hint of a missing extra ---------------------------------------------

BLOCK = """import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
from taxi_rsp.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("command", "blocked", "extra"), [
    (["baseline"], {"pyspark", "pandas", "pyarrow"}, "spark"),
    (["report"], {"matplotlib"}, "report"),
])
def test_missing_extra_is_a_one_line_hint(small: Path, tmp_path: Path, command, blocked, extra) -> None:
    script = BLOCK.format(blocked=blocked)
    result = subprocess.run([sys.executable, "-c", script, *command, str(small), "--out", str(tmp_path / "o")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and f"pip install 'taxi-rsp[{extra}]'" in err, err


def test_baseline_refuses_unknown_outputs_before_starting_spark(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.csv").write_text("x\n")
    started = time.monotonic()
    result = taxi_rsp("baseline", small, "--out", out)
    assert result.returncode == 2 and "old.csv" in result.stderr and "--force" in result.stderr
    assert time.monotonic() - started < 60  # no JVM was started for a refusal


# --- 5. Progress ----------------------------------------------------------------------------

def test_progress_on_a_terminal_shows_percentage_and_eta(tmp_path: Path) -> None:
    """On a terminal (a pseudo-terminal here) the progress line is redrawn while the run goes."""
    import pty

    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    process = subprocess.Popen([*CLI, "run", str(SAMPLE), "--out", str(tmp_path / "out")], stdin=follower,
                               stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the run ended: the pty closed
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=600)
    os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert process.returncode == 0, text[-2000:]
    assert "lines" in text and "%" in text and "ETA" in text, text[-2000:]
