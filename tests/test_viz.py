"""The maps' geometry against SPEC §2 and the engine's own cells, and the report's map
inputs (answers read back, instants, counts)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taxi_rsp.spec import Q1_GRID, Q2_GRID
from taxi_rsp.viz.answers import at, parse_q1, parse_q2
from taxi_rsp.viz.density import NEW_YORK, busy_extent, pickup_density
from taxi_rsp.viz.grid import NANO, Q1, Q2, parse_cell, parse_nano
from taxi_rsp.viz.instants import busiest_minute, route_counts, steps

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def test_cell_one_one_is_centred_where_spec_says() -> None:
    assert Q1.centre(1, 1) == Q2.centre(1, 1) == (-74.913585, 41.474937)
    assert Q1.cell_of(parse_nano("-73.956528"), parse_nano("40.716976")) == (161, 170)
    assert Q2.cell_of(parse_nano("-73.956528"), parse_nano("40.716976")) == (321, 339)
    assert Q1.bounds(1, 1) == (-74.916578, 41.472691222, -74.910592, 41.477182778)


@given(lon=st.integers(-75_100_000_000, -72_900_000_000), lat=st.integers(40_000_000_000, 41_600_000_000))
def test_cells_agree_with_the_engines_spec_module(lon: int, lat: int) -> None:
    for mine, theirs in ((Q1, Q1_GRID), (Q2, Q2_GRID)):
        assert mine.cell_of(lon, lat) == theirs.cell(lon, lat)


@given(x=st.integers(1, 600), y=st.integers(1, 600))
def test_a_cells_centre_lies_in_it_and_inside_its_bounds(x: int, y: int) -> None:
    for grid in (Q1, Q2):
        if x > grid.cells or y > grid.cells:
            continue
        lon, lat = grid.centre(x, y)
        assert grid.cell_of(round(lon * NANO), round(lat * NANO)) == (x, y)
        west, south, east, north = grid.bounds(x, y)
        assert west < lon < east and south < lat < north
        assert grid.cell_of(round(west * NANO), round(north * NANO)) == (x, y)  # west/north edge: this cell


@pytest.mark.parametrize("text, nano", [("-73.956528", -73_956_528_000), ("1.", 1_000_000_000), (".5", 500_000_000),
                                        ("0.0000000025", 2), ("0.0000000035", 4), ("-0.0000000015", -2)])
def test_decimals_convert_exactly(text: str, nano: int) -> None:
    assert parse_nano(text) == nano


@pytest.mark.parametrize("text", ["1e3", "nan", "", ".", "٤٠.7", "1_000", "--1"])
def test_non_decimals_are_not_numbers(text: str) -> None:
    assert parse_nano(text) is None


def test_answer_lines_read_back_with_nulls_dropped() -> None:
    q1 = parse_q1("2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,160.170" + ",NULL" * 18 + ",1.950\n", 1)
    assert [(r.rank, r.start, r.end) for r in q1.entries] == [(1, "161.170", "160.170")]
    assert not q1.expiry and q1.time == "2013-01-01 00:02:00"
    q2 = parse_q2("2013-01-01 00:30:00,2013-01-01 00:30:00,321.339,2,9.75,4.8750" + ",NULL" * 36 + ",NULL", 7)
    assert q2.expiry and [(a.cell, a.empty, a.profit) for a in q2.entries] == [("321.339", "2", "9.75")]
    assert parse_cell("NULL") is None and parse_cell("3.4") == (3, 4)
    assert at([q1], "2013-01-01 00:01:59") is None and at([q1], "2013-01-01 00:02:00") is q1


def test_density_draws_the_busy_city_and_skips_outliers() -> None:
    density = pickup_density(SAMPLE)
    assert density.lines == 10_004
    assert 9_000 < density.total < 10_004  # (0, 0) pickups and bad lines are outside the grid
    extent = busy_extent(density)
    # Midtown Manhattan is inside; the extent is city-sized, not the 150 km grid.
    assert extent.west < -73.985 < extent.east and extent.south < 40.75 < extent.north
    assert extent.east - extent.west < 0.5 and extent.north - extent.south < 0.5
    empty = pickup_density(SAMPLE, max_lines=0)
    assert empty.total == 0 and busy_extent(empty) == NEW_YORK


def test_instants_and_counts_of_the_sample() -> None:
    assert busiest_minute(SAMPLE) == "2013-01-01 00:44"
    strip = steps("2013-01-01 00:02:00", "2013-01-01 00:56:00")
    assert len(strip) == 6 and strip[-1] == "2013-01-01 00:56:00"
    counts = route_counts(SAMPLE, ["2013-01-01 00:56:00"], 30)["2013-01-01 00:56:00"]
    # Counted independently of the engine: trips per route, drop-off in (00:26, 00:56].
    assert counts.most_common(1) == [(("156.163", "156.163"), 11)]
    assert isinstance(counts, Counter) and sum(counts.values()) > 1000


@given(st.from_regex(r"[+-]?[0-9]{0,4}(\.[0-9]{0,12})?", fullmatch=True))
def test_decimals_convert_as_the_feeder_converts_them(text: str) -> None:
    from taxi_rsp.feeder.validate import to_scaled

    assert parse_nano(text) == to_scaled(text, 9)


def test_report_maps_of_a_run(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from taxi_rsp.cli import main as cli_main
    from taxi_rsp.verify.workloads import Workload
    from taxi_rsp.viz.answers import read_answers
    from taxi_rsp.viz.figures import map_figures

    assert cli_main(["run", str(SAMPLE), "--out", str(tmp_path), "--no-progress"]) == 0
    run = SimpleNamespace(folder=tmp_path)
    pair = SimpleNamespace(workload=Workload("mixed", ("q1", "q2")), engine=run, baseline=run)
    q1 = read_answers(tmp_path / "q1.csv", "q1")
    figures = {f.name: f for f in map_figures([pair], SAMPLE, "footer")}
    assert set(figures) == {"map_q1", "map_q2", "map_strip"}
    assert all(f.png.startswith(b"\x89PNG") and len(f.png) > 20_000 for f in figures.values())
    busiest = at(q1, "2013-01-01 00:44:59")
    assert f"line {busiest.line:,}" in figures["map_q1"].caption and "2013-01-01 00:44" in figures["map_q1"].caption
    chosen = {f.name: f for f in map_figures([pair], SAMPLE, "footer", "2013-01-01 00:20:00")}
    assert f"line {at(q1, '2013-01-01 00:20:00').line:,}," in chosen["map_q1"].caption
    assert "--map-at" in chosen["map_q1"].caption


def test_report_refuses_a_bad_map_instant(tmp_path: Path, capsys) -> None:
    from taxi_rsp.cli import main as cli_main

    assert cli_main(["report", str(SAMPLE), "--out", str(tmp_path), "--map-at", "00:44"]) == 2
    assert "--map-at '00:44': give an event time as YYYY-MM-DD HH:MM:SS" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # refused before anything ran
