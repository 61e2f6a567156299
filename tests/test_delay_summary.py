"""Delay statistics that look wrong but are not (issue 52, "delay mean 0.933 ms p99
0.162 ms"): the mean and p99 are taken over the same delays — every non-NULL delay of
the output file — and a mean above p99 comes from a few lines that waited (a shared
CPU, a collector pass), which the end-of-run line now says in words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.outputs.delays import delay_stats, describe, read_delays

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def test_a_few_long_waits_put_the_mean_above_p99() -> None:
    # 300 lines at 0.02 ms and 3 lines that waited 150 ms for the CPU: fewer than 1 %
    # of the lines, so nearest-rank p99 is a typical line, while the mean carries them.
    stats = delay_stats([0.02] * 300 + [150.0] * 3)
    assert stats.p99 == pytest.approx(0.02) and stats.max == 150.0
    assert stats.mean == pytest.approx((300 * 0.02 + 450) / 303)
    assert stats.mean > stats.p99
    line = describe(stats.summary())
    assert line.startswith("delay p50 0.020 ms, p99 0.020 ms, max 150.000 ms, mean 1.505 ms")
    assert "above p99: the slowest 1 % of lines, up to 150.000 ms, carry it" in line


def test_with_one_percent_or_more_slow_lines_p99_sees_them() -> None:
    stats = delay_stats([0.02] * 297 + [150.0] * 3)  # exactly 1 %: p99 is the 297th value
    assert stats.p99 == pytest.approx(0.02)
    stats = delay_stats([0.02] * 296 + [150.0] * 4)  # more than 1 %: p99 is a slow line
    assert stats.p99 == 150.0 and stats.mean < stats.p99
    assert "above p99" not in describe(stats.summary())


def test_under_a_hundred_lines_p99_is_the_maximum_so_the_mean_never_exceeds_it() -> None:
    for count in (1, 2, 50, 99):
        stats = delay_stats([0.01] * (count - 1) + [500.0])
        assert stats.p99 == stats.max == 500.0 and stats.mean <= stats.p99


def test_a_run_summarises_every_delay_of_its_files_and_prints_all_four(tmp_path: Path, capsys) -> None:
    trips = tmp_path / "trips.csv"
    with SAMPLE.open("rb") as source:
        trips.write_bytes(b"".join(source.readline() for _ in range(2000)))
    assert main(["run", str(trips), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for query in ("q1", "q2"):
        delays = read_delays(tmp_path / "out" / f"{query}.csv")  # printed with 3 decimals
        assert len(delays) > 100
        from_file = delay_stats(delays).summary()
        recorded = summary["delay_ms"][query]
        for key in ("mean", "p50", "p99", "max"):
            assert recorded[key] == pytest.approx(from_file[key], abs=0.0006), (query, key)
        assert describe(recorded) in printed
