"""Invariants of the oracle on generated adversarial files (tests/strategies.py)."""

from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from oracle import run_oracle
from strategies import csv_files, write_csv

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
REASONS = {"field_count", "bad_medallion", "bad_timestamp", "pickup_after_dropoff",
           "bad_coordinate", "out_of_order"}


def _run(data: bytes, **kwargs):
    with tempfile.TemporaryDirectory() as folder:
        return run_oracle(write_csv(Path(folder), data), **kwargs)


def _entries(line: str, width: int) -> tuple[list[str], list[list[str]], str]:
    """Split an output line into its trigger fields, its 10 entries and its delay."""
    fields = line.split(",")
    body = fields[2:-1]
    return fields[:2], [body[i:i + width] for i in range(0, len(body), width)], fields[-1]


def _check_lines(lines: list[str], field_count: int, width: int) -> None:
    previous_ids: list[list[str]] = []
    previous_time = ""
    for line in lines:
        assert len(line.split(",")) == field_count
        (pickup, dropoff), entries, delay = _entries(line, width)
        assert delay in ("*", "NULL")
        if delay == "NULL":  # an expiry instant prints itself twice
            assert pickup == dropoff
        assert pickup <= dropoff and dropoff >= previous_time
        previous_time = dropoff
        present = [e for e in entries if e != ["NULL"] * width]
        assert entries[:len(present)] == present, "NULL padding only at the end"
        assert all("NULL" not in e for e in present)
        ids = [e[:2] if width == 2 else e[:1] for e in present]
        assert len({tuple(i) for i in ids}) == len(ids), "an id appears twice"
        assert ids != previous_ids, "a line is emitted only when the list changes"
        previous_ids = ids


@SETTINGS
@given(csv_files())
def test_counts_add_up(data: bytes) -> None:
    result = _run(data, queries=())
    assert result.lines_read == result.accepted + sum(result.rejected.values())
    assert set(result.rejected) == REASONS
    assert [n for n, _, _ in result.rejects] == sorted({n for n, _, _ in result.rejects})
    assert all(reason in REASONS for _, reason, _ in result.rejects)
    assert 0 <= result.outliers["q1"] <= result.accepted
    assert 0 <= result.outliers["q2"] <= result.accepted
    assert 0 <= result.profit_excluded <= result.accepted


@SETTINGS
@given(csv_files())
def test_output_lines_are_well_formed(data: bytes) -> None:
    result = _run(data)
    _check_lines(result.q1, 23, 2)
    _check_lines(result.q2, 43, 4)
    for line in result.q2:
        for cell, empty, median, profitability in _entries(line, 4)[1]:
            if cell == "NULL":
                continue
            assert int(empty) >= 1
            decimals = median.split(".")[1]
            assert len(decimals) == 2 or (len(decimals) == 3 and decimals.endswith("5"))
            exact = Fraction(median) / int(empty)
            assert Fraction(profitability) == round(exact * 10_000) / Fraction(10_000)
            assert len(profitability.split(".")[1]) == 4


@SETTINGS
@given(csv_files(), csv_files())
def test_output_of_a_prefix_is_a_prefix(head: bytes, tail: bytes) -> None:
    """Evaluation up to an event never depends on later lines, and end of input is not
    a time advance: the output of a file's first lines starts the output of the file."""
    if head and not head.endswith(b"\n"):
        head += b"\n"
    short, full = _run(head), _run(head + tail)
    assert full.q1[:len(short.q1)] == short.q1
    assert full.q2[:len(short.q2)] == short.q2
    assert full.rejects[:len(short.rejects)] == short.rejects


@SETTINGS
@given(csv_files())
def test_line_ends_do_not_matter(data: bytes) -> None:
    lf = data.replace(b"\r\n", b"\n")
    crlf = lf.replace(b"\n", b"\r\n")
    a, b = _run(lf), _run(crlf)
    assert (a.q1, a.q2, a.rejects) == (b.q1, b.q2, b.rejects)
