"""Feeder validation per SPEC §1.1: every reject reason, line endings, exact numbers."""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path

import pytest

from feeder_loops import feeder_loop  # noqa: F401  (autouse: each test on both Feeder loops)

from taxi_lines import GOOD, line

from taxi_rsp.feeder import Feeder, trip_stamps
from taxi_rsp.feeder.validate import timestamp_valid, to_scaled
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import TAXI
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.spec import Q1_GRID, Q2_GRID

def feed(tmp_path: Path, data: bytes) -> tuple[list, list[list[str]], Feeder]:
    path = tmp_path / "in.csv"
    path.write_bytes(data)
    rejects = io.StringIO()
    feeder = Feeder(path, Dictionary(), rejects)
    events = list(feeder)
    rows = list(csv.reader(io.StringIO(rejects.getvalue())))
    assert rows[0] == ["line_no", "reason", "raw_line"]
    stats = feeder.stats
    assert stats.lines_read == stats.accepted + sum(stats.rejected.values())
    return events, rows[1:], feeder


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("", "field_count"),
        (GOOD + ",extra", "field_count"),
        (GOOD.rsplit(",", 1)[0], "field_count"),
        (line(medallion="  "), "bad_medallion"),
        (line(pickup_datetime="2013-02-30 00:00:00"), "bad_timestamp"),
        (line(dropoff_datetime="2013-01-01 25:00:00"), "bad_timestamp"),
        (line(dropoff_datetime="2013-01-01T00:02:00"), "bad_timestamp"),
        (line(pickup_datetime="２013-01-01 00:00:00"), "bad_timestamp"),
        (line(pickup_datetime="2013-01-01 00:03:00"), "pickup_after_dropoff"),
        (line(pickup_longitude="1e3"), "bad_coordinate"),
        (line(pickup_latitude="nan"), "bad_coordinate"),
        (line(dropoff_longitude="inf"), "bad_coordinate"),
        (line(dropoff_latitude="٤٠.7"), "bad_coordinate"),
        (line(dropoff_latitude="1_000"), "bad_coordinate"),
        (line(dropoff_latitude=""), "bad_coordinate"),
        (line(medallion="", pickup_longitude="x"), "bad_medallion"),  # first reason in table order
    ],
)
def test_each_reject_reason(tmp_path: Path, bad: str, reason: str) -> None:
    events, rejects, _ = feed(tmp_path, (GOOD + "\n" + bad + "\n").encode())
    assert len(events) == 1
    assert rejects == [["2", reason, bad]]


def test_out_of_order_compares_with_latest_accepted(tmp_path: Path) -> None:
    late = line(pickup_datetime="2013-01-01 00:00:00", dropoff_datetime="2013-01-01 00:01:00")
    bad_later = line(medallion="", dropoff_datetime="2013-01-01 00:09:00")
    data = f"{GOOD}\n{bad_later}\n{late}\n{GOOD}\n"
    events, rejects, _ = feed(tmp_path, data.encode())
    assert [r[:2] for r in rejects] == [["2", "bad_medallion"], ["3", "out_of_order"]]
    assert [e.seq for e in events] == [1, 4]


def test_crlf_no_final_newline_nul_and_invalid_utf8(tmp_path: Path) -> None:
    data = GOOD.encode() + b"\r\n" + b"\xff\xfe,\x00garbage\r\n" + GOOD.encode()
    events, rejects, feeder = feed(tmp_path, data)
    assert [e.seq for e in events] == [1, 3]
    assert rejects[0][:2] == ["2", "field_count"]
    assert rejects[0][2].startswith("\ufffd\ufffd,")
    assert feeder.stats.lines_read == 3


def test_empty_file_and_only_bad_lines(tmp_path: Path) -> None:
    events, rejects, feeder = feed(tmp_path, b"")
    assert events == [] and rejects == [] and feeder.stats.lines_read == 0
    events, rejects, feeder = feed(tmp_path, b"\n\n")
    assert events == [] and len(rejects) == 2 and feeder.stats.rejected["field_count"] == 2


def test_a_lone_carriage_return_is_not_a_line_end(tmp_path: Path) -> None:
    events, rejects, _ = feed(tmp_path, (GOOD + "\r" + GOOD + "\n").encode())
    assert events == [] and rejects[0][1] == "field_count"


def test_exact_decimal_conversion() -> None:
    assert to_scaled("-73.9565285", 9) == -73_956_528_500
    assert to_scaled("40.0000000005", 9) == 40_000_000_000  # half to even
    assert to_scaled("40.0000000015", 9) == 40_000_000_002
    assert to_scaled("-0.004", 2) == 0 and to_scaled("-0.005", 2) == 0 and to_scaled("-0.015", 2) == -2
    assert to_scaled("+40.75", 9) == 40_750_000_000 and to_scaled("-74", 9) == -74_000_000_000
    assert to_scaled("." + "1" * 40, 2) == 11
    for bad in ("", ".", "+", "-.", "1.2.3", "0x10", " 1", "1e-3", "Infinity"):
        assert to_scaled(bad, 9) is None, bad
    assert timestamp_valid("2012-02-29 23:59:59") and not timestamp_valid("2013-02-29 00:00:00")


def test_event_triples_and_profit_exclusion(tmp_path: Path) -> None:
    rows = [GOOD, line(fare_amount="-0.004"), line(tip_amount="abc"), line(fare_amount="-1")]
    events, _, feeder = feed(tmp_path, ("\n".join(rows) + "\n").encode())
    d = feeder.dictionary
    by_pred = {d.decode(p).value: d.value(o) for s, p, o in events[0].triples}
    assert by_pred[TAXI + "pickupLongitude"] == Fraction(-73956528, 10**6)
    assert by_pred[TAXI + "fareAmount"] == Fraction(350, 100)
    assert by_pred[TAXI + "seq"] == 1
    assert by_pred[TAXI + "medallion"] == "07290D3599E7A0D62097A346EFCC1FB5"
    assert d.decode(events[0].triples[0][0]) == IRI("http://debs2015.org/trip/1")
    second = {d.decode(p).value: d.value(o) for s, p, o in events[1].triples}
    assert second[TAXI + "fareAmount"] == 0  # -0.004 rounds to 0 cents and counts
    third = {d.decode(p).value for s, p, o in events[2].triples}
    assert TAXI + "tipAmount" not in third
    assert feeder.stats.profit_excluded == 2  # unparseable tip, negative fare


def test_real_sample_first_line_cells_and_counts(sample_20d: Path) -> None:
    feeder = Feeder(sample_20d, Dictionary())
    first = next(iter(feeder))
    assert trip_stamps(first) == ("2013-01-01 00:00:00", "2013-01-01 00:02:00")
    assert Q1_GRID.cell(-73_956_528_000, 40_716_976_000) == (161, 170)
    assert Q2_GRID.cell(-73_956_528_000, 40_716_976_000) == (321, 339)
    feeder = Feeder(sample_20d, Dictionary())
    assert sum(1 for _ in feeder) == 10_004
    assert feeder.stats.lines_read == 10_004 and feeder.stats.outliers["q1"] > 0
