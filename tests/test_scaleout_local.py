"""The time-partitioned run, in process (no Spark): byte ranges, the plan, and chunk
outputs equal to the sequential run for chunk boundaries at every line of small files.

A run with one chunk per line puts a boundary before every line at once: each chunk
rebuilds its start state on its own, so this checks every possible cut in one run.

The mapper is the only difference from `taxi-rsp run --spark` (tests/test_scaleout.py
runs the same cases on a real local Spark).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import csv_files, write_csv
from test_scaleout_inputs import adversarial_lines, time_jump_lines, write_lines

from taxi_rsp.errors import UserError
from taxi_rsp.runner import RunConfig, run
from taxi_rsp.scaleout.chunk import quarter_marks
from taxi_rsp.scaleout.driver import local_map, run_partitioned
from taxi_rsp.scaleout.plan import plan_chunks
from taxi_rsp.scaleout.scan import Checkpoint, RangeScan, scan_range
from taxi_rsp.scaleout.slices import LineReader, ranges_at_lines, split_ranges
from taxi_rsp.verify.compare import compare_folders

CASES_DIR = Path(__file__).parent / "cases"
QUERIES = ["q1", "q2"]


def _config(path: Path, out: Path, params: dict | None = None) -> RunConfig:
    return RunConfig(input=path, out=out, queries=QUERIES, params=params or {})


def _assert_same(sequential: Path, partitioned: Path, label: str) -> None:
    comparison = compare_folders(sequential, partitioned)
    assert comparison.identical, f"{label}:\n" + "\n".join(map(str, comparison.differences))
    warnings = [json.loads((folder / "summary.json").read_text())["warnings"] for folder in (sequential, partitioned)]
    assert warnings[0] == warnings[1], label


def _check_cuts(path: Path, work: Path, cuts: list[list[int]], params: dict | None = None) -> None:
    """Sequential run once, then one partitioned run per list of chunk first lines."""
    run(_config(path, work / "seq", params))
    for i, first_lines in enumerate(cuts):
        out = work / f"cut{i}"
        run_partitioned(_config(path, out, params), local_map, 1, cut_lines=first_lines, checkpoint_spacing=64)
        _assert_same(work / "seq", out, f"{path.name} chunks starting at {first_lines}")


# -- byte ranges -----------------------------------------------------------------------
@pytest.mark.parametrize("data", [b"", b"a\n", b"a", b"aa\nb\r\nccc\n\nd", b"\n\n\n", b"x" * 50 + b"\n" + b"y"])
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_split_ranges_cover_the_file_at_line_starts(tmp_path: Path, data: bytes, parts: int) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    ranges = split_ranges(path, parts)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) <= parts
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert all(start == 0 or data[start - 1:start] == b"\n" for start, _ in ranges)
    assert b"".join(b"".join(LineReader(path, a, b)) for a, b in ranges) == data
    lines = data.split(b"\n")
    assert sum(len(list(LineReader(path, a, b))) for a, b in ranges) == len(lines) - (lines[-1] == b"")


def test_ranges_at_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "f.csv", ["a", "bb", "c", "dd"])
    assert ranges_at_lines(path, [3]) == [(0, 5), (5, 10)]
    assert ranges_at_lines(path, [4, 2, 99]) == [(0, 2), (2, 7), (7, 10)]


# -- the plan ----------------------------------------------------------------------------
def test_plan_uses_global_line_numbers_and_prefix_maxima() -> None:
    scans = [
        RangeScan(0, 100, 5, 50, (Checkpoint(0, 0, None), Checkpoint(40, 2, 20))),
        RangeScan(100, 200, 4, 30, (Checkpoint(100, 0, None), Checkpoint(150, 2, 30))),
        RangeScan(200, 300, 3, 90, (Checkpoint(200, 0, None),)),
    ]
    first, second, third = plan_chunks(scans, longest_window_ms=25)
    assert (first.first_line, first.latest_dropoff, first.warm_start, first.warm_lines) == (1, None, 0, 0)
    # before line 6 the maximum is 50; the last checkpoint at <= 50 - 25 is offset 40 (max 20)
    assert (second.first_line, second.latest_dropoff) == (6, 50)
    assert (second.warm_start, second.warm_first_line, second.warm_latest_dropoff) == (40, 3, 20)
    # before line 10 the maximum is still 50 (the second range's 30 is out of order)
    assert (third.first_line, third.latest_dropoff, third.warm_start) == (10, 50, 40)


def test_scan_follows_the_running_maximum(tmp_path: Path) -> None:
    lines = time_jump_lines()
    path = write_lines(tmp_path / "jump.csv", lines)
    scan = scan_range(str(path), 0, path.stat().st_size, spacing=200)
    assert scan.lines == len(lines)
    maxima = [cp.max_dropoff for cp in scan.checkpoints]
    assert maxima == sorted(maxima, key=lambda m: -1 if m is None else m) and len(maxima) > 5


# -- equivalence, in process -----------------------------------------------------------
def test_adversarial_file_every_cut(tmp_path: Path) -> None:
    lines, marks = adversarial_lines()
    path = write_lines(tmp_path / "adv.csv", lines, ending="\r\n", final=False)
    every_line = list(range(2, len(lines) + 1))
    _check_cuts(path, tmp_path, [every_line, sorted(marks.values()), [marks["empty_period"]], [marks["expiry_burst"]]])


def test_adversarial_file_short_windows(tmp_path: Path) -> None:
    # Windows shorter than the file: warm-ups start at checkpoints, not at line 1.
    lines, marks = adversarial_lines()
    path = write_lines(tmp_path / "adv.csv", lines)
    params = {"q1": {"window": "7m"}, "q2": {"profit_window": "3m", "empty_window": "5m"}}
    _check_cuts(path, tmp_path, [list(range(2, len(lines) + 1)), sorted(marks.values())], params)


def test_stages_are_reported(tmp_path: Path) -> None:
    # A long partitioned run says what it is doing (the CLI prints these lines).
    lines, _ = adversarial_lines()
    path = write_lines(tmp_path / "adv.csv", lines)
    said: list[str] = []
    run_partitioned(_config(path, tmp_path / "out"), local_map, 3, report=said.append)
    assert [line.split(":")[0] for line in said[:2]] == ["stage 1/2", "stage 2/2"]
    assert f"{len(lines):,} lines scanned" in said[1] and "running 3 chunks" in said[1]
    assert said[2].startswith("chunks done in")


def test_each_chunk_reports_its_memory_after_the_warm_up_and_each_quarter(tmp_path: Path) -> None:
    lines, _ = adversarial_lines()
    path = write_lines(tmp_path / "adv.csv", lines)
    summary = run_partitioned(_config(path, tmp_path / "out"), local_map, 2)
    for chunk in summary["scaleout"]["per_chunk"]:
        rss = chunk["rss_mib"]
        quarters = [f"{n:,} lines" for n in quarter_marks(chunk["lines"])]
        assert list(rss) == ["warm-up", *quarters]
        assert all(value > 0 for value in rss.values())


def test_time_jump_far_before_the_chunk(tmp_path: Path) -> None:
    lines = time_jump_lines()
    path = write_lines(tmp_path / "jump.csv", lines)
    _check_cuts(path, tmp_path, [[30], [4, 20, 40, 44, 45, 50, 60]])


@pytest.mark.parametrize("case", sorted(p.name for p in CASES_DIR.iterdir() if (p / "input.csv").exists()))
def test_hand_built_cases_every_cut(tmp_path: Path, case: str) -> None:
    path = CASES_DIR / case / "input.csv"
    count = path.read_bytes().count(b"\n") + 1
    _check_cuts(path, tmp_path, [list(range(2, count + 1))])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=csv_files(max_lines=30), cuts=st.lists(st.integers(2, 30), max_size=6))
def test_random_files_random_cuts(tmp_path_factory, data: bytes, cuts: list[int]) -> None:
    work = tmp_path_factory.mktemp("random")
    _check_cuts(write_csv(work, data), work, [cuts, list(range(2, 31))])


def test_count_based_windows_are_refused(tmp_path: Path) -> None:
    query = tmp_path / "count.cqels"
    query.write_text("SELECT ?s WHERE { STREAM <http://debs2015.org/streams/trips> [TRIPLES 5] "
                     "{ ?s <http://debs2015.org/taxi#seq> ?o } }")
    path = write_lines(tmp_path / "f.csv", time_jump_lines()[:3])
    with pytest.raises(UserError, match="TRIPLES window"):
        run_partitioned(RunConfig(input=path, out=tmp_path / "out", queries=[str(query)]), local_map, 2)
