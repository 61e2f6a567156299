"""Unit checks of the oracle's building blocks against the examples SPEC gives."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracle import grid
from oracle.clock import evaluation_instants
from oracle.numbers import parse_scaled
from oracle.output import format_money
from oracle.records import Trip, split_lines
from oracle.timestamps import format_timestamp, parse_timestamp


@pytest.mark.parametrize("text, nano", [
    ("-73.956528", -73_956_528_000), ("+40.75", 40_750_000_000), ("-74", -74_000_000_000),
    (".5", 500_000_000), ("1.", 1_000_000_000), ("0.0000000005", 0), ("0.0000000015", 2),
    ("0.00000000150001", 2), ("-0.0000000025", -2),
])
def test_numbers_convert_exactly_half_to_even(text: str, nano: int) -> None:
    assert parse_scaled(text, 9) == nano


def test_numbers_beyond_the_int_string_limit_still_convert() -> None:
    # more than Python's default 4300-digit int() limit, rounded half to even once
    assert parse_scaled("1" + "0" * 5000 + ".5", 9) == 10 ** 5009 + 5 * 10 ** 8
    assert parse_scaled("0." + "0" * 9 + "5" + "0" * 5000 + "1", 9) == 1


@pytest.mark.parametrize("text", ["1e3", "nan", "inf", "\u0664\u0660.7", "1_000", ".", "-", "",
                                  "+-1", "1.2.3", " 1"])
def test_not_numbers(text: str) -> None:
    assert parse_scaled(text, 9) is None


def test_money_rounds_to_cents() -> None:
    assert [parse_scaled(t, 2) for t in ("-0.004", "0.005", "0.015", "7.005")] == [0, 0, 2, 700]


@pytest.mark.parametrize("text", ["2013-01-01 24:00:00", "2013-02-29 00:00:00", "2013-1-01 00:00:00",
                                  "2013-01-01T00:00:00", "2013-01-01 00:00:60", "0000-01-01 00:00:00",
                                  "2013-01-01 00:00:00 ", "\u0662013-01-01 00:00:00"])
def test_invalid_timestamps(text: str) -> None:
    assert parse_timestamp(text) is None


def test_timestamps_round_trip_and_add_windows() -> None:
    start = parse_timestamp("2012-02-28 23:50:00")
    assert format_timestamp(start + 30 * 60) == "2012-02-29 00:20:00"
    assert parse_timestamp("2013-01-01 00:00:00") - parse_timestamp("2012-12-31 23:59:59") == 1


def test_spec_example_cells_and_constants_match_spec_module() -> None:
    from taxi_rsp import spec  # only to cross-check the restated constants

    lon, lat = parse_scaled("-73.956528", 9), parse_scaled("40.716976", 9)
    assert grid.cell_id(grid.Q1.cell(lon, lat)) == "161.170"
    assert grid.cell_id(grid.Q2.cell(lon, lat)) == "321.339"
    for mine, theirs in ((grid.Q1, spec.Q1_GRID), (grid.Q2, spec.Q2_GRID)):
        assert (mine.lon_step, mine.lat_step, mine.west, mine.north, mine.cells) == \
            (theirs.lon_step, theirs.lat_step, theirs.west, theirs.north, theirs.cells)


def test_cell_numbers_order_like_x_then_y() -> None:
    cells = [(2, 1), (1, 600), (1, 2), (600, 600), (10, 5)]
    assert sorted(cells) == sorted(cells, key=grid.cell_number)
    assert [grid.number_id(grid.cell_number(c)) for c in cells] == [grid.cell_id(c) for c in cells]


def test_split_lines() -> None:
    assert split_lines(b"") == []
    assert split_lines(b"\n") == [""]
    assert split_lines(b"a\r\nb") == ["a", "b"]
    assert split_lines(b"a\n\nb\n") == ["a", "", "b"]
    assert split_lines(b"a\rb\n\xff") == ["a\rb", "\ufffd"]
    assert split_lines(b"a\r\nb\r") == ["a", "b\r"]  # no LF: not a CRLF ending
    assert split_lines(b"\r\n\r\n") == ["", ""]


def test_money_format() -> None:
    assert [format_money(h) for h in (0, 1, 1950, 2025, 20001)] == \
        ["0.00", "0.005", "9.75", "10.125", "100.005"]
    assert Fraction("10.125") * 200 == 2025


def _trip(seq: int, minute: int, valid: bool = True) -> Trip:
    return Trip(seq, "M", "", "", minute * 60, "1.1,1.1" if valid else None, None, None, None)


def test_evaluation_instants() -> None:
    trips = [_trip(1, 0), _trip(2, 0), _trip(3, 5, valid=False), _trip(4, 40), _trip(5, 60)]
    instants = [(i.time // 60, i.trigger.seq if i.trigger else None, i.processed)
                for i in evaluation_instants(trips, lambda t: t.q1_route is not None, [30 * 60])]
    # 30 (twice, from trips 1 and 2) is evaluated once; 70 (trip 4) is after the last
    # event; the outlier (trip 3) is an arrival instant but creates no expiry.
    assert instants == [(0, 1, 1), (0, 2, 2), (5, 3, 3), (30, None, 3), (40, 4, 4), (60, 5, 5)]
