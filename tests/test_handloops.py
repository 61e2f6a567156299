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
    """A small stream of its own: an expiry-only line (both timestamps = tau, delay
    NULL), a half-cent median and each reject reason, each counted once."""
    # pickup and dropoff in one cell, so the fares and the empty taxis meet there
    good = "M{m},H,{p},{d},60,1.0,-73.990000,40.750000,-73.990000,40.750000,CSH,{fare},0.5,0.5,{tip},0,9"
    rows = [
        good.format(m=1, p="2013-01-01 00:00:00", d="2013-01-01 00:01:00", fare="2.50", tip="0"),
        good.format(m=2, p="2013-01-01 00:00:00", d="2013-01-01 00:02:00", fare="3.25", tip="0.00"),
        "too,few,fields",
        good.format(m="", p="2013-01-01 00:00:00", d="2013-01-01 00:03:00", fare="1", tip="0").replace("M,", ",", 1),
        good.format(m=3, p="2013-02-30 00:00:00", d="2013-01-01 00:03:00", fare="1", tip="0"),
        good.format(m=4, p="2013-01-01 00:09:00", d="2013-01-01 00:03:00", fare="1", tip="0"),
        good.format(m=5, p="2013-01-01 00:00:00", d="2013-01-01 00:03:00", fare="1", tip="0").replace("-73.99", "1e3"),
        good.format(m=6, p="2013-01-01 00:00:00", d="2013-01-01 00:00:30", fare="1", tip="0"),
        # after the fare expiries of trips 1 and 2 (00:16, 00:17), not merged with them
        good.format(m=7, p="2013-01-01 00:10:00", d="2013-01-01 00:20:00", fare="x", tip="0"),
    ]
    source = tmp_path / "in.csv"
    source.write_text("\n".join(rows) + "\n")
    q2 = HANDLOOP_Q2.run(str(source), str(tmp_path / "q2.csv"))
    assert q2["rejected"] == {"field_count": 1, "bad_medallion": 1, "bad_timestamp": 1,
                              "pickup_after_dropoff": 1, "bad_coordinate": 1, "out_of_order": 1}
    assert q2["accepted"] == 3 and q2["profit_excluded"] == 1
    lines = [line.split(",") for line in read_output(tmp_path / "q2.csv")]
    # one cell: 2.50 alone, then the median of 2.50 and 3.25 = 2.875 over two empty taxis
    assert [f[2:6] for f in lines[:2]] == [[lines[0][2], "1", "2.50", "2.5000"],
                                          [lines[0][2], "2", "2.875", "1.4375"]]
    # at 00:16 trip 1's fare leaves (empty taxis stay 2): same list, no line; at 00:17
    # trip 2's fare leaves, the cell has no profit, the list empties: an expiry line;
    # trip 3 (no usable fare) adds an empty taxi but no profit: no line.
    assert lines[2][:2] == ["2013-01-01 00:17:00", "2013-01-01 00:17:00"]
    assert lines[2][2:] == ["NULL"] * 41
    assert len(lines) == 3
    assert compare_outputs(read_output(tmp_path / "q2.csv"), run_oracle(source).q2) == []
