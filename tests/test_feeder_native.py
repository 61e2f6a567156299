"""The Feeder's native loop (``taxi_rsp.feeder._native``) against its reference, the
pure-Python ``Feeder._events`` (issue 15 §4): the same events field by field, the same
counts, the same rejects file bytes and the same dictionary table (so the same ids),
on real and synthetic files, hypothesis-generated adversarial lines, and whole runs.

The native module must be built in a dev install (``pip install -e .`` compiles it):
a missing one fails here rather than being skipped, so CI notices a broken build.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_lines import GOOD, line

from taxi_rsp.feeder import Feeder, TripStamps, trip_stamps
from taxi_rsp.feeder import reader as feeder_reader
from taxi_rsp import native
from taxi_rsp.environment import PURE_PYTHON as PURE_PYTHON_ENV
from taxi_rsp.feeder import vocabulary as V
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent, StarGraph

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "taxi_rsp" / "samples" / "debs2015").glob("*.csv"))
def test_the_native_loop_is_built_and_chosen_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert feeder_reader.native_available(), (
        f"taxi_rsp.feeder._native did not import ({feeder_reader.NATIVE_ERROR}); "
        "the install builds it (pip install -e .) - is a C compiler missing?")
    monkeypatch.setattr(native, "_pure", False)
    assert Feeder(Path("x.csv"), Dictionary()).native
    assert not Feeder(Path("x.csv"), Dictionary(), native=False).native


@pytest.mark.parametrize("pure", [True, False])
def test_a_pure_python_process_runs_the_pure_loop(monkeypatch: pytest.MonkeyPatch, pure: bool) -> None:
    monkeypatch.setattr(native, "_pure", pure)
    assert Feeder(Path("x.csv"), Dictionary()).native is not pure
    assert Feeder(Path("x.csv"), Dictionary(), native=True).native  # an explicit choice wins


def test_asking_for_a_missing_native_loop_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feeder_reader, "NativeEvents", None)
    monkeypatch.setattr(feeder_reader, "NATIVE_ERROR", "No module named 'taxi_rsp.feeder._native'")
    with pytest.raises(RuntimeError, match="not available.*_native"):
        Feeder(Path("x.csv"), Dictionary(), native=True)
    assert not Feeder(Path("x.csv"), Dictionary()).native


# -- the comparison -----------------------------------------------------------------------------

def event_fields(event: GraphEvent) -> tuple:
    """Every field of an event, read_ns aside (a clock reading); the graph as its
    subject, layout predicates and objects, and as the triples it builds."""
    graph, meta = event.triples, event.meta
    assert type(graph) is StarGraph and type(meta) is TripStamps and type(event) is GraphEvent
    assert all(o is None or type(o) is int for o in graph.objects)
    return (event.seq, event.time, event.stream, event.graph, graph.subject, graph.layout.predicates,
            graph.objects, tuple(graph), trip_stamps(event))


def run_loop(native: bool, data: bytes | None = None, path: Path | None = None, **kwargs: object):
    """(events, stats, rejects bytes, dictionary table) of one pass with one loop."""
    dictionary = Dictionary()
    rejects = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    lines = None if data is None else io.BytesIO(data)
    feeder = Feeder(path or Path("lines.csv"), dictionary, rejects, lines=lines, native=native, **kwargs)
    assert feeder.native is native
    events, reads = [], []
    for event in feeder:
        stats = feeder.stats  # the counts hold at every event
        assert stats.lines_read == stats.accepted + sum(stats.rejected.values()) and stats.accepted == len(events) + 1
        events.append(event_fields(event))
        reads.append(event.read_ns)
    assert reads == sorted(reads) and all(type(r) is int for r in reads)
    rejects.flush()
    return events, feeder.stats, rejects.buffer.getvalue(), (dictionary._terms, dictionary._prefix_list)


def assert_same(data: bytes | None = None, path: Path | None = None, **kwargs: object) -> tuple:
    native = run_loop(True, data, path, **kwargs)
    pure = run_loop(False, data, path, **kwargs)
    assert native[0] == pure[0]  # events
    assert native[1] == pure[1]  # FeedStats, outliers and profit exclusions included
    assert native[2] == pure[2]  # rejects file bytes
    assert native[3] == pure[3]  # the dictionary's table: terms encoded in the same order
    return pure


# -- real and synthetic files -------------------------------------------------------------------

@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_real_samples(sample: Path) -> None:
    events, stats, _, _ = assert_same(path=sample)
    assert len(events) == stats.accepted > 0


@pytest.fixture(scope="module")
def synthetic_50k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 50 k lines of ``taxi-rsp synth`` with 2 % damaged lines (every reject reason)."""
    path = tmp_path_factory.mktemp("synth") / "s50k.csv"
    subprocess.run([sys.executable, "-m", "taxi_rsp", "synth", "--days", "1", "--trips", "50000",
                    "--dirty", "0.02", "--seed", "3", "--out", str(path)], check=True, capture_output=True)
    return path


def test_synthetic_50k_slice(synthetic_50k: Path) -> None:
    events, stats, rejects, _ = assert_same(path=synthetic_50k)
    assert stats.lines_read > 45_000 and all(stats.rejected.values()) and stats.profit_excluded > 0
    assert stats.outliers["q1"] > 0 and rejects.count(b"\n") == 1 + sum(stats.rejected.values())


def test_a_slice_fed_as_lines_with_its_global_position(synthetic_50k: Path) -> None:
    lines = synthetic_50k.read_bytes().splitlines(keepends=True)
    first, last = 20_000, 26_000
    before = Feeder(synthetic_50k, Dictionary(), native=False)
    latest = None
    for event in before:
        if event.seq >= first:
            break
        latest = event.time
    assert_same(b"".join(lines[first - 1:last]), path=synthetic_50k, first_line=first, latest_dropoff=latest)


def test_tiny_native_memos_change_nothing(synthetic_50k: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memos emptied every other entry give the same events and ids as the reference."""
    from taxi_rsp.feeder import _native

    head = b"".join(synthetic_50k.read_bytes().splitlines(keepends=True)[:3000])
    monkeypatch.setattr(_native, "STRING_MEMO_BITS", 2)
    monkeypatch.setattr(_native, "NUMBER_MEMO_BITS", 1)
    assert_same(head)


def test_line_number_ids_without_the_offset_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the dictionary's layout does not give ``id(n) = id(0) + n`` the Feeder keeps the
    dictionary's own calls; the native loop must then call them too."""
    monkeypatch.setattr(feeder_reader, "_offset_encoder", lambda encode: (lambda n: encode(n)))
    events, _, _, _ = assert_same("\n".join([GOOD, line(dropoff_datetime="2013-01-01 00:03:00")]).encode())
    assert [e[0] for e in events] == [1, 2]


# -- hand-picked edges --------------------------------------------------------------------------

_EDGE_NUMBERS = [
    "-73.956528", "+40.75", "-74", ".5", "1.", "-0", "0", "-.5", "+.5", "00000000000000000000000040.75",
    "-73.9565280005", "-73.9565280015", "-73.95652800050000000000000000000001", "40.12345678949999999999999",
    "1.0000000005", "1.0000000015", "999999999.999999999", "999999999.9999999995", "123456789012345678901234567890",
    "1234567890.1234567891", "12345678901234567.891", "-0000.00000000012345678901234567895", "99999999.9999999995",
    "144115188.075855871", "144115188.075855872", "-144115188.075855872", "-144115188.075855873",
    "14411518807.58", "14411518807.59", "-14411518807.58", "-14411518807.59", "0.005", "0.015", "-0.005",
    "1e3", "1E3", "nan", "inf", "٤", "٤٠.7", "４", "1_000", "0x10", "+", "-", ".", "-.", "", "1.2.3", "--1", "+-1",
    " 40.75 ", "\t-73.9\x0b", "\u200340.75", "40.75\u2028", "\x1c1.5\x1f", "4 0",
]


@pytest.mark.parametrize("text", _EDGE_NUMBERS)
def test_numbers_in_every_numeric_field(text: str) -> None:
    fields = ("pickup_longitude", "pickup_latitude", "dropoff_longitude", "dropoff_latitude", "fare_amount",
              "tip_amount", "trip_time_in_secs", "trip_distance")
    data = "\n".join(line(**{name: text}) for name in fields).encode()
    assert_same(data)


def test_out_of_range_values_go_into_the_table_in_the_same_order() -> None:
    lines = [line(pickup_longitude="-144115188.075855873", dropoff_latitude="1" * 30, fare_amount="99999999999"),
             line(pickup_latitude="x", pickup_longitude="200000000"),  # rejected, but its longitude was encoded
             line(pickup_longitude="x", pickup_latitude="300000000", dropoff_longitude="-400000000"),  # so were these
             line(tip_amount="14411518808", dropoff_datetime="2013-01-01 00:03:00")]
    _, _, _, (terms, _) = assert_same("\n".join(lines).encode())
    assert len(terms) > 5 + 14 + 2  # the huge values are table terms


@pytest.mark.parametrize("year", [1, 4, 100, 400, 1582, 1900, 1969, 1970, 2000, 2012, 2013, 2100, 9999])
def test_every_day_of_the_calendar_edges(year: int) -> None:
    stamps = [f"{year:04d}-{month:02d}-{day:02d} 12:34:56" for month in range(0, 14) for day in (0, 1, 28, 29, 30, 31, 32)]
    data = "\n".join(line(pickup_datetime=stamp, dropoff_datetime=stamp) for stamp in stamps).encode()
    assert_same(data)


def test_times_of_day() -> None:
    stamps = ["\x00" * 19]  # first: no text seen yet, and none matches (19 NULs are no timestamp)
    stamps += [f"2013-01-01 {h:02d}:{m:02d}:{s:02d}" for h, m, s in
              [(0, 0, 0), (23, 59, 59), (24, 0, 0), (23, 60, 0), (23, 59, 60), (9, 9, 9), (99, 99, 99)]]
    stamps += ["2013-01-01 1:00:00", "2013-01-01  00:00:0", "2013-01-01T00:00:00", "2013/01/01 00:00:00",
               "２013-01-01 00:00:00", "2013-01-01 ٠0:00:00", " 2013-01-01 00:00:00\t", "\u30002013-01-01 00:00:00",
               "2013-01-01 00:00:00.0", "0000-01-01 00:00:00", "-013-01-01 00:00:00", "NULL", ""]
    data = "\n".join(line(pickup_datetime="2013-01-01 00:00:00", dropoff_datetime=s) for s in stamps)
    assert_same(data.encode())


def test_line_ends_medallions_and_bad_bytes() -> None:
    data = b"".join([
        GOOD.encode() + b"\r\n", b"\n", b"\r\n", b"x\r", line(medallion="").encode() + b"\n",
        line(medallion=" \t").encode() + b"\n", line(medallion="\u3000").encode() + b"\n",
        line(medallion="\x00").encode() + b"\n", line(medallion="\xe9").encode() + b"\n",
        GOOD.encode().replace(b"CSH", b"C\xffH") + b"\n", GOOD.encode().replace(b"40.716976", b"40.71\xa06") + b"\n",
        GOOD.encode().replace(b"07290D", b"\xe2\x82") + b"\n", b"\xff\xc3(\xe2\x82,\x80\n",
        line(payment_type="C\rSH").encode() + b"\r\n", GOOD.encode() + b",\n", GOOD.encode(),
    ])
    assert_same(data)


# -- adversarial lines, generated ---------------------------------------------------------------

_SPACE = st.sampled_from(["", "", "", " ", "\t", "\x0b", "\x1f", "\u2028", "\x85", "\u3000"])
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n,"), max_size=5)


def rarely(draw: st.DrawFn, usual: st.SearchStrategy, odd: st.SearchStrategy) -> object:
    """``odd`` about one time in six, ``usual`` otherwise."""
    return draw(odd) if draw(st.integers(0, 5)) == 0 else draw(usual)


@st.composite
def numbers(draw: st.DrawFn) -> str:
    """Numbers in xsd:decimal syntax or close to it: signs, lone dots, many digits,
    exponents, non-ASCII digits, whitespace around."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(_EDGE_NUMBERS))
    sign = draw(st.sampled_from(["", "", "-", "+"]))
    digits = st.text("0123456789", max_size=draw(st.sampled_from([3, 3, 12, 40])))
    whole, frac = draw(digits), draw(digits)
    dot = draw(st.sampled_from([".", ".", "", ".", "..", "e", "٤"]))
    return draw(_SPACE) + sign + whole + dot + frac + draw(_SPACE)


def near(degrees: int) -> st.SearchStrategy[str]:
    """A coordinate with 6 decimals around ``degrees`` (inside and outside the grids)."""
    return st.integers(-2_000_000, 2_000_000).map(lambda micro: f"{(degrees * 1_000_000 + micro) / 1_000_000:.6f}")


def clock(seconds: int) -> str:
    return f"2013-01-01 {seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


_ODD_STAMPS = st.sampled_from([
    "2013-02-29 00:00:00", "2012-02-29 00:00:00", "2100-02-29 00:00:00", "2000-02-29 00:00:00",
    "2013-04-31 00:00:00", "2013-01-01 24:00:00", "２013-01-01 00:00:00", "2013-01-01 ٠0:00:00",
    "2013-01-01T00:00:00", ""]) | st.dates().map(lambda d: f"{d.isoformat()} 00:00:00") | st.text(max_size=20)


@st.composite
def adversarial_lines(draw: st.DrawFn) -> bytes:
    """One line, mostly plausible, with odd fields, field counts, bytes and line ends."""
    fields = GOOD.split(",")
    fields[0] = rarely(draw, st.sampled_from(["M1", "M2", "M3"]), st.sampled_from(["", " ", "\u3000", "\x00"]) | _TEXT)
    fields[1] = rarely(draw, st.sampled_from(["H1", "H2"]), _TEXT)
    dropoff = draw(st.integers(0, 900))  # drop-offs out of order now and then
    pickup = dropoff - draw(st.integers(-30, 600))  # and pickups after them
    fields[2] = rarely(draw, st.just(clock(max(pickup, 0))), _ODD_STAMPS)
    fields[3] = rarely(draw, st.just(clock(dropoff)), _ODD_STAMPS)
    fields[2], fields[3] = (draw(_SPACE) + f + draw(_SPACE) for f in fields[2:4])
    fields[4] = rarely(draw, st.integers(0, 3000).map(str), numbers())
    fields[5] = rarely(draw, st.integers(0, 3000).map(lambda d: f"{d / 100:.2f}"), numbers())
    for at, degrees in ((6, -74), (7, 41), (8, -74), (9, 41)):
        fields[at] = draw(numbers()) if draw(st.integers(0, 11)) == 0 else draw(near(degrees))
    for at in (11, 14):
        fields[at] = rarely(draw, st.integers(0, 9999).map(lambda c: f"{c / 100:.2f}"), numbers())
    fields[10] = rarely(draw, st.sampled_from(["CSH", "CRD"]), _TEXT)
    shape = draw(st.integers(0, 20))
    if shape == 0:
        del fields[draw(st.integers(0, 16))]
    elif shape == 1:
        fields.insert(draw(st.integers(0, 17)), draw(_TEXT))
    raw = ",".join(fields).encode()
    if draw(st.integers(0, 15)) == 0:  # bytes that are not UTF-8, somewhere
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xe2\x82", b"\xc3", b"\x80\x80", b"\xf0\x9f\x98"])) + raw[at:]
    return raw + rarely(draw, st.sampled_from([b"\n", b"\r\n"]), st.sampled_from([b"\r", b"", b"\r\r\n"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(adversarial_lines(), max_size=25))
def test_adversarial_lines(lines: list[bytes]) -> None:
    assert_same(b"".join(lines))


# -- whole runs ---------------------------------------------------------------------------------

def test_runs_give_the_same_outputs_with_either_loop(synthetic_50k: Path, tmp_path: Path) -> None:
    """`taxi-rsp run` (Q1 and Q2 together) with the native loop and with
    TAXI_RSP_PURE_PYTHON=1: the same q1.csv and q2.csv (delay column aside), rejects and
    counts (`taxi-rsp verify`), and the same rejects file bytes."""
    head = tmp_path / "head.csv"
    head.write_bytes(b"".join(synthetic_50k.read_bytes().splitlines(keepends=True)[:12_000]))
    outs = {}
    for name, env in (("native", {}), ("pure", {PURE_PYTHON_ENV: "1"})):
        outs[name] = tmp_path / name
        environ = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_ENV}
        subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(head), "--out", str(outs[name])],
                       check=True, capture_output=True, env={**environ, **env})
    verify = subprocess.run([sys.executable, "-m", "taxi_rsp", "verify", str(outs["native"]), str(outs["pure"])],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert (outs["native"] / "rejects.csv").read_bytes() == (outs["pure"] / "rejects.csv").read_bytes()
    summary = json.loads((outs["native"] / "summary.json").read_text())
    assert sum(1 for _ in (outs["native"] / "q1.csv").open()) > 10 and summary  # something to compare


def test_read_time_is_taken_per_line_on_the_native_loop(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(GOOD + "\n" + GOOD + "\n")
    stamps = []
    for event in Feeder(path, Dictionary(), native=True):
        stamps.append((event.read_ns, time.perf_counter_ns()))
        time.sleep(0.01)
    (first_read, first_seen), (second_read, _) = stamps
    assert first_read <= first_seen < second_read and second_read - first_read >= 10_000_000



def test_line_number_ids_are_added_in_c_and_equal_the_dictionary_s() -> None:
    """The ids of a line's trip IRI, sequence number and graph are one C addition per
    line for the dictionary's inline layout (its flag is bit 62, so every base is 2**62
    or more), and they are the ids the dictionary itself gives."""
    dictionary = Dictionary()
    feeder = Feeder(Path("x.csv"), dictionary, native=True)
    events = feeder._native_events([GOOD.encode()] * 3)
    assert events.line_ids_in_c() == (True, True, True)
    third = list(events)[2]
    assert third.triples.subject == dictionary.numbered_iri_id(V.TRIP_PREFIX, 3)
    assert third.graph == dictionary.numbered_iri_id(V.GRAPH_PREFIX, 3)
