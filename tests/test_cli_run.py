"""`taxi-rsp run` from the command line: outputs, errors a person can act on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from taxi_rsp.cli import main

GOOD = ("07290D3599E7A0D62097A346EFCC1FB5,E7750A37CAB07D0DFF0AF7E3573AC141,2013-01-01 00:00:00,"
        "2013-01-01 00:02:00,120,0.44,-73.956528,40.716976,-73.962440,40.715008,CSH,3.50,0.50,0.50,0.00,0.00,4.50")


def test_run_writes_outputs_and_summary(tmp_path: Path, capsys) -> None:
    data = tmp_path / "in.csv"
    same_cell = GOOD.replace("-73.962440,40.715008", "-73.956528,40.716976")
    data.write_text(same_cell + "\nbad line\n")
    assert main(["run", str(data), "--out", str(tmp_path / "out"), "--query", "q1", "--query", "q2"]) == 0
    out = tmp_path / "out"
    q1 = (out / "q1.csv").read_text().splitlines()
    assert len(q1) == 1 and q1[0].startswith("2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,161.170,NULL")
    assert len(q1[0].split(",")) == 23
    q2 = (out / "q2.csv").read_text().splitlines()
    assert len(q2) == 1 and len(q2[0].split(",")) == 43 and ",321.339,1,3.50,3.5000," in q2[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines_read"] == 2 and summary["rejected"]["field_count"] == 1
    assert 0 <= summary["cpu_seconds"] <= summary["exec_seconds"] + 1  # one thread: CPU ≲ wall
    assert (out / "rejects.csv").read_text().splitlines()[1] == "2,field_count,bad line"
    assert not list(out.glob(".*.partial"))
    assert "2 lines" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "/nonexistent.csv", "--out", "{tmp}/o"], "does not exist"),
        (["run", "{data}", "--out", "{tmp}/o", "--query", "q7"], "unknown query 'q7'"),
        (["run", "{data}", "--out", "{tmp}/o", "--query", "{tmp}/broken.cqels"], "broken.cqels:2:"),
        (["run", "{data}", "--out", "{tmp}/o", "--q2-windows", "15"], "two minute counts"),
        (["run", "{data}", "--out", "/proc/taxi-rsp-out"], "cannot create output folder"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(tmp_path: Path, capsys, args, message) -> None:
    data = tmp_path / "in.csv"
    data.write_text(GOOD + "\n")
    (tmp_path / "broken.cqels").write_text("SELECT ?a\nWHERE { ?a ?b }\n")
    argv = [a.format(tmp=tmp_path, data=data) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.rstrip().splitlines()
    assert message in lines[0] and "Traceback" not in err
    # one line; a query syntax error adds the offending line and a caret under it (issue 52)
    assert lines[1:] == (["    WHERE { ?a ?b }", "                  ^"] if message == "broken.cqels:2:" else [])


def test_interrupted_run_leaves_nothing_that_looks_complete(tmp_path: Path) -> None:
    # The input is a FIFO whose writer stays open, so the run cannot finish before the
    # SIGINT however fast the engine is or however slowly this test is scheduled.
    lines = []
    for minute in range(3000):
        stamp = f"2013-01-0{1 + minute // 1440} {minute % 1440 // 60:02d}:{minute % 60:02d}:00"
        lines.append(GOOD.replace("2013-01-01 00:00:00", stamp).replace("2013-01-01 00:02:00", stamp))
    fifo = tmp_path / "trips.fifo"
    os.mkfifo(fifo)
    release = threading.Event()

    def writer() -> None:
        try:
            with fifo.open("w") as sink:
                sink.write("\n".join(lines) + "\n")
                sink.flush()
                release.wait(120)
        except BrokenPipeError:  # the interrupted reader is gone: expected
            pass

    feeding = threading.Thread(target=writer, daemon=True)
    feeding.start()
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")  # a previous run's result
    process = subprocess.Popen(
        [sys.executable, "-m", "taxi_rsp.cli", "run", str(fifo), "--out", str(out), "--query", "q2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.time() + 120
        while not list(out.glob(".*.partial")) and time.time() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, "the run ended although its input was still open"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        release.set()
        feeding.join(10)
    assert process.returncode == 130 and "interrupted" in err
    assert not (out / "summary.json").exists()
    assert not (out / "q2.csv").exists() and not list(out.glob(".*.partial"))


def test_killed_run_leaves_only_partial_files(tmp_path: Path) -> None:
    data = tmp_path / "big.csv"
    data.write_text((GOOD + "\n") * 50_000)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "taxi_rsp.cli", "run", str(data), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while not list(out.glob(".*.partial")) and time.time() < deadline:
        time.sleep(0.05)
    process.kill()
    process.wait()
    assert not (out / "summary.json").exists() and not (out / "q1.csv").exists()
