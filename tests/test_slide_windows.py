"""RANGE d SLIDE s (hopping windows, docs/semantics.md): hand-derived runs for each
report policy, and a property test against a from-scratch evaluation at every slide
boundary and every arrival; the same for the open window of ``slide_report="content
change"``."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.errors import UserError
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI, DateTime, Literal
from taxi_rsp.scaleout.job import longest_window_ms
from taxi_rsp.session import QuerySource, Session, SessionConfig
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream

PREFIX = "PREFIX ex: <http://example.org/>\n"
BASE = DateTime.parse("2013-01-01T00:00:00")  # a multiple of every slide used here


def _run(query: str, events: list[tuple[float, int]]) -> Stream:
    engine = Engine()
    register(engine, PREFIX + query, "q")
    stream = Stream(engine)
    for minute, value in events:
        stream.send(minute, (f"ex:e{value}", "ex:v", value))
    return stream


# Events at minutes 1, 5, 7, 16; RANGE 10m SLIDE 5m: boundaries 0, 5, 10, 15, 20 ...
# W(b) = (b - 10, b]. Minute 1 waits for boundary 5; minute 5 is a boundary itself;
# minute 7 waits for 10; at 15 the events of 1 and 5 leave (15 - 10 >= 5); minute 16
# would enter at 20, which the stream never reaches.
EVENTS = [(1, 1), (5, 2), (7, 3), (16, 4)]


def test_istream_dstream_policy_reports_only_at_boundaries() -> None:
    stream = _run("SELECT ?o WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } }", EVENTS)
    reports = [(minute, expiry, sorted(o.values()), sorted(o.values(o.deleted)))
               for (minute, expiry, _), o in zip(stream.values(), stream.outputs)]
    assert reports == [
        (5, False, [(1,), (2,)], []),   # the arrival at the boundary 5: e1 (waiting) and e2 enter
        (10, True, [(3,)], []),          # boundary 10, no arrival: e3 enters
        (15, True, [], [(1,), (2,)]),    # boundary 15: e1 and e2 leave
    ]


def test_ordered_snapshot_policy() -> None:
    stream = _run("SELECT ?o WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } } "
                  "ORDER BY DESC(?o) LIMIT 2", EVENTS)
    assert [(minute, rows) for minute, _, rows in stream.values()] == [(5, [(2,), (1,)]), (10, [(3,), (2,)]),
                                                                        (15, [(3,)])]


def test_construct_policy() -> None:
    stream = _run("CONSTRUCT { ?e ex:seen ex:window } WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } }",
                  EVENTS)
    seen, window = IRI(EX + "seen"), IRI(EX + "window")
    assert [sorted(t[0].value for t in o.triples) for o in stream.outputs] == [[EX + "e1", EX + "e2"], [EX + "e3"]]
    assert all(t[1:] == (seen, window) for o in stream.outputs for t in o.triples)


def test_slide_longer_than_range_samples_the_stream() -> None:
    # RANGE 2m SLIDE 5m: W(5) = (3, 5], W(10) = (8, 10]. Minute 1 is in no window.
    stream = _run("SELECT (COUNT(*) AS ?n) WHERE { STREAM ex:stream [RANGE 2m SLIDE 5m] { ?e ex:v ?o } }",
                  [(1, 1), (4, 2), (5, 3), (9, 4), (11, 5)])
    assert [(minute, rows) for minute, _, rows in stream.values()] == [
        (1, [(0,)]),    # the registration state (COUNT of an empty window) with the first instant
        (5, [(2,)]), (10, [(1,)]),
    ]


def test_explain_and_aggregate_with_slide() -> None:
    engine = Engine()
    query = register(engine, PREFIX + "SELECT (SUM(?o) AS ?s) WHERE { STREAM ex:stream [RANGE 1h SLIDE 15m] "
                                     "{ ?e ex:v ?o } }", "q")
    assert "RANGE 3600000ms SLIDE 900000ms" in query.explain() and "WindowScan[RANGE SLIDE]" in query.explain()


# -- property: the engine's state equals a from-scratch window at every instant ----------------
# (gap to the previous event in ms, value) per event, the range and the slide in seconds
RUNS = (st.lists(st.tuples(st.integers(0, 9_000), st.integers(0, 3)), min_size=1, max_size=25),
        st.integers(1, 12), st.integers(1, 12))

def _brute(events: list[tuple[int, int]], tau: int, range_ms: int, slide_ms: int) -> Counter:
    """The window at instant tau (times in ms since the epoch: boundaries are k * slide)."""
    boundary = tau // slide_ms * slide_ms
    return Counter(v for t, v in events if boundary - range_ms < t <= boundary and t <= tau)


@settings(max_examples=80, deadline=None)
@given(*RUNS)
def test_slide_window_equals_brute_force_at_every_boundary(gaps, range_units, slide_units) -> None:
    range_ms, slide_ms = range_units * 1000, slide_units * 1000
    engine = Engine()
    query = register(engine, PREFIX + f"SELECT ?o WHERE {{ STREAM ex:stream [RANGE {range_ms}ms SLIDE {slide_ms}ms] "
                                     "{ ?e ex:v ?o } }", "q")
    outputs = []
    query.listeners.append(outputs.append)
    encode = engine.dictionary.encode
    stream = encode(IRI(EX + "stream"))
    events, time = [], int(BASE)
    for seq, (gap, value) in enumerate(gaps, 1):
        time += gap
        events.append((time, value))
        triple = ((encode(IRI(f"{EX}e{seq}")), encode(IRI(EX + "v")),
                   encode(Literal(str(value), "http://www.w3.org/2001/XMLSchema#integer"))),)
        engine.process(GraphEvent(seq, time, triple, stream))
    first, last = events[0][0], events[-1][0]
    boundaries = set(range(-(-first // slide_ms) * slide_ms, last + 1, slide_ms))
    instants = sorted({t for t, _ in events} | boundaries)
    reported = {o.trigger.time for o in outputs}
    previous = Counter()
    for tau in instants:
        state = Counter()
        for output in outputs:
            if output.trigger.time <= tau:
                state.update(v for (v,) in output.values())
                state.subtract(v for (v,) in output.values(output.deleted))
        expected = _brute(events, tau, range_ms, slide_ms)
        assert +state == expected, tau
        if expected != previous:  # a change is reported at the instant it happens, and only then
            assert tau in reported, tau
        previous = expected
    assert reported <= set(instants)
    assert all(t % slide_ms == 0 for t in reported if t not in {e for e, _ in events}), "reports off the boundaries"


# -- reported on content change (EngineConfig.slide_report, CQELS's open window) ---------------
def _open_window(events: list[tuple[int, int]], tau: int, range_ms: int, slide_ms: int) -> Counter:
    """The open window at instant tau: the events so far of the oldest window (b - d, b]
    still open, b the first boundary >= tau."""
    boundary = -(-tau // slide_ms) * slide_ms
    return Counter(v for t, v in events if boundary - range_ms < t <= tau)


def _run_open(query: str, events: list[tuple[int, int]]) -> tuple[list, Engine]:
    engine = Engine(config=EngineConfig(slide_report="content change"))
    registered = register(engine, PREFIX + query, "q")
    outputs: list = []
    registered.listeners.append(outputs.append)
    encode = engine.dictionary.encode
    stream = encode(IRI(EX + "stream"))
    for seq, (time, value) in enumerate(events, 1):
        triple = ((encode(IRI(f"{EX}e{seq}")), encode(IRI(EX + "v")),
                   encode(Literal(str(value), "http://www.w3.org/2001/XMLSchema#integer"))),)
        engine.process(GraphEvent(seq, time, triple, stream))
    return outputs, engine


def test_on_content_change_every_arrival_reports_the_open_windows_content() -> None:
    # RANGE 10m SLIDE 5m, minutes 1, 5, 7, 16 (as EVENTS): at 1 the oldest open window is
    # (-5, 5]: {1}; at 5 still (-5, 5]: {1, 5}; at 7 it is (0, 10]: {1, 5, 7}; at 16 it is
    # (10, 20]: 1, 5 and 7 leave, 16 enters, in one report.
    minute = 60_000
    events = [(int(BASE) + m * minute, v) for m, v in EVENTS]
    outputs, _ = _run_open("SELECT ?o WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } }", events)
    reports = [((o.trigger.time - int(BASE)) // minute, sorted(v for (v,) in o.values()),
                sorted(v for (v,) in o.values(o.deleted))) for o in outputs]
    assert reports == [(1, [1], []), (5, [2], []), (7, [3], []), (16, [4], [1, 2, 3])]


@settings(max_examples=80, deadline=None)
@given(*RUNS)
def test_on_content_change_equals_the_open_window_at_every_arrival(gaps, range_units, slide_units) -> None:
    range_ms, slide_ms = range_units * 1000, slide_units * 1000
    events, time = [], int(BASE)
    for gap, value in gaps:
        time += gap
        events.append((time, value))
    outputs, _ = _run_open(f"SELECT ?o WHERE {{ STREAM ex:stream [RANGE {range_ms}ms SLIDE {slide_ms}ms] "
                           "{ ?e ex:v ?o } }", events)
    assert {o.trigger.time for o in outputs} <= {t for t, _ in events}, "an instant that is not an arrival"
    for tau in sorted({t for t, _ in events}):
        state = Counter()
        for output in outputs:
            if output.trigger.time <= tau:
                state.update(v for (v,) in output.values())
                state.subtract(v for (v,) in output.values(output.deleted))
        assert +state == _open_window(events, tau, range_ms, slide_ms), tau


def test_explain_names_the_slide_report() -> None:
    session = Session(SessionConfig(engine=EngineConfig(slide_report="content change")))
    session.register(PREFIX + "SELECT ?o WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } }", name="q")
    assert "SLIDE 300000ms] reported on content change" in session.explain("q")


def test_slide_cannot_run_time_partitioned() -> None:
    # A time slice is warmed up on one window length; a hopping window would need more.
    session = Session()
    session.add_query(QuerySource("q", PREFIX + "SELECT ?o WHERE { STREAM ex:stream [RANGE 10m SLIDE 5m] { ?e ex:v ?o } }"))
    with pytest.raises(UserError, match="SLIDE window cannot run time-partitioned"):
        longest_window_ms(session)
