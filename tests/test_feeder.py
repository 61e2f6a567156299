"""The Feeder's contract: event shape, SPEC §1 / §1.1 validation, rejects file, counts.

Expected values are written by hand or computed by a small oracle in this file that
uses other means than the Feeder (``decimal.Decimal`` with an explicit rounding mode,
``datetime`` for calendars), so a shared mistake is unlikely.
"""

from __future__ import annotations

import csv
import io
import os
import threading
import time
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeder_loops import feeder_loop  # noqa: F401  (autouse: each test on both Feeder loops)

from taxi_lines import GOOD, line

from taxi_rsp.feeder import Feeder, FeedStats, TripStamps, codecs, trip_stamps
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.namespaces import RDF_TYPE, STREAMS, TAXI
from taxi_rsp.rdf.terms import IRI, DateTime
from taxi_rsp.spec import Q1_GRID, Q2_GRID, REJECT_REASONS

def feed(tmp_path: Path, data: bytes, **kwargs: object) -> tuple[list, list[list[str]], Feeder]:
    """Feed ``data`` from a real file; return events, reject rows (header checked), Feeder."""
    path = tmp_path / "trips.csv"
    path.write_bytes(data)
    rejects_path = tmp_path / "rejects.csv"
    with rejects_path.open("w", encoding="utf-8", newline="") as rejects:
        feeder = Feeder(path, Dictionary(), rejects, **kwargs)
        events = list(feeder)
    with rejects_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["line_no", "reason", "raw_line"]
    stats = feeder.stats
    assert stats.lines_read == stats.accepted + sum(stats.rejected.values())
    assert stats.accepted == len(events)
    assert list(stats.rejected) == list(REJECT_REASONS)
    return events, rows[1:], feeder


def by_predicate(feeder: Feeder, event) -> dict[str, object]:
    """``{predicate local name: Python value}`` of one event's triples."""
    d = feeder.dictionary
    values = {}
    for _, p, o in event.triples:
        name = d.decode(p).value.removeprefix(TAXI)
        assert name not in values, f"{name} twice"
        values[name] = d.value(o)
    return values


# -- the event ------------------------------------------------------------------------------

def test_event_shape_and_every_triple(tmp_path: Path) -> None:
    events, rejects, feeder = feed(tmp_path, (GOOD + "\n").encode(), stream_iri="http://example.org/s")
    assert rejects == []
    (event,) = events
    d = feeder.dictionary
    assert event.seq == 1
    assert event.time == DateTime.parse("2013-01-01 00:02:00") == 1_356_998_520_000
    assert event.stream == d.encode(IRI("http://example.org/s"))
    assert event.graph == d.encode(IRI("http://debs2015.org/graph/1"))
    assert {s for s, _, _ in event.triples} == {d.encode(IRI("http://debs2015.org/trip/1"))}
    assert isinstance(event.meta, TripStamps) and event.read_ns > 0
    assert (event.seq, *trip_stamps(event)) == (1, "2013-01-01 00:00:00", "2013-01-01 00:02:00")
    assert by_predicate(feeder, event) == {
        RDF_TYPE: IRI(TAXI + "Trip"),
        "medallion": "07290D3599E7A0D62097A346EFCC1FB5",
        "hackLicense": "E7750A37CAB07D0DFF0AF7E3573AC141",
        "paymentType": "CSH",
        "pickupDatetime": DateTime.parse("2013-01-01T00:00:00"),
        "dropoffDatetime": DateTime.parse("2013-01-01T00:02:00"),
        "pickupLongitude": Fraction("-73.956528"),
        "pickupLatitude": Fraction("40.716976"),
        "dropoffLongitude": Fraction("-73.962440"),
        "dropoffLatitude": Fraction("40.715008"),
        "fareAmount": Fraction("3.50"),
        "tipAmount": Fraction(0),
        "seq": 1,
        "tripTimeSecs": 120,
        "tripDistance": Fraction("0.44"),
    }


def test_default_stream_and_ids_agree_with_the_dictionary(tmp_path: Path) -> None:
    events, _, feeder = feed(tmp_path, ("\n".join([GOOD] * 3)).encode())
    d = feeder.dictionary
    assert [e.seq for e in events] == [1, 2, 3]
    for e in events:
        assert e.stream == d.encode(IRI(STREAMS + "trips"))
        assert d.decode(e.graph) == IRI(f"http://debs2015.org/graph/{e.seq}")
        assert d.decode(e.triples[0][0]) == IRI(f"http://debs2015.org/trip/{e.seq}")
        assert by_predicate(feeder, e)["seq"] == e.seq


def test_read_time_is_taken_when_the_line_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(GOOD + "\n" + GOOD + "\n")
    feeder = Feeder(path, Dictionary())
    stamps = []
    for event in feeder:
        stamps.append((event.read_ns, time.perf_counter_ns()))
        time.sleep(0.01)
    (first_read, first_seen), (second_read, _) = stamps
    assert first_read <= first_seen < second_read  # stamped per line, not up front
    assert second_read - first_read >= 10_000_000


@pytest.mark.timeout(60)
def test_a_pipe_is_streamed_not_loaded(tmp_path: Path) -> None:
    """The first event comes out while the writer still holds the rest of the input."""
    fifo = tmp_path / "trips.fifo"
    os.mkfifo(fifo)
    release = threading.Event()

    def writer() -> None:
        with fifo.open("w") as out:
            out.write(GOOD + "\n")
            out.flush()
            release.wait(10)
            out.write(GOOD + "\n")

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        feeder = Feeder(fifo, Dictionary())
        events = iter(feeder)
        first = next(events)
        assert first.seq == 1 and feeder.stats.lines_read == 1 and feeder.stats.accepted == 1
        release.set()
        assert [e.seq for e in events] == [2]
    finally:
        release.set()
        thread.join()


# -- lines and line ends ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "data, accepted, rejected",
    [
        (b"", [], []),
        (b"\n", [], [(1, "field_count", "")]),
        (b"\r\n", [], [(1, "field_count", "")]),
        (GOOD.encode(), [1], []),  # no final LF: still a line
        (GOOD.encode() + b"\n", [1], []),  # the LF ending the file starts no line
        (GOOD.encode() + b"\n\n", [1], [(2, "field_count", "")]),
        (GOOD.encode() + b"\r\n" + GOOD.encode() + b"\r\n", [1, 2], []),
        (b"x\r\n" + GOOD.encode(), [2], [(1, "field_count", "x")]),  # CR of CRLF not shown
        (b"x\r", [], [(1, "field_count", "x\r")]),  # a lone CR is no line end: kept
        (b"a\rb\r\n", [], [(1, "field_count", "a\rb")]),
    ],
)
def test_line_splitting(tmp_path: Path, data: bytes, accepted: list[int], rejected: list) -> None:
    events, rows, _ = feed(tmp_path, data)
    assert [e.seq for e in events] == accepted
    assert rows == [[str(n), reason, raw] for n, reason, raw in rejected]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_unicode_line_breaks_do_not_split_lines(tmp_path: Path, separator: str) -> None:
    text = line(payment_type=f"C{separator}SH") + "\n" + line(dropoff_datetime="2013-01-01 00:03:00")
    events, rows, feeder = feed(tmp_path, text.encode())
    assert rows == [] and [e.seq for e in events] == [1, 2]
    assert by_predicate(feeder, events[0])["paymentType"] == f"C{separator}SH"


def test_fields_are_stripped_the_python_way(tmp_path: Path) -> None:
    padded = line(medallion=" \tM1\x0b", pickup_datetime="\u20032013-01-01 00:00:00",
                  dropoff_datetime="2013-01-01 00:02:00\x85", pickup_longitude="  -73.956528\u2028",
                  fare_amount=" 3.5 ")
    events, rows, feeder = feed(tmp_path, padded.encode())
    assert rows == []
    values = by_predicate(feeder, events[0])
    assert values["medallion"] == "M1" and values["pickupLongitude"] == Fraction("-73.956528")
    assert values["fareAmount"] == Fraction(7, 2) and trip_stamps(events[0]).pickup == "2013-01-01 00:00:00"


@pytest.mark.parametrize("count", [1, 16, 18, 34])
def test_field_count(tmp_path: Path, count: int) -> None:
    fields = (GOOD.split(",") * 2)[:count]
    events, rows, _ = feed(tmp_path, ",".join(fields).encode())
    assert events == [] and rows == [["1", "field_count", ",".join(fields)]]


def test_a_trailing_comma_is_an_eighteenth_field(tmp_path: Path) -> None:
    events, rows, _ = feed(tmp_path, (GOOD + ",\n").encode())
    assert events == [] and rows[0][1] == "field_count"


def test_quotes_are_ordinary_characters(tmp_path: Path) -> None:
    quoted = line(medallion='"M,1"')  # the comma inside quotes still splits: 18 fields
    events, rows, _ = feed(tmp_path, (line(medallion='"M1"') + "\n" + quoted).encode())
    assert [e.seq for e in events] == [1] and rows == [["2", "field_count", quoted]]


# -- rejects file: exact raw text back ---------------------------------------------------------

def test_rejects_round_trip_nul_controls_quotes_and_bad_utf8(tmp_path: Path) -> None:
    nasty = [
        "\x00",
        "a\x00b,\x00,\"q\"\"\",\x1b[31m,\x7f,\t,\u2028,\ufeff",
        line(medallion="\x00"),  # NUL is not whitespace for str.strip(): a medallion, accepted
    ]
    data = b"\n".join(t.encode() for t in nasty) + b"\n" + b"\xff\xc3(\xe2\x82,\x80\n"
    events, rows, _ = feed(tmp_path, data)
    assert [e.seq for e in events] == [3]
    shown = {int(r[0]): r for r in rows}
    assert shown[1] == ["1", "field_count", "\x00"]
    assert shown[2] == ["2", "field_count", nasty[1]]
    assert shown[4] == ["4", "field_count", "\ufffd\ufffd(\ufffd,\ufffd"]


def test_nul_and_bad_bytes_inside_an_accepted_line(tmp_path: Path) -> None:
    raw = line(medallion="M\x00", payment_type="CSH").encode().replace(b"CSH", b"C\xffH")
    events, rows, feeder = feed(tmp_path, raw)
    assert rows == []
    values = by_predicate(feeder, events[0])
    assert values["medallion"] == "M\x00" and values["paymentType"] == "C\ufffdH"


def test_bad_utf8_in_a_number_is_not_a_number(tmp_path: Path) -> None:
    raw = GOOD.encode().replace(b"40.716976", b"40.71\xa06")  # a lone Latin-1 NBSP byte
    events, rows, _ = feed(tmp_path, raw)
    assert events == [] and rows == [["1", "bad_coordinate", GOOD.replace("40.716976", "40.71\ufffd6")]]


def test_without_a_rejects_file_rejects_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("\n".join(["", GOOD, line(medallion=""), line(pickup_longitude="nan")]))
    feeder = Feeder(path, Dictionary())
    assert [e.seq for e in feeder] == [2]
    assert feeder.stats == FeedStats(
        lines_read=4, accepted=1,
        rejected={**dict.fromkeys(REJECT_REASONS, 0), "field_count": 1, "bad_medallion": 1, "bad_coordinate": 1},
        outliers={"q1": 0, "q2": 0}, profit_excluded=0,
    )


def test_missing_input_is_a_user_error(tmp_path: Path) -> None:
    feeder = Feeder(tmp_path / "nope.csv", Dictionary())
    with pytest.raises(UserError, match="nope.csv"):
        list(feeder)


# -- validation, reason by reason -------------------------------------------------------------

@pytest.mark.parametrize(
    "stamp",
    ["2013-02-30 00:00:00", "2013-02-29 12:00:00", "2013-01-01 25:00:00", "2013-01-01 24:00:00",
     "2013-01-01 23:60:00", "2013-01-01 23:59:60", "2013-13-01 00:00:00", "2013-00-10 00:00:00",
     "2013-01-00 00:00:00", "0000-01-01 00:00:00", "2013-1-01 00:00:00", "2013-01-01 0:00:00",
     "2013-01-01T00:00:00", "2013-01-01  00:00:0", "2013-01-01 00:00:00.0", "2013/01/01 00:00:00",
     "２013-01-01 00:00:00", "2013-01-01 ٠0:00:00", "NULL", ""],
)
def test_bad_timestamps(tmp_path: Path, stamp: str) -> None:
    for field in ("pickup_datetime", "dropoff_datetime"):
        bad = line(**{field: stamp})
        events, rows, _ = feed(tmp_path, bad.encode())
        assert events == [] and rows == [["1", "bad_timestamp", bad]], field


def test_real_calendar_leap_day_and_end_of_day(tmp_path: Path) -> None:
    ok = line(pickup_datetime="2012-02-29 23:59:59", dropoff_datetime="2012-03-01 00:00:00")
    events, rows, _ = feed(tmp_path, ok.encode())
    assert rows == [] and events[0].time == DateTime.parse("2012-03-01T00:00:00")


def test_pickup_after_dropoff_and_equal_times(tmp_path: Path) -> None:
    after = line(pickup_datetime="2013-01-01 00:02:01")
    same = line(pickup_datetime="2013-01-01 00:02:00")
    events, rows, _ = feed(tmp_path, (after + "\n" + same).encode())
    assert rows == [["1", "pickup_after_dropoff", after]] and [e.seq for e in events] == [2]


@pytest.mark.parametrize(
    "text",
    ["1e3", "-7.3956528e1", "1E3", "nan", "NaN", "inf", "-inf", "Infinity", "٤٠.٧١", "４０.７", "4０.7",
     "1_000", "0x10", "+", "-", ".", "-.", "", "40.71.6", "- 73.95", "++1", "40,7", "1.O0", "NULL", "\x00"],
)
def test_bad_coordinates(tmp_path: Path, text: str) -> None:
    for field in ("pickup_longitude", "pickup_latitude", "dropoff_longitude", "dropoff_latitude"):
        bad = line(**{field: text})
        events, rows, _ = feed(tmp_path, bad.encode())
        reason = "field_count" if "," in text else "bad_coordinate"
        assert events == [] and rows == [["1", reason, bad]], field


@pytest.mark.parametrize(
    "text, nano",
    [
        ("+40.75", 40_750_000_000), ("-74", -74_000_000_000), (".5", 500_000_000), ("1.", 1_000_000_000),
        ("-0", 0), ("-0.0000000004", 0), ("0.0000000005", 0), ("0.0000000015", 2),
        ("-73.9565280005", -73_956_528_000), ("-73.9565280015", -73_956_528_002),
        ("-73.95652800050000000000000000000001", -73_956_528_001),
        ("40.12345678949999999999999", 40_123_456_789), ("40.1234567895", 40_123_456_790),
        ("0040.000000000000000000000000000000000000000000000000000000000000000001", 40_000_000_000),
    ],
)
def test_coordinates_are_rounded_once_half_to_even(tmp_path: Path, text: str, nano: int) -> None:
    events, rows, feeder = feed(tmp_path, line(pickup_latitude=text).encode())
    assert rows == []
    assert by_predicate(feeder, events[0])["pickupLatitude"] == Fraction(nano, 10**9)


def test_out_of_order_compares_with_the_latest_accepted_dropoff(tmp_path: Path) -> None:
    rows_in = [
        line(dropoff_datetime="2013-01-01 00:05:00"),  # 1 accepted, latest 00:05
        line(dropoff_datetime="2013-01-01 00:09:00", pickup_longitude="x"),  # 2 rejected: latest stays 00:05
        line(dropoff_datetime="2013-01-01 00:05:00"),  # 3 equal to latest: accepted
        line(dropoff_datetime="2013-01-01 00:04:59"),  # 4 earlier: out_of_order
        line(dropoff_datetime="2013-01-01 00:06:00"),  # 5 accepted
        line(dropoff_datetime="2013-01-01 00:05:30", medallion=""),  # 6 first reason wins
        line(dropoff_datetime="2012-12-31 23:59:59", pickup_datetime="2013-01-01 00:00:00"),  # 7
    ]
    events, rows, _ = feed(tmp_path, "\n".join(rows_in).encode())
    assert [e.seq for e in events] == [1, 3, 5]
    assert [(r[0], r[1]) for r in rows] == [
        ("2", "bad_coordinate"), ("4", "out_of_order"), ("6", "bad_medallion"), ("7", "pickup_after_dropoff")]


def test_empty_medallion(tmp_path: Path) -> None:
    events, rows, _ = feed(tmp_path, "\n".join([line(medallion=""), line(medallion=" \t ")]).encode())
    assert events == [] and [r[1] for r in rows] == ["bad_medallion"] * 2


# -- money and profit exclusion ------------------------------------------------------------------

@pytest.mark.parametrize(
    "fare, tip, fare_value, tip_value, excluded",
    [
        ("3.50", "0.00", Fraction(7, 2), Fraction(0), False),
        ("-0.004", "0", Fraction(0), Fraction(0), False),  # 0 cents after rounding: counts
        ("-0.005", "0", Fraction(0), Fraction(0), False),  # half to even: 0 cents
        ("-0.015", "0", Fraction(-2, 100), Fraction(0), True),
        ("-0.006", "0", Fraction(-1, 100), Fraction(0), True),
        ("2.345", "1.355", Fraction(234, 100), Fraction(136, 100), False),
        ("-1", "0", Fraction(-1), Fraction(0), True),  # negative: kept in the event, excluded from profit
        ("", "1", None, Fraction(1), True),  # missing: no triple
        ("abc", "1", None, Fraction(1), True),
        ("1e1", "1", None, Fraction(1), True),
        ("NaN", "1", None, Fraction(1), True),
        ("5", "N/A", Fraction(5), None, True),
        ("5", "-0.01", Fraction(5), Fraction(-1, 100), True),
        ("5", " +.5 ", Fraction(5), Fraction(1, 2), False),
    ],
)
def test_fare_and_tip(tmp_path: Path, fare: str, tip: str, fare_value, tip_value, excluded: bool) -> None:
    events, rows, feeder = feed(tmp_path, line(fare_amount=fare, tip_amount=tip).encode())
    assert rows == []
    values = by_predicate(feeder, events[0])
    assert values.get("fareAmount") == fare_value and values.get("tipAmount") == tip_value
    assert ("fareAmount" in values) == (fare_value is not None)
    assert feeder.stats.profit_excluded == int(excluded)


def test_trip_time_and_distance_only_when_they_parse(tmp_path: Path) -> None:
    rows_in = [line(trip_time_in_secs="abc", trip_distance="1e2"),
               line(trip_time_in_secs="-5", trip_distance="0.12345678901234567890")]
    events, _, feeder = feed(tmp_path, "\n".join(rows_in).encode())
    first, second = (by_predicate(feeder, e) for e in events)
    assert "tripTimeSecs" not in first and "tripDistance" not in first
    assert second["tripTimeSecs"] == -5
    assert second["tripDistance"] == Fraction("0.12345678901234567890")  # exact, not rounded


def test_outliers_per_grid(tmp_path: Path) -> None:
    # Q1 west edge is -74.916578; the Q2 grid's west edge lies 0.0014965 further east.
    q1_only = line(pickup_longitude="-74.916")  # inside Q1, outside Q2
    rows_in = [GOOD, line(pickup_longitude="0", pickup_latitude="0"), q1_only,
               line(dropoff_latitude="41.477182778"), line(dropoff_latitude="41.477182779")]
    assert Q1_GRID.cell(-74_916_000_000, 40_716_976_000) and not Q2_GRID.cell(-74_916_000_000, 40_716_976_000)
    events, _, feeder = feed(tmp_path, "\n".join(rows_in).encode())
    assert len(events) == 5
    assert feeder.stats.outliers == {"q1": 2, "q2": 4}  # 41.477182778 is Q1's north edge: inside Q1 only


# -- a differential test against an independent oracle ----------------------------------------

def _oracle_number(text: str, places: int) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    whole, _, frac = body.partition(".")
    ascii_digits = set("0123456789")
    if not body or body == "." or not set(whole + frac) <= ascii_digits or body.count(".") > 1:
        return None
    value = Decimal(text).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN, context=Context(prec=500))
    return int(value.scaleb(places))


def _oracle_time(text: str) -> datetime | None:
    shape = "dddd-dd-dd dd:dd:dd"
    if len(text) != len(shape) or any((c in "0123456789") != (s == "d") or (s != "d" and c != s)
                                       for c, s in zip(text, shape)):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def oracle(lines: list[str]) -> list[tuple[int, str | None, tuple | None]]:
    """(line_no, reject reason or None, (coordinates in nano-degrees, fare cents, tip cents))."""
    out, latest = [], None
    for no, text in enumerate(lines, 1):
        fields = [f.strip() for f in text.split(",")]
        if len(fields) != 17:
            out.append((no, "field_count", None))
            continue
        if fields[0] == "":
            out.append((no, "bad_medallion", None))
            continue
        pickup, dropoff = _oracle_time(fields[2]), _oracle_time(fields[3])
        if pickup is None or dropoff is None:
            out.append((no, "bad_timestamp", None))
        elif pickup > dropoff:
            out.append((no, "pickup_after_dropoff", None))
        elif any(_oracle_number(fields[i], 9) is None for i in (6, 7, 8, 9)):
            out.append((no, "bad_coordinate", None))
        elif latest is not None and dropoff < latest:
            out.append((no, "out_of_order", None))
        else:
            latest = dropoff
            coords = tuple(_oracle_number(fields[i], 9) for i in (6, 7, 8, 9))
            out.append((no, None, (coords, _oracle_number(fields[11], 2), _oracle_number(fields[14], 2))))
    return out


_STAMPS = ["2013-01-01 00:00:00", "2013-01-01 00:02:00", "2013-01-01 00:05:00", "2013-02-29 00:00:00",
           "2013-01-01 00:02:00 ", "2013-1-01 00:02:00", "2013-01-01T00:02:00", ""]
_NUMBERS = ["-73.956528", "40.716976", "0", "-0.004", ".5", "1.", "+3", "1e3", "nan", "", " 2.5",
            "1.0000000005", "1.0000000015", "٤", "-", "3.505", "-0.005"]
_field_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=6)


@st.composite
def trip_lines(draw: st.DrawFn) -> str:
    fields = GOOD.split(",")
    for index in draw(st.sets(st.integers(0, 16), max_size=4)):
        if index in (2, 3):
            fields[index] = draw(st.sampled_from(_STAMPS) | _field_text)
        elif index in (6, 7, 8, 9, 11, 14):
            fields[index] = draw(st.sampled_from(_NUMBERS) | _field_text)
        else:
            fields[index] = draw(st.sampled_from(["", " ", "x", "a,b", "\x00", "\r"]) | _field_text)
    return ",".join(fields)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(trip_lines(), max_size=12), st.booleans())
def test_feeder_agrees_with_the_oracle(tmp_path: Path, lines: list[str], crlf: bool) -> None:
    data = ("\r\n" if crlf else "\n").join(lines).encode()
    events, rows, feeder = feed(tmp_path, data)
    expected = oracle([text + "\r" if crlf and i < len(lines) - 1 else text for i, text in enumerate(lines)])
    if not lines:
        expected = []
    assert [(int(r[0]), r[1]) for r in rows] == [(n, reason) for n, reason, _ in expected if reason]
    accepted = [(n, values) for n, reason, values in expected if reason is None]
    assert [e.seq for e in events] == [n for n, _ in accepted]
    excluded = 0
    for event, (_, (coords, fare, tip)) in zip(events, accepted):
        values = by_predicate(feeder, event)
        got = tuple(values[k] * 10**9 for k in ("pickupLongitude", "pickupLatitude", "dropoffLongitude", "dropoffLatitude"))
        assert got == coords
        assert values.get("fareAmount") == (None if fare is None else Fraction(fare, 100))
        assert values.get("tipAmount") == (None if tip is None else Fraction(tip, 100))
        excluded += fare is None or tip is None or fare < 0 or tip < 0
    assert feeder.stats.profit_excluded == excluded


# -- the real samples ----------------------------------------------------------------------------

def test_real_20_day_sample(sample_20d: Path) -> None:
    feeder = Feeder(sample_20d, Dictionary(), io.StringIO())
    events = iter(feeder)
    first = next(events)
    values = by_predicate(feeder, first)
    lon, lat = (int(values[k] * 10**9) for k in ("pickupLongitude", "pickupLatitude"))
    x, y = Q1_GRID.cell(lon, lat)
    assert f"{x}.{y}" == "161.170"
    x, y = Q2_GRID.cell(lon, lat)
    assert f"{x}.{y}" == "321.339"
    rest = list(events)
    stats = feeder.stats
    assert stats.lines_read == 10_004 == stats.accepted + sum(stats.rejected.values())
    assert len(rest) + 1 == stats.accepted
    # Outliers recounted from the file with Decimal arithmetic, not with the Feeder's codecs.
    expected = {"q1": 0, "q2": 0}
    for text in sample_20d.read_text().splitlines():
        fields = text.split(",")
        points = [(_oracle_number(fields[i], 9), _oracle_number(fields[i + 1], 9)) for i in (6, 8)]
        for name, grid in (("q1", Q1_GRID), ("q2", Q2_GRID)):
            expected[name] += any(grid.cell(*point) is None for point in points)
    assert stats.outliers == expected and expected["q1"] > 0


def test_real_full_year_sample(sample_full: Path) -> None:
    feeder = Feeder(sample_full, Dictionary())
    events = list(feeder)
    stats = feeder.stats
    assert stats.lines_read == 100 == stats.accepted + sum(stats.rejected.values())
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert all(a.time <= b.time for a, b in zip(events, events[1:]))


def test_tiny_memo_caches_give_the_same_events(sample_20d: Path, tmp_path: Path, monkeypatch) -> None:
    """Caches that are emptied every few lines must not change a single id or count."""
    source = tmp_path / "head.csv"
    source.write_bytes(b"".join(sample_20d.read_bytes().splitlines(keepends=True)[:1500]))

    def run() -> tuple[list, FeedStats]:
        feeder = Feeder(source, Dictionary())
        events = [(e.seq, e.time, e.triples, e.graph, e.stream, *trip_stamps(e))
                  for e in feeder]
        return events, feeder.stats

    expected = run()
    monkeypatch.setattr(codecs, "CACHE_LIMIT", 3)
    assert run() == expected


def test_a_feeder_reads_its_input_once(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(GOOD)
    feeder = Feeder(path, Dictionary())
    assert len(list(feeder)) == 1
    with pytest.raises(RuntimeError, match="once"):
        iter(feeder)
    assert feeder.stats.lines_read == 1
