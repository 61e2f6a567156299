"""The Spark baseline against the independent oracle and the hand-built cases.

Spark starts once per test run (module-scoped session); the many small inputs share
batches of Spark jobs (``run_batch``), so the whole module costs a few Spark runs.
"""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import run_oracle
from outputs import compare_outputs, read_output
from strategies import csv_files, write_csv

from taxi_rsp.baseline.run import BaselineSettings, run_batch
from taxi_rsp.baseline.session import spark_session
from taxi_rsp.cli import main as cli_main

pytestmark = [pytest.mark.spark, pytest.mark.timeout(2400)]  # a hang guard: the shared Spark batch needs minutes idle, far more under load

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(p.name for p in CASES_DIR.iterdir() if (p / "input.csv").exists())
DEFAULT_CASES = [c for c in CASES if not (CASES_DIR / c / "params.json").exists()]
PARAM_CASES = [c for c in CASES if (CASES_DIR / c / "params.json").exists()]

TRIP = ("M{m},H,2013-01-01 00:0{p}:00,2013-01-01 00:0{d}:00,60,1.0,-73.973145,40.752827,"
        "-73.956528,40.716976,CSH,{fare},0.50,0.50,1.00,0.00,12.00")
# LF-only line splitting: CRLF ends, a lone CR inside line 3 (not a line end: that line
# has 16 + 1 fields around it -> field_count), a bad UTF-8 byte, no final line end.
LINE_ENDS = (TRIP.format(m=1, p=0, d=1, fare="10.00") + "\r\n"
             + TRIP.format(m=2, p=0, d=2, fare="7.50") + "\r\n").encode() \
    + TRIP.format(m=3, p=1, d=3, fare="8.00").replace(",CSH,", ",C\rSH,", 1).replace(",1.0,", ",1.0\r", 1).encode() + b"\n" \
    + TRIP.format(m=4, p=1, d=4, fare="9.00").replace("M4", "M\xff4").encode("latin-1") + b"\n" \
    + TRIP.format(m=5, p=2, d=5, fare="x").encode()


@pytest.fixture(scope="module")
def spark():
    return spark_session("local[2]", shuffle_partitions=2)


def _params(case: str) -> dict:
    path = CASES_DIR / case / "params.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture(scope="module")
def batch(spark, tmp_path_factory) -> dict[str, Path]:
    """One batch: the real sample, every default-window case and the line-ends file."""
    work = tmp_path_factory.mktemp("baseline")
    (work / "line_ends.csv").write_bytes(LINE_ENDS)
    inputs = {"sample": SAMPLE, "line_ends": work / "line_ends.csv",
              **{case: CASES_DIR / case / "input.csv" for case in DEFAULT_CASES}}
    jobs = [(path, work / name) for name, path in inputs.items()]
    run_batch(jobs, BaselineSettings(chunks=3), spark)
    return {name: work / name for name in inputs}


def _rejects_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _check_against_expected(out: Path, case: str) -> None:
    for query in ("q1", "q2"):
        problems = compare_outputs(read_output(out / f"{query}.csv"),
                                   read_output(CASES_DIR / case / f"expected_{query}.csv"))
        assert problems == [], f"{case} {query}:\n" + "\n".join(problems[:5])
    expected_rejects = CASES_DIR / case / "expected_rejects.csv"
    if expected_rejects.exists():
        rows = read_output(expected_rejects)  # hand-written: raw line after the 2nd comma
        expected = [rows[0].split(",")] + [row.split(",", 2) for row in rows[1:]]
        assert _rejects_rows(out / "rejects.csv") == expected
    expected_summary = CASES_DIR / case / "expected_summary.json"
    if expected_summary.exists():
        want = json.loads(expected_summary.read_text(encoding="utf-8"))
        got = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        for key in ("lines_read", "accepted", "rejected", "outliers", "profit_excluded"):
            assert got[key] == want[key], key


@pytest.mark.parametrize("case", DEFAULT_CASES)
def test_hand_built_case(batch, case: str) -> None:
    _check_against_expected(batch[case], case)


@pytest.mark.parametrize("case", PARAM_CASES)
def test_hand_built_case_with_windows(spark, tmp_path, case: str) -> None:
    params = _params(case)
    settings_ = BaselineSettings(q1_window_min=params.get("q1_window_min", 30),
                                 q2_windows_min=tuple(params.get("q2_windows_min", (15, 30))))
    run_batch([(CASES_DIR / case / "input.csv", tmp_path / case)], settings_, spark)
    _check_against_expected(tmp_path / case, case)


def test_real_sample_equals_oracle(batch, sample_oracle) -> None:
    expected = sample_oracle  # session-wide (tests/conftest.py): the oracle runs once per test session
    out = batch["sample"]
    for query, lines in (("q1", expected.q1), ("q2", expected.q2)):
        problems = compare_outputs(read_output(out / f"{query}.csv"), lines)
        assert problems == [], "\n".join(problems[:5])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines_read"] == expected.lines_read == 10_004
    assert summary["outliers"] == expected.outliers
    assert summary["emitted"] == {"q1": len(expected.q1), "q2": len(expected.q2)}
    assert summary["instants"]["q1"] >= 10_004  # every arrival plus the expiry instants
    assert summary["delay_ms"]["q1"]["mean"] > 0


def test_sample_counts(batch) -> None:
    summary = json.loads((batch["sample"] / "summary.json").read_text())
    assert summary["lines_read"] == summary["accepted"] == 10_004  # the real file is clean
    assert sum(summary["rejected"].values()) == 0
    assert 0 < summary["outliers"]["q1"] == summary["outliers"]["q2"] < 500  # zero coordinates
    emitted = {q: len(read_output(batch["sample"] / f"{q}.csv")) for q in ("q1", "q2")}
    assert summary["emitted"] == emitted and min(emitted.values()) > 100


def test_engine_and_baseline_identical_on_sample(batch, tmp_path, capsys) -> None:
    engine_out = tmp_path / "engine"
    assert cli_main(["run", str(SAMPLE), "--out", str(engine_out), "--query", "q1", "--query", "q2",
                     "--no-progress"]) == 0
    assert cli_main(["verify", str(engine_out), str(batch["sample"])]) == 0, capsys.readouterr().out


def test_lines_split_on_lf_only(batch) -> None:
    out = batch["line_ends"]
    assert _rejects_rows(out / "rejects.csv") == [
        ["line_no", "reason", "raw_line"],
        ["3", "field_count", TRIP.format(m=3, p=1, d=3, fare="8.00").replace(",CSH,", ",C\rSH,", 1)
         .replace(",1.0,", ",1.0\r", 1)],
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines_read"] == 5 and summary["accepted"] == 4
    assert summary["profit_excluded"] == 1  # fare "x"
    expected = run_oracle(batch["line_ends"].parent / "line_ends.csv")
    assert compare_outputs(read_output(out / "q1.csv"), expected.q1) == []
    assert compare_outputs(read_output(out / "q2.csv"), expected.q2) == []
    assert all("\r" not in line for line in read_output(out / "q1.csv"))


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(files=st.lists(csv_files(max_lines=25), min_size=25, max_size=25))
def test_random_streams_equal_oracle(spark, files: list[bytes]) -> None:
    """25 random adversarial files per example, all answered by one batch of Spark jobs."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        jobs = [(write_csv(work, data, f"in{i}.csv"), work / f"out{i}") for i, data in enumerate(files)]
        summaries = run_batch(jobs, BaselineSettings(chunks=3), spark)
        for (path, out), summary in zip(jobs, summaries):
            expected = run_oracle(path)
            assert compare_outputs(read_output(out / "q1.csv"), expected.q1) == [], path.read_bytes()
            assert compare_outputs(read_output(out / "q2.csv"), expected.q2) == [], path.read_bytes()
            assert [(int(r[0]), *r[1:]) for r in _rejects_rows(out / "rejects.csv")[1:]] == expected.rejects
            assert (summary["lines_read"], summary["accepted"], summary["rejected"], summary["outliers"],
                    summary["profit_excluded"]) == (expected.lines_read, expected.accepted, expected.rejected,
                                                    expected.outliers, expected.profit_excluded)
