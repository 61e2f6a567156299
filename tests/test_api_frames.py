"""Results as DataFrames and plain values (issue 52): ``Result.to_polars()``,
``QueryHandle.to_polars()``, ``Result.dicts(plain=True)``; the one-line hint when
polars is not installed; and ``run_debs`` never replacing a complete run unless asked."""

from __future__ import annotations

import datetime as dt
import doctest
import json
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

import taxi_rsp
from taxi_rsp import UserError
from taxi_rsp.session import frames

EX = "http://example.org/"
TRIPS = f"""PREFIX ex: <{EX}>
SELECT ?taxi ?fare ?tip ?at ?paid WHERE {{
  STREAM ex:trips [RANGE 1m] {{ ?taxi ex:fare ?fare ; ex:tip ?tip ; ex:at ?at ; ex:paid ?paid }}
}}"""
TOTALS = f"""PREFIX ex: <{EX}>
SELECT ?taxi (SUM(?fare) AS ?fares) (COUNT(*) AS ?trips) WHERE {{
  STREAM ex:trips [RANGE 1m] {{ ?taxi ex:fare ?fare }}
}} GROUP BY ?taxi ORDER BY DESC(?fares) ?taxi"""


def _trip(taxi: str, fare: str, tip: str, paid: str) -> str:
    return (f'<{EX}{taxi}> <{EX}fare> {fare} ; <{EX}tip> {tip} ; <{EX}paid> {paid} ; '
            f'<{EX}at> "2013-01-01T00:02:00"^^<http://www.w3.org/2001/XMLSchema#dateTime> .')


@pytest.fixture
def session() -> taxi_rsp.Session:
    return taxi_rsp.Session()


def test_a_result_is_a_frame_of_plain_typed_columns(session) -> None:
    trips = session.register(TRIPS, "trips")
    session.push(_trip("a", "12.50", "2", "true"), "2013-01-01T00:02:00")
    (result,) = trips.results()
    table = result.to_polars()
    assert table.columns == ["taxi", "fare", "tip", "at", "paid"]
    assert [str(t) for t in table.dtypes] == ["String", "Decimal(precision=38, scale=1)", "Int64",
                                              "Datetime(time_unit='ms', time_zone=None)", "Boolean"]
    assert table.rows() == [(f"{EX}a", Decimal("12.5"), 2, dt.datetime(2013, 1, 1, 0, 2), True)]
    assert result.dicts(plain=True) == [{"taxi": f"{EX}a", "fare": Decimal("12.5"), "tip": 2,
                                         "at": dt.datetime(2013, 1, 1, 0, 2), "paid": True}]
    assert result.dicts()[0]["taxi"] == taxi_rsp.IRI(f"{EX}a")  # the default is unchanged: terms stay terms


def test_a_handle_gathers_its_unread_reports_with_instant_trigger_and_deletions(session) -> None:
    trips = session.register(TRIPS, "trips")
    session.push(_trip("a", "12.50", "2", "true"), "2013-01-01T00:02:00")
    session.push(_trip("b", "7", "0.5", "false"), "2013-01-01T00:02:30")
    session.push(_trip("c", "3", "0", "true"), "2013-01-01T00:05:00")
    table = trips.to_polars()
    # The query's own ?at keeps its name; the instant's column becomes _at.
    assert table.columns == ["_at", "trigger", "seq", "deleted", "taxi", "fare", "tip", "at", "paid"]
    assert table.select("trigger", "seq", "deleted", "taxi").rows() == [
        ("event", 1, False, f"{EX}a"), ("event", 2, False, f"{EX}b"),
        ("expiry", None, True, f"{EX}a"), ("expiry", None, True, f"{EX}b"), ("event", 3, False, f"{EX}c")]
    assert table["_at"].to_list()[2:4] == [dt.datetime(2013, 1, 1, 0, 3), dt.datetime(2013, 1, 1, 0, 3, 30)]
    # Integers and decimals in one column are decimals; a tip of 0.5 next to 2 and 0 too.
    assert table["tip"].to_list() == [Decimal("2.0"), Decimal("0.5"), Decimal("2.0"), Decimal("0.5"), Decimal("0.0")]
    assert trips.to_polars().height == 0  # each report is read once, as with results()


def test_an_ordered_query_gives_its_whole_ranking_per_report_in_order(session) -> None:
    totals = session.register(TOTALS, "totals")
    for second, (taxi, fare) in enumerate([("a", "5"), ("b", "9"), ("a", "6")]):
        session.push(f"<{EX}{taxi}> <{EX}fare> {fare} .", 1_000 * second)
    table = totals.to_polars()
    assert table.select("seq", "taxi", "fares", "trips").rows() == [
        (1, f"{EX}a", 5, 1), (2, f"{EX}b", 9, 1), (2, f"{EX}a", 5, 1), (3, f"{EX}a", 11, 2), (3, f"{EX}b", 9, 1)]


def test_a_column_mixing_kinds_is_text_and_an_empty_handle_has_the_query_columns(session) -> None:
    mixed = session.register(f"PREFIX ex: <{EX}> SELECT ?s ?o WHERE {{ STREAM ex:s [RANGE 1m] {{ ?s ex:p ?o }} }}", "m")
    assert mixed.to_polars().columns == ["at", "trigger", "seq", "deleted", "s", "o"]
    session.push(f"<{EX}a> <{EX}p> 5 . <{EX}b> <{EX}p> <{EX}c> . <{EX}d> <{EX}p> \"x\"@en .", 0)
    table = mixed.to_polars()
    assert table.schema["o"] == pl.String
    assert sorted(table["o"].to_list()) == ["5", f"{EX}c", "x"]


def test_plain_values() -> None:
    from fractions import Fraction

    assert frames.plain(taxi_rsp.BNode("b1")) == "_:b1"
    assert frames.plain(Fraction(1, 3)) == Decimal("0.333333333333333333")  # as the CSV output prints it
    assert frames.plain(taxi_rsp.Literal("abc", "http://ex/custom")) == "abc"
    zoned = frames.plain(taxi_rsp.DateTime.parse("2013-01-01T00:02:00+02:00"))
    assert zoned == dt.datetime(2013, 1, 1, 0, 2, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert type(frames.plain(True)) is bool and frames.plain(None) is None


def test_the_module_examples_run() -> None:
    assert doctest.testmod(frames, optionflags=doctest.ELLIPSIS).failed == 0


def test_without_polars_the_error_names_the_extra(session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polars", None)  # import polars now fails as if not installed
    handle = session.register(TRIPS, "trips")
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'taxi-rsp\[polars\]'") as raised:
        handle.to_polars()
    assert raised.value.name == "polars"


def test_run_debs_does_not_replace_a_complete_run_unless_forced(tmp_path: Path) -> None:
    trips = tmp_path / "trips.csv"
    with taxi_rsp.SAMPLE_CSV.open("rb") as source:
        trips.write_bytes(b"".join(source.readline() for _ in range(300)))
    out = tmp_path / "out"
    first = taxi_rsp.run_debs(trips, out, queries=["q1"])
    before = (out / "q1.csv").read_bytes()
    with pytest.raises(UserError, match="holds a complete run; run_debs\\(..., force=True\\) replaces it"):
        taxi_rsp.run_debs(trips, out, queries=["q1", "q2"])
    assert (out / "q1.csv").read_bytes() == before and not (out / "q2.csv").exists()
    assert json.loads((out / "summary.json").read_text())["emitted"] == first["emitted"]
    second = taxi_rsp.run_debs(trips, out, queries=["q1", "q2"], force=True)
    assert set(second["emitted"]) == {"q1", "q2"} and (out / "q2.csv").exists()
    # A folder without a complete run (a failed or new one) needs no force.
    taxi_rsp.run_debs(trips, tmp_path / "fresh", queries=["q1"])
