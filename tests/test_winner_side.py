"""benchmarks/winner_side.py, the harness that runs the DEBS 2015 winner's C++ solution
beside ``taxi-rsp run`` (issue 50): its own logic, without the winner's binary — the
cleaned copy both sides read, the delay columns of both output formats, the thread roles
and the table's medians and ratios; the process accounting on a labelled shell script; and
the taxi-rsp side on the bundled sample."""

from __future__ import annotations

import doctest
import importlib.util
import os
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("winner_side", ROOT / "benchmarks" / "winner_side.py")
assert _spec is not None and _spec.loader is not None
winner_side = importlib.util.module_from_spec(_spec)
sys.modules["winner_side"] = winner_side  # dataclasses resolve their module's annotations
_spec.loader.exec_module(winner_side)

GOOD = (b"E2CC37564B4C2068163AC6A5367962B1,81DF3FD21F77CADB5116F552522181CF,2013-01-01 00:00:00,"
        b"2013-01-01 00:02:00,120,0.44,-73.993180,40.719426,-73.991977,40.723797,CSH,4.00,0.50,0.50,"
        b"0.00,0.00,5.00\n")


def _fields(line: bytes) -> list[bytes]:
    return line.rstrip(b"\n").split(b",")


def _with(line: bytes, index: int, value: bytes) -> bytes:
    fields = _fields(line)
    fields[index] = value
    return b",".join(fields) + b"\n"


def test_the_harness_docstring_examples_run() -> None:
    """benchmarks/ is outside tests/test_doctests.py's packages: its examples run here."""
    result = doctest.testmod(winner_side)
    assert result.attempted >= 8 and result.failed == 0


# --- the winner's layout ---------------------------------------------------------------

def test_a_real_line_has_the_winner_layout_with_any_line_end() -> None:
    assert winner_side.winner_layout_ok(GOOD)
    assert winner_side.winner_layout_ok(GOOD.replace(b"\n", b"\r\n"))
    assert winner_side.winner_layout_ok(GOOD.rstrip(b"\n"))  # a last line without LF


@pytest.mark.parametrize(("index", "value", "why"), [
    (0, b"E2CC37564B4C2068163AC6A5367962B", "medallion of 31 characters: every later offset shifts"),
    (0, b"e2cc37564b4c2068163ac6a5367962b1", "lower-case hex: the winner's taxi id reads A-F only"),
    (1, b"81DF3FD21F77CADB5116F552522181CF0", "hack licence of 33 characters"),
    (4, b"NULL", "trip time not digits"),
    (6, b"-73.99318", "5 decimals: the point is skipped, so the value is 10 times off"),
    (9, b"40.7237970", "7 decimals"),
    (11, b"4.0", "fare with 1 decimal"),
    (14, b"N/A", "tip not a number (taxi-rsp accepts it, excluded from profit)"),
    (14, b"", "tip missing"),
])
def test_fields_the_winner_would_misread_leave_the_line_out(index: int, value: bytes, why: str) -> None:
    assert not winner_side.winner_layout_ok(_with(GOOD, index, value)), why


def test_field_counts_other_than_17_leave_the_line_out() -> None:
    assert not winner_side.winner_layout_ok(GOOD.rstrip(b"\n") + b",0.00\n")
    assert not winner_side.winner_layout_ok(b",".join(_fields(GOOD)[:16]) + b"\n")
    assert not winner_side.winner_layout_ok(b"\n")


def test_a_well_formed_line_shorter_than_the_splitters_jump_is_left_out() -> None:
    short = GOOD
    for index, value in ((5, b"0"), (10, b"C"), (12, b"0"), (13, b"0"), (15, b"0"), (16, b"5")):
        short = _with(short, index, value)
    assert len(short) - 1 < winner_side.WINNER_MIN_LINE and b",".join(_fields(short)).count(b",") == 16
    assert not winner_side.winner_layout_ok(short)
    padded = _with(short, 16, b"5" + b"0" * (winner_side.WINNER_MIN_LINE - len(short) + 1))
    assert len(padded) - 1 >= winner_side.WINNER_MIN_LINE and winner_side.winner_layout_ok(padded)


# --- the cleaned copy ------------------------------------------------------------------

def test_clean_lines_drops_rejected_and_off_layout_lines_and_ends_the_last_with_lf() -> None:
    lines = [GOOD, b"short,line\n", GOOD, _with(GOOD, 6, b"-73.9"), GOOD.rstrip(b"\n")]
    counts = winner_side.CleanCounts()
    kept = list(winner_side.clean_lines(lines, {3}, counts))
    assert kept == [GOOD, GOOD]
    assert counts == winner_side.CleanCounts(lines=5, rejected_by_taxi_rsp=1, off_winner_layout=2, kept=2)


def test_the_clean_copy_keeps_what_the_feeder_accepts_and_the_feeder_accepts_all_of_it(
        sample_20d: Path, tmp_path: Path) -> None:
    sample = sample_20d.read_bytes().splitlines(keepends=True)[:300]
    last_dropoff = _fields(sample[-1])[3]
    last = sample[-1]  # the damaged lines keep its drop-off, so only the out-of-order one is late
    damaged = [
        b"\n",  # empty: field_count
        last[:60] + b"\n",  # truncated: field_count
        _with(last, 3, b"2013-02-30 10:00:00"),  # bad_timestamp
        _with(_with(last, 2, b"2012-12-31 23:00:00"), 3, b"2012-12-31 23:10:00"),  # out_of_order
        _with(last, 14, b"N/A"),  # accepted by taxi-rsp (excluded from profit), not the winner's layout
    ]
    source = tmp_path / "dirty.csv"
    source.write_bytes(b"".join(sample + damaged + [sample[-1]]))
    rejected = winner_side.feeder_rejected_lines(source)
    assert rejected == {301, 302, 303, 304}, "the Feeder's SPEC §1.1 rejects, by line number"
    cleaned = tmp_path / "clean.csv"
    counts = winner_side.write_clean_copy(source, cleaned)
    assert counts == winner_side.CleanCounts(lines=306, rejected_by_taxi_rsp=4, off_winner_layout=1, kept=301)
    kept = cleaned.read_bytes().splitlines(keepends=True)
    assert kept == [*sample, sample[-1]] and _fields(kept[-1])[3] == last_dropoff
    assert winner_side.feeder_rejected_lines(cleaned) == set()
    assert all(winner_side.winner_layout_ok(line) for line in kept)


# --- delays ----------------------------------------------------------------------------

def test_both_delay_formats_become_milliseconds(tmp_path: Path) -> None:
    taxi = tmp_path / "q1.csv"
    taxi.write_text("2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,160.170,NULL,NULL,0.250\n"
                    "2013-01-01 00:32:00,2013-01-01 00:32:00,NULL,NULL,NULL,NULL,NULL\n"
                    "2013-01-01 00:33:00,2013-01-01 00:34:00,161.170,160.170,NULL,NULL,12.500\n")
    winner = tmp_path / "q1.out"
    winner.write_text("2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,160.170,NULL,NULL,157\n"
                      "2013-01-01 00:01:00,2013-01-01 00:03:00,158.162,159.160,NULL,NULL,2829\n")
    assert winner_side.delay_file_ms(taxi, 1.0) == [0.25, 12.5]
    assert winner_side.delay_file_ms(winner, 0.001) == pytest.approx([0.157, 2.829])
    assert winner_side.delay_file_ms(tmp_path / "missing.csv", 1.0) == []


def test_p99_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(150, 0, -1)]  # 150 … 1: rank ceil(0.99 × 150) = ceil(148.5) = 149
    stats = winner_side.delay_stats(values)
    assert stats.p99_ms == 149.0 and stats.mean_ms == pytest.approx(75.5) and stats.lines == 150
    assert winner_side.delay_stats([5.0]).p99_ms == 5.0


# --- threads, shares, the table --------------------------------------------------------

def test_thread_roles_follow_creation_order_and_refuse_what_they_cannot_tell() -> None:
    roles = winner_side.winner_thread_roles(500, {500: 0.01, 503: 0.4, 501: 0.2, 502: 0.3, 505: 2.6, 504: 2.5})
    assert roles == {"main": 0.01, "disk_reader": 0.2, "line_splitter": 0.3, "line_parser": 0.4,
                     "q1": 2.5, "q2": 2.6}
    assert winner_side.winner_thread_roles(500, {500: 0.01, 501: 0.2, 502: 0.3}) is None  # threads missed
    assert winner_side.winner_thread_roles(500, {501: 0.2, 502: 0.3, 503: 0.4, 504: 1.0, 505: 1.0, 506: 1.0}) is None


def test_one_query_is_compared_with_the_winner_minus_the_other_querys_thread() -> None:
    threads = {"q1": 2.5, "q2": 2.6}
    assert winner_side.winner_share("q1", 8.5, threads) == pytest.approx(5.9)
    assert winner_side.winner_share("q2", 8.5, threads) == pytest.approx(6.0)
    assert winner_side.winner_share("mixed", 8.5, threads) == 8.5
    assert winner_side.winner_share("q1", 8.5, None) is None


def _process(cpu: float, wall: float, rss: float) -> object:
    return winner_side.ProcessRun(argv=["x"], pid=1, returncode=0, cpu_s=cpu, user_s=cpu, system_s=0.0,
                                  wall_s=wall, peak_rss_mib=rss)


def _side(side: str, workload: str, round_number: int, cpu: float, compared: float, delay: float,
          threads: dict[str, float] | None = None) -> object:
    queries = ("q1", "q2") if side == "winner" else winner_side.WORKLOADS[workload]
    delays = {q: winner_side.DelayStats(10, delay, delay * 4) for q in queries}
    what = winner_side.share_label(workload) if side == "winner" and workload != "mixed" and threads else "whole process"
    return winner_side.SideRun(side, workload, round_number, _process(cpu, cpu * 1.1, 100.0), compared,
                               delays, {q: 10 for q in queries}, threads, what)


def test_the_table_shows_medians_and_the_ratio_of_medians() -> None:
    threads = dict.fromkeys(winner_side.WINNER_THREADS, 0.1) | {"q1": 1.0, "q2": 3.0, "input": 4.0}
    runs = [
        _side("winner", "q2", 1, 8.0, 7.0, 0.2, threads), _side("taxi-rsp", "q2", 1, 70.0, 70.0, 1.0),
        _side("taxi-rsp", "q2", 2, 90.0, 90.0, 3.0), _side("winner", "q2", 2, 10.0, 9.0, 0.4, threads),
        _side("winner", "mixed", 1, 8.0, 8.0, 0.2, threads), _side("taxi-rsp", "mixed", 1, 100.0, 100.0, 2.0),
    ]
    rows = winner_side.summarise(runs)
    assert [row.workload for row in rows] == ["mixed", "q2"]  # WORKLOADS order; q1 never ran
    mixed, q2 = rows
    assert (q2.winner_cpu_s, q2.winner_process_cpu_s, q2.taxi_rsp_cpu_s) == (8.0, 9.0, 80.0)
    assert q2.ratio == pytest.approx(10.0) and q2.ratio_whole == pytest.approx(80 / 9)
    assert q2.delays["q2"]["taxi-rsp"].mean_ms == pytest.approx(2.0)
    assert q2.delays["q2"]["winner"].p99_ms == pytest.approx(1.2)
    assert list(q2.delays) == ["q2"] and list(mixed.delays) == ["q1", "q2"]
    assert mixed.ratio == pytest.approx(12.5)
    table = winner_side.format_table(rows)
    assert "| Q2 | 8.00 (process − Q1 thread) | 80.00 | **10.0×** | 8.9× |" in table
    assert "| Mixed (Q1 + Q2) | 8.00 (whole process) | 100.00 | **12.5×** |" in table
    assert "input 4.00" in table and "q2 3.00" in table


def test_a_round_without_thread_figures_makes_the_row_compare_whole_processes() -> None:
    threads = dict.fromkeys(winner_side.WINNER_THREADS, 0.1) | {"q1": 1.0, "q2": 3.0, "input": 4.0}
    runs = [_side("winner", "q1", 1, 8.0, 5.0, 0.2, threads), _side("taxi-rsp", "q1", 1, 40.0, 40.0, 1.0),
            _side("winner", "q1", 2, 10.0, 10.0, 0.2, None), _side("taxi-rsp", "q1", 2, 40.0, 40.0, 1.0)]
    (row,) = winner_side.summarise(runs)
    assert row.winner_cpu_s == row.winner_process_cpu_s == 9.0 and row.ratio == pytest.approx(40 / 9)
    assert row.winner_compared.startswith("whole process") and row.winner_threads is None


# --- process accounting ----------------------------------------------------------------

PLUMBING_SCRIPT = """#!/bin/sh
# Test plumbing only, not a measurement: burns CPU in a shell loop so that the harness's
# wait4 accounting and /proc sampling have something to see.
i=0
while [ "$i" -lt "$1" ]; do i=$((i + 1)); done
echo "$i"
"""


def test_process_cpu_accounting_plumbing_on_a_shell_loop(tmp_path: Path) -> None:
    """PLUMBING ONLY: a labelled shell script, not a stand-in for the winner. Checks that
    the child's CPU comes from wait4 (user + system, bounded by its wall time: one thread),
    that the /proc samples saw its main thread and its memory, and the log captured it."""
    script = tmp_path / "burn.sh"
    script.write_text(PLUMBING_SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "log.txt"
    run = winner_side.measure_process([str(script), "200000"], cwd=tmp_path, log=log, poll_s=0.01)
    assert run.returncode == 0 and log.read_text().strip() == "200000"
    assert run.cpu_s == pytest.approx(run.user_s + run.system_s)
    assert 0.05 < run.cpu_s <= run.wall_s + 0.02
    assert run.pid in run.thread_cpu_s and 0 < run.thread_cpu_s[run.pid] <= run.cpu_s + 0.02
    assert run.peak_rss_mib is not None and run.peak_rss_mib < 64  # the shell's, not this Python's


def test_a_failing_child_reports_its_exit_status(tmp_path: Path) -> None:
    run = winner_side.measure_process(["sh", "-c", "exit 3"], cwd=tmp_path, log=tmp_path / "log", poll_s=0.01)
    assert run.returncode == 3


# --- the taxi-rsp side -----------------------------------------------------------------

def test_the_taxi_rsp_side_reads_its_delays_and_summary(sample_20d: Path, tmp_path: Path) -> None:
    run = winner_side.run_taxi_rsp(winner_side.taxi_rsp_command(), sample_20d, "q1", 1, tmp_path, 0.02)
    output = (tmp_path / "taxi_rsp_q1_1" / "q1.csv").read_text().splitlines()
    timed = [line for line in output if not line.endswith(",NULL")]
    assert run.delays["q1"].lines == len(timed) > 0 and run.output_lines == {"q1": len(timed)}
    assert run.summary_rejected == 0 and run.summary_cpu_s is not None
    assert 0 < run.summary_cpu_s <= run.process.cpu_s  # the summary's excludes start-up
    assert run.process.peak_rss_mib is not None and os.path.basename(run.process.argv[0]) in ("taxi-rsp", "python")
