"""The baseline's line checks (SPEC §1, §1.1) as pure functions, without Spark."""

from __future__ import annotations

import pytest

from taxi_rsp.baseline.lines import money, profitability
from taxi_rsp.baseline.parse import (
    Trip,
    check_line,
    decimal_units,
    decode_line,
    format_seconds,
    timestamp_seconds,
)
from taxi_rsp.baseline.topk import Area

GOOD = ("07290D3599E7A0D62097A346EFCC1FB5,E7750A37CAB07D0DFF0AF7E3573AC141,2013-01-01 00:00:00,"
        "2013-01-01 00:02:00,120,0.44,-73.956528,40.716976,-73.962440,40.715008,CSH,3.50,0.50,0.50,0.00,0.00,4.50")


def _with(index: int, value: str) -> str:
    fields = GOOD.split(",")
    fields[index] = value
    return ",".join(fields)


@pytest.mark.parametrize(("text", "places", "expected"), [
    ("-73.956528", 9, -73_956_528_000), ("+40.75", 2, 4075), ("-74", 2, -7400), (".5", 2, 50),
    ("1.", 2, 100), ("0.125", 2, 12), ("0.135", 2, 14), ("0.1250000001", 2, 13), ("-0.004", 2, 0),
    ("0.0000000005", 9, 0), ("0.0000000015", 9, 2),
    ("1e3", 2, None), ("nan", 2, None), ("inf", 2, None), ("\u0664\u0660.7", 2, None), ("1_000", 2, None),
    ("", 2, None), ("-", 2, None), (".", 2, None), ("+-1", 2, None), ("1.2.3", 2, None),
])
def test_decimal_units_is_exact_half_even(text: str, places: int, expected: int | None) -> None:
    assert decimal_units(text, places) == expected


def test_decimal_units_with_thousands_of_digits() -> None:
    assert decimal_units("1" * 5000 + ".5", 0) == (10**5000 - 1) // 9 + 1  # ...1.5 -> even ...2


@pytest.mark.parametrize("text", ["2013-01-01 00:60:00", "2013-02-29 00:00:00", "2013-01-01T00:00:00",
                                  "2013-01-01 24:00:00", "0000-01-01 00:00:00", "2013-1-01 00:00:00",
                                  "2013-01-01 00:00:0\u0660", ""])
def test_invalid_timestamps(text: str) -> None:
    assert timestamp_seconds(text) is None


def test_timestamps_round_trip_and_order() -> None:
    for text in ("2012-02-29 23:59:59", "2013-01-01 00:00:00", "2013-12-31 12:34:56"):
        assert format_seconds(timestamp_seconds(text)) == text
    assert timestamp_seconds("2013-01-01 00:30:00") - timestamp_seconds("2013-01-01 00:00:00") == 1800


def test_first_real_line_cells() -> None:
    trip = check_line(GOOD)
    assert isinstance(trip, Trip)
    assert (trip.q1_pickup, trip.q2_pickup) == (161_170, 321_339)  # SPEC §2 example
    assert trip.profit_cents == 350


@pytest.mark.parametrize(("line", "reason"), [
    ("", "field_count"), (GOOD + ",", "field_count"), (_with(0, "  "), "bad_medallion"),
    (_with(0, "") .replace("2013-01-01 00:02:00", "x"), "bad_medallion"),  # table order: medallion first
    (_with(3, "2013-01-01 00:02"), "bad_timestamp"),
    (_with(2, "2013-01-01 00:03:00"), "pickup_after_dropoff"),
    (_with(6, "1e3"), "bad_coordinate"), (_with(9, ""), "bad_coordinate"),
    (_with(2, "2013-01-01 00:03:00").replace("-73.956528", "nan"), "pickup_after_dropoff"),
])
def test_first_reason_in_table_order(line: str, reason: str) -> None:
    assert check_line(line) == reason


def test_outliers_and_profit_exclusions_are_not_rejects() -> None:
    outlier = check_line(_with(6, "0").replace(",40.716976,", ",0,"))
    assert isinstance(outlier, Trip) and outlier.q1_pickup is None and outlier.q2_pickup is None
    assert check_line(_with(11, "-1.00")).profit_cents is None
    assert check_line(_with(14, "abc")).profit_cents is None
    assert check_line(_with(11, "-0.004")).profit_cents == 0  # rounds to 0 cents: not negative
    assert check_line(_with(11, " 3.50 ")).profit_cents == 350  # fields are stripped


def test_decode_line_drops_only_a_crlf_cr_and_replaces_bad_bytes() -> None:
    assert decode_line(b"a,b\r") == "a,b"
    assert decode_line(b"a\rb") == "a\rb"
    assert decode_line(b"\xff1") == "\ufffd1"


def test_output_number_formats() -> None:
    assert money(1950) == "9.75" and money(2025) == "10.125" and money(0) == "0.00"
    assert profitability(Area(1, 3, 200)) == "0.3333"  # 1.00 / 3
    assert profitability(Area(1, 2, 1)) == "0.0025"  # 0.005 / 2 = 0.0025 exactly
    assert profitability(Area(1, 8, 1)) == "0.0006"  # 0.000625: below half
    assert profitability(Area(1, 8, 3)) == "0.0019"  # 0.001875: above half
    assert profitability(Area(1, 100, 1)) == "0.0000"  # 0.00005: half, to even 0
    assert profitability(Area(1, 100, 3)) == "0.0002"  # 0.00015: half, to even 2
