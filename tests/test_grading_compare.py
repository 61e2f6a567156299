"""Line-by-line grading of query outputs: matches, first mismatch, precision/recall, delays."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.grading.compare import compare_query
from taxi_rsp.outputs.delays import delay_stats, percentile
from taxi_rsp.grading.outputs import field_names, parse_lines, read_output

NULLS = ",".join(["NULL"] * 18)


def q1(minute: int, route: str, delay: str = "0.500") -> str:
    """A Q1 line with one route (two cells) and nine missing routes."""
    return f"2013-01-01 00:{minute:02d}:00,2013-01-01 00:{minute + 2:02d}:00,{route},{NULLS},{delay}"


def lines(*rows: str) -> list:
    return parse_lines("".join(r + "\n" for r in rows).encode())


REF = lines(q1(0, "161.170,160.170"), q1(1, "158.162,159.160"), q1(2, "1.1,2.2", "NULL"))


def test_identical_output_with_other_delays_is_correct() -> None:
    got = lines(q1(0, "161.170,160.170", "9.000"), q1(1, "158.162,159.160", "1.250"),
                q1(2, "1.1,2.2", "NULL"))
    grade = compare_query("q1", REF, got)
    assert grade.correct
    assert (grade.matched, grade.precision, grade.recall) == (3, 1.0, 1.0)
    assert grade.delay.count == 2 and grade.delay.nulls == 1
    assert grade.delay.mean == pytest.approx(5.125)


def test_null_delay_must_agree() -> None:
    got = lines(q1(0, "161.170,160.170"), q1(1, "158.162,159.160"), q1(2, "1.1,2.2", "3.000"))
    grade = compare_query("q1", REF, got)
    assert not grade.correct
    assert grade.first_mismatch is not None
    assert grade.first_mismatch.line == 3
    assert grade.first_mismatch.fields == ("delay (NULL vs value)",)


def test_first_mismatch_names_the_differing_field() -> None:
    got = lines(q1(0, "161.170,160.170"), q1(1, "158.162,159.161"), q1(2, "1.1,2.2", "NULL"))
    grade = compare_query("q1", REF, got)
    mismatch = grade.first_mismatch
    assert mismatch is not None and mismatch.line == 2
    assert mismatch.fields == ("end_cell_1",)
    assert mismatch.expected == q1(1, "158.162,159.160")
    assert (grade.matched, grade.precision, grade.recall) == (2, pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_missing_and_extra_lines() -> None:
    short = compare_query("q1", REF, REF[:2])
    assert short.first_mismatch is not None
    assert (short.first_mismatch.line, short.first_mismatch.got) == (3, None)
    assert (short.precision, short.recall) == (1.0, pytest.approx(2 / 3))
    extra = compare_query("q1", REF[:1], REF)
    assert extra.first_mismatch is not None and extra.first_mismatch.expected is None
    assert (extra.precision, extra.recall) == (pytest.approx(1 / 3), 1.0)


def test_one_missing_line_early_costs_positions_but_one_line_of_recall() -> None:
    grade = compare_query("q1", REF, [REF[1], REF[2]])
    assert grade.matched == 0
    assert (grade.precision, grade.recall) == (1.0, pytest.approx(2 / 3))


def test_malformed_lines_are_counted_and_never_correct() -> None:
    got = lines(q1(0, "161.170,160.170"), "garbage", q1(2, "1.1,2.2", "fast"))
    grade = compare_query("q1", REF, got)
    assert grade.malformed == 2
    assert grade.first_malformed is not None
    assert (grade.first_malformed.line, grade.first_malformed.reason) == (2, "1 fields, expected 23")
    assert not grade.correct


def test_bad_timestamp_is_malformed() -> None:
    bad = q1(0, "161.170,160.170").replace("2013-01-01 00:00:00", "2013-01-01T00:00:00", 1)
    grade = compare_query("q1", REF[:1], lines(bad))
    assert grade.first_malformed is not None
    assert "pickup_datetime" in grade.first_malformed.reason


def test_absent_file_and_empty_reference() -> None:
    absent = compare_query("q1", REF, None)
    assert not absent.present and not absent.correct and absent.recall == 0.0
    empty = compare_query("q1", [], [])
    assert empty.correct and (empty.precision, empty.recall) == (1.0, 1.0)


def test_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "q1.csv"
    path.write_bytes((q1(0, "161.170,160.170") + "\r\n" + q1(1, "158.162,159.160")).encode())
    got = read_output(path)
    assert got is not None and len(got) == 2
    assert compare_query("q1", REF[:2], got).correct
    assert read_output(tmp_path / "absent.csv") is None


def test_q2_field_names() -> None:
    names = field_names("q2")
    assert len(names) == 43
    assert names[2:6] == ("cell_1", "empty_taxis_1", "median_profit_1", "profitability_1")
    assert len(field_names("q1")) == 23


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([7.0], 99) == 7.0
    stats = delay_stats([None, 3.0, 1.0, 2.0])
    assert (stats.count, stats.nulls, stats.mean, stats.p50, stats.max) == (3, 1, 2.0, 2.0, 3.0)
    assert delay_stats([None]).mean is None
