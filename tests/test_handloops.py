"""The hand-written Q1/Q2 loops of benchmarks/ (the engine's speed yardstick, issue 15)
compute what SPEC says: line for line the oracle's output on the real sample, and the
hand-built cases of tests/cases/ with their counts. Only the delay value is ignored
(its position, NULL for expiry lines, is checked)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from oracle import run_oracle
from outputs import compare_outputs, read_output

pytestmark = pytest.mark.timeout(1200)  # the session oracle may be computed here: ≈30 s idle

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(p.name for p in CASES_DIR.iterdir() if (p / "input.csv").exists())


def _load(name: str) -> ModuleType:
    """benchmarks/ is not a package: load the loop from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HANDLOOP_Q1, HANDLOOP_Q2 = _load("handloop_q1"), _load("handloop_q2")


def test_sample_q1_matches_the_oracle(sample_20d: Path, sample_oracle, tmp_path: Path) -> None:
    counts = HANDLOOP_Q1.run(str(sample_20d), str(tmp_path / "q1.csv"))
    assert compare_outputs(read_output(tmp_path / "q1.csv"), sample_oracle.q1) == []
    assert counts["emitted"] == len(sample_oracle.q1)
    assert counts["lines_read"] == sample_oracle.lines_read
    assert counts["accepted"] == sample_oracle.accepted
    assert counts["outliers"] == sample_oracle.outliers["q1"]
    assert counts["cpu_seconds"] > 0


def test_sample_q2_matches_the_oracle(sample_20d: Path, sample_oracle, tmp_path: Path) -> None:
    counts = HANDLOOP_Q2.run(str(sample_20d), str(tmp_path / "q2.csv"))
    assert compare_outputs(read_output(tmp_path / "q2.csv"), sample_oracle.q2) == []
    assert counts["emitted"] == len(sample_oracle.q2)
    assert counts["outliers"] == sample_oracle.outliers["q2"]
    assert counts["profit_excluded"] == sample_oracle.profit_excluded


@pytest.mark.parametrize("name", CASES)
def test_hand_built_case(name: str, tmp_path: Path) -> None:
    case = CASES_DIR / name
    params = json.loads((case / "params.json").read_text()) if (case / "params.json").exists() else {}
    q1_window = params.get("q1_window_min", 30) * 60
    profit_window, empty_window = (w * 60 for w in params.get("q2_windows_min", (15, 30)))
    q1 = HANDLOOP_Q1.run(str(case / "input.csv"), str(tmp_path / "q1.csv"), window_s=q1_window)
    q2 = HANDLOOP_Q2.run(str(case / "input.csv"), str(tmp_path / "q2.csv"),
                         profit_s=profit_window, empty_s=empty_window)
    assert compare_outputs(read_output(tmp_path / "q1.csv"), read_output(case / "expected_q1.csv")) == []
    assert compare_outputs(read_output(tmp_path / "q2.csv"), read_output(case / "expected_q2.csv")) == []
    summary_path = case / "expected_summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        for counts in (q1, q2):
            assert counts["lines_read"] == summary["lines_read"]
            assert counts["accepted"] == summary["accepted"]
            assert counts["rejected"] == summary["rejected"]
        assert q1["outliers"] == summary["outliers"]["q1"]
        assert q2["outliers"] == summary["outliers"]["q2"]
        assert q2["profit_excluded"] == summary["profit_excluded"]


def test_expiry_lines_and_every_reject_reason(tmp_path: Path) -> None:
    """A small stream of its own: a half-cent median, expiry-only lines (both
    timestamps = tau, delay NULL) and each reject reason, each counted once."""
    # pickup and dropoff in one cell, so fares and empty taxis meet there
    cell_a = "-73.990000,40.750000,-73.990000,40.750000"
    cell_b = "-73.950000,40.780000,-73.950000,40.780000"
    row = "M{m},H,2013-01-01 {p},2013-01-01 {d},60,1.0,{cells},CSH,{fare},0.5,0.5,{tip},0,9"
    rows = [
        row.format(m=1, p="00:00:00", d="00:01:00", cells=cell_a, fare="2.50", tip="0"),
        row.format(m=2, p="00:00:00", d="00:02:00", cells=cell_a, fare="3.25", tip="0.00"),
        "too,few,fields",
        row.format(m=3, p="00:00:00", d="00:03:00", cells=cell_a, fare="1", tip="0").replace("M3,", ",", 1),
        row.format(m=4, p="00:00:00", d="00:03:00", cells=cell_a, fare="1", tip="0")
        .replace("01-01 00:03", "02-30 00:03"),
        row.format(m=5, p="00:09:00", d="00:03:00", cells=cell_a, fare="1", tip="0"),
        row.format(m=6, p="00:00:00", d="00:03:00", cells=cell_a.replace("-73.99", "1e3"), fare="1", tip="0"),
        row.format(m=7, p="00:00:00", d="00:00:30", cells=cell_a, fare="1", tip="0"),
        row.format(m=8, p="00:01:00", d="00:03:00", cells=cell_b, fare="1.00", tip="0"),
        # after every fare expiry (00:16, 00:17, 00:18), merged with none of them
        row.format(m=9, p="00:10:00", d="00:20:00", cells=cell_a, fare="x", tip="0"),
    ]
    source = tmp_path / "in.csv"
    source.write_text("\n".join(rows) + "\n")
    q2 = HANDLOOP_Q2.run(str(source), str(tmp_path / "q2.csv"))
    assert q2["rejected"] == {"field_count": 1, "bad_medallion": 1, "bad_timestamp": 1,
                              "pickup_after_dropoff": 1, "bad_coordinate": 1, "out_of_order": 1}
    assert q2["accepted"] == 4 and q2["profit_excluded"] == 1
    lines = [line.split(",") for line in read_output(tmp_path / "q2.csv")]
    a, b = lines[0][2], lines[1][6]
    assert a != b
    # trip 2 changes cell A's median but not the list: no line; trip 8 adds cell B
    assert lines[0][2:6] == [a, "1", "2.50", "2.5000"]
    assert lines[1][2:10] == [a, "2", "2.875", "1.4375", b, "1", "1.00", "1.0000"]
    # 00:16 trip 1's fare leaves: same list; 00:17 trip 2's fare: A is unranked; 00:18
    # trip 8's fare: nothing is ranked. Trip 9 (no usable fare) adds no profit: no line.
    assert [f[:3] + f[-1:] for f in lines[2:]] == [
        ["2013-01-01 00:17:00", "2013-01-01 00:17:00", b, "NULL"],
        ["2013-01-01 00:18:00", "2013-01-01 00:18:00", "NULL", "NULL"]]
    assert compare_outputs(read_output(tmp_path / "q2.csv"), run_oracle(source).q2) == []
