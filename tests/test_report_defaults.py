"""`taxi-rsp report`'s defaults fit the input (issue 52): sweep points no longer than the
data's span of drop-offs, one run per workload and side, a plan said before the runs
and the page's path said after them. The choice is tested directly here (fast); the
whole report on the bundled sample — under two minutes, no warning — is ``-m slow``."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from taxi_rsp.outputs.summary import data_warnings
from taxi_rsp.verify.plan import InputSpan, default_sweep, plan_report, read_span
from taxi_rsp.verify.workloads import standard_workloads, sweep_workloads

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
MINUTE = 60_000


def _warnings(span_ms: int, windows: list[int]) -> list[str]:
    """The data warnings the runs of these sweep points would print (the runs' own rule)."""
    found = []
    for workload in [*standard_workloads(), *sweep_workloads(windows)]:
        found += data_warnings(10, span_ms, {"q1": [workload.q1_window * MINUTE],
                                             "q2": [w * MINUTE for w in workload.q2_windows]})
    return found


def test_the_sample_spans_54_minutes_and_gets_a_two_point_sweep_and_one_run() -> None:
    span = read_span(SAMPLE)
    assert span.lines == 10_004
    assert (span.first, span.last) == (datetime(2013, 1, 1, 0, 2), datetime(2013, 1, 1, 0, 56))
    plan = plan_report(span, None, None)
    assert (plan.sweep, plan.repeat) == ([15, 30], 1)
    assert _warnings(span.span_ms, plan.sweep) == []
    # SPEC's own sweep on the same data: the points 60 to 240 warn for Q1 and for Q2,
    # the six warnings of the issue.
    assert len(_warnings(span.span_ms, [30, 60, 120, 240])) == 6


@pytest.mark.parametrize("minutes", [3, 5, 12, 29, 30, 31, 59, 60, 61, 119, 240, 28_800])
def test_no_default_sweep_point_is_longer_than_the_data(minutes: int) -> None:
    sweep = default_sweep(minutes * MINUTE)
    assert sweep and all(2 <= w <= minutes for w in sweep)
    assert sweep == sorted(set(sweep))
    assert set(sweep) >= {w for w in (30, 60, 120, 240) if w <= minutes}  # SPEC's points, where they fit
    assert len(sweep) >= 2 or minutes < 7  # a sweep has two points when the data allows them


def test_what_the_user_asks_for_is_kept_and_said() -> None:
    span = InputSpan(400, datetime(2013, 1, 1, 0, 2), datetime(2013, 1, 1, 0, 14))
    plan = plan_report(span, [30, 60], 3)
    assert (plan.sweep, plan.repeat) == ([30, 60], 3)
    said = "\n".join(plan.describe(span))
    assert "window sweep, Q1 minutes: 30, 60\n" in said + "\n" and "3 runs of each workload per side" in said
    assert "shorter than the queries' 30-minute windows" in said  # Table 1's windows do not fit 12 minutes
    default = "\n".join(plan_report(span, None, None).describe(span))
    assert "3, 7 (the windows that fit the data; --sweep to choose)" in default
    assert "1 run of each workload per side (--repeat 3 for medians and ranges)" in default


def test_a_file_without_a_valid_drop_off_gets_no_sweep(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("not,a,trip\n\n" + ",".join(["x"] * 17) + "\n")
    span = read_span(path)
    assert (span.lines, span.span_ms) == (3, None)
    assert plan_report(span, None, None).sweep == []
    assert span.describe() == "3 lines, no valid drop-off time"


@pytest.mark.slow
@pytest.mark.spark
def test_report_on_the_sample_with_defaults_is_quick_quiet_and_says_where_the_page_is(tmp_path: Path) -> None:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "taxi_rsp", "report", str(SAMPLE), "--out", str(tmp_path / "r")],
                            capture_output=True, text=True, timeout=900, check=False)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    assert elapsed < 120, f"report on the sample took {elapsed:.0f} s"
    assert "warning" not in (result.stdout + result.stderr).lower(), result.stdout + result.stderr
    assert "Data warning" not in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert re.search(r"\[8/8\] sweep-15: engine", result.stdout)  # q1, q2, mixed (= sweep 30), sweep 15; 1 run
    page = (tmp_path / "r" / "report.html").resolve()
    assert result.stdout.splitlines()[-1].startswith(f"report: {page} ")
